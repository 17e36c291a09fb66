//! One VU as its natives see it: the VU-wide state every native reaches through the JS
//! context ([`Host`]), and what it owns: the coroutine the VU runs in (on a pooled stack),
//! its event loop, tag context and sample buffer, and the modules' per-VU instances.

pub(crate) mod coroutine;
pub(crate) mod event_loop;
pub(crate) mod gc_domains;
pub(crate) mod gc_pacing;
pub(crate) mod gc_pauses;
pub(crate) mod instances;
pub(crate) mod samples;
pub(crate) mod stack;
pub(crate) mod tags;
pub(crate) mod thread_objects;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use boa_engine::{Context, JsNativeError, JsResult};
use rk6_http::Client;
use rk6_metrics::TagSet;

use crate::host::coroutine::{BlockError, Suspender};
use crate::host::samples::SampleBuffer;
use crate::host::tags::{Pairs, TagContext};
use crate::shared::Shared;

/// Where the VU's code is running; some calls are only allowed in some phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Top-level module code.
    Init,
    /// setup(), teardown(), handleSummary() or an iteration.
    Run,
}

/// The iteration a VU is running, as `k6/execution` reports it.
#[derive(Debug, Clone)]
pub(crate) struct IterationInfo {
    pub(crate) scenario: std::sync::Arc<rk6_scheduler::Scenario>,
    /// Iteration number within the scenario, over all its VUs.
    pub(crate) iteration_in_scenario: u64,
    /// This VU's iteration count, over all scenarios.
    pub(crate) vu_iteration: u64,
    /// This VU's iteration count within the scenario.
    pub(crate) vu_iteration_in_scenario: u64,
}

/// What is VU-wide: the id, phase, suspender, HTTP client, tags and samples, and the run's
/// shared state. A module's own state is its instance (`instances`), not a field here.
pub(crate) struct Host {
    pub(crate) vu_id: u64,
    pub(crate) iteration: RefCell<Option<IterationInfo>>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) suspender: RefCell<Option<Rc<Suspender>>>,
    pub(crate) phase: Cell<Phase>,
    /// The VU's HTTP client; shared by the requests of a batch and pending `asyncRequest`s.
    pub(crate) http: Rc<Client>,
    /// Work modules left pending (timers, requests in flight).
    pub(crate) event_loop: event_loop::EventLoop,
    /// The modules' per-VU state.
    instances: instances::Instances,
    pub(crate) samples: RefCell<SampleBuffer>,
    /// The VU's current tags, which every sample it emits starts from.
    pub(crate) tags: RefCell<TagContext>,
    /// Bytes the VU's requests sent and received in the current iteration.
    pub(crate) data_sent: Cell<u64>,
    pub(crate) data_received: Cell<u64>,
    /// The scheduled start of the current open-model iteration until its first HTTP
    /// response ends (`first_response_corrected`); `None` otherwise.
    pub(crate) first_response_due: Cell<Option<tokio::time::Instant>>,
}

impl Drop for Host {
    fn drop(&mut self) {
        // Samples still buffered when the VU goes away (end of test) must not be lost.
        self.samples.get_mut().flush(&self.shared.samples);
    }
}

impl Host {
    pub(crate) fn new(vu_id: u64, shared: Arc<Shared>) -> Rc<Host> {
        let tags = TagContext::new(
            shared.run.system_tags.clone(),
            shared.tags.iter().map(|(k, v)| (k, v)),
        );
        let http = Client::for_vu(shared.http.clone(), vu_id);
        Rc::new(Host {
            vu_id,
            iteration: RefCell::new(None),
            shared,
            suspender: RefCell::new(None),
            phase: Cell::new(Phase::Init),
            http: Rc::new(http),
            event_loop: Default::default(),
            instances: Default::default(),
            samples: RefCell::default(),
            tags: RefCell::new(tags),
            data_sent: Cell::new(0),
            data_received: Cell::new(0),
            first_response_due: Cell::new(None),
        })
    }

    /// The host of the VU that owns `ctx`.
    pub(crate) fn of(ctx: &Context) -> Rc<Host> {
        ctx.get_data::<Rc<Host>>()
            .expect("every rk6 context has a host")
            .clone()
    }

    /// This VU's instance of a module's state, made on first use.
    pub(crate) fn instance<T: instances::ModuleInstance>(&self) -> Rc<T> {
        self.instances.get(self)
    }

    /// Waits for `fut` from synchronous JS, suspending only this VU. `what` names the call
    /// for the error thrown in the init context.
    pub(crate) fn block_on<F: std::future::Future>(
        &self,
        what: &str,
        fut: F,
    ) -> JsResult<F::Output> {
        self.block_on_as(what, fut, false)
    }

    /// [`Host::block_on`] for a long wait (`sleep`): the VU's unused stack pages are given
    /// back to the OS while it waits.
    pub(crate) fn block_on_idle<F: std::future::Future>(
        &self,
        what: &str,
        fut: F,
    ) -> JsResult<F::Output> {
        self.block_on_as(what, fut, true)
    }

    fn block_on_as<F: std::future::Future>(
        &self,
        what: &str,
        fut: F,
        idle: bool,
    ) -> JsResult<F::Output> {
        let suspender = self.suspender.borrow().clone();
        let mut fut = std::pin::pin!(fut);
        // Background work (`asyncRequest`s) keeps going while the VU waits for anything else.
        let pending = &self.event_loop;
        let fut = std::pin::pin!(std::future::poll_fn(|cx| {
            pending.poll_in_flight(cx);
            fut.as_mut().poll(cx)
        }));
        let result = match suspender {
            Some(s) if self.phase.get() == Phase::Run && idle => s.block_on_idle(fut),
            Some(s) if self.phase.get() == Phase::Run => s.block_on(fut),
            _ => Err(BlockError::NotInCoroutine),
        };
        match result {
            Ok(v) => Ok(v),
            Err(BlockError::Interrupted) => Err(crate::value::interrupted_error()),
            Err(BlockError::NotInCoroutine) => Err(JsNativeError::error()
                .with_message(format!("{what} is not supported in the init context"))
                .into()),
        }
    }

    /// The tag set of a sample with the VU's tags, then `user` tags, then `system` tags
    /// (see [`TagContext::pairs`]).
    pub(crate) fn tag_set(&self, user: &[(String, String)], system: &[(&str, &str)]) -> TagSet {
        let context = self.tags.borrow();
        let mut pairs = Pairs::new();
        context.pairs(user, system, &mut pairs);
        self.samples.borrow_mut().tags(&pairs)
    }

    /// Buffers one sample tagged as [`Host::tag_set`] tags it.
    pub(crate) fn sample(
        &self,
        metric: rk6_metrics::MetricId,
        value: f64,
        user: &[(String, String)],
        system: &[(&str, &str)],
    ) {
        let tags = self.tag_set(user, system);
        self.samples
            .borrow_mut()
            .push(metric, tags, value, std::time::SystemTime::now());
    }

    /// Fails with an uncatchable error if the current iteration was interrupted.
    pub(crate) fn check_interrupted(&self) -> JsResult<()> {
        match &*self.suspender.borrow() {
            Some(s) if s.is_interrupted() => Err(crate::value::interrupted_error()),
            _ => Ok(()),
        }
    }
}
