//! `k6/execution`: live information about the VU, its scenario, the instance and the test,
//! plus `test.abort()` and `test.fail()`.

mod vu_tags;

use std::sync::atomic::Ordering;

use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue, Module,
    NativeFunction,
};

use crate::host::Host;
use crate::value::aborted_error;

type Getter = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;

fn object_with_getters(getters: &[(&str, Getter)], ctx: &mut Context) -> JsObject {
    let getters: Vec<_> = getters
        .iter()
        .map(|(name, f)| (*name, NativeFunction::from_fn_ptr(*f)))
        .collect();
    object_with(getters, ctx)
}

fn object_with(getters: Vec<(&str, NativeFunction)>, ctx: &mut Context) -> JsObject {
    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::new(ctx);
    for (name, f) in getters {
        let getter = FunctionObjectBuilder::new(&realm, f)
            .name(JsString::from(format!("get {name}").as_str()))
            .build();
        init.accessor(
            JsString::from(name),
            Some(getter),
            None,
            Attribute::ENUMERABLE | Attribute::CONFIGURABLE,
        );
    }
    init.build()
}

pub(super) fn module(ctx: &mut Context) -> Module {
    // One live tags object per VU, behind both `vu.tags` and `vu.metrics.tags`.
    let tags = vu_tags::TagsObject::new();
    let vu = object_with(
        vec![
            ("idInInstance", NativeFunction::from_fn_ptr(vu_id)),
            ("idInTest", NativeFunction::from_fn_ptr(vu_id_in_test)),
            (
                "iterationInInstance",
                NativeFunction::from_fn_ptr(vu_iteration_in_instance),
            ),
            (
                "iterationInScenario",
                NativeFunction::from_fn_ptr(vu_iteration_in_scenario),
            ),
            ("tags", tags.getter()),
        ],
        ctx,
    );
    let metrics = object_with(
        vec![
            ("tags", tags.getter()),
            ("metadata", NativeFunction::from_fn_ptr(vu_tags::metadata)),
        ],
        ctx,
    );
    let _ = vu.set(js_string!("metrics"), metrics, false, ctx);
    let scenario = object_with_getters(
        &[
            ("name", scenario_name),
            ("executor", scenario_executor),
            ("startTime", scenario_start_time),
            ("progress", scenario_progress),
            ("iterationInInstance", scenario_iteration),
            ("iterationInTest", scenario_iteration_in_test),
        ],
        ctx,
    );
    let instance = object_with_getters(
        &[
            ("iterationsCompleted", instance_completed),
            ("iterationsInterrupted", instance_interrupted),
            ("vusActive", instance_vus_active),
            ("vusInitialized", instance_vus_initialized),
            ("currentTestRunDuration", instance_duration),
        ],
        ctx,
    );
    let test = object_with_getters(&[("options", test_options)], ctx);
    let realm = ctx.realm().clone();
    for (name, f, len) in [
        ("abort", test_abort as Getter, 1),
        ("fail", test_fail as Getter, 1),
    ] {
        let func = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(f))
            .name(JsString::from(name))
            .length(len)
            .build();
        let _ = test.set(JsString::from(name), func, false, ctx);
    }
    let object = ObjectInitializer::new(ctx)
        .property(js_string!("vu"), vu, Attribute::all())
        .property(js_string!("scenario"), scenario, Attribute::all())
        .property(js_string!("instance"), instance, Attribute::all())
        .property(js_string!("test"), test, Attribute::all())
        .build();
    let names = ["vu", "scenario", "instance", "test"]
        .map(JsString::from)
        .to_vec();
    super::synthetic::from_object(object, names, ctx)
}

fn vu_id(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(Host::of(ctx).vu_id as f64))
}

/// With an execution segment, VU ids in the test are those this segment owns.
fn vu_id_in_test(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    let id = host.shared.vu_stripe.global(host.vu_id.saturating_sub(1)) + 1;
    Ok(JsValue::from(id as f64))
}

