//! The `TextEncoder` and `TextDecoder` globals (k6 2.2, release notes v2.2.0, #6182), as the
//! WHATWG Encoding standard has them: the encoder writes UTF-8 (`encode`, `encodeInto`), the
//! decoder reads UTF-8, UTF-16LE and UTF-16BE (k6's three) with `fatal`, `ignoreBOM` and
//! `decode(…, {stream: true})`. Any other label is a `RangeError`, as in k6.
//!
//! Both constructors are made once per worker thread with k6's other globals
//! (`vu::globals`); a decoder's streaming state is native data of its own object.

use std::cell::RefCell;

use boa_engine::object::builtins::{JsArrayBuffer, JsDataView, JsTypedArray, JsUint8Array};
use boa_engine::object::{ConstructorBuilder, FunctionObjectBuilder};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsData, JsNativeError, JsObject, JsResult, JsString, JsSymbol, JsValue,
    NativeFunction,
};
use boa_gc::{Finalize, Trace};

use crate::modules::encoding::typed_array_window;
use crate::value::{define, plain_object};

/// The encodings a decoder reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
}

impl Encoding {
    /// The encoding of a WHATWG label (ASCII whitespace trimmed, any case).
    fn from_label(label: &str) -> Option<Encoding> {
        let label = label
            .trim_matches(|c: char| matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' '))
            .to_ascii_lowercase();
        Some(match label.as_str() {
            "unicode-1-1-utf-8" | "unicode11utf8" | "unicode20utf8" | "utf-8" | "utf8"
            | "x-unicode20utf8" => Encoding::Utf8,
            "csunicode" | "iso-10646-ucs-2" | "ucs-2" | "unicode" | "unicodefeff" | "utf-16"
            | "utf-16le" => Encoding::Utf16Le,
            "unicodefffe" | "utf-16be" => Encoding::Utf16Be,
            _ => return None,
        })
    }

    /// The encoding's name (the `encoding` property).
    fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16Le => "utf-16le",
            Encoding::Utf16Be => "utf-16be",
        }
    }
}

/// A `TextDecoder`'s settings and what a streaming decode left over.
#[derive(Trace, Finalize, JsData)]
#[boa_gc(unsafe_empty_trace)]
struct Decoder {
    encoding: Encoding,
    fatal: bool,
    ignore_bom: bool,
    state: RefCell<Stream>,
}

/// The state between the calls of a streaming decode.
#[derive(Default)]
struct Stream {
    /// Bytes of a sequence the last call ended in the middle of.
    pending: Vec<u8>,
    /// Whether a code point was output (so a later U+FEFF is no byte-order mark).
    bom_seen: bool,
    /// Whether the last call had `stream: true` (the next one continues it).
    streaming: bool,
}

/// The `TextEncoder` and `TextDecoder` constructors, for the global object.
pub(crate) fn constructors(ctx: &mut Context) -> [(&'static str, JsObject); 2] {
    [
        ("TextEncoder", encoder_constructor(ctx)),
        ("TextDecoder", decoder_constructor(ctx)),
    ]
}

fn getter(
    ctx: &mut Context,
    name: &str,
    f: fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>,
) -> boa_engine::object::builtins::JsFunction {
    let realm = ctx.realm().clone();
    FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(f))
        .name(JsString::from(format!("get {name}")))
        .length(0)
        .build()
}

fn encoder_constructor(ctx: &mut Context) -> JsObject {
    let encoding = getter(ctx, "encoding", encoder_encoding);
    let mut builder = ConstructorBuilder::new(ctx, NativeFunction::from_fn_ptr(new_encoder));
    builder
        .name("TextEncoder")
        .length(0)
        .accessor(
            js_string!("encoding"),
            Some(encoding),
            None,
            Attribute::ENUMERABLE | Attribute::CONFIGURABLE,
        )
        .method(NativeFunction::from_fn_ptr(encode), js_string!("encode"), 0)
        .method(
            NativeFunction::from_fn_ptr(encode_into),
            js_string!("encodeInto"),
            2,
        )
        .property(
            JsSymbol::to_string_tag(),
            js_string!("TextEncoder"),
            Attribute::CONFIGURABLE,
        );
    builder.build().constructor()
}

