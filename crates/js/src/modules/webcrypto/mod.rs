//! `crypto.subtle`: the WebCrypto methods k6 scripts use for HMAC and AES. Every method
//! returns a promise that is already settled; the runtime runs promise jobs after the init
//! code and after each call into the script, so `await` works.

mod aes_modes;
mod algorithm;
mod error;
mod global;
mod key;

pub(crate) use global::install_global;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use boa_engine::object::builtins::{JsArrayBuffer, JsDataView, JsPromise, JsTypedArray};
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsObject, JsString, JsValue, NativeFunction};

use self::aes_modes::Direction;
use self::algorithm::{check_usages, unsupported, AesMode, Hash, KeyAlgorithm, Name, Usage};
use self::error::{fail, ErrorName, Fail};
use self::key::SecretKey;
use super::encoding::typed_array_window;
use crate::value::{array_buffer, define, plain_object};

type Method = fn(&[JsValue], &mut Context) -> Result<JsValue, Fail>;

/// The `crypto.subtle` object.
pub(crate) fn object(ctx: &mut Context) -> JsObject {
    let methods: [(&str, usize, NativeFunction); 12] = [
        ("decrypt", 3, wrap(|a, c| crypt(Direction::Decrypt, a, c))),
        ("deriveBits", 3, wrap(|_, _| not_yet("deriveBits"))),
        ("deriveKey", 5, wrap(|_, _| not_yet("deriveKey"))),
        ("digest", 2, wrap(digest)),
        ("encrypt", 3, wrap(|a, c| crypt(Direction::Encrypt, a, c))),
        ("exportKey", 2, wrap(export_key)),
        ("generateKey", 3, wrap(generate_key)),
        ("importKey", 5, wrap(import_key)),
        ("sign", 3, wrap(sign)),
        ("unwrapKey", 7, wrap(|_, _| not_yet("unwrapKey"))),
        ("verify", 4, wrap(verify)),
        ("wrapKey", 4, wrap(|_, _| not_yet("wrapKey"))),
    ];
    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::new(ctx);
    for (name, len, f) in methods {
        let func = FunctionObjectBuilder::new(&realm, f)
            .name(JsString::from(name))
            .length(len)
            .build();
        init.property(JsString::from(name), func, Attribute::all());
    }
    init.build()
}

/// A native method returning a promise settled with `f`'s outcome.
fn wrap(f: Method) -> NativeFunction {
    NativeFunction::from_copy_closure(move |_, args, ctx| {
        let promise = match f(args, ctx) {
            Ok(v) => JsPromise::resolve(v, ctx)?,
            Err(Fail::Js(e)) => JsPromise::reject(e, ctx)?,
            Err(Fail::Crypto(e)) => {
                let e = e.to_js(ctx);
                JsPromise::reject(e, ctx)?
            }
        };
        Ok(promise.into())
    })
}

fn not_yet(what: &str) -> Result<JsValue, Fail> {
    Err(fail(
        ErrorName::NotSupported,
        format!("crypto.subtle.{what} is not supported by rk6 yet"),
    ))
}

fn arg(args: &[JsValue], i: usize) -> JsValue {
    args.get(i).cloned().unwrap_or_default()
}

