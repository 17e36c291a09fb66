//! The per-VU event loop: the promise job queue, and the work modules leave pending after a
//! call into the script returns (timers, `http.asyncRequest`s in flight).
//!
//! As in k6, a call into the script (an iteration, `setup`, `teardown`, `handleSummary`, the
//! init code) is over only when its pending async work is: [`drive`] runs promise jobs, then
//! waits for the earliest timer or in-flight request — suspending only this VU, like
//! `sleep` — fires or settles it, runs the jobs it queued, and so on until nothing is
//! pending. An interrupted iteration drops what was pending. Modules register what they keep
//! pending as a [`Pending`] source, so the loop knows no module.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll};

use boa_engine::builtins::promise::PromiseState;
use boa_engine::object::builtins::JsPromise;
use boa_engine::{Context, JsError, JsObject, JsResult, JsValue};
use tokio::time::Instant;

use crate::host::{Host, Phase};

/// Work a module keeps pending for the event loop: background futures (requests in
/// flight) that finish by themselves and are then settled in JS, and timed work (timers).
pub(crate) trait Pending {
    /// Names the wait in the error of the init context, where a VU cannot wait.
    fn what(&self) -> &'static str;
    /// Background work is in flight (it may also be finished and not settled yet).
    fn in_flight(&self) -> bool {
        false
    }
    /// Events may arrive that the script watches (a page's): they are polled and
    /// dispatched while the VU waits for anything, but do not keep the call alive.
    fn watching(&self) -> bool {
        false
    }
    /// Drives the background work with the waker in `cx`; true once some of it finished.
    fn poll(&self, _cx: &mut TaskContext<'_>) -> bool {
        false
    }
    /// Settles finished background work in JS (its promises); true if any was.
    fn settle(&self, _ctx: &mut Context) -> JsResult<bool> {
        Ok(false)
    }
    /// When the earliest timed work is due.
    fn next_due(&self) -> Option<Instant> {
        None
    }
    /// Runs the timed work that is due, and the promise jobs each run queues.
    fn run_due(&self, _ctx: &mut Context) -> JsResult<()> {
        Ok(())
    }
    /// Drops everything pending: the call it belongs to ended with an error.
    fn clear(&self);
    /// The iteration ended (however): drops what belonged to it alone.
    fn end_iteration(&self) {}
}

/// The pending-work sources of one VU, in the order modules registered them.
#[derive(Default)]
pub(crate) struct EventLoop {
    sources: RefCell<Vec<Rc<dyn Pending>>>,
}

impl EventLoop {
    /// Adds a module's source; the VU keeps it for its whole life.
    pub(crate) fn register(&self, source: Rc<dyn Pending>) {
        self.sources.borrow_mut().push(source);
    }

    /// Polls the background work in flight; called by every wait of the VU, so requests
    /// keep going while it waits for anything else. True once some of it finished.
    pub(crate) fn poll_in_flight(&self, cx: &mut TaskContext<'_>) -> bool {
        let mut any = false;
        for s in self.sources.borrow().iter() {
            if s.in_flight() || s.watching() {
                any |= s.poll(cx);
            }
        }
        any
    }

    /// Some source watches for events.
    fn watching(&self) -> bool {
        self.sources.borrow().iter().any(|s| s.watching())
    }

    /// Source `i`, taken out of the list before JS runs: JS may import a module, which
    /// registers its source.
    fn source(&self, i: usize) -> Option<Rc<dyn Pending>> {
        self.sources.borrow().get(i).cloned()
    }

    fn settle(&self, ctx: &mut Context) -> JsResult<bool> {
        let mut any = false;
        let mut i = 0;
        while let Some(s) = self.source(i) {
            any |= s.settle(ctx)?;
            i += 1;
        }
        Ok(any)
    }

    fn run_due(&self, ctx: &mut Context) -> JsResult<()> {
        let mut i = 0;
        while let Some(s) = self.source(i) {
            s.run_due(ctx)?;
            i += 1;
        }
        Ok(())
    }

    fn next_due(&self) -> Option<Instant> {
        self.sources
            .borrow()
            .iter()
            .filter_map(|s| s.next_due())
            .min()
    }

