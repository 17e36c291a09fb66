//! Reading the arguments of `crypto.subtle` methods: buffer sources, algorithm
//! dictionaries (into the typed parameters of each operation), usages and keys.

use boa_engine::object::builtins::{JsArrayBuffer, JsDataView, JsTypedArray, JsUint8Array};
use boa_engine::{js_string, Context, JsObject, JsString, JsValue};

use super::algorithm::{AesMode, Curve, EcKind, Hash, Kdf, KeyAlgorithm, Name, RsaScheme, Usage};
use super::error::{fail, ErrorName, Fail};
use super::key::CryptoKey;
use crate::modules::encoding::typed_array_window;

/// The parameters of a key to generate, import, derive or unwrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyParams {
    Hmac {
        hash: Hash,
        length: Option<usize>,
    },
    Aes {
        mode: AesMode,
        length: Option<usize>,
    },
    Ec {
        kind: EcKind,
        curve: Curve,
    },
    Rsa {
        scheme: RsaScheme,
        hash: Hash,
        /// `modulusLength` and `publicExponent`, read for `generateKey` only.
        generate: Option<(usize, Vec<u8>)>,
    },
    /// The secret material of PBKDF2 or HKDF (importKey only).
    Kdf(Kdf),
}

/// The parameters of `deriveBits`/`deriveKey` with PBKDF2 or HKDF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KdfParams {
    Pbkdf2 {
        hash: Hash,
        salt: Vec<u8>,
        iterations: u32,
    },
    Hkdf {
        hash: Hash,
        salt: Vec<u8>,
        info: Vec<u8>,
    },
}

/// The parameters of `sign` and `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignParams {
    Hmac,
    Ecdsa(Hash),
    Pkcs1,
    /// RSA-PSS with its `saltLength` (out-of-range values saturate, and then fail).
    Pss(usize),
}

/// The parameters of `encrypt`, `decrypt`, `wrapKey` and `unwrapKey`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CipherParams {
    Gcm {
        iv: Vec<u8>,
        aad: Vec<u8>,
        tag_bits: u32,
    },
    Cbc {
        iv: Vec<u8>,
    },
    Ctr {
        counter: Vec<u8>,
        length: u32,
    },
    Kw,
    Oaep {
        label: Vec<u8>,
    },
}

pub(crate) fn arg(args: &[JsValue], i: usize) -> JsValue {
    args.get(i).cloned().unwrap_or_default()
}

/// The bytes of a `BufferSource` (ArrayBuffer, typed array or DataView).
pub(crate) fn buffer_source(
    value: &JsValue,
    what: &str,
    ctx: &mut Context,
) -> Result<Vec<u8>, Fail> {
    let bad = || {
        fail(
            ErrorName::Operation,
            format!("{what} is neither an ArrayBuffer, nor a TypedArray nor a DataView"),
        )
    };
    let obj = value.as_object().ok_or_else(bad)?;
    if let Ok(buf) = JsArrayBuffer::from_object(obj.clone()) {
        return Ok(buf.to_vec().unwrap_or_default());
    }
    let (buf, offset, len) = if let Ok(view) = JsTypedArray::from_object(obj.clone()) {
        typed_array_window(&view, ctx)?
    } else if let Ok(view) = JsDataView::from_object(obj.clone()) {
        let buf = view
            .buffer(ctx)?
            .as_object()
            .and_then(|o| JsArrayBuffer::from_object(o.clone()).ok())
            .ok_or_else(bad)?;
        (
            buf,
            view.byte_offset(ctx)? as usize,
            view.byte_length(ctx)? as usize,
        )
    } else {
        return Err(bad());
    };
    let data = buf.data();
    Ok(data
        .as_deref()
        .and_then(|d| d.get(offset..offset + len))
        .unwrap_or_default()
        .to_vec())
}

/// An algorithm argument: a name, or a dictionary with a `name`.
pub(crate) fn algorithm_arg(
    value: &JsValue,
    op: &str,
    ctx: &mut Context,
) -> Result<(Name, Option<JsObject>), Fail> {
    let (text, obj) = match value.as_object() {
        Some(o) => {
            let name = o.get(js_string!("name"), ctx)?;
            if name.is_undefined() {
                return Err(fail(ErrorName::Type, "the algorithm has no name"));
            }
            (name.to_string(ctx)?, Some(o.clone()))
        }
        None => (value.to_string(ctx)?, None),
    };
    let name = Name::parse(&text.to_std_string_lossy(), op)?;
    Ok((name, obj))
}

/// A member of a dictionary, `None` when absent or undefined.
pub(crate) fn member(
    obj: Option<&JsObject>,
    key: &str,
    ctx: &mut Context,
) -> Result<Option<JsValue>, Fail> {
    let Some(o) = obj else { return Ok(None) };
    let v = o.get(JsString::from(key), ctx)?;
    Ok((!v.is_undefined()).then_some(v))
}

