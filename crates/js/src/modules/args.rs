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

/// An object of string values as pairs (non-string values are converted with `String()`):
/// its own enumerable string keys, in order, as k6 reads a headers or tags object.
pub(crate) fn string_map(
    value: Option<&JsValue>,
    ctx: &mut Context,
) -> JsResult<Vec<(String, String)>> {
    let Some(obj) = value.and_then(JsValue::as_object) else {
        return Ok(Vec::new());
    };
    let entries = obj.enumerable_own_entries(ctx)?;
    let mut out = Vec::with_capacity(entries.len());
    for (key, v) in entries {
        out.push((key_string(&key), v.to_string(ctx)?.to_std_string_escaped()));
    }
    Ok(out)
}

/// The text of a string or index property key (a symbol's is empty).
pub(crate) fn key_string(key: &PropertyKey) -> String {
    match key {
        PropertyKey::String(s) => s.to_std_string_escaped(),
        PropertyKey::Index(i) => i.get().to_string(),
        PropertyKey::Symbol(_) => String::new(),
    }
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