/// The bytes of a `BufferSource` (ArrayBuffer, typed array or DataView).
fn buffer_source(value: &JsValue, what: &str, ctx: &mut Context) -> Result<Vec<u8>, Fail> {
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
fn algorithm_arg(
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

fn member(obj: Option<&JsObject>, key: &str, ctx: &mut Context) -> Result<Option<JsValue>, Fail> {
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

/// The `hash` member of HMAC parameters.
fn hash_param(obj: Option<&JsObject>, ctx: &mut Context) -> Result<Hash, Fail> {
    let value = required(obj, "hash", "HMAC", ctx)?;
    match algorithm_arg(&value, "digest", ctx)?.0 {
        Name::Digest(h) => Ok(h),
        _ => Err(fail(
            ErrorName::NotSupported,
            "the HMAC hash must be SHA-1, SHA-256, SHA-384 or SHA-512",
        )),
    }
}

fn usages_arg(value: &JsValue, ctx: &mut Context) -> Result<Vec<Usage>, Fail> {
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

fn bits_param(obj: Option<&JsObject>, ctx: &mut Context) -> Result<Option<usize>, Fail> {
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

/// `digest(algorithm, data)`.
fn digest(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let (name, _) = algorithm_arg(&arg(args, 0), "digest", ctx)?;
    let data = buffer_source(&arg(args, 1), "data", ctx)?;
    let Name::Digest(hash) = name else {
        return Err(unsupported(name.as_str(), "digest").into());
    };
    Ok(array_buffer(&hash.digest(&data), ctx)?)
}

/// The algorithm of a key to make from `alg`'s parameters, with `key_len` bytes if known.
fn key_algorithm(
    name: Name,
    obj: Option<&JsObject>,
    key_len: Option<usize>,
    op: &str,
    ctx: &mut Context,
) -> Result<KeyAlgorithm, Fail> {
    match name {
        Name::Hmac => {
            let hash = hash_param(obj, ctx)?;
            let given = bits_param(obj, ctx)?;
            let length = match (key_len, given) {
                (None, None) => hash.block_bits(),
                (None, Some(0)) => return Err(fail(ErrorName::Operation, "invalid key length 0")),
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
        Name::Aes(mode) => {
            let length = match key_len {
                Some(bytes) if aes_modes::valid_key_len(bytes) => bytes * 8,
                Some(bytes) => {
                    return Err(fail(
                        ErrorName::Data,
                        format!("invalid AES key length {bytes} bytes"),
                    ))
                }
                None => match bits_param(obj, ctx)? {
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
        Name::Digest(h) => Err(unsupported(h.name(), op).into()),
    }
}

/// `generateKey(algorithm, extractable, keyUsages)`.
fn generate_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let (name, obj) = algorithm_arg(&arg(args, 0), "generateKey", ctx)?;
    let extractable = arg(args, 1).to_boolean();
    let usages = usages_arg(&arg(args, 2), ctx)?;
    let algorithm = key_algorithm(name, obj.as_ref(), None, "generateKey", ctx)?;
    check_usages(algorithm, &usages)?;
    let bits = match algorithm {
        KeyAlgorithm::Hmac { length, .. } | KeyAlgorithm::Aes { length, .. } => length,
    };
    let mut secret = vec![0u8; bits.div_ceil(8)];
    getrandom::getrandom(&mut secret)
        .map_err(|e| fail(ErrorName::Operation, format!("no random numbers: {e}")))?;
    if bits % 8 != 0 {
        // Only the first `bits` bits are key material.
        if let Some(last) = secret.last_mut() {
            *last &= 0xffu8 << (8 - bits % 8);
        }
    }
    let key = SecretKey {
        algorithm,
        extractable,
        usages,
        secret,
    };
    Ok(key.into_object(ctx).into())
}

/// `importKey(format, keyData, algorithm, extractable, keyUsages)` for `raw` and `jwk`.
fn import_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let format = arg(args, 0).to_string(ctx)?.to_std_string_lossy();
    let (name, obj) = algorithm_arg(&arg(args, 2), "importKey", ctx)?;
    let extractable = arg(args, 3).to_boolean();
    let usages = usages_arg(&arg(args, 4), ctx)?;
    let (secret, jwk_alg) = match format.as_str() {
        "raw" => (buffer_source(&arg(args, 1), "keyData", ctx)?, None),
        "jwk" => {
            let (secret, alg) = read_jwk(&arg(args, 1), extractable, &usages, ctx)?;
            (secret, alg)
        }
        "spki" | "pkcs8" => {
            return Err(fail(
                ErrorName::NotSupported,
                format!("the key format '{format}' is not supported by rk6 yet"),
            ))
        }
        _ => {
            return Err(fail(
                ErrorName::Type,
                format!("unknown key format '{format}'"),
            ))
        }
    };
    let algorithm = key_algorithm(name, obj.as_ref(), Some(secret.len()), "importKey", ctx)?;
    if let Some(alg) = jwk_alg {
        if alg != algorithm.jwk_alg() {
            return Err(fail(
                ErrorName::Data,
                format!("the JWK alg '{alg}' does not match {}", algorithm.jwk_alg()),
            ));
        }
    }
    check_usages(algorithm, &usages)?;
    let key = SecretKey {
        algorithm,
        extractable,
        usages,
        secret,
    };
    Ok(key.into_object(ctx).into())
}

/// The secret and `alg` of an `oct` JSON Web Key.
fn read_jwk(
    value: &JsValue,
    extractable: bool,
    usages: &[Usage],
    ctx: &mut Context,
) -> Result<(Vec<u8>, Option<String>), Fail> {
    let obj = value
        .as_object()
        .ok_or_else(|| fail(ErrorName::Type, "a JWK must be an object"))?;
    let text = |key: &str, ctx: &mut Context| -> Result<Option<String>, Fail> {
        match member(Some(&obj), key, ctx)? {
            Some(v) => Ok(Some(v.to_string(ctx)?.to_std_string_lossy())),
            None => Ok(None),
        }
    };
    let kty = text("kty", ctx)?;
    if kty.as_deref() != Some("oct") {
        return Err(fail(
            ErrorName::Data,
            format!(
                "only JWKs with kty 'oct' are supported, not {}",
                kty.as_deref().unwrap_or("none")
            ),
        ));
    }
    let k = text("k", ctx)?.ok_or_else(|| fail(ErrorName::Data, "the JWK has no 'k'"))?;
    let secret = URL_SAFE_NO_PAD
        .decode(k.trim_end_matches('='))
        .map_err(|e| {
            fail(
                ErrorName::Data,
                format!("the JWK 'k' is not base64url: {e}"),
            )
        })?;
    if let Some(ext) = member(Some(&obj), "ext", ctx)? {
        if !ext.to_boolean() && extractable {
            return Err(fail(
                ErrorName::Data,
                "the JWK is not extractable (ext: false) but extractable was requested",
            ));
        }
    }
    if let Some(ops) = member(Some(&obj), "key_ops", ctx)? {
        let ops = usages_arg(&ops, ctx)?;
        if let Some(u) = usages.iter().find(|u| !ops.contains(u)) {
            return Err(fail(
                ErrorName::Data,
                format!("the JWK key_ops do not allow '{}'", u.name()),
            ));
        }
    }
    Ok((secret, text("alg", ctx)?))
}

/// `exportKey(format, key)` for `raw` and `jwk`.
fn export_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let format = arg(args, 0).to_string(ctx)?.to_std_string_lossy();
    let key = SecretKey::from_value(args.get(1))?;
    if !key.extractable {
        return Err(fail(ErrorName::InvalidAccess, "the key is not extractable"));
    }
    match format.as_str() {
        "raw" => Ok(array_buffer(&key.secret, ctx)?),
        "jwk" => {
            let ops: Vec<JsValue> = key
                .usages
                .iter()
                .map(|u| JsString::from(u.name()).into())
                .collect();
            let ops = boa_engine::object::builtins::JsArray::from_iter(ops, ctx);
            let jwk = plain_object(ctx);
            define(&jwk, js_string!("key_ops"), ops);
            define(
                &jwk,
                js_string!("alg"),
                JsString::from(key.algorithm.jwk_alg().as_str()),
            );
            define(
                &jwk,
                js_string!("k"),
                JsString::from(URL_SAFE_NO_PAD.encode(&key.secret).as_str()),
            );
            define(&jwk, js_string!("kty"), js_string!("oct"));
            define(&jwk, js_string!("ext"), key.extractable);
            Ok(jwk.into())
        }
        "spki" | "pkcs8" => Err(fail(
            ErrorName::InvalidAccess,
            format!("a secret key cannot be exported as '{format}'"),
        )),
        _ => Err(fail(
            ErrorName::Type,
            format!("unknown key format '{format}'"),
        )),
    }
}

/// The key for `op` after checking it matches the requested algorithm and usage.
fn key_for(name: Name, key: &JsValue, usage: Usage, op: &str) -> Result<SecretKey, Fail> {
    let key = SecretKey::from_value(Some(key))?;
    let matches = match (name, key.algorithm) {
        (Name::Hmac, KeyAlgorithm::Hmac { .. }) => true,
        (Name::Aes(m), KeyAlgorithm::Aes { mode, .. }) => m == mode,
        _ => false,
    };
    if !matches {
        return Err(fail(
            ErrorName::InvalidAccess,
            format!(
                "{op}: the algorithm does not match the key's algorithm {}",
                key.algorithm.name()
            ),
        ));
    }
    key.require(usage)?;
    Ok(key)
}

fn hmac_key(
    args: &[JsValue],
    usage: Usage,
    op: &str,
    ctx: &mut Context,
) -> Result<(SecretKey, Hash), Fail> {
    let (name, _) = algorithm_arg(&arg(args, 0), op, ctx)?;
    if name != Name::Hmac {
        return Err(unsupported(name.as_str(), op).into());
    }
    let key = key_for(name, &arg(args, 1), usage, op)?;
    let KeyAlgorithm::Hmac { hash, .. } = key.algorithm else {
        return Err(fail(ErrorName::InvalidAccess, "not an HMAC key"));
    };
    Ok((key, hash))
}

/// `sign(algorithm, key, data)` (HMAC).
fn sign(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let data = buffer_source(&arg(args, 2), "data", ctx)?;
    let (key, hash) = hmac_key(args, Usage::Sign, "sign", ctx)?;
    Ok(array_buffer(&hash.hmac(&key.secret, &data), ctx)?)
}

/// `verify(algorithm, key, signature, data)` (HMAC), comparing in constant time.
fn verify(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let signature = buffer_source(&arg(args, 2), "signature", ctx)?;
    let data = buffer_source(&arg(args, 3), "data", ctx)?;
    let (key, hash) = hmac_key(args, Usage::Verify, "verify", ctx)?;
    let expected = hash.hmac(&key.secret, &data);
    let same = expected.len() == signature.len()
        && expected
            .iter()
            .zip(&signature)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    Ok(same.into())
}

fn bytes_param(
    obj: Option<&JsObject>,
    key: &str,
    alg: &str,
    ctx: &mut Context,
) -> Result<Vec<u8>, Fail> {
    let v = required(obj, key, alg, ctx)?;
    buffer_source(&v, key, ctx)
}

/// `encrypt(algorithm, key, data)` / `decrypt(...)` with AES-GCM, AES-CBC or AES-CTR.
fn crypt(dir: Direction, args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let op = match dir {
        Direction::Encrypt => "encrypt",
        Direction::Decrypt => "decrypt",
    };
    let (name, obj) = algorithm_arg(&arg(args, 0), op, ctx)?;
    let data = buffer_source(&arg(args, 2), "data", ctx)?;
    let Name::Aes(mode) = name else {
        return Err(unsupported(name.as_str(), op).into());
    };
    let usage = match dir {
        Direction::Encrypt => Usage::Encrypt,
        Direction::Decrypt => Usage::Decrypt,
    };
    let key = key_for(name, &arg(args, 1), usage, op)?;
    let obj = obj.as_ref();
    let out = match mode {
        AesMode::Gcm => {
            let iv = bytes_param(obj, "iv", "AES-GCM", ctx)?;
            let aad = match member(obj, "additionalData", ctx)? {
                Some(v) => buffer_source(&v, "additionalData", ctx)?,
                None => Vec::new(),
            };
            let tag_bits = match member(obj, "tagLength", ctx)? {
                Some(v) => v.to_u32(ctx)?,
                None => 128,
            };
            aes_modes::gcm(dir, &key.secret, &iv, &aad, tag_bits, &data)?
        }
        AesMode::Cbc => {
            let iv = bytes_param(obj, "iv", "AES-CBC", ctx)?;
            aes_modes::cbc(dir, &key.secret, &iv, &data)?
        }
        AesMode::Ctr => {
            let counter = bytes_param(obj, "counter", "AES-CTR", ctx)?;
            let length = required(obj, "length", "AES-CTR", ctx)?.to_u32(ctx)?;
            aes_modes::ctr(&key.secret, &counter, length, &data)?
        }
    };
    Ok(array_buffer(&out, ctx)?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::test_js::run;

    /// Runs `body` (async JS with `subtle`, `hex`, `unhex`, `bytes` and `reason` in scope)
    /// in an init context; its return value comes back as JSON.
    fn eval(body: &str) -> serde_json::Value {
        let src = format!(
            r#"
            const subtle = crypto.subtle;
            const hex = (b) => Array.from(new Uint8Array(b), (x) => (x < 16 ? '0' : '') + x.toString(16)).join('');
            const unhex = (s) => new Uint8Array(s.match(/../g).map((h) => parseInt(h, 16)));
            const bytes = (s) => new Uint8Array(Array.from(s, (c) => c.charCodeAt(0)));
            const reason = async (p) => {{ try {{ await p; return 'resolved'; }} catch (e) {{ return e.name; }} }};
            export const options = {{}};
            (async () => {{ {body} }})().then((v) => {{ options.out = v; }}, (e) => {{ options.error = String(e); }});
            "#
        );
        let out = run(&src).unwrap();
        assert!(out.get("error").is_none(), "script failed: {out}");
        out["out"].clone()
    }

    #[test]
    fn hmac_rfc4231_vectors() {
        let out = eval(
            r#"
            const cases = [
              ['0b'.repeat(20), hex(bytes('Hi There'))],
              ['aa'.repeat(20), 'dd'.repeat(50)],
              ['aa'.repeat(131), hex(bytes('Test Using Larger Than Block-Size Key - Hash Key First'))],
            ];
            const out = [];
            for (const [k, d] of cases) {
              for (const hash of ['SHA-256', 'SHA-384', 'SHA-512']) {
                const key = await subtle.importKey('raw', unhex(k), { name: 'HMAC', hash }, false, ['sign']);
                out.push(hex(await subtle.sign('HMAC', key, unhex(d))));
              }
            }
            return out;
            "#,
        );
        assert_eq!(
            out,
            json!([
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
                "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6",
                "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854",
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
                "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b2a5ab39dc13814b94e3ab6e101a34f27",
                "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
                "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952",
                "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598",
            ])
        );
    }

    #[test]
    fn digests_accept_every_buffer_source() {
        let out = eval(
            r#"
            const abc = bytes('xabcx');
            return [
              hex(await subtle.digest('sha-1', abc.buffer.slice(1, 4))),
              hex(await subtle.digest({ name: 'SHA-256' }, abc.subarray(1, 4))),
              hex(await subtle.digest('SHA-256', new DataView(abc.buffer, 1, 3))),
              await reason(subtle.digest('SHA-256', 'abc')),
              await reason(subtle.digest('MD5', abc)),
              await reason(subtle.digest('HMAC', abc)),
            ];
            "#,
        );
        let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(
            out,
            json!([
                "a9993e364706816aba3e25717850c26c9cd0d89d",
                sha256,
                sha256,
                "OperationError",
                "NotSupportedError",
                "NotSupportedError",
            ])
        );
    }

    #[test]
    fn rejections_are_named_errors() {
        let out = eval(
            r#"
            try { await subtle.digest('MD5', new Uint8Array(1)); } catch (e) {
              return [e.name, e instanceof Error, String(e).startsWith('NotSupportedError: '), Object.keys(e)];
            }
            "#,
        );
        assert_eq!(
            out,
            json!(["NotSupportedError", true, true, ["name", "message"]])
        );
    }

    #[test]
    fn keys_import_and_export_as_jwk() {
        let out = eval(
            r#"
            const jwk = { kty: 'oct', k: 'AAECAwQFBgcICQoLDA0ODw', alg: 'A128GCM', ext: true, key_ops: ['encrypt', 'decrypt'] };
            const key = await subtle.importKey('jwk', jwk, 'AES-GCM', true, ['encrypt']);
            const again = await subtle.exportKey('jwk', key);
            const raw = hex(await subtle.exportKey('raw', key));
            return [
              key.algorithm, key.usages, again, raw,
              await reason(subtle.importKey('jwk', { ...jwk, alg: 'A256GCM' }, 'AES-GCM', true, ['encrypt'])),
              await reason(subtle.importKey('jwk', { ...jwk, kty: 'RSA' }, 'AES-GCM', true, ['encrypt'])),
              await reason(subtle.importKey('jwk', { ...jwk, ext: false }, 'AES-GCM', true, ['encrypt'])),
              await reason(subtle.importKey('jwk', { ...jwk, key_ops: ['decrypt'] }, 'AES-GCM', false, ['encrypt'])),
              await reason(subtle.importKey('spki', new Uint8Array(16), 'AES-GCM', false, ['encrypt'])),
              await reason(subtle.exportKey('pkcs8', key)),
              await reason(subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', false, [])),
            ];
            "#,
        );
        assert_eq!(out[0], json!({"name": "AES-GCM", "length": 128}));
        assert_eq!(out[1], json!(["encrypt"]));
        assert_eq!(
            out[2],
            json!({"key_ops": ["encrypt"], "alg": "A128GCM", "k": "AAECAwQFBgcICQoLDA0ODw", "kty": "oct", "ext": true})
        );
        assert_eq!(out[3], json!("000102030405060708090a0b0c0d0e0f"));
        assert_eq!(
            out.as_array().unwrap()[4..],
            json!([
                "DataError",
                "DataError",
                "DataError",
                "DataError",
                "NotSupportedError",
                "InvalidAccessError",
                "SyntaxError"
            ])
            .as_array()
            .unwrap()[..]
        );
    }

    #[test]
    fn generated_keys_have_the_requested_sizes() {
        let out = eval(
            r#"
            const sizes = [];
            for (const length of [128, 192, 256]) {
              const k = await subtle.generateKey({ name: 'AES-CBC', length }, true, ['encrypt', 'decrypt']);
              sizes.push((await subtle.exportKey('raw', k)).byteLength);
            }
            const h = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);
            const h2 = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256', length: 100 }, true, ['sign']);
            const a = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);
            const b = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);
            return [
              sizes, h.algorithm, (await subtle.exportKey('raw', h)).byteLength,
              h2.algorithm.length, (await subtle.exportKey('raw', h2)).byteLength,
              hex(await subtle.exportKey('raw', a)) !== hex(await subtle.exportKey('raw', b)),
              await reason(subtle.generateKey({ name: 'AES-GCM', length: 100 }, true, ['encrypt'])),
              await reason(subtle.generateKey({ name: 'HMAC' }, true, ['sign'])),
              await reason(subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign'])),
            ];
            "#,
        );
        assert_eq!(
            out,
            json!([
                [16, 24, 32],
                {"name": "HMAC", "hash": {"name": "SHA-256"}, "length": 512},
                64,
                100,
                13,
                true,
                "OperationError",
                "TypeError",
                "NotSupportedError"
            ])
        );
    }

    #[test]
    fn unimplemented_methods_reject_loudly() {
        let out = eval(
            r#"
            return [
              Object.keys(subtle),
              await reason(subtle.deriveBits({ name: 'ECDH' }, null, 128)),
              await reason(subtle.wrapKey('raw', null, null, 'AES-KW')),
              typeof subtle.deriveKey(),
            ];
            "#,
        );
        assert_eq!(
            out,
            json!([
                [
                    "decrypt",
                    "deriveBits",
                    "deriveKey",
                    "digest",
                    "encrypt",
                    "exportKey",
                    "generateKey",
                    "importKey",
                    "sign",
                    "unwrapKey",
                    "verify",
                    "wrapKey"
                ],
                "NotSupportedError",
                "NotSupportedError",
                "object"
            ])
        );
    }
}