fn required(
    obj: Option<&JsObject>,
    key: &str,
    alg: &str,
    ctx: &mut Context,
) -> Result<JsValue, Fail> {
    member(obj, key, ctx)?.ok_or_else(|| {
        fail(
            ErrorName::Type,
            format!("the {alg} parameters need a '{key}' member"),
        )
    })
}

/// A member k6 requires with a `SyntaxError` when it is missing or null.
fn k6_required(obj: Option<&JsObject>, key: &str, ctx: &mut Context) -> Result<JsValue, Fail> {
    member(obj, key, ctx)?
        .filter(|v| !v.is_null())
        .ok_or_else(|| {
            fail(
                ErrorName::Syntax,
                format!("could not get {key} from algorithm parameter"),
            )
        })
}

/// A hash given as a name or a `{name}` dictionary.
fn hash_value(value: &JsValue, ctx: &mut Context) -> Result<Hash, Fail> {
    let name = match value.as_object() {
        Some(o) => o.get(js_string!("name"), ctx)?,
        None => value.clone(),
    };
    let name = name.to_string(ctx)?.to_std_string_lossy();
    Hash::from_name(&name).ok_or_else(|| {
        fail(
            ErrorName::NotSupported,
            format!("hash algorithm is not supported {name}"),
        )
    })
}

/// The `hash` member of HMAC parameters.
fn hmac_hash(obj: Option<&JsObject>, ctx: &mut Context) -> Result<Hash, Fail> {
    let value = required(obj, "hash", "HMAC", ctx)?;
    match algorithm_arg(&value, "digest", ctx)?.0 {
        Name::Digest(h) => Ok(h),
        _ => Err(fail(
            ErrorName::NotSupported,
            "the HMAC hash must be SHA-1, SHA-256, SHA-384 or SHA-512",
        )),
    }
}

/// The `length` member, a non-negative integer, if given.
pub(crate) fn bits_param(obj: Option<&JsObject>, ctx: &mut Context) -> Result<Option<usize>, Fail> {
    match member(obj, "length", ctx)? {
        Some(v) => {
            let n = v.to_number(ctx)?;
            if !(n.is_finite() && n >= 0.0 && n.fract() == 0.0) {
                return Err(fail(
                    ErrorName::Type,
                    "length must be a non-negative integer",
                ));
            }
            Ok(Some(n as usize))
        }
        None => Ok(None),
    }
}

/// `keyUsages`: an array of usage names, without duplicates.
pub(crate) fn usages_arg(value: &JsValue, ctx: &mut Context) -> Result<Vec<Usage>, Fail> {
    let obj = value
        .as_object()
        .ok_or_else(|| fail(ErrorName::Type, "keyUsages must be an array"))?;
    let len = obj.get(js_string!("length"), ctx)?.to_length(ctx)?;
    let mut out = Vec::new();
    for i in 0..len {
        let name = obj.get(i, ctx)?.to_string(ctx)?.to_std_string_lossy();
        let usage = Usage::from_name(&name)
            .ok_or_else(|| fail(ErrorName::Type, format!("unknown key usage: {name}")))?;
        if !out.contains(&usage) {
            out.push(usage);
        }
    }
    Ok(out)
}

/// The key behind an argument; `what` names it in the error.
pub(crate) fn key_arg(value: &JsValue, what: &str) -> Result<CryptoKey, Fail> {
    CryptoKey::from_value(Some(value))
        .ok_or_else(|| fail(ErrorName::Type, format!("{what} is not a CryptoKey")))
}

/// The parameters of a key of algorithm `name` for `op` (`generateKey`, `importKey`...).
pub(crate) fn key_params(
    name: Name,
    obj: Option<&JsObject>,
    op: &str,
    ctx: &mut Context,
) -> Result<KeyParams, Fail> {
    Ok(match name {
        Name::Hmac => KeyParams::Hmac {
            hash: hmac_hash(obj, ctx)?,
            length: bits_param(obj, ctx)?,
        },
        Name::Aes(mode) => KeyParams::Aes {
            mode,
            length: bits_param(obj, ctx)?,
        },
        Name::Ec(kind) => {
            let curve = k6_required(obj, "namedCurve", ctx)?
                .to_string(ctx)?
                .to_std_string_lossy();
            let curve = Curve::from_name(&curve).ok_or_else(|| {
                fail(
                    ErrorName::NotSupported,
                    format!("elliptic curve {curve} is not supported"),
                )
            })?;
            KeyParams::Ec { kind, curve }
        }
        Name::Rsa(scheme) => {
            let generate = if op == "generateKey" {
                let bits = k6_required(obj, "modulusLength", ctx)?.to_number(ctx)?;
                let exponent = k6_required(obj, "publicExponent", ctx)?;
                let exponent = exponent
                    .as_object()
                    .and_then(|o| JsUint8Array::from_object(o.clone()).ok())
                    .ok_or_else(|| {
                        fail(ErrorName::Operation, "publicExponent is not a byte array")
                    })?;
                let exponent = buffer_source(&exponent.into(), "publicExponent", ctx)?;
                let bits = if bits.is_finite() && bits > 0.0 {
                    bits as usize
                } else {
                    0
                };
                Some((bits, exponent))
            } else {
                None
            };
            let hash = hash_value(&k6_required(obj, "hash", ctx)?, ctx)?;
            KeyParams::Rsa {
                scheme,
                hash,
                generate,
            }
        }
        Name::Kdf(k) => KeyParams::Kdf(k),
        Name::Digest(h) => return Err(super::algorithm::unsupported(h.name(), op).into()),
    })
}

