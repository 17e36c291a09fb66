//! `importKey` and `exportKey` for every algorithm and format, as k6 allows them: `raw` and
//! `jwk` for secret keys, `raw` (public), `spki` (public), `pkcs8` (private) and `jwk` for
//! EC keys, `spki`, `pkcs8` and `jwk` for RSA keys.

use super::algorithm::{check_usages, EcKind, KeyAlgorithm, Usage};
use super::ec::EcKey;
use super::error::{fail, ErrorName, Fail};
use super::jwk::{self, Jwk};
use super::key::{CryptoKey, KeyType, Material};
use super::params::KeyParams;
use super::rsa_keys::RsaKey;

/// A key format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Raw,
    Spki,
    Pkcs8,
    Jwk,
}

impl Format {
    /// Parses a format name (case-sensitive).
    pub(crate) fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "raw" => Format::Raw,
            "spki" => Format::Spki,
            "pkcs8" => Format::Pkcs8,
            "jwk" => Format::Jwk,
            _ => return None,
        })
    }

    /// The format's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Raw => "raw",
            Format::Spki => "spki",
            Format::Pkcs8 => "pkcs8",
            Format::Jwk => "jwk",
        }
    }
}

/// Key data in some format: bytes, or a JWK.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyData {
    Bytes(Vec<u8>),
    Jwk(Jwk),
}

fn unsupported_format(format: Format, alg: &str) -> Fail {
    fail(
        ErrorName::NotSupported,
        format!(
            "unsupported key format {} for algorithm {alg}",
            format.name()
        ),
    )
}

/// The bytes of binary key data; the JWK of `jwk` data.
fn split(data: KeyData) -> (Vec<u8>, Jwk) {
    match data {
        KeyData::Bytes(b) => (b, Jwk::new()),
        KeyData::Jwk(j) => (Vec::new(), j),
    }
}

/// Imports `data` as a key of `params`.
pub(crate) fn import_key(
    format: Format,
    data: KeyData,
    params: &KeyParams,
    extractable: bool,
    usages: Vec<Usage>,
) -> Result<CryptoKey, Fail> {
    let (bytes, jwk) = split(data);
    let (algorithm, material) = match params {
        KeyParams::Hmac { .. } | KeyParams::Aes { .. } => {
            let (secret, jwk_alg) = match format {
                Format::Raw => (bytes, None),
                Format::Jwk => {
                    jwk::check_common(&jwk, "oct", extractable, &usages)?;
                    jwk::secret(&jwk)?
                }
                Format::Spki | Format::Pkcs8 => {
                    return Err(fail(
                        ErrorName::NotSupported,
                        format!("unsupported key format {}", format.name()),
                    ))
                }
            };
            let algorithm = params.secret_algorithm(Some(secret.len()))?;
            if let Some(alg) = jwk_alg {
                jwk::check_alg_value(&alg, &algorithm.jwk_alg())?;
            }
            check_usages(algorithm, &usages)?;
            (algorithm, Material::Secret(secret))
        }
        KeyParams::Ec { kind, curve } => {
            let key = match format {
                Format::Raw => EcKey::from_raw(*curve, &bytes).map_err(|e| {
                    // k6's message for ECDSA; its ECDH one carries Go's error text.
                    if *kind == EcKind::Ecdsa {
                        fail(ErrorName::Data, "unable to import ECDSA public key data")
                    } else {
                        Fail::from(e)
                    }
                })?,
                Format::Spki => EcKey::from_spki(*curve, &bytes)?,
                Format::Pkcs8 => EcKey::from_pkcs8(*curve, &bytes)?,
                Format::Jwk => {
                    jwk::check_common(&jwk, "EC", extractable, &usages)?;
                    let algorithm = KeyAlgorithm::Ec {
                        kind: *kind,
                        curve: *curve,
                    };
                    if *kind == EcKind::Ecdsa {
                        jwk::check_alg(&jwk, &algorithm.jwk_alg())?;
                    }
                    jwk::ec(&jwk, *curve)?
                }
            };
            let algorithm = KeyAlgorithm::Ec {
                kind: *kind,
                curve: *curve,
            };
            (algorithm, Material::Ec(key))
        }
        KeyParams::Kdf(kdf) => {
            // PBKDF2's rules in k6 1.6 (and WebCrypto's, which HKDF shares): raw secret
            // material, never extractable, for derivations only.
            if format != Format::Raw {
                return Err(fail(
                    ErrorName::NotSupported,
                    format!("invalid format: {}", format.name()),
                ));
            }
            if let Some(bad) = usages
                .iter()
                .find(|u| !matches!(u, Usage::DeriveBits | Usage::DeriveKey))
            {
                return Err(fail(
                    ErrorName::Syntax,
                    format!("invalid key usage: {}", bad.name()),
                ));
            }
            if extractable {
                return Err(fail(
                    ErrorName::Syntax,
                    "invalid value for param extractable",
                ));
            }
            if usages.is_empty() {
                return Err(fail(
                    ErrorName::Syntax,
                    "usages cannot not be empty for a secret or private CryptoKey",
                ));
            }
            (KeyAlgorithm::Kdf(*kdf), Material::Secret(bytes))
        }
        KeyParams::Rsa { scheme, hash, .. } => {
            let key = match format {
                Format::Raw => return Err(unsupported_format(format, scheme.name())),
                Format::Spki => RsaKey::from_spki(&bytes)?,
                Format::Pkcs8 => RsaKey::from_pkcs8(&bytes)?,
                Format::Jwk => {
                    jwk::check_common(&jwk, "RSA", extractable, &usages)?;
                    jwk::check_alg(&jwk, scheme.jwk_alg(*hash))?;
                    jwk::rsa(&jwk)?
                }
            };
            let algorithm = KeyAlgorithm::Rsa {
                scheme: *scheme,
                hash: *hash,
                modulus_length: key.modulus_bits(),
                public_exponent: key.public_exponent(),
            };
            (algorithm, Material::Rsa(key))
        }
    };
    // As k6, usages of an imported key pair half are kept as given; only a private key
    // must have some.
    if material.key_type() == KeyType::Private && usages.is_empty() {
        return Err(fail(
            ErrorName::Syntax,
            "a private key needs at least one usage",
        ));
    }
    Ok(CryptoKey::new(algorithm, extractable, usages, material))
}

