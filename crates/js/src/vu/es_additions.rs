//! The ECMAScript additions k6 2.3 brought with its engine update (release notes v2.3.0,
//! #6382) that Boa 0.22 lacks: `Uint8Array.fromBase64`/`fromHex` and
//! `Uint8Array.prototype.toBase64`/`toHex`/`setFromBase64`/`setFromHex` (TC39's ArrayBuffer
//! base64 proposal, stage 4)
//! and `Error.isError`. Boa has the ES2025 `Set` methods and `JSON.rawJSON` already. Added
//! to the thread's template built-ins before they are frozen and shared.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use boa_engine::object::builtins::{JsTypedArray, JsUint8Array};
use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{
    js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction,
};

/// Installs the additions; returns nothing to root (they hang off the built-ins).
pub(crate) fn install(ctx: &mut Context) -> JsResult<()> {
    let u8 = ctx
        .intrinsics()
        .constructors()
        .typed_uint8_array()
        .constructor();
    let proto = ctx
        .intrinsics()
        .constructors()
        .typed_uint8_array()
        .prototype();
    method(&u8, "fromBase64", 1, from_base64, ctx)?;
    method(&u8, "fromHex", 1, from_hex, ctx)?;
    method(&proto, "toBase64", 0, to_base64, ctx)?;
    method(&proto, "toHex", 0, to_hex, ctx)?;
    method(&proto, "setFromBase64", 1, set_from_base64, ctx)?;
    method(&proto, "setFromHex", 1, set_from_hex, ctx)?;
    let error = ctx.intrinsics().constructors().error().constructor();
    method(&error, "isError", 1, is_error, ctx)?;
    Ok(())
}

fn method(
    on: &JsObject,
    name: &str,
    length: usize,
    f: fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>,
    ctx: &mut Context,
) -> JsResult<()> {
    let function = FunctionObjectBuilder::new(ctx.realm(), NativeFunction::from_fn_ptr(f))
        .name(JsString::from(name))
        .length(length)
        .build();
    on.define_property_or_throw(
        JsString::from(name),
        PropertyDescriptor::builder()
            .value(function)
            .writable(true)
            .enumerable(false)
            .configurable(true),
        ctx,
    )?;
    Ok(())
}

fn syntax(msg: &str) -> boa_engine::JsError {
    JsNativeError::syntax().with_message(msg.to_string()).into()
}

fn string_arg(args: &[JsValue], what: &str) -> JsResult<String> {
    match args.first() {
        Some(v) if v.is_string() => Ok(v
            .as_string()
            .map(|s| s.to_std_string_escaped())
            .unwrap_or_default()),
        _ => Err(JsNativeError::typ()
            .with_message(format!("{what}: the input must be a string"))
            .into()),
    }
}

/// An option of the options object: a string among `allowed`, or `default`.
fn option(
    options: Option<&JsValue>,
    key: &str,
    allowed: &[&str],
    default: &str,
    ctx: &mut Context,
) -> JsResult<String> {
    let Some(obj) = options.and_then(JsValue::as_object) else {
        return Ok(default.into());
    };
    let v = obj.get(JsString::from(key), ctx)?;
    if v.is_undefined() {
        return Ok(default.into());
    }
    let s = v
        .as_string()
        .map(|s| s.to_std_string_escaped())
        .filter(|s| allowed.contains(&s.as_str()))
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message(format!("{key} must be one of {}", allowed.join(", ")))
        })?;
    Ok(s)
}

fn engine(url: bool, padding: DecodePaddingMode, pad: bool) -> GeneralPurpose {
    let config = GeneralPurposeConfig::new()
        .with_encode_padding(pad)
        .with_decode_padding_mode(padding)
        .with_decode_allow_trailing_bits(padding == DecodePaddingMode::Indifferent);
    let alphabet = if url {
        alphabet::URL_SAFE
    } else {
        alphabet::STANDARD
    };
    GeneralPurpose::new(&alphabet, config)
}

fn bytes_to_array(bytes: Vec<u8>, ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsUint8Array::from_iter(bytes, ctx)?.into())
}

/// Decodes base64 as `fromBase64` does.
fn decode_base64(text: &str, options: Option<&JsValue>, ctx: &mut Context) -> JsResult<Vec<u8>> {
    let alphabet = option(options, "alphabet", &["base64", "base64url"], "base64", ctx)?;
    let handling = option(
        options,
        "lastChunkHandling",
        &["loose", "strict", "stop-before-partial"],
        "loose",
        ctx,
    )?;
    let mut clean: String = text.chars().filter(|c| !is_ascii_space(*c)).collect();
    if handling == "stop-before-partial" && !clean.ends_with('=') {
        let whole = clean.len() / 4 * 4;
        clean.truncate(whole);
    }
    let mode = if handling == "strict" {
        DecodePaddingMode::RequireCanonical
    } else {
        DecodePaddingMode::Indifferent
    };
    engine(alphabet == "base64url", mode, true)
        .decode(clean.as_bytes())
        .map_err(|e| syntax(&format!("fromBase64: {e}")))
}