/// A member k6 reads with `traverseObject`: a `TypeError` when missing or null.
fn field(obj: Option<&JsObject>, key: &str, ctx: &mut Context) -> Result<JsValue, Fail> {
    member(obj, key, ctx)?
        .filter(|v| !v.is_null())
        .ok_or_else(|| fail(ErrorName::Type, format!("field {key} is null or undefined")))
}

/// Bytes given as a `BufferSource` or (as k6 also takes them) a string's UTF-8.
fn bytes_or_text(value: &JsValue, what: &str, ctx: &mut Context) -> Result<Vec<u8>, Fail> {
    if value.is_string() {
        return Ok(value.to_string(ctx)?.to_std_string_lossy().into_bytes());
    }
    buffer_source(value, what, ctx)
}

/// The parameters of a PBKDF2 (k6 1.6's checks, in its order) or HKDF derivation.
pub(crate) fn kdf_params(
    kdf: Kdf,
    obj: Option<&JsObject>,
    ctx: &mut Context,
) -> Result<KdfParams, Fail> {
    let hash = member(obj, "hash", ctx)?
        .filter(|v| !v.is_null())
        .ok_or_else(|| {
            fail(
                ErrorName::Syntax,
                "could not get hash from algorithm parameter",
            )
        })?;
    let hash = match algorithm_arg(&hash, "deriveBits", ctx)?.0 {
        Name::Digest(h) => h,
        other => return Err(super::algorithm::unsupported(other.as_str(), "deriveBits").into()),
    };
    Ok(match kdf {
        Kdf::Pbkdf2 => {
            let n = field(obj, "iterations", ctx)?.to_number(ctx)?;
            let n = if n.is_finite() { n.trunc() } else { 0.0 };
            if n == 0.0 {
                return Err(fail(
                    ErrorName::Operation,
                    "number of iterations can't be 0",
                ));
            }
            if !(1.0..=f64::from(u32::MAX)).contains(&n) {
                return Err(fail(
                    ErrorName::Type,
                    format!("iterations must be between 1 and {}", u32::MAX),
                ));
            }
            let salt = field(obj, "salt", ctx)?;
            KdfParams::Pbkdf2 {
                hash,
                salt: bytes_or_text(&salt, "salt", ctx)?,
                iterations: n as u32,
            }
        }
        Kdf::Hkdf => {
            let salt = field(obj, "salt", ctx)?;
            let salt = bytes_or_text(&salt, "salt", ctx)?;
            let info = field(obj, "info", ctx)?;
            KdfParams::Hkdf {
                hash,
                salt,
                info: bytes_or_text(&info, "info", ctx)?,
            }
        }
    })
}

