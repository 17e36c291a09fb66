//! `crypto.subtle`: WebCrypto as k6 1.1 has it (digests, HMAC, AES, ECDSA, ECDH, RSA), with
//! PBKDF2 and `deriveKey` (k6 1.6), plus HKDF, `wrapKey` and `unwrapKey`, which k6 lacks. Every method returns a promise
//! that is already settled; the runtime runs promise jobs after the init code and after
//! each call into the script, so `await` works.
//!
//! The methods here read JS arguments into typed parameters (`params`) and make the checks
//! k6 makes in its order (algorithm, key, name, usage); `formats` and `operations` then work
//! on Rust values only.

mod aes_modes;
mod algorithm;
mod ec;
mod error;
mod formats;
mod global;
mod jwk;
mod key;
mod oaep;
mod operations;
mod params;
mod rsa_keys;
#[cfg(test)]
mod tests;

pub(crate) use global::global_object;

use boa_engine::object::builtins::JsPromise;
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{Context, JsObject, JsString, JsValue, NativeFunction};

use self::aes_modes::Direction;
use self::algorithm::{unsupported, EcKind, Kdf, KeyAlgorithm, Name, Usage};
use self::error::{fail, ErrorName, Fail};
use self::formats::{Format, KeyData};
use self::key::{pair_object, CryptoKey, KeyType};
use self::operations::Generated;
use self::params::{
    algorithm_arg, arg, buffer_source, cipher_params, kdf_params, key_arg, key_params, member,
    sign_params, usages_arg, KeyParams,
};
use crate::value::array_buffer;

type Method = fn(&[JsValue], &mut Context) -> Result<JsValue, Fail>;

/// The `crypto.subtle` object.
pub(crate) fn object(ctx: &mut Context) -> JsObject {
    let methods: [(&str, usize, NativeFunction); 12] = [
        ("decrypt", 3, wrap(|a, c| crypt(Direction::Decrypt, a, c))),
        ("deriveBits", 3, wrap(derive_bits)),
        ("deriveKey", 5, wrap(derive_key)),
        ("digest", 2, wrap(digest)),
        ("encrypt", 3, wrap(|a, c| crypt(Direction::Encrypt, a, c))),
        ("exportKey", 2, wrap(export_key)),
        ("generateKey", 3, wrap(generate_key)),
        ("importKey", 5, wrap(import_key)),
        ("sign", 3, wrap(sign)),
        ("unwrapKey", 7, wrap(unwrap_key)),
        ("verify", 4, wrap(verify)),
        ("wrapKey", 4, wrap(wrap_key)),
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

fn format_arg(value: &JsValue, ctx: &mut Context) -> Result<Format, Fail> {
    let name = value.to_string(ctx)?.to_std_string_lossy();
    Format::parse(&name)
        .ok_or_else(|| fail(ErrorName::Type, format!("unknown key format '{name}'")))
}

/// The key data argument of `importKey` for `format`.
fn key_data_arg(format: Format, value: &JsValue, ctx: &mut Context) -> Result<KeyData, Fail> {
    if format != Format::Jwk {
        return Ok(KeyData::Bytes(buffer_source(value, "keyData", ctx)?));
    }
    match value.as_object().map(|_| value.to_json(ctx)).transpose()? {
        Some(Some(serde_json::Value::Object(jwk))) => Ok(KeyData::Jwk(jwk)),
        _ => Err(fail(ErrorName::Type, "a JWK must be an object")),
    }
}

fn key_data_value(data: KeyData, ctx: &mut Context) -> Result<JsValue, Fail> {
    Ok(match data {
        KeyData::Bytes(b) => array_buffer(&b, ctx)?,
        KeyData::Jwk(j) => JsValue::from_json(&serde_json::Value::Object(j), ctx)?,
    })
}

/// Fails unless `key` is a key of algorithm `name` with `usage`, as k6 checks.
fn check_key(key: &CryptoKey, name: Name, usage: Usage, op: &str) -> Result<(), Fail> {
    if key.algorithm.as_name() != name {
        return Err(fail(
            ErrorName::InvalidAccess,
            // k6's words, which prefix the operation for encryption only.
            match op {
                "sign" | "verify" => "algorithm name does not match key algorithm name".to_string(),
                _ => format!("{op}'s algorithm name does not match key algorithm name"),
            },
        ));
    }
    key.require(usage, op)
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

/// `generateKey(algorithm, extractable, keyUsages)`: a key, or `{privateKey, publicKey}`.
fn generate_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let (name, obj) = algorithm_arg(&arg(args, 0), "generateKey", ctx)?;
    let extractable = arg(args, 1).to_boolean();
    let usages = usages_arg(&arg(args, 2), ctx)?;
    let params = key_params(name, obj.as_ref(), "generateKey", ctx)?;
    Ok(
        match operations::generate_key(&params, extractable, usages)? {
            Generated::Key(key) => key.into_object(ctx).into(),
            Generated::Pair { private, public } => pair_object(private, public, ctx).into(),
        },
    )
}

/// `importKey(format, keyData, algorithm, extractable, keyUsages)`.
fn import_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let format = format_arg(&arg(args, 0), ctx)?;
    let (name, obj) = algorithm_arg(&arg(args, 2), "importKey", ctx)?;
    let extractable = arg(args, 3).to_boolean();
    let usages = usages_arg(&arg(args, 4), ctx)?;
    let data = key_data_arg(format, &arg(args, 1), ctx)?;
    let params = key_params(name, obj.as_ref(), "importKey", ctx)?;
    let key = formats::import_key(format, data, &params, extractable, usages)?;
    Ok(key.into_object(ctx).into())
}

/// `exportKey(format, key)`: an ArrayBuffer, or a JWK object.
fn export_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let format = format_arg(&arg(args, 0), ctx)?;
    let key = key_arg(&arg(args, 1), "the key")?;
    let data = formats::export_key(format, &key)?;
    key_data_value(data, ctx)
}

