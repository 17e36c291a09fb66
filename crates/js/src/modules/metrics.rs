//! The `k6/metrics` module: the `Counter`, `Gauge`, `Rate` and `Trend` constructors.
//!
//! `new Trend(name, isTime)` registers the metric in the test's shared registry (every VU
//! runs the init context, and registering the same name and type again returns the same
//! id), so thresholds on custom metrics validate after the options-reading init pass.
//! `metric.add(value, tags)` pushes one sample into the VU's buffer, tagged like a check.

use boa_engine::object::{ConstructorBuilder, ObjectInitializer};
use boa_engine::property::{Attribute, PropertyDescriptor};
use boa_engine::{
    js_string, Context, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue, Module,
    NativeFunction,
};
use boa_gc::{Finalize, Trace};
use rk6_metrics::{MetricId, MetricType, ValueType};

use crate::host::{Host, Phase};
use crate::log::Level;

/// What a metric object holds: the registered id.
#[derive(Clone, Copy, Trace, Finalize, JsData)]
#[boa_gc(empty_trace)]
struct MetricHandle {
    id: MetricId,
}

const CLASSES: [(&str, MetricType); 4] = [
    ("Counter", MetricType::Counter),
    ("Gauge", MetricType::Gauge),
    ("Rate", MetricType::Rate),
    ("Trend", MetricType::Trend),
];

/// Builds the module: named exports `Counter`, `Gauge`, `Rate`, `Trend`, and a default
/// export object holding the same four.
pub(super) fn module(ctx: &mut Context) -> Module {
    let mut ctors: Vec<(JsString, JsValue)> = Vec::with_capacity(CLASSES.len());
    for (name, kind) in CLASSES {
        let ctor = constructor(name, kind, ctx);
        ctors.push((JsString::from(name), ctor.into()));
    }
    let mut init = ObjectInitializer::new(ctx);
    for (name, ctor) in &ctors {
        init.property(name.clone(), ctor.clone(), Attribute::all());
    }
    let default = init.build();
    let names = ctors.into_iter().map(|(n, _)| n).collect();
    super::synthetic::from_object(default, names, ctx)
}

/// One constructor with `add` on its prototype.
fn constructor(name: &'static str, kind: MetricType, ctx: &mut Context) -> JsObject {
    let construct = NativeFunction::from_copy_closure(move |new_target, args, ctx| {
        construct(name, kind, new_target, args, ctx)
    });
    let mut builder = ConstructorBuilder::new(ctx, construct);
    builder
        .name(name)
        .length(2)
        .method(NativeFunction::from_fn_ptr(add), js_string!("add"), 2);
    builder.build().constructor()
}

fn construct(
    class: &str,
    kind: MetricType,
    new_target: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let Some(target) = new_target.as_object() else {
        return Err(JsNativeError::typ()
            .with_message(format!("{class} must be called with new"))
            .into());
    };
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(JsNativeError::error()
            .with_message("metrics must be declared in the init context")
            .into());
    }
    let name = match args.first() {
        Some(v) if !v.is_undefined() && !v.is_null() => v.to_string(ctx)?.to_std_string_escaped(),
        _ => String::new(),
    };
    let contains = if args.get(1).is_some_and(JsValue::to_boolean) {
        ValueType::Time
    } else {
        ValueType::Default
    };
    let id = host
        .shared
        .registry
        .register(&name, kind, contains)
        .map_err(|e| JsNativeError::error().with_message(e.to_string()))?;
    let proto = target.get(js_string!("prototype"), ctx)?;
    let proto = match proto.as_object() {
        Some(p) => p.clone(),
        None => ctx.intrinsics().constructors().object().prototype(),
    };
    let obj = JsObject::from_proto_and_data(Some(proto), MetricHandle { id });
    obj.define_property_or_throw(
        js_string!("name"),
        PropertyDescriptor::builder()
            .value(JsString::from(name.as_str()))
            .writable(false)
            .enumerable(true)
            .configurable(false),
        ctx,
    )?;
    Ok(obj.into())
}

/// `metric.add(value, [tags])`: returns true when a sample was added.
fn add(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let handle = this
        .as_object()
        .and_then(|o| o.downcast_ref::<MetricHandle>().map(|h| *h));
    let Some(handle) = handle else {
        return Err(JsNativeError::typ()
            .with_message("add() must be called on a k6/metrics object")
            .into());
    };
    let host = Host::of(ctx);
    if host.phase.get() == Phase::Init {
        return Err(JsNativeError::error()
            .with_message("adding to metrics in the init context is not supported")
            .into());
    }
    let name = host.shared.registry.info(handle.id).name;
    let value = match args.first() {
        None => None,
        Some(v) if v.is_undefined() || v.is_null() => None,
        Some(v) => match v.as_boolean() {
            Some(b) => Some(if b { 1.0 } else { 0.0 }),
            None => Some(v.to_number(ctx)?),
        },
    };
    let value = match value {
        None => {
            warn(&host, &format!("no value was provided for metric '{name}'"));
            return Ok(false.into());
        }
        Some(v) if v.is_nan() => {
            let shown = args[0].to_string(ctx)?.to_std_string_escaped();
            warn(
                &host,
                &format!("'{shown}' is an invalid value for metric '{name}': a number or a boolean value is expected"),
            );
            return Ok(false.into());
        }
        Some(v) => v,
    };
    // A Rate counts non-zero values as passes; the raw value is kept (as k6 does).
    let extra = super::args::string_map(args.get(1), ctx)?;
    host.sample(handle.id, value, &extra, &[]);
    Ok(true.into())
}

fn warn(host: &Host, msg: &str) {
    host.shared.logger.log(Level::Warning, msg, &[]);
}
