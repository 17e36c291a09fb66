//! The `k6` module: `check`, `group`, `sleep`, `fail`, `randomSeed`.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use boa_engine::object::builtins::JsPromise;
use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::PropertyKey;
use boa_engine::{js_string, Context, JsNativeError, JsResult, JsValue, NativeFunction};
use rk6_metrics::builtin;

use super::args::{key_string, string_map};
use super::synthetic::Export;
use crate::host::instances::{bound, native, ModuleInstance};
use crate::host::Host;

/// The `k6` module's per-VU state: the seeded `Math.random` (`randomSeed`).
pub(crate) struct K6 {
    rng: Cell<u64>,
}

impl ModuleInstance for K6 {
    fn make(_: &Host) -> Rc<Self> {
        Rc::new(K6 { rng: Cell::new(0) })
    }
}

/// The `k6` module's functions.
pub(super) fn functions() -> Vec<Export> {
    vec![
        ("check", 2, NativeFunction::from_fn_ptr(check)),
        ("group", 2, NativeFunction::from_fn_ptr(group)),
        ("sleep", 1, NativeFunction::from_fn_ptr(sleep)),
        ("fail", 1, NativeFunction::from_fn_ptr(fail)),
        ("randomSeed", 1, native::<K6>(random_seed)),
    ]
}

/// `check(value, {name: predicate, ...}, [tags])`: one `checks` sample per predicate.
fn check(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    let value = args.first().cloned().unwrap_or_default();
    let Some(sets) = args.get(1).and_then(JsValue::as_object) else {
        return Err(JsNativeError::typ()
            .with_message("check() needs an object of named checks as its second argument")
            .into());
    };
    let extra = string_map(args.get(2), ctx)?;
    let mut all = true;
    // As k6 (goja's `Keys`): the own enumerable string keys, each value read just before
    // its check runs. An object literal of functions is read from its property table at
    // once (no script can run in between); others key by key.
    if let Some(entries) = sets.plain_enumerable_own_entries() {
        for (key, predicate) in entries {
            all &= run_check(&host, &value, &extra, &key, &predicate, ctx)?;
        }
        return Ok(all.into());
    }
    for key in sets.own_property_keys(ctx)? {
        if matches!(key, PropertyKey::Symbol(_)) || !sets.own_property_is_enumerable(&key, ctx)? {
            continue;
        }
        let predicate = sets.get(key.clone(), ctx)?;
        all &= run_check(&host, &value, &extra, &key, &predicate, ctx)?;
    }
    Ok(all.into())
}

/// Runs one named check on `value` and records its `checks` sample; returns whether it
/// passed.
fn run_check(
    host: &Host,
    value: &JsValue,
    extra: &[(String, String)],
    key: &PropertyKey,
    predicate: &JsValue,
    ctx: &mut Context,
) -> JsResult<bool> {
    // Not `to_string`: the `Display` route cost ~1.1 k instructions a check.
    let name = key_string(key);
    if has_separator(&name) {
        return Err(JsNativeError::error()
            .with_message("group and check names may not contain '::'")
            .into());
    }
    if is_async_function(predicate, ctx) {
        return Err(super::go_error::go_error(ASYNC_CHECK, ctx));
    }
    let ok = match predicate.as_callable() {
        Some(f) => f
            .call(&JsValue::undefined(), std::slice::from_ref(value), ctx)?
            .to_boolean(),
        None => predicate.to_boolean(),
    };
    // k6's own tags win over user tags with the same name.
    host.sample(
        builtin::CHECKS,
        if ok { 1.0 } else { 0.0 },
        extra,
        &[("check", &name)],
    );
    Ok(ok)
}

/// Whether a group or check name contains k6's group path separator `::`. Not
/// `str::contains`: its substring searcher costs ~900 instructions to set up per call, and
/// `check` asks once per named check.
fn has_separator(name: &str) -> bool {
    name.as_bytes().windows(2).any(|w| w == b"::")
}

/// k6's refusal of an async check predicate.
const ASYNC_CHECK: &str = "the built-in check() does not support async functions as arguments. Use the JavaScript utils library as a replacement. Refer to https://grafana.com/docs/k6/latest/javascript-api/jslib/utils/check/ for more info";

/// k6's refusal of an async group callback (without the `async-metric-context` flag).
const ASYNC_GROUP: &str = "group() does not support async functions as arguments, please see https://grafana.com/docs/k6/latest/javascript-api/k6/group/ for more info";

/// Whether `v` is an `async` function (its constructor is `AsyncFunction`), as k6 checks.
fn is_async_function(v: &JsValue, ctx: &mut Context) -> bool {
    let Some(obj) = v.as_object().filter(|o| o.is_callable()) else {
        return false;
    };
    let Ok(ctor) = obj.get(js_string!("constructor"), ctx) else {
        return false;
    };
    ctor.as_object()
        .and_then(|c| c.get(js_string!("name"), ctx).ok())
        .and_then(|n| n.as_string().map(|s| s.to_std_string_escaped()))
        .is_some_and(|n| n == "AsyncFunction")
}

/// Whether the run turned on the `async-metric-context` feature flag (k6 2.3).
fn async_metric_context(host: &Host) -> bool {
    crate::script::program::feature_on(&host.shared.program.env, "async-metric-context")
}