fn decoder_constructor(ctx: &mut Context) -> JsObject {
    let encoding = getter(ctx, "encoding", decoder_encoding);
    let fatal = getter(ctx, "fatal", decoder_fatal);
    let ignore_bom = getter(ctx, "ignoreBOM", decoder_ignore_bom);
    let mut builder = ConstructorBuilder::new(ctx, NativeFunction::from_fn_ptr(new_decoder));
    builder.name("TextDecoder").length(0);
    for (name, get) in [
        ("encoding", encoding),
        ("fatal", fatal),
        ("ignoreBOM", ignore_bom),
    ] {
        builder.accessor(
            JsString::from(name),
            Some(get),
            None,
            Attribute::ENUMERABLE | Attribute::CONFIGURABLE,
        );
    }
    builder
        .method(NativeFunction::from_fn_ptr(decode), js_string!("decode"), 0)
        .property(
            JsSymbol::to_string_tag(),
            js_string!("TextDecoder"),
            Attribute::CONFIGURABLE,
        );
    builder.build().constructor()
}

/// The prototype of an object made by `new_target` (the constructor's `prototype`).
fn prototype_of(new_target: &JsValue, class: &str, ctx: &mut Context) -> JsResult<JsObject> {
    let Some(target) = new_target.as_object() else {
        return Err(JsNativeError::typ()
            .with_message(format!(
                "Failed to construct '{class}': Please use the 'new' operator"
            ))
            .into());
    };
    Ok(
        match target.get(js_string!("prototype"), ctx)?.as_object() {
            Some(p) => p.clone(),
            None => ctx.intrinsics().constructors().object().prototype(),
        },
    )
}

/// What a `TextEncoder` holds (it has no state; the marker tells its objects apart).
#[derive(Clone, Copy, Trace, Finalize, JsData)]
#[boa_gc(empty_trace)]
struct Encoder;

fn new_encoder(new_target: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let proto = prototype_of(new_target, "TextEncoder", ctx)?;
    Ok(JsObject::from_proto_and_data(Some(proto), Encoder).into())
}

fn check_encoder(this: &JsValue) -> JsResult<()> {
    if this
        .as_object()
        .is_some_and(|o| o.downcast_ref::<Encoder>().is_some())
    {
        Ok(())
    } else {
        Err(JsNativeError::typ()
            .with_message("Illegal invocation: not a TextEncoder")
            .into())
    }
}

fn encoder_encoding(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    check_encoder(this)?;
    Ok(js_string!("utf-8").into())
}

/// `encode(input = "")`: the UTF-8 of the string (lone surrogates as U+FFFD) in a new
/// `Uint8Array`.
fn encode(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    check_encoder(this)?;
    let text = match args.first() {
        None => String::new(),
        Some(v) if v.is_undefined() => String::new(),
        Some(v) => v.to_string(ctx)?.to_std_string_lossy(),
    };
    uint8_array(text.as_bytes(), ctx)
}

/// A new `Uint8Array` holding `bytes`.
fn uint8_array(bytes: &[u8], ctx: &mut Context) -> JsResult<JsValue> {
    let block = boa_engine::object::builtins::AlignedVec::from_iter(0, bytes.iter().copied());
    let buffer = JsArrayBuffer::from_byte_block(block, ctx)?;
    Ok(JsUint8Array::from_array_buffer(buffer, ctx)?.into())
}

