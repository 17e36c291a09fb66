//! One VU's `k6/browser`: the protocol calls its JS layer awaits, the events of the
//! sessions it attached to, and the browser contexts its iteration opened, which end with
//! the iteration (k6 gives every iteration a fresh browser).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use boa_engine::builtins::promise::ResolvingFunctions;
use boa_engine::{js_string, Context, JsObject, JsResult, JsValue};
use rk6_cdp::{Browser, Event, Subscription};
use rk6_metrics::metric::{MetricId, MetricType, ValueType};
use serde_json::{json, Value};

use super::chromium::Chromium;
use crate::host::event_loop::Pending;
use crate::host::instances::ModuleInstance;
use crate::host::Host;

/// What a call the JS layer awaits settles with: JSON, or an error message.
pub(super) type Outcome = Result<Value, String>;

struct Call {
    work: Pin<Box<dyn Future<Output = Outcome>>>,
    done: Option<Outcome>,
    resolvers: ResolvingFunctions,
}

/// The browser metrics k6 registers with the module, by name.
pub(super) const METRICS: [(&str, MetricType, ValueType); 10] = [
    (
        "browser_data_received",
        MetricType::Counter,
        ValueType::Data,
    ),
    ("browser_data_sent", MetricType::Counter, ValueType::Data),
    (
        "browser_http_req_duration",
        MetricType::Trend,
        ValueType::Time,
    ),
    (
        "browser_http_req_failed",
        MetricType::Rate,
        ValueType::Default,
    ),
    (
        "browser_web_vital_cls",
        MetricType::Trend,
        ValueType::Default,
    ),
    ("browser_web_vital_fcp", MetricType::Trend, ValueType::Time),
    ("browser_web_vital_fid", MetricType::Trend, ValueType::Time),
    ("browser_web_vital_inp", MetricType::Trend, ValueType::Time),
    ("browser_web_vital_lcp", MetricType::Trend, ValueType::Time),
    ("browser_web_vital_ttfb", MetricType::Trend, ValueType::Time),
];

/// A context's disposal under way.
pub(super) type Disposal =
    Pin<Box<dyn Future<Output = Result<serde_json::Value, rk6_cdp::CdpError>>>>;

/// A VU's browser state.
pub(crate) struct BrowserVu {
    calls: RefCell<Vec<Call>>,
    subscriptions: RefCell<Vec<Subscription>>,
    events: RefCell<VecDeque<Event>>,
    /// The JS function events are handed to: `(session, method, params)`.
    pub(super) dispatcher: RefCell<Option<JsObject>>,
    /// Waits of the JS layer on events (navigation, selectors): the iteration is not over
    /// while one is open.
    pub(super) waiters: Cell<u32>,
    /// Browser contexts this iteration created, closed when it ends.
    pub(super) contexts: RefCell<Vec<String>>,
    /// The disposal of the last iteration's contexts, which the next context waits for:
    /// one VU's renderers then do not overlap, which keeps the peak memory at one page's.
    pub(super) disposing: RefCell<Vec<Disposal>>,
    /// Counts the iterations that ended, so the JS layer knows its objects are stale.
    pub(super) generation: Cell<u64>,
    pub(super) chromium: Arc<Chromium>,
    pub(super) metric_ids: Vec<Option<MetricId>>,
}

impl ModuleInstance for BrowserVu {
    fn make(host: &Host) -> Rc<Self> {
        let registry = &host.shared.registry;
        // Registered with the module, as k6 does, so thresholds on them are valid.
        let metric_ids = METRICS
            .iter()
            .map(|(name, kind, value)| registry.register(name, *kind, *value).ok())
            .collect();
        let me = Rc::new(BrowserVu {
            calls: RefCell::default(),
            subscriptions: RefCell::default(),
            events: RefCell::default(),
            dispatcher: RefCell::new(None),
            waiters: Cell::new(0),
            contexts: RefCell::default(),
            disposing: RefCell::default(),
            generation: Cell::new(0),
            chromium: host.shared.program.run_scoped().get::<Chromium>(),
            metric_ids,
        });
        host.event_loop.register(me.clone());
        me
    }
}

