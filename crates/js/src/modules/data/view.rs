//! A VU's read-only view onto a [`SharedData`]: a `Proxy` over an empty array whose handler
//! holds the shared data and decodes an element only when the script reads it, so VUs do
//! not each hold a copy.

use std::sync::Arc;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::{FunctionObjectBuilder, IntegrityLevel, ObjectInitializer};
use boa_engine::property::{Attribute, PropertyKey};
use boa_engine::{
    js_string, Context, Finalize, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    NativeFunction, Trace,
};
use serde_json::Value;

use super::registry::SharedData;
use crate::value::{define, plain_object};

/// Native data of a view's proxy handler.
#[derive(Trace, Finalize, JsData)]
struct Handler {
    #[unsafe_ignore_trace]
    data: Arc<SharedData>,
}

/// A `Proxy` that reads like a frozen array of `data`'s elements.
pub(crate) fn make(data: Arc<SharedData>, ctx: &mut Context) -> JsResult<JsObject> {
    type Trap = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;
    let traps: [(&str, Trap, usize); 8] = [
        ("get", get, 3),
        ("has", has, 2),
        ("ownKeys", own_keys, 1),
        ("getOwnPropertyDescriptor", own_descriptor, 2),
        ("set", immutable, 4),
        ("deleteProperty", immutable, 2),
        ("defineProperty", immutable, 3),
        ("setPrototypeOf", immutable, 2),
    ];
    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::with_native_data(Handler { data }, ctx);
    for (name, f, len) in traps {
        let func = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(f))
            .name(JsString::from(name))
            .length(len)
            .build();
        init.property(JsString::from(name), func, Attribute::all());
    }
    let handler = init.build();
    // An array target makes `Array.isArray` true and lends Array.prototype's methods, which
    // then read elements through the traps.
    let target = JsArray::new(ctx)?;
    let proxy = ctx
        .intrinsics()
        .constructors()
        .proxy()
        .constructor()
        .construct(&[target.into(), handler.into()], None, ctx)?;
    Ok(proxy)
}

fn data_of(this: &JsValue) -> JsResult<Arc<SharedData>> {
    let obj = this.as_object();
    let data = obj
        .as_ref()
        .and_then(|o| o.downcast_ref::<Handler>().map(|h| h.data.clone()));
    data.ok_or_else(|| {
        JsNativeError::typ()
            .with_message("SharedArray trap called on a foreign object")
            .into()
    })
}

/// The element index `key` names: a canonical array index (`"3"`, not `"03"` or `"3.0"`).
fn index(key: &JsValue) -> Option<usize> {
    let s = key.as_string()?.to_std_string().ok()?;
    let n: u32 = s.parse().ok()?;
    (n != u32::MAX && n.to_string() == s).then_some(n as usize)
}

fn is_length(key: &JsValue) -> bool {
    key.as_string().is_some_and(|s| s == js_string!("length"))
}

fn target_of(args: &[JsValue]) -> JsResult<JsObject> {
    args.first().and_then(JsValue::as_object).ok_or_else(|| {
        JsNativeError::typ()
            .with_message("SharedArray trap without a target")
            .into()
    })
}

fn key_of(args: &[JsValue], ctx: &mut Context) -> JsResult<PropertyKey> {
    args.get(1)
        .cloned()
        .unwrap_or_default()
        .to_property_key(ctx)
}

/// A new deeply frozen copy of element `i`, as k6 returns on every read.
fn element(data: &SharedData, i: usize, ctx: &mut Context) -> JsResult<JsValue> {
    let Some(text) = data.element(i) else {
        return Ok(JsValue::undefined());
    };
    let value: Value = serde_json::from_str(text).map_err(|e| {
        JsNativeError::error().with_message(format!("corrupt SharedArray element {i}: {e}"))
    })?;
    frozen(&value, ctx)
}

/// `value` as a JS value whose objects and arrays are all frozen.
pub(crate) fn frozen(value: &Value, ctx: &mut Context) -> JsResult<JsValue> {
    let obj: JsObject = match value {
        Value::Null => return Ok(JsValue::null()),
        Value::Bool(b) => return Ok((*b).into()),
        Value::Number(n) => {
            return Ok(match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
                Some(i) => i.into(),
                None => n.as_f64().unwrap_or(f64::NAN).into(),
            })
        }
        Value::String(s) => return Ok(JsString::from(s.as_str()).into()),
        Value::Array(items) => {
            let mut values = Vec::with_capacity(items.len());
            for item in items {
                values.push(frozen(item, ctx)?);
            }
            JsArray::from_iter(values, ctx).into()
        }
        Value::Object(map) => {
            let obj = plain_object(ctx);
            for (k, v) in map {
                let v = frozen(v, ctx)?;
                define(&obj, JsString::from(k.as_str()), v);
            }
            obj
        }
    };
    obj.set_integrity_level(IntegrityLevel::Frozen, ctx)?;
    Ok(obj.into())
}

fn get(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = data_of(this)?;
    let key = args.get(1).cloned().unwrap_or_default();
    if let Some(i) = index(&key) {
        return element(&data, i, ctx);
    }
    if is_length(&key) {
        return Ok(data.len().into());
    }
    let target = target_of(args)?;
    let key = key.to_property_key(ctx)?;
    target.get(key, ctx)
}

fn has(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = data_of(this)?;
    let key = args.get(1).cloned().unwrap_or_default();
    if let Some(i) = index(&key) {
        return Ok((i < data.len()).into());
    }
    let target = target_of(args)?;
    let key = key_of(args, ctx)?;
    Ok(target.has_property(key, ctx)?.into())
}

fn own_keys(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = data_of(this)?;
    let keys = (0..data.len())
        .map(|i| JsValue::from(JsString::from(i.to_string().as_str())))
        .chain(std::iter::once(js_string!("length").into()));
    Ok(JsArray::from_iter(keys, ctx).into())
}

fn own_descriptor(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = data_of(this)?;
    let key = args.get(1).cloned().unwrap_or_default();
    // The proxy invariants allow reporting configurable properties the (extensible) target
    // lacks; `length` must match the target's non-configurable one except for its value.
    let (value, element) = match index(&key) {
        Some(i) if i < data.len() => (element(&data, i, ctx)?, true),
        _ if is_length(&key) => (data.len().into(), false),
        _ => return Ok(JsValue::undefined()),
    };
    let desc = plain_object(ctx);
    define(&desc, js_string!("value"), value);
    define(&desc, js_string!("writable"), true);
    define(&desc, js_string!("enumerable"), element);
    define(&desc, js_string!("configurable"), element);
    Ok(desc.into())
}

fn immutable(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Err(JsNativeError::typ()
        .with_message("SharedArray is immutable")
        .into())
}