impl KeyParams {
    /// The algorithm of a secret key with `key_len` bytes of material if known, or of
    /// the length the parameters ask for.
    pub(crate) fn secret_algorithm(&self, key_len: Option<usize>) -> Result<KeyAlgorithm, Fail> {
        match *self {
            KeyParams::Hmac {
                hash,
                length: given,
            } => {
                let length = match (key_len, given) {
                    (None, None) => hash.block_bits(),
                    (None, Some(0)) => {
                        return Err(fail(ErrorName::Operation, "invalid key length 0"))
                    }
                    (None, Some(n)) => n,
                    (Some(bytes), None) => bytes * 8,
                    (Some(bytes), Some(n)) if n <= bytes * 8 && n + 8 > bytes * 8 => n,
                    (Some(bytes), Some(n)) => {
                        return Err(fail(
                            ErrorName::Data,
                            format!("the HMAC length {n} does not fit a key of {bytes} bytes"),
                        ))
                    }
                };
                if length == 0 {
                    return Err(fail(ErrorName::Data, "an HMAC key cannot be empty"));
                }
                Ok(KeyAlgorithm::Hmac { hash, length })
            }
            KeyParams::Aes { mode, length } => {
                let length = match key_len {
                    Some(bytes) if super::aes_modes::valid_key_len(bytes) => bytes * 8,
                    Some(bytes) => {
                        return Err(fail(
                            ErrorName::Data,
                            format!("invalid AES key length {bytes} bytes"),
                        ))
                    }
                    None => match length {
                        Some(n @ (128 | 192 | 256)) => n,
                        Some(n) => {
                            return Err(fail(
                                ErrorName::Operation,
                                format!("invalid AES key length {n}; use 128, 192 or 256"),
                            ))
                        }
                        None => return Err(fail(ErrorName::Type, "AES keys need a 'length'")),
                    },
                };
                Ok(KeyAlgorithm::Aes { mode, length })
            }
            KeyParams::Ec { kind, .. } => Err(fail(
                ErrorName::NotSupported,
                format!("{} keys are not secret keys", kind.name()),
            )),
            KeyParams::Rsa { scheme, .. } => Err(fail(
                ErrorName::NotSupported,
                format!("{} keys are not secret keys", scheme.name()),
            )),
            KeyParams::Kdf(k) => Err(fail(
                ErrorName::NotSupported,
                format!("{} keys cannot be generated", k.name()),
            )),
        }
    }
}

/// The parameters of `sign` and `verify` for algorithm `name`.
pub(crate) fn sign_params(
    name: Name,
    obj: Option<&JsObject>,
    op: &str,
    ctx: &mut Context,
) -> Result<SignParams, Fail> {
    Ok(match name {
        Name::Hmac => SignParams::Hmac,
        Name::Ec(EcKind::Ecdsa) => {
            let hash = k6_required(obj, "hash", ctx)?;
            // k6 normalises the ECDSA hash as an algorithm name, so its errors differ.
            let hash = match algorithm_arg(&hash, "digest", ctx) {
                Ok((Name::Digest(h), _)) => h,
                Ok((other, _)) => {
                    return Err(fail(
                        ErrorName::NotSupported,
                        format!("unsupported hash algorithm: {}", other.as_str()),
                    ))
                }
                Err(e) => return Err(e),
            };
            SignParams::Ecdsa(hash)
        }
        Name::Rsa(RsaScheme::Pkcs1) => SignParams::Pkcs1,
        Name::Rsa(RsaScheme::Pss) => {
            let salt = k6_required(obj, "saltLength", ctx)?.to_number(ctx)?;
            let salt = if salt.is_nan() {
                0
            } else if salt < 0.0 || salt >= usize::MAX as f64 {
                usize::MAX
            } else {
                salt as usize
            };
            SignParams::Pss(salt)
        }
        other => return Err(super::algorithm::unsupported(other.as_str(), op).into()),
    })
}

/// The parameters of `encrypt`/`decrypt` (and of wrapping) for algorithm `name`.
pub(crate) fn cipher_params(
    name: Name,
    obj: Option<&JsObject>,
    op: &str,
    ctx: &mut Context,
) -> Result<CipherParams, Fail> {
    let bytes = |key: &str, alg: &str, ctx: &mut Context| -> Result<Vec<u8>, Fail> {
        let v = required(obj, key, alg, ctx)?;
        buffer_source(&v, key, ctx)
    };
    Ok(match name {
        Name::Aes(AesMode::Gcm) => {
            let iv = bytes("iv", "AES-GCM", ctx)?;
            let aad = match member(obj, "additionalData", ctx)? {
                Some(v) => buffer_source(&v, "additionalData", ctx)?,
                None => Vec::new(),
            };
            let tag_bits = match member(obj, "tagLength", ctx)? {
                Some(v) => v.to_u32(ctx)?,
                None => 128,
            };
            CipherParams::Gcm { iv, aad, tag_bits }
        }
        Name::Aes(AesMode::Cbc) => CipherParams::Cbc {
            iv: bytes("iv", "AES-CBC", ctx)?,
        },
        Name::Aes(AesMode::Ctr) => {
            let counter = bytes("counter", "AES-CTR", ctx)?;
            let length = required(obj, "length", "AES-CTR", ctx)?.to_u32(ctx)?;
            CipherParams::Ctr { counter, length }
        }
        Name::Aes(AesMode::Kw) if op == "wrapKey" || op == "unwrapKey" => CipherParams::Kw,
        Name::Rsa(RsaScheme::Oaep) => {
            let label = match member(obj, "label", ctx)? {
                // k6 takes a string label as its UTF-8 bytes.
                Some(v) if v.is_string() => v.to_string(ctx)?.to_std_string_lossy().into_bytes(),
                Some(v) => buffer_source(&v, "label", ctx)?,
                None => Vec::new(),
            };
            CipherParams::Oaep { label }
        }
        other => return Err(super::algorithm::unsupported(other.as_str(), op).into()),
    })
}
