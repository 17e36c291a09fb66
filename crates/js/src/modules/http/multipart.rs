//! `http.file()` and `multipart/form-data` request bodies.

use std::time::SystemTime;

use boa_engine::object::builtins::JsArrayBuffer;
use boa_engine::object::ObjectInitializer;
use boa_engine::property::{Attribute, PropertyKey};
use boa_engine::{js_string, Context, JsData, JsObject, JsResult, JsString, JsValue};
use boa_gc::{Finalize, Trace};
use bytes::Bytes;

use crate::host::Host;
use crate::modules::args::arg;

/// Marks the objects `http.file()` returns, so bodies holding one become multipart.
#[derive(Trace, Finalize, JsData)]
struct FileData;

/// `http.file(data, [filename], [contentType])`.
pub(super) fn file(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = a.first().cloned().unwrap_or_default();
    let filename = match arg(a, 1) {
        Some(v) => v.to_string(ctx)?,
        // k6 names an unnamed file after the current time in nanoseconds.
        None => JsString::from(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
                .to_string(),
        ),
    };
    let content_type = match arg(a, 2) {
        Some(v) => v.to_string(ctx)?,
        None => js_string!("application/octet-stream"),
    };
    Ok(ObjectInitializer::with_native_data(FileData, ctx)
        .property(js_string!("data"), data, Attribute::all())
        .property(js_string!("filename"), filename, Attribute::all())
        .property(js_string!("content_type"), content_type, Attribute::all())
        .build()
        .into())
}

/// Bytes of a string, ArrayBuffer or typed array value.
fn bytes_of(v: &JsValue, ctx: &mut Context) -> JsResult<Vec<u8>> {
    if let Some(o) = v.as_object() {
        if let Ok(buf) = JsArrayBuffer::from_object(o.clone()) {
            return Ok(buf.to_vec().unwrap_or_default());
        }
        if let Ok(arr) = boa_engine::object::builtins::JsUint8Array::from_object(o.clone()) {
            return Ok(arr.iter(ctx).collect());
        }
        if o.is_array() {
            let len = o.get(js_string!("length"), ctx)?.to_number(ctx)? as u32;
            let mut out = Vec::with_capacity(len as usize);
            for i in 0..len {
                out.push(o.get(i, ctx)?.to_number(ctx)? as u8);
            }
            return Ok(out);
        }
    }
    Ok(v.to_string(ctx)?.to_std_string_escaped().into_bytes())
}

/// A `multipart/form-data` body if `obj` holds any `http.file()` value, with one part per
/// property in property order (as k6 was observed to send them).
pub(super) fn multipart_body(
    obj: &JsObject,
    ctx: &mut Context,
) -> JsResult<Option<(Bytes, Option<String>)>> {
    let mut parts = Vec::new();
    let mut any_file = false;
    for key in obj.own_property_keys(ctx)? {
        if matches!(key, PropertyKey::Symbol(_)) {
            continue;
        }
        let name = key.to_string();
        let v = obj.get(key, ctx)?;
        let file = v
            .as_object()
            .filter(|o| o.downcast_ref::<FileData>().is_some());
        any_file |= file.is_some();
        parts.push((name, v, file));
    }
    if !any_file {
        return Ok(None);
    }
    let boundary = boundary(Host::of(ctx).vu_id);
    let mut out = Vec::new();
    for (name, v, file) in parts {
        out.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"",
                quote(&name)
            )
            .as_bytes(),
        );
        let data = match file {
            Some(f) => {
                let filename = f.get(js_string!("filename"), ctx)?.to_string(ctx)?;
                let ct = f.get(js_string!("content_type"), ctx)?.to_string(ctx)?;
                out.extend_from_slice(
                    format!(
                        "; filename=\"{}\"\r\nContent-Type: {}",
                        quote(&filename.to_std_string_escaped()),
                        ct.to_std_string_escaped()
                    )
                    .as_bytes(),
                );
                let data = f.get(js_string!("data"), ctx)?;
                bytes_of(&data, ctx)?
            }
            None => bytes_of(&v, ctx)?,
        };
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(&data);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok(Some((
        Bytes::from(out),
        Some(format!("multipart/form-data; boundary={boundary}")),
    )))
}

/// A 60-hex-digit multipart boundary, different for every body.
fn boundary(vu: u64) -> String {
    use std::hash::{BuildHasher, Hasher};
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let mut out = String::with_capacity(64);
    for i in 0..4u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u64(vu);
        h.write_u64(i);
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out.truncate(60);
    out
}

/// Escapes a multipart header parameter value.
fn quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_60_hex_digits_and_differ() {
        let a = boundary(1);
        assert_eq!(a.len(), 60);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, boundary(1));
    }
}
