//! The per-VU event loop: timers (`setTimeout`, `setInterval` and their `clear*`, global and
//! in `k6/timers`) and the promise job queue.
//!
//! As in k6, a call into the script (an iteration, `setup`, `teardown`, `handleSummary`, the
//! init code) is over only when its pending async work is: [`drive`] runs promise jobs, then
//! waits for the earliest timer or `http.asyncRequest` response — suspending only this VU,
//! like `sleep` — fires or settles it, runs the jobs it queued, and so on until no timer and
//! no request is left. An interrupted iteration drops its timers and requests.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::time::Duration;

use boa_engine::builtins::promise::PromiseState;
use boa_engine::object::builtins::JsPromise;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsObject, JsResult, JsValue, NativeFunction,
};
use tokio::time::Instant;

use crate::host::{Host, Phase};

/// One pending timer.
struct Timer {
    id: u32,
    callback: JsObject,
    args: Vec<JsValue>,
    /// Set for `setInterval`: the timer is re-armed after each run.
    every: Option<Duration>,
}

/// A VU's pending timers, ordered by when they are due (then by creation, as in browsers).
#[derive(Default)]
pub(crate) struct Timers {
    next_id: Cell<u32>,
    queue: RefCell<BTreeMap<(Instant, u32), Timer>>,
}

impl Timers {
    fn add(&self, callback: JsObject, args: Vec<JsValue>, delay: Duration, every: bool) -> u32 {
        let id = self.next_id.get().wrapping_add(1).max(1);
        self.next_id.set(id);
        let due = Instant::now() + delay;
        self.queue.borrow_mut().insert(
            (due, id),
            Timer {
                id,
                callback,
                args,
                every: every.then_some(delay),
            },
        );
        id
    }

    fn remove(&self, id: u32) {
        self.queue.borrow_mut().retain(|_, t| t.id != id);
    }

    /// Drops every pending timer (the iteration was interrupted).
    pub(crate) fn clear(&self) {
        self.queue.borrow_mut().clear();
    }

    fn next_due(&self) -> Option<Instant> {
        self.queue.borrow().keys().next().map(|(at, _)| *at)
    }

    fn pop_due(&self, now: Instant) -> Option<Timer> {
        let mut q = self.queue.borrow_mut();
        let key = *q.keys().next().filter(|(at, _)| *at <= now)?;
        q.remove(&key)
    }
}

/// The timer functions, as globals and as `k6/timers` exports.
pub(crate) fn functions() -> Vec<(&'static str, usize, NativeFunction)> {
    vec![
        ("setTimeout", 2, NativeFunction::from_fn_ptr(set_timeout)),
        ("clearTimeout", 1, NativeFunction::from_fn_ptr(clear_timer)),
        ("setInterval", 2, NativeFunction::from_fn_ptr(set_interval)),
        ("clearInterval", 1, NativeFunction::from_fn_ptr(clear_timer)),
    ]
}

fn schedule(args: &[JsValue], ctx: &mut Context, every: bool) -> JsResult<JsValue> {
    let name = if every { "setInterval" } else { "setTimeout" };
    let callback = args.first().and_then(JsValue::as_callable).ok_or_else(|| {
        JsNativeError::typ().with_message(format!("{name}'s callback isn't a function"))
    })?;
    let ms = match args.get(1) {
        Some(v) if !v.is_undefined() => v.to_number(ctx)?,
        _ => 0.0,
    };
    let delay = if ms.is_finite() && ms > 0.0 {
        Duration::from_secs_f64(ms / 1000.0)
    } else {
        Duration::ZERO
    };
    let rest = args.get(2..).map(<[JsValue]>::to_vec).unwrap_or_default();
    let id = Host::of(ctx).timers.add(callback, rest, delay, every);
    Ok(JsValue::from(id))
}

fn set_timeout(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    schedule(args, ctx, false)
}

fn set_interval(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    schedule(args, ctx, true)
}

fn clear_timer(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    if let Some(id) = args.first().filter(|v| v.is_number()) {
        let id = id.to_number(ctx)?;
        if id.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&id) {
            Host::of(ctx).timers.remove(id as u32);
        }
    }
    Ok(JsValue::undefined())
}

/// Installs the timer globals.
pub(crate) fn install(ctx: &mut Context) -> JsResult<()> {
    for (name, len, f) in functions() {
        ctx.register_global_callable(js_string!(name), len, f)?;
    }
    Ok(())
}

/// Runs the VU's promise jobs and timers until none is left.
pub(crate) fn drive(ctx: &mut Context) -> JsResult<()> {
    let host = Host::of(ctx);
    let result = run(&host, ctx);
    if result.is_err() {
        // An exception or interruption ends the call; its leftover work goes with it.
        host.timers.clear();
        host.async_calls.clear();
    }
    result
}

fn run(host: &Host, ctx: &mut Context) -> JsResult<()> {
    loop {
        ctx.run_jobs()?;
        if host.async_calls.settle(ctx)? {
            continue;
        }
        let due = host.timers.next_due();
        if !host.async_calls.is_empty() {
            // Requests run until one finishes or a timer is due, whichever comes first.
            host.block_on("http.asyncRequest", host.async_calls.wait(due))?;
        } else {
            let Some(due) = due else {
                return Ok(());
            };
            if due > Instant::now() {
                wait_until(host, due)?;
            }
        }
        while let Some(timer) = host.timers.pop_due(Instant::now()) {
            if let Some(every) = timer.every {
                // Re-armed before the call so that the callback can clear it.
                host.timers.queue.borrow_mut().insert(
                    (Instant::now() + every, timer.id),
                    Timer {
                        id: timer.id,
                        callback: timer.callback.clone(),
                        args: timer.args.clone(),
                        every: timer.every,
                    },
                );
            }
            timer
                .callback
                .call(&JsValue::undefined(), &timer.args, ctx)?;
            ctx.run_jobs()?;
        }
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
            let host = Host::of(ctx);
            host.timers.clear();
            host.async_calls.clear();
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