/// `encodeInto(source, destination)`: as much of the UTF-8 of `source` as fits, whole code
/// points only, written into the `Uint8Array`; `{read, written}` (UTF-16 units read).
fn encode_into(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    check_encoder(this)?;
    let source = args.first().cloned().unwrap_or_default().to_string(ctx)?;
    let dest = args
        .get(1)
        .and_then(JsValue::as_object)
        .and_then(|o| JsTypedArray::from_object(o.clone()).ok())
        .filter(|t| t.kind() == Some(boa_engine::builtins::typed_array::TypedArrayKind::Uint8))
        .ok_or_else(|| {
            JsNativeError::typ().with_message(
                "Failed to execute 'encodeInto' on 'TextEncoder': parameter 2 is not of type 'Uint8Array'",
            )
        })?;
    let (buf, offset, len) = typed_array_window(&dest, ctx)?;
    let (mut read, mut written) = (0usize, 0usize);
    {
        let mut data = buf.data_mut();
        let room: &mut [u8] = match data.as_deref_mut() {
            Some(d) => d.get_mut(offset..offset + len).unwrap_or_default(),
            None => &mut [],
        };
        for c in char::decode_utf16(source.iter()) {
            let (c, units) = match c {
                Ok(c) => (c, c.len_utf16()),
                Err(_) => (char::REPLACEMENT_CHARACTER, 1),
            };
            let n = c.len_utf8();
            if written + n > room.len() {
                break;
            }
            c.encode_utf8(&mut room[written..written + n]);
            written += n;
            read += units;
        }
    }
    let out = plain_object(ctx);
    let number = |n: usize| u32::try_from(n).map_or(JsValue::from(n as f64), JsValue::from);
    define(&out, js_string!("read"), number(read));
    define(&out, js_string!("written"), number(written));
    Ok(out.into())
}

/// `new TextDecoder(label = "utf-8", {fatal, ignoreBOM})`.
fn new_decoder(new_target: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let proto = prototype_of(new_target, "TextDecoder", ctx)?;
    let label = match args.first() {
        None => "utf-8".to_string(),
        Some(v) if v.is_undefined() => "utf-8".to_string(),
        Some(v) => v.to_string(ctx)?.to_std_string_lossy(),
    };
    let encoding = Encoding::from_label(&label).ok_or_else(|| {
        JsNativeError::range().with_message(format!(
            "Failed to construct 'TextDecoder': The encoding label provided ('{label}') is invalid."
        ))
    })?;
    let (fatal, ignore_bom) = match args.get(1) {
        None => (false, false),
        Some(v) if v.is_null_or_undefined() => (false, false),
        Some(v) => {
            let Some(o) = v.as_object() else {
                return Err(JsNativeError::typ()
                    .with_message("Failed to construct 'TextDecoder': The provided value is not of type 'TextDecoderOptions'")
                    .into());
            };
            (
                o.get(js_string!("fatal"), ctx)?.to_boolean(),
                o.get(js_string!("ignoreBOM"), ctx)?.to_boolean(),
            )
        }
    };
    let decoder = Decoder {
        encoding,
        fatal,
        ignore_bom,
        state: RefCell::default(),
    };
    Ok(JsObject::from_proto_and_data(Some(proto), decoder).into())
}

fn with_decoder<R>(this: &JsValue, f: impl FnOnce(&Decoder) -> R) -> JsResult<R> {
    let obj = this.as_object().ok_or_else(not_a_decoder)?;
    let d = obj.downcast_ref::<Decoder>().ok_or_else(not_a_decoder)?;
    Ok(f(&d))
}

fn not_a_decoder() -> JsNativeError {
    JsNativeError::typ().with_message("Illegal invocation: not a TextDecoder")
}

fn decoder_encoding(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    with_decoder(this, |d| JsString::from(d.encoding.name()).into())
}

fn decoder_fatal(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    with_decoder(this, |d| d.fatal.into())
}

fn decoder_ignore_bom(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    with_decoder(this, |d| d.ignore_bom.into())
}

