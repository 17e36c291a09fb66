//! The global `crypto` object: `getRandomValues`, `randomUUID`, and `subtle` (WebCrypto).

use boa_engine::object::builtins::JsTypedArray;
use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue};

use crate::modules::crypto::{fill_random, method, random_uuid};
use crate::modules::encoding::{is_integer_kind, typed_array_window};

/// Most elements `getRandomValues` fills in one call (k6 counts elements, not bytes).
const MAX_RANDOM_VALUES: usize = 65536;

/// The global `crypto` object.
pub(crate) fn global_object(ctx: &mut Context) -> JsResult<JsObject> {
    let get_random_values = method(ctx, get_random_values, "getRandomValues", 1);
    let random_uuid = method(ctx, random_uuid_fn, "randomUUID", 0);
    let crypto = ObjectInitializer::new(ctx)
        .property(
            js_string!("getRandomValues"),
            get_random_values,
            Attribute::all(),
        )
        .property(js_string!("randomUUID"), random_uuid, Attribute::all())
        .build();
    let subtle = super::object(ctx);
    crypto.set(js_string!("subtle"), subtle, false, ctx)?;
    Ok(crypto)
}

/// `crypto.getRandomValues(typedArray)`: fills an integer typed array in place and returns it.
fn get_random_values(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let arg = args.first().cloned().unwrap_or_default();
    let view = arg
        .as_object()
        .and_then(|o| JsTypedArray::from_object(o.clone()).ok())
        .filter(|v| v.kind().is_some_and(is_integer_kind))
        .ok_or_else(|| {
            JsNativeError::typ().with_message(
                "TypeMismatchError: getRandomValues() needs an integer typed array \
                 (Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, \
                 Int32Array, Uint32Array, BigInt64Array or BigUint64Array)",
            )
        })?;
    if view.length(ctx)? > MAX_RANDOM_VALUES {
        return Err(JsNativeError::range()
            .with_message(format!(
                "QuotaExceededError: getRandomValues() fills at most {MAX_RANDOM_VALUES} elements"
            ))
            .into());
    }
    let (buf, offset, len) = typed_array_window(&view, ctx)?;
    let mut random = vec![0u8; len];
    fill_random(&mut random)?;
    if let Some(mut data) = buf.data_mut() {
        if let Some(window) = data.get_mut(offset..offset + len) {
            window.copy_from_slice(&random);
        }
    }
    Ok(arg)
}

fn random_uuid_fn(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(JsString::from(random_uuid()?.as_str()).into())
}
