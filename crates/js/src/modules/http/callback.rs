//! Response callbacks: which statuses count as expected (`http.expectedStatuses`,
//! `http.setResponseCallback`, the `responseCallback` param).

use std::rc::Rc;

use boa_engine::object::ObjectInitializer;
use boa_engine::{js_string, Context, JsData, JsNativeError, JsResult, JsValue};
use boa_gc::{Finalize, Trace};

/// Inclusive ranges of HTTP statuses a response callback treats as expected.
pub(crate) type StatusRanges = Rc<[(u16, u16)]>;

/// The callback object `http.expectedStatuses(...)` returns.
#[derive(Trace, Finalize, JsData)]
pub(super) struct ExpectedStatuses {
    #[unsafe_ignore_trace]
    ranges: StatusRanges,
}

/// `http.expectedStatuses(...codes | {min, max})`.
pub(super) fn expected_statuses(
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    fn status(v: &JsValue, ctx: &mut Context) -> JsResult<u16> {
        let n = v.to_number(ctx)?;
        if !v.is_number() || n.fract() != 0.0 || !(0.0..=65535.0).contains(&n) {
            return Err(JsNativeError::typ()
                .with_message(format!(
                    "expectedStatuses: arguments must be integer status codes or objects like {{min: 200, max: 299}}, got {}",
                    v.display()
                ))
                .into());
        }
        Ok(n as u16)
    }
    let mut ranges = Vec::with_capacity(a.len());
    for (i, v) in a.iter().enumerate() {
        match v.as_object() {
            Some(o) => {
                let min = o.get(js_string!("min"), ctx)?;
                let max = o.get(js_string!("max"), ctx)?;
                if min.is_undefined() || max.is_undefined() {
                    return Err(JsNativeError::typ()
                        .with_message(format!(
                            "expectedStatuses: argument {i} must have both min and max"
                        ))
                        .into());
                }
                ranges.push((status(&min, ctx)?, status(&max, ctx)?));
            }
            None => {
                let s = status(v, ctx)?;
                ranges.push((s, s));
            }
        }
    }
    let data = ExpectedStatuses {
        ranges: Rc::from(ranges),
    };
    Ok(ObjectInitializer::with_native_data(data, ctx)
        .build()
        .into())
}

/// A response callback value: `null` disables it, otherwise it must come from
/// `expectedStatuses` (the only kind k6 supports too).
pub(super) fn callback_from_js(v: &JsValue) -> JsResult<Option<StatusRanges>> {
    if v.is_null() || v.is_undefined() {
        return Ok(None);
    }
    v.as_object()
        .and_then(|o| o.downcast_ref::<ExpectedStatuses>().map(|e| e.ranges.clone()))
        .map(Some)
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("unsupported response callback: expected the result of http.expectedStatuses() or null")
                .into()
        })
}