    /// What is in flight, if anything.
    fn in_flight(&self) -> Option<&'static str> {
        let sources = self.sources.borrow();
        sources.iter().find(|s| s.in_flight()).map(|s| s.what())
    }

    /// Waits until some background work finishes, or until `until` if given.
    async fn wait(&self, until: Option<Instant>) {
        let mut sleep = until.map(|t| Box::pin(tokio::time::sleep_until(t)));
        poll_fn(|cx| {
            if self.poll_in_flight(cx) {
                return Poll::Ready(());
            }
            match &mut sleep {
                Some(s) => s.as_mut().poll(cx),
                None => Poll::Pending,
            }
        })
        .await
    }

    /// Tells every source that the iteration ended.
    pub(crate) fn end_iteration(&self) {
        let mut i = 0;
        while let Some(s) = self.source(i) {
            s.end_iteration();
            i += 1;
        }
    }

    /// Drops everything pending.
    pub(crate) fn clear(&self) {
        let mut i = 0;
        while let Some(s) = self.source(i) {
            s.clear();
            i += 1;
        }
    }
}

/// Runs the VU's promise jobs and pending work until nothing is left.
pub(crate) fn drive(ctx: &mut Context) -> JsResult<()> {
    let host = Host::of(ctx);
    let result = run(&host, ctx);
    if result.is_err() {
        // An exception or interruption ends the call; its leftover work goes with it.
        host.event_loop.clear();
    }
    result
}

fn run(host: &Host, ctx: &mut Context) -> JsResult<()> {
    let pending = &host.event_loop;
    loop {
        ctx.run_jobs()?;
        if pending.settle(ctx)? {
            continue;
        }
        let due = pending.next_due();
        if let Some(what) = pending.in_flight() {
            // Background work runs until some finishes or timed work is due, whichever is
            // first.
            host.block_on(what, pending.wait(due))?;
        } else {
            let Some(due) = due else {
                return Ok(());
            };
            if due > Instant::now() {
                if pending.watching()
                    && host.phase.get() == Phase::Run
                    && host.suspender.borrow().is_some()
                {
                    // Watched events are dispatched as they come, not after the timer.
                    host.block_on("timers", pending.wait(Some(due)))?;
                } else {
                    wait_until(host, due)?;
                }
            }
        }
        pending.run_due(ctx)?;
    }
}

/// Waits for a timer: inside a VU's coroutine only the VU is suspended; the init context
/// (which runs before the VU has one) blocks its thread.
fn wait_until(host: &Host, due: Instant) -> JsResult<()> {
    if host.phase.get() == Phase::Run && host.suspender.borrow().is_some() {
        host.block_on("timers", tokio::time::sleep_until(due))
    } else {
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        Ok(())
    }
}

/// How a call into the script failed.
pub(crate) struct Uncaught {
    /// The exception.
    pub(crate) error: JsError,
    /// It rejected the promise an async function returned (k6 logs "Uncaught (in promise)").
    pub(crate) in_promise: bool,
}

/// What a finished call returned: the settled value of a returned promise (an async
/// function), or the value itself.
fn settle(value: JsValue) -> Result<JsValue, Uncaught> {
    let Some(promise) = value
        .as_object()
        .and_then(|o| JsPromise::from_object(o.clone()).ok())
    else {
        return Ok(value);
    };
    match promise.state() {
        PromiseState::Fulfilled(v) => Ok(v),
        PromiseState::Rejected(e) => Err(Uncaught {
            error: JsError::from_opaque(e),
            in_promise: true,
        }),
        // Awaiting something that can never finish (no timer or job left): the call ends,
        // as in k6.
        PromiseState::Pending => Ok(JsValue::undefined()),
    }
}

/// Calls `f` and runs the event loop until the call's async work is done.
pub(crate) fn call_settled(
    f: &JsObject,
    args: &[JsValue],
    ctx: &mut Context,
) -> Result<JsValue, Uncaught> {
    let thrown = |error| Uncaught {
        error,
        in_promise: false,
    };
    let value = match f.call(&JsValue::undefined(), args, ctx) {
        Ok(v) => v,
        Err(e) => {
            Host::of(ctx).event_loop.clear();
            return Err(thrown(e));
        }
    };
    drive(ctx).map_err(thrown)?;
    settle(value)
}

/// [`call_settled`] for callers that treat both kinds of failure alike.
pub(crate) fn call(f: &JsObject, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    call_settled(f, args, ctx).map_err(|u| u.error)
}
