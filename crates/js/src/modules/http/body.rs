//! The request body a script gives: strings, `ArrayBuffer`s, forms and multipart bodies.

use boa_engine::object::builtins::JsArrayBuffer;
use boa_engine::property::PropertyKey;
use boa_engine::{Context, JsResult, JsValue};
use bytes::Bytes;

use super::multipart::multipart_body;

/// The request body and the content type it implies (objects become a form).
pub(super) fn body_from_js(
    body: Option<&JsValue>,
    ctx: &mut Context,
) -> JsResult<(Bytes, Option<String>)> {
    let Some(body) = body.filter(|b| !b.is_null()) else {
        return Ok((Bytes::new(), None));
    };
    if let Some(obj) = body.as_object() {
        if let Ok(buf) = JsArrayBuffer::from_object(obj.clone()) {
            return Ok((Bytes::from(buf.to_vec().unwrap_or_default()), None));
        }
        if let Some(multipart) = multipart_body(&obj, ctx)? {
            return Ok(multipart);
        }
        // k6 encodes objects like Go's url.Values: keys sorted, arrays repeat the key.
        let mut pairs: Vec<(String, String)> = Vec::new();
        for key in obj.own_property_keys(ctx)? {
            if matches!(key, PropertyKey::Symbol(_)) {
                continue;
            }
            let name = key.to_string();
            let v = obj.get(key, ctx)?;
            if let Some(arr) = v.as_object().filter(|o| o.is_array()) {
                let len = arr
                    .get(boa_engine::js_string!("length"), ctx)?
                    .to_number(ctx)? as u32;
                for i in 0..len {
                    let item = arr.get(i, ctx)?;
                    pairs.push((name.clone(), item.to_string(ctx)?.to_std_string_escaped()));
                }
            } else {
                pairs.push((name, v.to_string(ctx)?.to_std_string_escaped()));
            }
        }
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut ser = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &pairs {
            ser.append_pair(k, v);
        }
        return Ok((
            Bytes::from(ser.finish()),
            Some("application/x-www-form-urlencoded".to_owned()),
        ));
    }
    Ok((
        Bytes::from(body.to_string(ctx)?.to_std_string_escaped()),
        None,
    ))
}