fn is_ascii_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r')
}

/// Writes `bytes` into `this` from index 0 and returns `{read, written}`.
fn write_into(
    this: &JsValue,
    what: &str,
    bytes: &[u8],
    read: usize,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let array = this_array(this, what)?;
    for (i, b) in bytes.iter().enumerate() {
        array.set(i, JsValue::from(*b), true, ctx)?;
    }
    let result = boa_engine::object::ObjectInitializer::new(ctx)
        .property(
            js_string!("read"),
            read as u32,
            boa_engine::property::Attribute::all(),
        )
        .property(
            js_string!("written"),
            bytes.len() as u32,
            boa_engine::property::Attribute::all(),
        )
        .build();
    Ok(result.into())
}

/// `Uint8Array.prototype.setFromBase64(string, options)`: decodes into this array the
/// whole 3-byte groups that fit (all of it when it fits); `read` counts the characters
/// consumed.
fn set_from_base64(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let text = string_arg(args, "setFromBase64")?;
    let capacity = this_len(this, "setFromBase64", ctx)?;
    let decoded = decode_base64(&text, args.get(1), ctx)?;
    if decoded.len() <= capacity {
        return write_into(this, "setFromBase64", &decoded, text.len(), ctx);
    }
    let groups = capacity / 3;
    let mut significant = 0;
    let mut read = 0;
    for (i, c) in text.char_indices() {
        if significant == groups * 4 {
            read = i;
            break;
        }
        if !is_ascii_space(c) {
            significant += 1;
        }
    }
    write_into(this, "setFromBase64", &decoded[..groups * 3], read, ctx)
}

/// `Uint8Array.prototype.setFromHex(string)`: the byte pairs that fit.
fn set_from_hex(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let text = string_arg(args, "setFromHex")?;
    let capacity = this_len(this, "setFromHex", ctx)?;
    let bytes = hex::decode(&text).map_err(|e| syntax(&format!("setFromHex: {e}")))?;
    let n = bytes.len().min(capacity);
    write_into(this, "setFromHex", &bytes[..n], n * 2, ctx)
}

/// `Uint8Array.fromBase64(string, {alphabet, lastChunkHandling})`: ASCII whitespace is
/// skipped; `loose` (the default) takes a last chunk without padding, `strict` wants it
/// padded and its spare bits zero, `stop-before-partial` leaves a partial last chunk out.
fn from_base64(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let text = string_arg(args, "fromBase64")?;
    let bytes = decode_base64(&text, args.get(1), ctx)?;
    bytes_to_array(bytes, ctx)
}

/// `Uint8Array.fromHex(string)`: an even number of hex digits.
fn from_hex(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let text = string_arg(args, "fromHex")?;
    let bytes = hex::decode(&text).map_err(|e| syntax(&format!("fromHex: {e}")))?;
    bytes_to_array(bytes, ctx)
}

/// `this` as a Uint8Array.
fn this_array(this: &JsValue, what: &str) -> JsResult<JsUint8Array> {
    this.as_object()
        .and_then(|o| JsUint8Array::from_object(o.clone()).ok())
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message(format!("{what}: this is not a Uint8Array"))
                .into()
        })
}

/// The length of `this`, a Uint8Array.
fn this_len(this: &JsValue, what: &str, ctx: &mut Context) -> JsResult<usize> {
    let array = this_array(this, what)?;
    let typed: &JsTypedArray = &array;
    typed.length(ctx)
}

/// The bytes of `this`, a Uint8Array.
fn this_bytes(this: &JsValue, what: &str, ctx: &mut Context) -> JsResult<Vec<u8>> {
    let array = this_array(this, what)?;
    let typed: &JsTypedArray = &array;
    let len = typed.length(ctx)?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let v = typed.get(i, ctx)?;
        out.push(v.to_number(ctx)? as u8);
    }
    Ok(out)
}

/// `Uint8Array.prototype.toBase64({alphabet, omitPadding})`.
fn to_base64(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let bytes = this_bytes(this, "toBase64", ctx)?;
    let alphabet = option(
        args.first(),
        "alphabet",
        &["base64", "base64url"],
        "base64",
        ctx,
    )?;
    let omit = match args.first().and_then(JsValue::as_object) {
        Some(o) => o.get(js_string!("omitPadding"), ctx)?.to_boolean(),
        None => false,
    };
    let text = engine(
        alphabet == "base64url",
        DecodePaddingMode::Indifferent,
        !omit,
    )
    .encode(bytes);
    Ok(JsString::from(text).into())
}

/// `Uint8Array.prototype.toHex()`: lowercase.
fn to_hex(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let bytes = this_bytes(this, "toHex", ctx)?;
    Ok(JsString::from(hex::encode(bytes)).into())
}

/// `Error.isError(value)`: whether `value` is an Error object (made by an Error
/// constructor, whatever its prototype says).
fn is_error(_: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(args
        .first()
        .and_then(JsValue::as_object)
        .is_some_and(|o| o.is::<boa_engine::builtins::error::Error>())
        .into())
}
