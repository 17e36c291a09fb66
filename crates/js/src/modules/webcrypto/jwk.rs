//! JSON Web Keys (RFC 7517, 7518) of every key type: `oct` for HMAC and AES, `EC`, `RSA`.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{Map, Value};

use super::algorithm::{Curve, KeyAlgorithm, Usage};
use super::ec::EcKey;
use super::error::{CryptoError, ErrorName};
use super::key::{CryptoKey, Material};
use super::rsa_keys::RsaKey;

/// A JWK as a JSON object.
pub(crate) type Jwk = Map<String, Value>;

fn data_error(message: impl Into<String>) -> CryptoError {
    CryptoError::new(ErrorName::Data, message)
}

fn text<'a>(jwk: &'a Jwk, key: &str) -> Option<&'a str> {
    jwk.get(key).and_then(Value::as_str)
}

/// A base64url member (trailing `=` tolerated), if present.
fn bytes(jwk: &Jwk, key: &str) -> Result<Option<Vec<u8>>, CryptoError> {
    let Some(v) = jwk.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let s = v
        .as_str()
        .ok_or_else(|| data_error(format!("the JWK '{key}' is not a string")))?;
    URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .map(Some)
        .map_err(|e| data_error(format!("the JWK '{key}' is not base64url: {e}")))
}

fn required(jwk: &Jwk, key: &str) -> Result<Vec<u8>, CryptoError> {
    bytes(jwk, key)?.ok_or_else(|| data_error(format!("the JWK has no '{key}'")))
}

fn encode(bytes: &[u8]) -> Value {
    Value::String(URL_SAFE_NO_PAD.encode(bytes))
}

/// Checks the members every import looks at: `kty`, `ext` and `key_ops`.
pub(crate) fn check_common(
    jwk: &Jwk,
    kty: &str,
    extractable: bool,
    usages: &[Usage],
) -> Result<(), CryptoError> {
    let given = text(jwk, "kty");
    if given != Some(kty) {
        return Err(data_error(format!(
            "the JWK kty must be '{kty}' for this algorithm, not {}",
            given.map_or("none".into(), |g| format!("'{g}'"))
        )));
    }
    if let Some(ext) = jwk.get("ext") {
        let truthy = match ext {
            Value::Bool(b) => *b,
            Value::Null => false,
            Value::Number(n) => n.as_f64() != Some(0.0),
            Value::String(s) => !s.is_empty(),
            _ => true,
        };
        if !truthy && extractable {
            return Err(data_error(
                "the JWK is not extractable (ext: false) but extractable was requested",
            ));
        }
    }
    if let Some(ops) = jwk.get("key_ops") {
        let ops: Vec<&str> = ops
            .as_array()
            .ok_or_else(|| data_error("the JWK key_ops is not an array"))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if let Some(u) = usages.iter().find(|u| !ops.contains(&u.name())) {
            return Err(data_error(format!(
                "the JWK key_ops do not allow '{}'",
                u.name()
            )));
        }
    }
    Ok(())
}

/// Fails when the JWK has an `alg` other than `expected`.
pub(crate) fn check_alg(jwk: &Jwk, expected: &str) -> Result<(), CryptoError> {
    match text(jwk, "alg") {
        Some(alg) => check_alg_value(alg, expected),
        None => Ok(()),
    }
}

/// Fails when a JWK's `alg` is not `expected`.
pub(crate) fn check_alg_value(alg: &str, expected: &str) -> Result<(), CryptoError> {
    if alg == expected {
        Ok(())
    } else {
        Err(data_error(format!(
            "the JWK alg '{alg}' does not match {expected}"
        )))
    }
}

/// The bytes of an `oct` key and its `alg`.
pub(crate) fn secret(jwk: &Jwk) -> Result<(Vec<u8>, Option<String>), CryptoError> {
    let k = required(jwk, "k")?;
    Ok((k, text(jwk, "alg").map(str::to_string)))
}

/// An `EC` key on `curve` (`crv` must name it); private when it has `d`.
pub(crate) fn ec(jwk: &Jwk, curve: Curve) -> Result<EcKey, CryptoError> {
    let crv = text(jwk, "crv").ok_or_else(|| data_error("the JWK has no 'crv'"))?;
    if crv != curve.name() {
        return Err(data_error(format!(
            "the JWK crv '{crv}' does not match the namedCurve {}",
            curve.name()
        )));
    }
    let x = required(jwk, "x")?;
    let y = required(jwk, "y")?;
    let d = bytes(jwk, "d")?;
    EcKey::from_coordinates(curve, &x, &y, d.as_deref())
}

/// An `RSA` key; private when it has `d`.
pub(crate) fn rsa(jwk: &Jwk) -> Result<RsaKey, CryptoError> {
    let n = required(jwk, "n")?;
    let e = required(jwk, "e")?;
    let d = bytes(jwk, "d")?;
    let p = bytes(jwk, "p")?;
    let q = bytes(jwk, "q")?;
    if jwk.contains_key("oth") {
        return Err(CryptoError::new(
            ErrorName::NotSupported,
            "multi-prime RSA JWKs (oth) are not supported",
        ));
    }
    RsaKey::from_parts(&n, &e, d.as_deref(), p.as_deref(), q.as_deref())
}

/// The JWK of `key`: WebCrypto's members, with `key_ops` and `ext` last.
pub(crate) fn export(key: &CryptoKey) -> Result<Jwk, CryptoError> {
    let mut jwk = Map::new();
    let ops: Vec<Value> = key
        .usages
        .iter()
        .map(|u| Value::String(u.name().into()))
        .collect();
    match &*key.material {
        Material::Secret(secret) => {
            // The order rk6 has always used for `oct` keys.
            jwk.insert("key_ops".into(), Value::Array(ops));
            jwk.insert("alg".into(), Value::String(key.algorithm.jwk_alg()));
            jwk.insert("k".into(), encode(secret));
            jwk.insert("kty".into(), "oct".into());
            jwk.insert("ext".into(), key.extractable.into());
            return Ok(jwk);
        }
        Material::Ec(ec) => {
            let (x, y) = ec.coordinates();
            jwk.insert("kty".into(), "EC".into());
            jwk.insert("crv".into(), ec.curve().name().into());
            jwk.insert("x".into(), encode(x));
            jwk.insert("y".into(), encode(y));
            if let Some(d) = ec.scalar() {
                jwk.insert("d".into(), encode(d));
            }
        }
        Material::Rsa(rsa) => {
            let parts = rsa.to_parts()?;
            jwk.insert("kty".into(), "RSA".into());
            jwk.insert("n".into(), encode(&parts.n));
            jwk.insert("e".into(), encode(&parts.e));
            if let Some(private) = &parts.private {
                for (name, value) in ["d", "p", "q", "dp", "dq", "qi"].iter().zip(private) {
                    jwk.insert((*name).into(), encode(value));
                }
            }
            if let KeyAlgorithm::Rsa { .. } = key.algorithm {
                jwk.insert("alg".into(), Value::String(key.algorithm.jwk_alg()));
            }
        }
    }
    jwk.insert("key_ops".into(), Value::Array(ops));
    jwk.insert("ext".into(), key.extractable.into());
    Ok(jwk)
}