/// `sign(algorithm, key, data)`.
fn sign(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let data = buffer_source(&arg(args, 2), "data", ctx)?;
    let (name, obj) = algorithm_arg(&arg(args, 0), "sign", ctx)?;
    let params = sign_params(name, obj.as_ref(), "sign", ctx)?;
    let key = key_arg(&arg(args, 1), "the key")?;
    check_key(&key, name, Usage::Sign, "sign")?;
    let signature = operations::sign(params, &key, &data)?;
    Ok(array_buffer(&signature, ctx)?)
}

/// `verify(algorithm, key, signature, data)`.
fn verify(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let signature = buffer_source(&arg(args, 2), "signature", ctx)?;
    let data = buffer_source(&arg(args, 3), "data", ctx)?;
    let (name, obj) = algorithm_arg(&arg(args, 0), "verify", ctx)?;
    let params = sign_params(name, obj.as_ref(), "verify", ctx)?;
    let key = key_arg(&arg(args, 1), "the key")?;
    check_key(&key, name, Usage::Verify, "verify")?;
    Ok(operations::verify(params, &key, &signature, &data)?.into())
}

/// `encrypt(algorithm, key, data)` / `decrypt(...)`: AES-GCM, AES-CBC, AES-CTR, RSA-OAEP.
fn crypt(dir: Direction, args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let (op, usage) = match dir {
        Direction::Encrypt => ("encrypt", Usage::Encrypt),
        Direction::Decrypt => ("decrypt", Usage::Decrypt),
    };
    let data = buffer_source(&arg(args, 2), "data", ctx)?;
    let (name, obj) = algorithm_arg(&arg(args, 0), op, ctx)?;
    let params = cipher_params(name, obj.as_ref(), op, ctx)?;
    let key = key_arg(&arg(args, 1), "the key")?;
    check_key(&key, name, usage, op)?;
    let out = operations::crypt(dir, &params, &key, &data)?;
    Ok(array_buffer(&out, ctx)?)
}

