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
    let mut ready = Vec::with_capacity(parts.len());
    for (name, v, file) in parts {
        let (file, data) = match file {
            Some(f) => {
                let filename = f.get(js_string!("filename"), ctx)?.to_string(ctx)?;
                let ct = f.get(js_string!("content_type"), ctx)?.to_string(ctx)?;
                let data = f.get(js_string!("data"), ctx)?;
                (
                    Some((filename.to_std_string_escaped(), ct.to_std_string_escaped())),
                    bytes_of(&data, ctx)?,
                )
            }
            None => (None, bytes_of(&v, ctx)?),
        };
        ready.push(Part { name, file, data });
    }
    let boundary = boundary(Host::of(ctx).vu_id);
    let out = write_parts(&boundary, &ready);
    Ok(Some((
        Bytes::from(out),
        Some(format!("multipart/form-data; boundary={boundary}")),
    )))
}

/// One form field of a multipart body.
struct Part {
    name: String,
    /// `(filename, content type)` for an `http.file()` value.
    file: Option<(String, String)>,
    data: Vec<u8>,
}

/// The `multipart/form-data` body of `parts` with `boundary`, as Go's multipart writer
/// lays it out.
fn write_parts(boundary: &str, parts: &[Part]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        out.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"",
                quote(&part.name)
            )
            .as_bytes(),
        );
        if let Some((filename, ct)) = &part.file {
            out.extend_from_slice(
                format!("; filename=\"{}\"\r\nContent-Type: {ct}", quote(filename)).as_bytes(),
            );
        }
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(&part.data);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    out
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

    /// A quoted-string parameter as a multipart reader reads it: `\x` is `x`.
    fn unquote(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' {
                chars.next().unwrap_or('\\')
            } else {
                c
            });
        }
        out
    }

    /// Reads a body back as a multipart parser would: split at the boundary lines, each
    /// part's head from its body at the blank line, the parameters' quoted strings.
    /// A part as read back: name, `(filename, content type)` of a file, data.
    type ReadPart = (String, Option<(String, String)>, Vec<u8>);

    fn read_parts(boundary: &str, body: &[u8]) -> Vec<ReadPart> {
        let delim = format!("\r\n--{boundary}");
        let mut rest = body
            .strip_prefix(format!("--{boundary}").as_bytes())
            .expect("starts with the boundary")
            .to_vec();
        let mut out = Vec::new();
        loop {
            if rest.starts_with(b"--\r\n") {
                assert_eq!(rest.len(), 4, "nothing after the closing boundary");
                return out;
            }
            let after = rest.strip_prefix(b"\r\n").expect("CRLF after the boundary");
            let at = after
                .windows(delim.len())
                .position(|w| w == delim.as_bytes())
                .expect("a next boundary");
            let part = &after[..at];
            let blank = part
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .expect("a head");
            let head = std::str::from_utf8(&part[..blank]).unwrap();
            let data = part[blank + 4..].to_vec();
            let mut lines = head.split("\r\n");
            let disposition = lines.next().unwrap();
            let params = disposition
                .strip_prefix("Content-Disposition: form-data; name=\"")
                .unwrap();
            // The name ends at the first quote not escaped.
            let end = |s: &str| {
                let mut escaped = false;
                s.char_indices()
                    .find(|(_, c)| {
                        let stop = *c == '"' && !escaped;
                        escaped = *c == '\\' && !escaped;
                        stop
                    })
                    .unwrap()
                    .0
            };
            let name_end = end(params);
            let name = unquote(&params[..name_end]);
            let file = params[name_end + 1..]
                .strip_prefix("; filename=\"")
                .map(|f| {
                    let fe = end(f);
                    let ct = lines
                        .next()
                        .unwrap()
                        .strip_prefix("Content-Type: ")
                        .unwrap();
                    (unquote(&f[..fe]), ct.to_owned())
                });
            out.push((name, file, data));
            rest = after[at + delim.len()..].to_vec();
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(proptest::test_runner::Config {
                cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
                failure_persistence: None,
                ..proptest::test_runner::Config::default()
            })]

            /// A body reads back to its parts: names and filenames with quotes and
            /// backslashes, any data bytes, files and plain fields in order.
            #[test]
            fn bodies_read_back(
                parts in prop::collection::vec(
                    (
                        "[^\r\n]{0,8}",
                        prop::option::of(("[^\r\n]{0,8}", "[a-z]{1,5}/[a-z-]{1,8}")),
                        prop::collection::vec(any::<u8>(), 0..40),
                    ),
                    1..5,
                ),
            ) {
                let b = boundary(1);
                let input: Vec<Part> = parts
                    .iter()
                    .map(|(name, file, data)| Part { name: name.clone(), file: file.clone(), data: data.clone() })
                    .collect();
                let body = write_parts(&b, &input);
                prop_assert_eq!(read_parts(&b, &body), parts);
            }
        }
    }
}