/// The bytes of an `AllowSharedBufferSource` (an ArrayBuffer, a typed array, a DataView).
fn buffer_source(value: &JsValue, ctx: &mut Context) -> JsResult<Option<Vec<u8>>> {
    let Some(obj) = value.as_object() else {
        return Ok(None);
    };
    if let Ok(buf) = JsArrayBuffer::from_object(obj.clone()) {
        return Ok(Some(buf.to_vec().unwrap_or_default()));
    }
    let (buf, offset, len) = if let Ok(view) = JsTypedArray::from_object(obj.clone()) {
        typed_array_window(&view, ctx)?
    } else if let Ok(view) = JsDataView::from_object(obj.clone()) {
        let Some(buf) = view
            .buffer(ctx)?
            .as_object()
            .and_then(|o| JsArrayBuffer::from_object(o.clone()).ok())
        else {
            return Ok(None);
        };
        (
            buf,
            view.byte_offset(ctx)? as usize,
            view.byte_length(ctx)? as usize,
        )
    } else {
        return Ok(None);
    };
    let data = buf.data();
    Ok(Some(
        data.as_deref()
            .and_then(|d| d.get(offset..offset + len))
            .unwrap_or_default()
            .to_vec(),
    ))
}

/// `decode(input, {stream})`.
fn decode(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let input = match args.first() {
        None => Vec::new(),
        Some(v) if v.is_undefined() => Vec::new(),
        Some(v) => buffer_source(v, ctx)?.ok_or_else(|| {
            JsNativeError::typ().with_message(
                "Failed to execute 'decode' on 'TextDecoder': The provided value is not of type '(ArrayBuffer or ArrayBufferView)'",
            )
        })?,
    };
    let stream = match args.get(1) {
        Some(v) if !v.is_null_or_undefined() => match v.as_object() {
            Some(o) => o.get(js_string!("stream"), ctx)?.to_boolean(),
            None => {
                return Err(JsNativeError::typ()
                    .with_message("Failed to execute 'decode' on 'TextDecoder': The provided value is not of type 'TextDecodeOptions'")
                    .into())
            }
        },
        _ => false,
    };
    let units = with_decoder(this, |d| d.decode(input, stream))??;
    Ok(JsString::from(units.as_slice()).into())
}

impl Decoder {
    /// Decodes `input` after what the last streaming call left, keeping an unfinished
    /// sequence when `stream`: the UTF-16 code units of the text.
    fn decode(&self, input: Vec<u8>, stream: bool) -> JsResult<Vec<u16>> {
        let mut st = self.state.borrow_mut();
        if !st.streaming {
            // A call after a finished one starts over.
            *st = Stream::default();
        }
        st.streaming = stream;
        let mut bytes = std::mem::take(&mut st.pending);
        bytes.extend_from_slice(&input);
        let mut out: Vec<u16> = Vec::with_capacity(bytes.len());
        let rest = match self.encoding {
            Encoding::Utf8 => utf8(&bytes, stream, self.fatal, &mut out)?,
            Encoding::Utf16Le | Encoding::Utf16Be => utf16(
                &bytes,
                self.encoding == Encoding::Utf16Be,
                stream,
                self.fatal,
                &mut out,
            )?,
        };
        st.pending = bytes[bytes.len() - rest..].to_vec();
        if !self.ignore_bom && !st.bom_seen && !out.is_empty() {
            st.bom_seen = true;
            if out[0] == 0xFEFF {
                out.remove(0);
            }
        }
        if !stream {
            *st = Stream::default();
        }
        Ok(out)
    }
}

fn invalid(encoding: &str) -> JsNativeError {
    JsNativeError::typ().with_message(format!(
        "Failed to execute 'decode' on 'TextDecoder': The encoded data was not valid for encoding {encoding}"
    ))
}

/// UTF-8 into `out`, each invalid sequence (its maximal subpart) as one U+FFFD, as the
/// standard and `String::from_utf8_lossy` have it; returns the length of an unfinished
/// sequence at the end left for the next call (only when `stream`).
fn utf8(bytes: &[u8], stream: bool, fatal: bool, out: &mut Vec<u16>) -> JsResult<usize> {
    let mut at = 0;
    loop {
        match std::str::from_utf8(&bytes[at..]) {
            Ok(s) => {
                out.extend(s.encode_utf16());
                return Ok(0);
            }
            Err(e) => {
                let valid = e.valid_up_to();
                let s = std::str::from_utf8(&bytes[at..at + valid]).unwrap_or_default();
                out.extend(s.encode_utf16());
                at += valid;
                match e.error_len() {
                    Some(n) => {
                        if fatal {
                            return Err(invalid("utf-8").into());
                        }
                        out.push(0xFFFD);
                        at += n;
                    }
                    None if stream => return Ok(bytes.len() - at),
                    None => {
                        if fatal {
                            return Err(invalid("utf-8").into());
                        }
                        out.push(0xFFFD);
                        return Ok(0);
                    }
                }
            }
        }
    }
}