/// `group(name, fn)`: runs `fn` with the group tag `::name` appended; returns its result.
/// An `async` callback is refused as in k6, unless `async-metric-context` is on: then a
/// callback that returns a promise keeps the group's tag until the promise settles, its
/// `group_duration` runs until then, and `group()` returns a promise of its outcome.
fn group(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    let name = args
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    if has_separator(&name) {
        return Err(JsNativeError::error()
            .with_message("group and check names may not contain '::'")
            .into());
    }
    let Some(f) = args.get(1).and_then(JsValue::as_callable) else {
        return Err(JsNativeError::typ()
            .with_message("group() needs a function as its second argument")
            .into());
    };
    let flagged = async_metric_context(&host);
    if !flagged && is_async_function(&args[1], ctx) {
        return Err(super::go_error::go_error(ASYNC_GROUP, ctx));
    }
    let outer = host.tags.borrow_mut().enter_group(&name);
    let start = Instant::now();
    let result = f.call(&JsValue::undefined(), &[], ctx);
    if flagged {
        if let Ok(value) = &result {
            if let Some(then) = thenable(value, ctx)? {
                return settle_group_later(&host, value, then, outer, start, ctx);
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
    if result.is_ok() || flagged {
        host.sample(builtin::GROUP_DURATION, elapsed, &[], &[]);
    }
    host.tags.borrow_mut().leave_group(outer);
    result
}

/// The `then` of a promise-like value.
fn thenable(value: &JsValue, ctx: &mut Context) -> JsResult<Option<boa_engine::JsObject>> {
    let Some(obj) = value.as_object() else {
        return Ok(None);
    };
    let then = obj.get(js_string!("then"), ctx)?;
    Ok(then.as_object().filter(|t| t.is_callable()))
}

/// An async group's end: when the callback's promise settles, its `group_duration` sample
/// and the tags of before the group; `group()` returns a promise settled the same way.
fn settle_group_later(
    host: &Rc<Host>,
    value: &JsValue,
    then: boa_engine::JsObject,
    outer: Option<String>,
    start: Instant,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let (promise, resolvers) = JsPromise::new_pending(ctx);
    let end = Rc::new(std::cell::RefCell::new(Some((outer, resolvers))));
    let make = |fulfilled: bool, ctx: &mut Context| {
        let end = end.clone();
        let host = host.clone();
        // SAFETY: the resolvers the closure holds are not traced through it; held outside
        // the collector's heap they count as roots, so they stay alive (the handler is
        // dropped once the promise settles, so nothing leaks past it).
        let f = unsafe {
            NativeFunction::from_closure(move |_, args, ctx| {
                let Some((outer, resolvers)) = end.borrow_mut().take() else {
                    return Ok(JsValue::undefined());
                };
                let elapsed = start.elapsed().as_secs_f64() * 1000.0;
                host.sample(builtin::GROUP_DURATION, elapsed, &[], &[]);
                host.tags.borrow_mut().leave_group(outer);
                let arg = args.first().cloned().unwrap_or_default();
                let settle = if fulfilled {
                    &resolvers.resolve
                } else {
                    &resolvers.reject
                };
                settle.call(&JsValue::undefined(), &[arg], ctx)
            })
        };
        FunctionObjectBuilder::new(ctx.realm(), f).build()
    };
    let on_fulfilled = make(true, ctx);
    let on_rejected = make(false, ctx);
    then.call(value, &[on_fulfilled.into(), on_rejected.into()], ctx)?;
    Ok(promise.into())
}

/// Sleeps at least this long give the VU's unused stack back to the OS while they last: the
/// cost (one `madvise` plus re-touching ~20 stack pages in the next iteration, ~10-20 µs)
/// is small next to the wait, and sleeping VUs are what a many-VU test is made of.
const IDLE_SLEEP_SECS: f64 = 0.1;

/// `sleep(seconds)`: suspends this VU only.
fn sleep(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    let secs = args.first().cloned().unwrap_or_default().to_number(ctx)?;
    let secs = if secs.is_finite() && secs > 0.0 {
        secs
    } else {
        0.0
    };
    let wait = tokio::time::sleep(Duration::from_secs_f64(secs));
    if secs >= IDLE_SLEEP_SECS {
        host.block_on_idle("sleep()", wait)?;
    } else {
        host.block_on("sleep()", wait)?;
    }
    Ok(JsValue::undefined())
}

/// `fail([message])`: throws, which ends the iteration.
fn fail(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let msg = match args.first() {
        Some(m) if !m.is_undefined() => m.to_string(ctx)?.to_std_string_escaped(),
        _ => String::new(),
    };
    Err(JsNativeError::error().with_message(msg).into())
}

/// `randomSeed(n)`: makes `Math.random` a deterministic sequence for this VU.
fn random_seed(k6: &Rc<K6>, _: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let seed = args.first().cloned().unwrap_or_default().to_number(ctx)? as i64 as u64;
    k6.rng.set(seed);
    let math = ctx.global_object().get(js_string!("Math"), ctx)?;
    if let Some(math) = math.as_object() {
        let f =
            boa_engine::object::FunctionObjectBuilder::new(ctx.realm(), bound(k6, seeded_random))
                .name(js_string!("random"))
                .length(0)
                .build();
        math.set(js_string!("random"), f, true, ctx)?;
    }
    Ok(JsValue::undefined())
}

fn seeded_random(k6: &Rc<K6>, _: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    // splitmix64: small, fast and good enough for test data.
    let mut z = k6.rng.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
    k6.rng.set(z);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    Ok(((z >> 11) as f64 / (1u64 << 53) as f64).into())
}

#[cfg(test)]
mod tests {
    use super::has_separator;

    #[test]
    fn separator_is_two_adjacent_colons() {
        assert!(has_separator("a::b"));
        assert!(has_separator("::"));
        assert!(has_separator("x:::"));
        assert!(!has_separator("a:b:c"));
        assert!(!has_separator(":"));
        assert!(!has_separator(""));
    }
}