/// The ECDH private and public keys of `deriveBits`/`deriveKey`, checked in k6's order.
fn ecdh_keys(
    algorithm: &JsValue,
    base: &JsValue,
    usage: Usage,
    op: &str,
    ctx: &mut Context,
) -> Result<(CryptoKey, CryptoKey), Fail> {
    let base = CryptoKey::from_value(Some(base)).ok_or_else(|| {
        fail(
            ErrorName::InvalidAccess,
            "provided baseKey is not a valid CryptoKey",
        )
    })?;
    if base.key_type() != KeyType::Private {
        return Err(fail(
            ErrorName::InvalidAccess,
            "provided baseKey is not a private key",
        ));
    }
    base.require(usage, op)?;
    let obj = algorithm.as_object();
    let public = member(obj.as_ref(), "public", ctx)?
        .filter(|v| !v.is_null())
        .ok_or_else(|| fail(ErrorName::Type, "algorithm does not contain a public key"))?;
    let public = CryptoKey::from_value(Some(&public)).ok_or_else(|| {
        fail(
            ErrorName::Type,
            "algorithm's public is not a valid CryptoKey",
        )
    })?;
    if public.key_type() != KeyType::Public {
        return Err(fail(
            ErrorName::InvalidAccess,
            "algorithm's public key is not a public key",
        ));
    }
    let name = member(obj.as_ref(), "name", ctx)?
        .ok_or_else(|| {
            fail(
                ErrorName::Type,
                "algorithm does not contain a name property",
            )
        })?
        .to_string(ctx)?
        .to_std_string_lossy()
        .to_ascii_uppercase();
    if name != public.algorithm.name() {
        return Err(fail(
            ErrorName::InvalidAccess,
            format!(
                "algorithm name does not match public key's algorithm name: {name} != {}",
                public.algorithm.name()
            ),
        ));
    }
    if base.algorithm.as_name() != Name::Ec(EcKind::Ecdh) {
        return Err(fail(
            ErrorName::InvalidAccess,
            format!(
                "the baseKey is an {} key, not an ECDH key",
                base.algorithm.name()
            ),
        ));
    }
    Ok((base, public))
}

/// The key derivation function `algorithm` names, if it names PBKDF2 or HKDF (anything
/// else takes the ECDH path, with its checks).
fn kdf_of(algorithm: &JsValue, ctx: &mut Context) -> Result<Option<Kdf>, Fail> {
    let name = match algorithm.as_object() {
        Some(o) => o.get(boa_engine::js_string!("name"), ctx)?,
        None => algorithm.clone(),
    };
    if !name.is_string() {
        return Ok(None);
    }
    let name = name.to_string(ctx)?.to_std_string_lossy();
    Ok(match Name::parse(&name, "deriveBits") {
        Ok(Name::Kdf(k)) => Some(k),
        _ => None,
    })
}

/// Fails unless `base` is the secret material of `kdf` with `usage` (k6 1.6's checks and
/// words for PBKDF2).
fn check_kdf_key(base: &CryptoKey, kdf: Kdf, usage: Usage) -> Result<(), Fail> {
    if base.key_type() != KeyType::Secret {
        return Err(fail(
            ErrorName::InvalidAccess,
            "algorithm's password key is not a secret key",
        ));
    }
    if !base.usages.contains(&usage) {
        return Err(fail(
            ErrorName::InvalidAccess,
            format!("provided baseKey doesn't contain `{}` usage", usage.name()),
        ));
    }
    if base.algorithm != KeyAlgorithm::Kdf(kdf) {
        return Err(fail(
            ErrorName::Operation,
            format!(
                "provided basekey algorithm and deriveKey algorithm name dont match {}!={}",
                base.algorithm.name(),
                kdf.name()
            ),
        ));
    }
    Ok(())
}