/// UTF-16 (little or big endian) into `out`, lone surrogates as U+FFFD; returns the number
/// of bytes left for the next call (an odd byte, a high surrogate) when `stream`.
fn utf16(
    bytes: &[u8],
    big_endian: bool,
    stream: bool,
    fatal: bool,
    out: &mut Vec<u16>,
) -> JsResult<usize> {
    let name = if big_endian { "utf-16be" } else { "utf-16le" };
    let pairs = bytes.chunks_exact(2);
    let odd = pairs.remainder().len();
    let units: Vec<u16> = pairs
        .map(|p| {
            if big_endian {
                u16::from_be_bytes([p[0], p[1]])
            } else {
                u16::from_le_bytes([p[0], p[1]])
            }
        })
        .collect();
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        match u {
            0xD800..=0xDBFF => match units.get(i + 1) {
                Some(&low @ 0xDC00..=0xDFFF) => {
                    out.push(u);
                    out.push(low);
                    i += 2;
                    continue;
                }
                None if stream => return Ok(2 + odd),
                _ => {
                    if fatal {
                        return Err(invalid(name).into());
                    }
                    out.push(0xFFFD);
                }
            },
            0xDC00..=0xDFFF => {
                if fatal {
                    return Err(invalid(name).into());
                }
                out.push(0xFFFD);
            }
            _ => out.push(u),
        }
        i += 1;
    }
    if odd == 0 || stream {
        return Ok(odd);
    }
    if fatal {
        return Err(invalid(name).into());
    }
    out.push(0xFFFD);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf8_lossy(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        utf8(bytes, false, false, &mut out).unwrap();
        String::from_utf16(&out).unwrap()
    }

    #[test]
    fn utf8_replaces_maximal_subparts_as_the_standard_does() {
        // The WHATWG Encoding standard's examples and the Unicode "best practice" cases.
        assert_eq!(utf8_lossy(b"\xF0\x90\x80"), "\u{FFFD}");
        assert_eq!(utf8_lossy(b"\xF0\x90\x80a"), "\u{FFFD}a");
        assert_eq!(utf8_lossy(b"\xC0\xAF"), "\u{FFFD}\u{FFFD}");
        assert_eq!(utf8_lossy(b"\xED\xA0\x80"), "\u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(
            utf8_lossy("h\u{e9}llo \u{1F600}".as_bytes()),
            "h\u{e9}llo \u{1F600}"
        );
    }

    #[test]
    fn utf8_streaming_keeps_an_unfinished_sequence() {
        let mut out = Vec::new();
        assert_eq!(utf8(b"a\xE2\x82", true, false, &mut out).unwrap(), 2);
        assert_eq!(String::from_utf16(&out).unwrap(), "a");
    }

    /// Evaluates `body` in a VU's init context; its return value comes back as JSON.
    fn eval(body: &str) -> serde_json::Value {
        let src = format!(
            "export const options = {{}};\nconst hex = (a) => Array.from(a, (x) => x.toString(16).padStart(2, '0')).join(' ');\ntry {{ options.out = (() => {{ {body} }})(); }} catch (e) {{ options.error = String(e); }}\n"
        );
        let out = crate::test_js::run(&src).expect("runs");
        assert!(out.get("error").is_none(), "{body}: {out}");
        out["out"].clone()
    }

    #[test]
    fn the_encoder_writes_utf8() {
        assert_eq!(
            eval(
                r"const e = new TextEncoder(); return [e.encoding, hex(e.encode('h\u00e9\u20ac\u{1F600}')), e.encode().length, e.encode(undefined).length, hex(e.encode('\ud800x')), e.encode('a') instanceof Uint8Array, Object.prototype.toString.call(e)]"
            ),
            serde_json::json!([
                "utf-8",
                "68 c3 a9 e2 82 ac f0 9f 98 80",
                0,
                0,
                "ef bf bd 78",
                true,
                "[object TextEncoder]"
            ])
        );
        assert_eq!(
            eval(
                r"const d = new Uint8Array(6); const r = new TextEncoder().encodeInto('a\u20ac\u{1F600}', d); const z = new Uint8Array(8); const r2 = new TextEncoder().encodeInto('xy', z.subarray(2, 3)); return [r.read, r.written, hex(d), r2.read, r2.written, hex(z)]"
            ),
            serde_json::json!([2, 4, "61 e2 82 ac 00 00", 1, 1, "00 00 78 00 00 00 00 00"])
        );
    }

    #[test]
    fn the_decoder_reads_utf8_and_utf16() {
        assert_eq!(
            eval("const d = new TextDecoder(); const b = new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0xc3, 0xa9, 0xff]); return [d.encoding, d.fatal, d.ignoreBOM, d.decode(b), new TextDecoder('utf-8', { ignoreBOM: true }).decode(b).length, d.decode(), d.decode(b.buffer), d.decode(new DataView(b.buffer, 3, 1))]"),
            serde_json::json!(["utf-8", false, false, "h\u{e9}\u{FFFD}", 4, "", "h\u{e9}\u{FFFD}", "h"])
        );
        assert_eq!(
            eval("const le = new TextDecoder('utf-16le'); const be = new TextDecoder('UTF-16BE'); return [le.encoding, le.decode(new Uint8Array([0xff, 0xfe, 0x68, 0, 0x3d, 0xd8, 0x00, 0xde])), be.decode(new Uint8Array([0, 0x68, 0xd8, 0x00])), new TextDecoder('utf-16').encoding]"),
            serde_json::json!(["utf-16le", "h\u{1F600}", "h\u{FFFD}", "utf-16le"])
        );
    }

    #[test]
    fn the_decoder_streams_and_can_be_fatal() {
        assert_eq!(
            eval("const d = new TextDecoder(); const parts = [d.decode(new Uint8Array([0xe2, 0x82]), { stream: true }), d.decode(new Uint8Array([0xac, 0xf0]), { stream: true }), d.decode(new Uint8Array([0x9f, 0x98]), { stream: true }), d.decode(new Uint8Array([0x80]))]; const cut = d.decode(new Uint8Array([0xe2, 0x82]), { stream: true }) + '|' + d.decode(); return [parts, cut]"),
            serde_json::json!([["", "\u{20ac}", "", "\u{1F600}"], "|\u{FFFD}"])
        );
        let errors = eval("const f = new TextDecoder('utf8', { fatal: true }); const out = []; for (const t of [() => f.decode(new Uint8Array([0x61, 0xff])), () => f.decode(new Uint8Array([0xe2, 0x82])), () => new TextDecoder('latin1'), () => f.decode('text'), () => TextDecoder()]) { try { t(); out.push('none'); } catch (e) { out.push(e.name); } } out.push(f.fatal, f.decode(new Uint8Array([0x61]))); return out");
        assert_eq!(
            errors,
            serde_json::json!([
                "TypeError",
                "TypeError",
                "RangeError",
                "TypeError",
                "TypeError",
                true,
                "a"
            ])
        );
    }

    #[test]
    fn labels() {
        assert_eq!(Encoding::from_label(" UTF8\n"), Some(Encoding::Utf8));
        assert_eq!(Encoding::from_label("utf-16"), Some(Encoding::Utf16Le));
        assert_eq!(Encoding::from_label("UnicodeFFFE"), Some(Encoding::Utf16Be));
        assert_eq!(Encoding::from_label("latin1"), None);
    }
}
