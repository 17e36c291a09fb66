//! Reading the arguments natives receive: optional arguments, option objects, tag maps.

use boa_engine::property::PropertyKey;
use boa_engine::{Context, JsObject, JsResult, JsString, JsValue};

/// Argument `i`, unless absent or `undefined`.
pub(crate) fn arg(args: &[JsValue], i: usize) -> Option<&JsValue> {
    args.get(i).filter(|v| !v.is_undefined())
}

/// Argument `i` converted with `String()` (`undefined` when absent), as `require()` and
/// `import()` read their specifier.
pub(crate) fn string_arg(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<String> {
    Ok(args
        .get(i)
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped())
}

/// An object of string values as pairs (non-string values are converted with `String()`).
pub(crate) fn string_map(
    value: Option<&JsValue>,
    ctx: &mut Context,
) -> JsResult<Vec<(String, String)>> {
    let Some(obj) = value.and_then(JsValue::as_object) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for key in obj.own_property_keys(ctx)? {
        if matches!(key, PropertyKey::Symbol(_)) {
            continue;
        }
        let name = key.to_string();
        let v = obj.get(key, ctx)?;
        out.push((name, v.to_string(ctx)?.to_std_string_escaped()));
    }
    Ok(out)
}

/// Reads an own enumerable property `key` of `obj` if `obj` is an object.
pub(crate) fn prop(
    obj: Option<&JsObject>,
    key: &str,
    ctx: &mut Context,
) -> JsResult<Option<JsValue>> {
    match obj {
        Some(o) => {
            let v = o.get(JsString::from(key), ctx)?;
            Ok((!v.is_undefined() && !v.is_null()).then_some(v))
        }
        None => Ok(None),
    }
}