/// `deriveBits({name: 'PBKDF2', hash, salt, iterations} | {name: 'HKDF', hash, salt, info},
/// baseKey, length)`.
fn kdf_derive_bits(kdf: Kdf, args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let (_, obj) = algorithm_arg(&arg(args, 0), "deriveBits", ctx)?;
    let params = kdf_params(kdf, obj.as_ref(), ctx)?;
    let base = key_arg(&arg(args, 1), "the baseKey")?;
    let length = arg(args, 2);
    let length = if length.is_null_or_undefined() {
        0.0
    } else {
        length.to_number(ctx)?
    };
    if length == 0.0 || length.is_nan() {
        return Err(fail(ErrorName::Operation, "length can not be 0"));
    }
    if !(length > 0.0 && length <= f64::from(u32::MAX)) {
        return Err(fail(ErrorName::Operation, "length is too large"));
    }
    let length = length as usize;
    if !length.is_multiple_of(8) {
        return Err(fail(
            ErrorName::Operation,
            "currently only multiples of 8 are supported for length",
        ));
    }
    check_kdf_key(&base, kdf, Usage::DeriveBits)?;
    let secret = base.secret().unwrap_or_default();
    let bits = operations::kdf_bits(&params, secret, length / 8)?;
    Ok(array_buffer(&bits, ctx)?)
}

/// `deriveKey` with PBKDF2 (k6 1.6) or HKDF: an AES key (k6's targets) or, as WebCrypto
/// has it and k6 does not, an HMAC key (of the hash's block size unless `length` is given).
fn kdf_derive_key(kdf: Kdf, args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let (_, obj) = algorithm_arg(&arg(args, 0), "deriveKey", ctx)?;
    let (target, target_obj) = algorithm_arg(&arg(args, 2), "importKey", ctx)?;
    let params = kdf_params(kdf, obj.as_ref(), ctx)?;
    if !matches!(target, Name::Aes(_) | Name::Hmac) {
        return Err(fail(
            ErrorName::NotSupported,
            format!(
                "derive key function doesn't support algorithm {}",
                target.as_str()
            ),
        ));
    }
    let target = key_params(target, target_obj.as_ref(), "importKey", ctx)?;
    let extractable = arg(args, 3).to_boolean();
    let usages = usages_arg(&arg(args, 4), ctx)?;
    let base = key_arg(&arg(args, 1), "the baseKey")?;
    check_kdf_key(&base, kdf, Usage::DeriveKey)?;
    let length = match target.secret_algorithm(None)? {
        KeyAlgorithm::Hmac { length, .. } | KeyAlgorithm::Aes { length, .. } => length,
        _ => unreachable!("a secret algorithm"),
    };
    if !length.is_multiple_of(8) {
        return Err(fail(
            ErrorName::InvalidAccess,
            "provided length of key must be a multiple of 8",
        ));
    }
    if usages.is_empty() {
        return Err(fail(
            ErrorName::Syntax,
            "usages cannot not be empty for a secret or private CryptoKey",
        ));
    }
    let secret = base.secret().unwrap_or_default();
    let bits = operations::kdf_bits(&params, secret, length / 8)?;
    let key = formats::import_key(
        Format::Raw,
        KeyData::Bytes(bits),
        &target,
        extractable,
        usages,
    )?;
    Ok(key.into_object(ctx).into())
}

/// `deriveBits({name: 'ECDH', public}, baseKey, length)`, or with PBKDF2 or HKDF.
fn derive_bits(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    if let Some(kdf) = kdf_of(&arg(args, 0), ctx)? {
        return kdf_derive_bits(kdf, args, ctx);
    }
    let (base, public) = ecdh_keys(
        &arg(args, 0),
        &arg(args, 1),
        Usage::DeriveBits,
        "deriveBits",
        ctx,
    )?;
    let length = arg(args, 2);
    let length = if length.is_null_or_undefined() {
        None
    } else {
        let n = length.to_number(ctx)?;
        if n < 0.0 || n.is_infinite() {
            return Err(fail(ErrorName::Operation, "length is too large"));
        }
        Some(if n.is_nan() { 0 } else { n as usize })
    };
    let bits = operations::derive_bits(&base, &public, length)?;
    Ok(array_buffer(&bits, ctx)?)
}

