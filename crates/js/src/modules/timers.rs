//! `k6/timers` and the timer globals: `setTimeout`, `setInterval` and their `clear*`. Each
//! VU's timers are its [`Timers`] instance, which the event loop fires when they are due.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsValue};
use tokio::time::Instant;

use super::synthetic::Export;
use crate::host::event_loop::Pending;
use crate::host::instances::{native, ModuleInstance};
use crate::host::Host;

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

    fn earliest(&self) -> Option<Instant> {
        self.queue.borrow().keys().next().map(|(at, _)| *at)
    }

    fn pop_due(&self, now: Instant) -> Option<Timer> {
        let mut q = self.queue.borrow_mut();
        let key = *q.keys().next().filter(|(at, _)| *at <= now)?;
        q.remove(&key)
    }
}

impl ModuleInstance for Timers {
    fn make(host: &Host) -> Rc<Self> {
        let timers = Rc::new(Timers::default());
        host.event_loop.register(timers.clone());
        timers
    }
}

impl Pending for Timers {
    fn what(&self) -> &'static str {
        "timers"
    }

    fn next_due(&self) -> Option<Instant> {
        self.earliest()
    }

    fn run_due(&self, ctx: &mut Context) -> JsResult<()> {
        while let Some(timer) = self.pop_due(Instant::now()) {
            if let Some(every) = timer.every {
                // Re-armed before the call so that the callback can clear it.
                self.queue.borrow_mut().insert(
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
        Ok(())
    }

    fn clear(&self) {
        self.queue.borrow_mut().clear();
    }
}

/// The timer functions, as globals and as `k6/timers` exports (each call works on the
/// calling VU's timers).
pub(crate) fn functions() -> Vec<Export> {
    vec![
        ("setTimeout", 2, native::<Timers>(set_timeout)),
        ("clearTimeout", 1, native::<Timers>(clear_timer)),
        ("setInterval", 2, native::<Timers>(set_interval)),
        ("clearInterval", 1, native::<Timers>(clear_timer)),
    ]
}

fn schedule(
    timers: &Timers,
    args: &[JsValue],
    ctx: &mut Context,
    every: bool,
) -> JsResult<JsValue> {
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
    let id = timers.add(callback, rest, delay, every);
    Ok(JsValue::from(id))
}

fn set_timeout(
    timers: &Rc<Timers>,
    _: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    schedule(timers, args, ctx, false)
}

fn set_interval(
    timers: &Rc<Timers>,
    _: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    schedule(timers, args, ctx, true)
}

fn clear_timer(
    timers: &Rc<Timers>,
    _: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    if let Some(id) = args.first().filter(|v| v.is_number()) {
        let id = id.to_number(ctx)?;
        if id.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&id) {
            timers.remove(id as u32);
        }
    }
    Ok(JsValue::undefined())
}
