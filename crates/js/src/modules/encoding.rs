//! The `k6/encoding` module: `b64encode` and `b64decode`, plus the byte-input helper the
//! crypto module shares.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{DecodeError, Engine};
use boa_engine::builtins::typed_array::TypedArrayKind;
use boa_engine::object::builtins::{JsArrayBuffer, JsTypedArray};
use boa_engine::{Context, JsNativeError, JsResult, JsString, JsValue, NativeFunction};

use super::synthetic::Export;
use crate::value::array_buffer;

pub(super) fn functions() -> Vec<Export> {
    vec![
        ("b64encode", 2, NativeFunction::from_fn_ptr(b64encode)),
        ("b64decode", 3, NativeFunction::from_fn_ptr(b64decode)),
    ]
}

/// The four base64 variants k6 names. Decoding is as lenient as Go's non-strict decoder:
/// unused trailing bits are ignored; the padded variants require padding, the raw ones reject it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variant {
    Std,
    RawStd,
    Url,
    RawUrl,
}

impl Variant {
    /// k6 falls back to `std` for a missing or unknown name.
    pub(crate) fn from_name(name: &str) -> Variant {
        match name {
            "rawstd" => Variant::RawStd,
            "url" => Variant::Url,
            "rawurl" => Variant::RawUrl,
            _ => Variant::Std,
        }
    }

    fn engine(self) -> GeneralPurpose {
        let (alphabet, padded) = match self {
            Variant::Std => (&alphabet::STANDARD, true),
            Variant::RawStd => (&alphabet::STANDARD, false),
            Variant::Url => (&alphabet::URL_SAFE, true),
            Variant::RawUrl => (&alphabet::URL_SAFE, false),
        };
        let config = GeneralPurposeConfig::new()
            .with_encode_padding(padded)
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(if padded {
                DecodePaddingMode::RequireCanonical
            } else {
                DecodePaddingMode::RequireNone
            });
        GeneralPurpose::new(alphabet, config)
    }

    pub(crate) fn encode(self, bytes: &[u8]) -> String {
        self.engine().encode(bytes)
    }

    /// Decodes `text`; like Go, line breaks are skipped.
    pub(crate) fn decode(self, text: &str) -> Result<Vec<u8>, String> {
        let cleaned: Vec<u8> = text
            .bytes()
            .filter(|b| *b != b'\r' && *b != b'\n')
            .collect();
        self.engine().decode(&cleaned).map_err(|e| match e {
            DecodeError::InvalidByte(at, _) | DecodeError::InvalidLastSymbol(at, _) => {
                format!("illegal base64 data at input byte {at}")
            }
            DecodeError::InvalidLength(len) => {
                format!("illegal base64 data: {len} symbols is not a valid length")
            }
            DecodeError::InvalidPadding => {
                "illegal base64 data: wrong or missing padding".to_string()
            }
        })
    }
}

/// The bytes of a string (UTF-8), an `ArrayBuffer` or a typed array's view; `None` for
/// anything else.
pub(crate) fn bytes_of(value: &JsValue, ctx: &mut Context) -> JsResult<Option<Vec<u8>>> {
    if let Some(s) = value.as_string() {
        return Ok(Some(s.to_std_string_lossy().into_bytes()));
    }
    let Some(obj) = value.as_object() else {
        return Ok(None);
    };
    if let Ok(buf) = JsArrayBuffer::from_object(obj.clone()) {
        return Ok(Some(buf.to_vec().unwrap_or_default()));
    }
    if let Ok(view) = JsTypedArray::from_object(obj.clone()) {
        let (buf, offset, len) = typed_array_window(&view, ctx)?;
        let data = buf.data();
        let bytes = data
            .as_deref()
            .and_then(|d| d.get(offset..offset + len))
            .unwrap_or_default();
        return Ok(Some(bytes.to_vec()));
    }
    Ok(None)
}

/// Like [`bytes_of`] but throws k6's error for other types; `what` prefixes the message.
pub(crate) fn require_bytes(
    value: Option<&JsValue>,
    what: Option<&str>,
    ctx: &mut Context,
) -> JsResult<Vec<u8>> {
    let value = value.cloned().unwrap_or_default();
    if let Some(bytes) = bytes_of(&value, ctx)? {
        return Ok(bytes);
    }
    let kind = if value.is_null() {
        "null".to_string()
    } else if let Some(o) = value.as_object() {
        if o.is_array() {
            "array".to_string()
        } else {
            "object".to_string()
        }
    } else {
        value.type_of().to_string()
    };
    let msg = format!("invalid type {kind}, expected string, ArrayBuffer or typed array");
    Err(JsNativeError::typ()
        .with_message(match what {
            Some(w) => format!("{w} failed: {msg}"),
            None => msg,
        })
        .into())
}