/// `deriveKey({name: 'ECDH', public}, baseKey, derivedKeyAlgorithm, extractable,
/// keyUsages)`: an AES or HMAC key from the shared secret (k6 derives with PBKDF2 only);
/// PBKDF2 and HKDF in [`kdf_derive_key`].
fn derive_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    if let Some(kdf) = kdf_of(&arg(args, 0), ctx)? {
        return kdf_derive_key(kdf, args, ctx);
    }
    let (base, public) = ecdh_keys(
        &arg(args, 0),
        &arg(args, 1),
        Usage::DeriveKey,
        "deriveKey",
        ctx,
    )?;
    let (name, obj) = algorithm_arg(&arg(args, 2), "deriveKey", ctx)?;
    let extractable = arg(args, 3).to_boolean();
    let usages = usages_arg(&arg(args, 4), ctx)?;
    let params = key_params(name, obj.as_ref(), "importKey", ctx)?;
    if !matches!(params, KeyParams::Hmac { .. } | KeyParams::Aes { .. }) {
        return Err(unsupported(name.as_str(), "deriveKey").into());
    }
    let length = match params.secret_algorithm(None)? {
        algorithm::KeyAlgorithm::Hmac { length, .. }
        | algorithm::KeyAlgorithm::Aes { length, .. } => length,
        _ => unreachable!("a secret algorithm"),
    };
    let bits = operations::derive_bits(&base, &public, Some(length))?;
    let key = formats::import_key(
        Format::Raw,
        KeyData::Bytes(bits),
        &params,
        extractable,
        usages,
    )?;
    Ok(key.into_object(ctx).into())
}

/// `wrapKey(format, key, wrappingKey, wrapAlgorithm)`: the exported key, encrypted (a JWK
/// as its JSON text). k6 1.1 does not implement it.
fn wrap_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let format = format_arg(&arg(args, 0), ctx)?;
    let key = key_arg(&arg(args, 1), "the key")?;
    let wrapping = key_arg(&arg(args, 2), "the wrappingKey")?;
    let (name, obj) = algorithm_arg(&arg(args, 3), "wrapKey", ctx)?;
    let params = cipher_params(name, obj.as_ref(), "wrapKey", ctx)?;
    check_key(&wrapping, name, Usage::WrapKey, "wrapKey")?;
    let bytes = match formats::export_key(format, &key)? {
        KeyData::Bytes(b) => b,
        KeyData::Jwk(j) => serde_json::to_vec(&j).map_err(|e| {
            fail(
                ErrorName::Operation,
                format!("the JWK could not be written: {e}"),
            )
        })?,
    };
    let wrapped = operations::crypt(Direction::Encrypt, &params, &wrapping, &bytes)?;
    Ok(array_buffer(&wrapped, ctx)?)
}

/// `unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm,
/// extractable, keyUsages)`: decrypts, then imports. k6 1.1 does not implement it.
fn unwrap_key(args: &[JsValue], ctx: &mut Context) -> Result<JsValue, Fail> {
    let format = format_arg(&arg(args, 0), ctx)?;
    let wrapped = buffer_source(&arg(args, 1), "wrappedKey", ctx)?;
    let unwrapping = key_arg(&arg(args, 2), "the unwrappingKey")?;
    let (name, obj) = algorithm_arg(&arg(args, 3), "unwrapKey", ctx)?;
    let params = cipher_params(name, obj.as_ref(), "unwrapKey", ctx)?;
    let (key_name, key_obj) = algorithm_arg(&arg(args, 4), "importKey", ctx)?;
    let extractable = arg(args, 5).to_boolean();
    let usages = usages_arg(&arg(args, 6), ctx)?;
    let key_params = key_params(key_name, key_obj.as_ref(), "importKey", ctx)?;
    check_key(&unwrapping, name, Usage::UnwrapKey, "unwrapKey")?;
    let bytes = operations::crypt(Direction::Decrypt, &params, &unwrapping, &wrapped)?;
    let data = if format == Format::Jwk {
        match serde_json::from_slice(&bytes) {
            Ok(serde_json::Value::Object(j)) => KeyData::Jwk(j),
            _ => return Err(fail(ErrorName::Data, "the unwrapped data is not a JWK")),
        }
    } else {
        KeyData::Bytes(bytes)
    };
    let key = formats::import_key(format, data, &key_params, extractable, usages)?;
    Ok(key.into_object(ctx).into())
}