/// Exports `key` in `format`.
pub(crate) fn export_key(format: Format, key: &CryptoKey) -> Result<KeyData, Fail> {
    if !key.extractable {
        return Err(fail(ErrorName::InvalidAccess, "the key is not extractable"));
    }
    // k6's messages, which name what the key is not.
    let wrong_type = |what: &str| fail(ErrorName::InvalidAccess, what.to_string());
    let bytes = match (&*key.material, format) {
        (_, Format::Jwk) => return Ok(KeyData::Jwk(jwk::export(key)?)),
        (Material::Secret(s), Format::Raw) => s.clone(),
        (Material::Secret(_), _) => {
            return Err(fail(
                ErrorName::NotSupported,
                format!("unsupported key format {}", format.name()),
            ))
        }
        (Material::Ec(k), Format::Raw | Format::Spki) if k.is_private() => {
            return Err(wrong_type("key is not a valid elliptic curve public key"))
        }
        (Material::Ec(k), Format::Raw) => k.raw().to_vec(),
        (Material::Ec(k), Format::Spki) => k.spki()?,
        (Material::Ec(k), Format::Pkcs8) if !k.is_private() => {
            return Err(wrong_type("key is not a valid elliptic curve private key"))
        }
        (Material::Ec(k), Format::Pkcs8) => k.pkcs8()?,
        (Material::Rsa(_), Format::Raw) => {
            return Err(unsupported_format(format, key.algorithm.name()))
        }
        (Material::Rsa(k), Format::Spki) if k.is_private() => {
            return Err(wrong_type("key is not a public RSA key"))
        }
        (Material::Rsa(k), Format::Spki) => k.spki()?,
        (Material::Rsa(k), Format::Pkcs8) if !k.is_private() => {
            return Err(wrong_type("key is not a private RSA key"))
        }
        (Material::Rsa(k), Format::Pkcs8) => k.pkcs8()?,
    };
    Ok(KeyData::Bytes(bytes))
}