/// The `ArrayBuffer` behind a typed array and the byte range the array views.
pub(crate) fn typed_array_window(
    view: &JsTypedArray,
    ctx: &mut Context,
) -> JsResult<(JsArrayBuffer, usize, usize)> {
    let buffer = view.buffer(ctx)?;
    let offset = view.byte_offset(ctx)?;
    let len = view.byte_length(ctx)?;
    let buf = buffer
        .as_object()
        .and_then(|o| JsArrayBuffer::from_object(o.clone()).ok())
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("typed arrays over a SharedArrayBuffer are not supported")
        })?;
    Ok((buf, offset, len))
}

/// Whether `kind` holds integers (what `crypto.getRandomValues` accepts).
pub(crate) fn is_integer_kind(kind: TypedArrayKind) -> bool {
    matches!(
        kind,
        TypedArrayKind::Int8
            | TypedArrayKind::Uint8
            | TypedArrayKind::Uint8Clamped
            | TypedArrayKind::Int16
            | TypedArrayKind::Uint16
            | TypedArrayKind::Int32
            | TypedArrayKind::Uint32
            | TypedArrayKind::BigInt64
            | TypedArrayKind::BigUint64
    )
}

fn string_arg(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<Option<String>> {
    match args.get(i) {
        Some(v) if !v.is_undefined() && !v.is_null() => {
            Ok(Some(v.to_string(ctx)?.to_std_string_lossy()))
        }
        _ => Ok(None),
    }
}

/// `b64encode(input, [encoding])`.
fn b64encode(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let bytes = require_bytes(args.first(), None, ctx)?;
    let variant = Variant::from_name(&string_arg(args, 1, ctx)?.unwrap_or_default());
    Ok(JsString::from(variant.encode(&bytes).as_str()).into())
}

/// `b64decode(input, [encoding], [format])`: an `ArrayBuffer`, or a string for format `'s'`.
fn b64decode(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let input = args.first().cloned().unwrap_or_default();
    let text = if input.is_undefined() || input.is_null() {
        String::new()
    } else if input.is_string() {
        input.to_string(ctx)?.to_std_string_lossy()
    } else if let Some(bytes) = bytes_of(&input, ctx)? {
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        input.to_string(ctx)?.to_std_string_lossy()
    };
    let variant = Variant::from_name(&string_arg(args, 1, ctx)?.unwrap_or_default());
    let bytes = variant
        .decode(&text)
        .map_err(|m| JsNativeError::typ().with_message(m))?;
    if string_arg(args, 2, ctx)?.as_deref() == Some("s") {
        Ok(JsString::from(String::from_utf8_lossy(&bytes).as_ref()).into())
    } else {
        array_buffer(&bytes, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::Variant;

    // RFC 4648 section 10 test vectors.
    const RFC4648: &[(&str, &str)] = &[
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];

    #[test]
    fn std_matches_rfc4648_vectors() {
        for (plain, encoded) in RFC4648 {
            assert_eq!(Variant::Std.encode(plain.as_bytes()), *encoded);
            assert_eq!(Variant::Std.decode(encoded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn raw_variants_drop_padding() {
        for (plain, encoded) in RFC4648 {
            let raw = encoded.trim_end_matches('=');
            assert_eq!(Variant::RawStd.encode(plain.as_bytes()), raw);
            assert_eq!(Variant::RawStd.decode(raw).unwrap(), plain.as_bytes());
            assert_eq!(Variant::RawUrl.decode(raw).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn url_alphabet_uses_dash_and_underscore() {
        let bytes = [0xfb, 0xff, 0xbf];
        assert_eq!(Variant::Std.encode(&bytes), "+/+/");
        assert_eq!(Variant::Url.encode(&bytes), "-_-_");
        assert_eq!(Variant::Url.encode(b"hi?>"), "aGk_Pg==");
        assert_eq!(Variant::RawUrl.encode(b"hi?>"), "aGk_Pg");
        assert_eq!(Variant::Url.decode("-_-_").unwrap(), bytes);
        assert!(Variant::Std.decode("-_-_").is_err());
        assert!(Variant::Url.decode("+/+/").is_err());
    }

    #[test]
    fn padding_rules_follow_go() {
        // Padded variants need the padding, raw ones refuse it.
        assert!(Variant::Std.decode("aGk").is_err());
        assert!(Variant::RawStd.decode("aGk=").is_err());
        assert!(Variant::Url.decode("aGk_Pg").is_err());
        // Go's default decoder ignores unused trailing bits and line breaks.
        assert_eq!(Variant::Std.decode("aGl=").unwrap(), b"hi");
        assert_eq!(Variant::Std.decode("aGVs\r\nbG8=").unwrap(), b"hello");
    }

    #[test]
    fn invalid_input_reports_the_offset() {
        let err = Variant::Std.decode("aG!=").unwrap_err();
        assert_eq!(err, "illegal base64 data at input byte 2");
    }

    #[test]
    fn unknown_names_mean_std() {
        assert_eq!(Variant::from_name("bogus"), Variant::Std);
        assert_eq!(Variant::from_name(""), Variant::Std);
        assert_eq!(Variant::from_name("rawurl"), Variant::RawUrl);
    }
}