fn with_iteration(
    ctx: &Context,
    f: impl FnOnce(&crate::host::IterationInfo) -> JsValue,
) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    let info = host.iteration.borrow();
    match info.as_ref() {
        Some(i) => Ok(f(i)),
        None => Err(JsNativeError::typ()
            .with_message("getting scenario information outside of the VU context is not supported")
            .into()),
    }
}

fn vu_iteration_in_instance(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    with_iteration(ctx, |i| JsValue::from(i.vu_iteration as f64))
}
fn vu_iteration_in_scenario(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    with_iteration(ctx, |i| JsValue::from(i.vu_iteration_in_scenario as f64))
}
fn scenario_name(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    with_iteration(ctx, |i| JsString::from(i.scenario.name.as_str()).into())
}
fn scenario_executor(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    with_iteration(ctx, |i| JsString::from(i.scenario.executor_name()).into())
}
fn scenario_iteration(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    with_iteration(ctx, |i| JsValue::from(i.iteration_in_scenario as f64))
}

fn scenario_iteration_in_test(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    with_iteration(ctx, |i| {
        let n = i.scenario.split.iterations.global(i.iteration_in_scenario);
        JsValue::from(n as f64)
    })
}

fn scenario_state(
    ctx: &Context,
) -> JsResult<(std::sync::Arc<rk6_scheduler::ExecutionState>, usize)> {
    let host = Host::of(ctx);
    let name = with_iteration(ctx, |i| JsString::from(i.scenario.name.as_str()).into())?;
    let name = name
        .as_string()
        .map(|s| s.to_std_string_escaped())
        .unwrap_or_default();
    let state = host
        .shared
        .execution
        .get()
        .cloned()
        .ok_or_else(|| JsNativeError::typ().with_message("the test is not running"))?;
    let index = state
        .scenarios
        .iter()
        .position(|s| s.scenario.name == name)
        .unwrap_or(0);
    Ok((state, index))
}

fn scenario_start_time(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (state, i) = scenario_state(ctx)?;
    Ok(JsValue::from(
        state.scenarios[i]
            .started_at_unix_ms
            .load(Ordering::Relaxed) as f64,
    ))
}

fn scenario_progress(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (state, i) = scenario_state(ctx)?;
    let s = &state.scenarios[i];
    let run = s.scenario.run_time().as_secs_f64();
    let p = if run > 0.0 {
        (s.elapsed().as_secs_f64() / run).min(1.0)
    } else {
        1.0
    };
    Ok(JsValue::from(p))
}

fn execution(ctx: &Context) -> JsResult<std::sync::Arc<rk6_scheduler::ExecutionState>> {
    Host::of(ctx)
        .shared
        .execution
        .get()
        .cloned()
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("instance information is only available while the test runs")
                .into()
        })
}

fn instance_completed(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(execution(ctx)?.completed() as f64))
}
fn instance_interrupted(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(execution(ctx)?.interrupted() as f64))
}
fn instance_vus_active(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(execution(ctx)?.active_vus() as f64))
}
fn instance_vus_initialized(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(
        execution(ctx)?.vus_max.load(Ordering::Relaxed) as f64,
    ))
}
fn instance_duration(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let state = execution(ctx)?;
    let ms = state
        .started
        .get()
        .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
    Ok(JsValue::from(ms))
}

fn test_options(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let options = Host::of(ctx).shared.options.clone();
    JsValue::from_json(&options, ctx)
}

/// `exec.test.abort([reason])`: stops the whole test (exit code 108); teardown still runs.
fn test_abort(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let reason = match args.first().filter(|v| !v.is_undefined()) {
        Some(v) => v.to_string(ctx)?.to_std_string_escaped(),
        None => String::new(),
    };
    Err(aborted_error(&reason))
}

/// `exec.test.fail([reason])`: the test goes on but ends with exit code 110.
fn test_fail(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    let reason = match args.first().filter(|v| !v.is_undefined()) {
        Some(v) => v.to_string(ctx)?.to_std_string_escaped(),
        None => "test marked as failed".to_string(),
    };
    host.shared.logger.log(
        crate::log::Level::Error,
        &reason,
        &[("source", "test.fail")],
    );
    host.shared.marked_failed.store(true, Ordering::Relaxed);
    Ok(JsValue::undefined())
}