impl BrowserVu {
    /// Starts `work`; its outcome settles the promise `resolvers` belong to.
    pub(super) fn start(
        &self,
        work: Pin<Box<dyn Future<Output = Outcome>>>,
        resolvers: ResolvingFunctions,
    ) {
        self.calls.borrow_mut().push(Call {
            work,
            done: None,
            resolvers,
        });
    }

    /// Hands the events of `session` to the dispatcher from now on.
    pub(super) fn subscribe(&self, browser: &Browser, session: &str) {
        self.subscriptions
            .borrow_mut()
            .push(browser.subscribe(session));
    }

    /// The running browser (after a successful launch).
    pub(super) fn browser(&self) -> Option<Arc<Browser>> {
        self.chromium.running()
    }

    fn dispatch(&self, ctx: &mut Context) -> JsResult<bool> {
        let Some(f) = self.dispatcher.borrow().clone() else {
            self.events.borrow_mut().clear();
            return Ok(false);
        };
        let mut any = false;
        loop {
            let Some(e) = self.events.borrow_mut().pop_front() else {
                break;
            };
            any = true;
            let session = e.session.map_or(JsValue::null(), |s| js_string!(s).into());
            let params = JsValue::from_json(&e.params, ctx)?;
            f.call(
                &JsValue::undefined(),
                &[session, js_string!(e.method).into(), params],
                ctx,
            )?;
            ctx.run_jobs()?;
        }
        Ok(any)
    }
}

impl Pending for BrowserVu {
    fn what(&self) -> &'static str {
        "browser"
    }

    fn in_flight(&self) -> bool {
        !self.calls.borrow().is_empty()
            || self.waiters.get() > 0
            || !self.events.borrow().is_empty()
    }

    fn watching(&self) -> bool {
        !self.subscriptions.borrow().is_empty()
    }

    fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
        let mut any = false;
        for c in self.calls.borrow_mut().iter_mut() {
            if c.done.is_none() {
                if let Poll::Ready(out) = c.work.as_mut().poll(cx) {
                    c.done = Some(out);
                }
            }
            any |= c.done.is_some();
        }
        let mut events = self.events.borrow_mut();
        for s in self.subscriptions.borrow_mut().iter_mut() {
            while let Poll::Ready(Some(e)) = s.poll_recv(cx) {
                events.push_back(e);
            }
        }
        any || !events.is_empty()
    }

    fn settle(&self, ctx: &mut Context) -> JsResult<bool> {
        // Events first: a command's answer may depend on what the page reported before it.
        let mut any = self.dispatch(ctx)?;
        let done: Vec<Call> = {
            let mut calls = self.calls.borrow_mut();
            let (done, open): (Vec<Call>, Vec<Call>) =
                calls.drain(..).partition(|c| c.done.is_some());
            *calls = open;
            done
        };
        for c in done {
            any = true;
            match c.done.unwrap_or_else(|| Err("lost".into())) {
                Ok(v) => {
                    let v = JsValue::from_json(&v, ctx)?;
                    c.resolvers.resolve.call(&JsValue::undefined(), &[v], ctx)?;
                }
                Err(msg) => {
                    let e = boa_engine::JsError::from(
                        boa_engine::JsNativeError::error().with_message(msg),
                    );
                    let e = e.into_opaque(ctx)?;
                    c.resolvers.reject.call(&JsValue::undefined(), &[e], ctx)?;
                }
            }
        }
        Ok(any)
    }

    fn clear(&self) {
        self.calls.borrow_mut().clear();
        self.waiters.set(0);
    }

    fn end_iteration(&self) {
        self.calls.borrow_mut().clear();
        self.waiters.set(0);
        self.subscriptions.borrow_mut().clear();
        self.events.borrow_mut().clear();
        self.generation.set(self.generation.get() + 1);
        let contexts = std::mem::take(&mut *self.contexts.borrow_mut());
        if let Some(b) = self.browser() {
            let mut disposing = self.disposing.borrow_mut();
            for id in contexts {
                // Not awaited here: the iteration is over; the next context waits for it.
                disposing.push(Box::pin(b.call(
                    None,
                    "Target.disposeBrowserContext",
                    json!({ "browserContextId": id }),
                )));
            }
        }
    }
}
