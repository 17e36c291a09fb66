//! Algorithm names and the key algorithms rk6's WebCrypto supports.

use super::error::{CryptoError, ErrorName};
use crate::modules::crypto::Algorithm as Digest;

/// The SHA hashes of WebCrypto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hash {
    Sha1,
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    /// Parses a WebCrypto hash name (case-insensitive, as WebCrypto normalises names).
    pub(crate) fn from_name(name: &str) -> Option<Hash> {
        Some(match name.to_ascii_uppercase().as_str() {
            "SHA-1" => Hash::Sha1,
            "SHA-256" => Hash::Sha256,
            "SHA-384" => Hash::Sha384,
            "SHA-512" => Hash::Sha512,
            _ => return None,
        })
    }

    /// The canonical name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Hash::Sha1 => "SHA-1",
            Hash::Sha256 => "SHA-256",
            Hash::Sha384 => "SHA-384",
            Hash::Sha512 => "SHA-512",
        }
    }

    fn digest_algorithm(self) -> Digest {
        match self {
            Hash::Sha1 => Digest::Sha1,
            Hash::Sha256 => Digest::Sha256,
            Hash::Sha384 => Digest::Sha384,
            Hash::Sha512 => Digest::Sha512,
        }
    }

    /// The digest of `data`.
    pub(crate) fn digest(self, data: &[u8]) -> Vec<u8> {
        self.digest_algorithm().digest(None, data)
    }

    /// The HMAC of `data` under `key`.
    pub(crate) fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        self.digest_algorithm().digest(Some(key), data)
    }

    /// The digest's length in bytes.
    pub(crate) fn output_len(self) -> usize {
        match self {
            Hash::Sha1 => 20,
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
            Hash::Sha512 => 64,
        }
    }

    /// The hash's block size in bits: the default length of a generated HMAC key.
    pub(crate) fn block_bits(self) -> usize {
        match self {
            Hash::Sha1 | Hash::Sha256 => 512,
            Hash::Sha384 | Hash::Sha512 => 1024,
        }
    }

    /// The JWK `alg` of an HMAC key using this hash.
    pub(crate) fn jwk_hmac(self) -> &'static str {
        match self {
            Hash::Sha1 => "HS1",
            Hash::Sha256 => "HS256",
            Hash::Sha384 => "HS384",
            Hash::Sha512 => "HS512",
        }
    }
}

/// The AES modes of WebCrypto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AesMode {
    Gcm,
    Cbc,
    Ctr,
    Kw,
}

impl AesMode {
    /// The canonical algorithm name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            AesMode::Gcm => "AES-GCM",
            AesMode::Cbc => "AES-CBC",
            AesMode::Ctr => "AES-CTR",
            AesMode::Kw => "AES-KW",
        }
    }

    /// The JWK `alg` for a key of `bits`.
    pub(crate) fn jwk(self, bits: usize) -> String {
        let suffix = match self {
            AesMode::Gcm => "GCM",
            AesMode::Cbc => "CBC",
            AesMode::Ctr => "CTR",
            AesMode::Kw => "KW",
        };
        format!("A{bits}{suffix}")
    }
}

/// The elliptic-curve algorithms: one key type, two uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EcKind {
    Ecdsa,
    Ecdh,
}

impl EcKind {
    /// The canonical algorithm name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            EcKind::Ecdsa => "ECDSA",
            EcKind::Ecdh => "ECDH",
        }
    }
}

/// The RSA algorithms: one key type, three paddings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RsaScheme {
    Pkcs1,
    Pss,
    Oaep,
}

impl RsaScheme {
    /// The canonical algorithm name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            RsaScheme::Pkcs1 => "RSASSA-PKCS1-v1_5",
            RsaScheme::Pss => "RSA-PSS",
            RsaScheme::Oaep => "RSA-OAEP",
        }
    }

    /// The JWK `alg` of a key of this scheme hashing with `hash` (RFC 7518).
    pub(crate) fn jwk_alg(self, hash: Hash) -> &'static str {
        match (self, hash) {
            (RsaScheme::Pkcs1, Hash::Sha1) => "RS1",
            (RsaScheme::Pkcs1, Hash::Sha256) => "RS256",
            (RsaScheme::Pkcs1, Hash::Sha384) => "RS384",
            (RsaScheme::Pkcs1, Hash::Sha512) => "RS512",
            (RsaScheme::Pss, Hash::Sha1) => "PS1",
            (RsaScheme::Pss, Hash::Sha256) => "PS256",
            (RsaScheme::Pss, Hash::Sha384) => "PS384",
            (RsaScheme::Pss, Hash::Sha512) => "PS512",
            (RsaScheme::Oaep, Hash::Sha1) => "RSA-OAEP",
            (RsaScheme::Oaep, Hash::Sha256) => "RSA-OAEP-256",
            (RsaScheme::Oaep, Hash::Sha384) => "RSA-OAEP-384",
            (RsaScheme::Oaep, Hash::Sha512) => "RSA-OAEP-512",
        }
    }
}

/// The key derivation functions whose base key is secret material (a password, a key):
/// PBKDF2 (k6 1.6) and HKDF (not in k6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kdf {
    Pbkdf2,
    Hkdf,
}

impl Kdf {
    /// The canonical algorithm name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kdf::Pbkdf2 => "PBKDF2",
            Kdf::Hkdf => "HKDF",
        }
    }
}

/// The NIST curves of WebCrypto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Curve {
    P256,
    P384,
    P521,
}

impl Curve {
    /// Parses a `namedCurve` (case-sensitive, as in WebCrypto and k6).
    pub(crate) fn from_name(name: &str) -> Option<Curve> {
        Some(match name {
            "P-256" => Curve::P256,
            "P-384" => Curve::P384,
            "P-521" => Curve::P521,
            _ => return None,
        })
    }

    /// The curve's name, as in `namedCurve` and a JWK's `crv`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Curve::P256 => "P-256",
            Curve::P384 => "P-384",
            Curve::P521 => "P-521",
        }
    }

    /// The size of a coordinate or scalar in bytes.
    pub(crate) fn field_len(self) -> usize {
        match self {
            Curve::P256 => 32,
            Curve::P384 => 48,
            Curve::P521 => 66,
        }
    }
}

/// A WebCrypto algorithm name after normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Name {
    Digest(Hash),
    Hmac,
    Aes(AesMode),
    Ec(EcKind),
    Rsa(RsaScheme),
    Kdf(Kdf),
}

impl Name {
    /// The canonical name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Name::Digest(h) => h.name(),
            Name::Hmac => "HMAC",
            Name::Aes(m) => m.name(),
            Name::Ec(k) => k.name(),
            Name::Rsa(s) => s.name(),
            Name::Kdf(k) => k.name(),
        }
    }

    /// Parses an algorithm name (case-insensitive).
    pub(crate) fn parse(name: &str, op: &str) -> Result<Name, CryptoError> {
        if let Some(h) = Hash::from_name(name) {
            return Ok(Name::Digest(h));
        }
        Ok(match name.to_ascii_uppercase().as_str() {
            "HMAC" => Name::Hmac,
            "AES-GCM" => Name::Aes(AesMode::Gcm),
            "AES-CBC" => Name::Aes(AesMode::Cbc),
            "AES-CTR" => Name::Aes(AesMode::Ctr),
            "AES-KW" => Name::Aes(AesMode::Kw),
            "ECDSA" => Name::Ec(EcKind::Ecdsa),
            "ECDH" => Name::Ec(EcKind::Ecdh),
            "RSASSA-PKCS1-V1_5" => Name::Rsa(RsaScheme::Pkcs1),
            "RSA-PSS" => Name::Rsa(RsaScheme::Pss),
            "RSA-OAEP" => Name::Rsa(RsaScheme::Oaep),
            "PBKDF2" => Name::Kdf(Kdf::Pbkdf2),
            "HKDF" => Name::Kdf(Kdf::Hkdf),
            _ => return Err(unsupported(name, op)),
        })
    }
}

/// The error for an algorithm rk6 does not implement for `op`.
pub(crate) fn unsupported(name: &str, op: &str) -> CryptoError {
    CryptoError::new(
        ErrorName::NotSupported,
        format!("algorithm \"{name}\" is not supported for operation \"{op}\" by rk6"),
    )
}

/// What a key is for, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyAlgorithm {
    /// An HMAC key; `length` in bits.
    Hmac { hash: Hash, length: usize },
    /// An AES key; `length` in bits.
    Aes { mode: AesMode, length: usize },
    /// An ECDSA or ECDH key.
    Ec { kind: EcKind, curve: Curve },
    /// An RSA key; the hash is fixed when the key is made, as in WebCrypto.
    Rsa {
        scheme: RsaScheme,
        hash: Hash,
        modulus_length: usize,
        public_exponent: u64,
    },
    /// The secret material of a key derivation (never extractable).
    Kdf(Kdf),
}

impl KeyAlgorithm {
    /// The algorithm's canonical name.
    pub(crate) fn name(self) -> &'static str {
        self.as_name().as_str()
    }

    /// The algorithm name this key answers to.
    pub(crate) fn as_name(self) -> Name {
        match self {
            KeyAlgorithm::Hmac { .. } => Name::Hmac,
            KeyAlgorithm::Aes { mode, .. } => Name::Aes(mode),
            KeyAlgorithm::Ec { kind, .. } => Name::Ec(kind),
            KeyAlgorithm::Rsa { scheme, .. } => Name::Rsa(scheme),
            KeyAlgorithm::Kdf(k) => Name::Kdf(k),
        }
    }

    /// The JWK `alg` member for a secret key of this algorithm.
    pub(crate) fn jwk_alg(self) -> String {
        match self {
            KeyAlgorithm::Hmac { hash, .. } => hash.jwk_hmac().to_string(),
            KeyAlgorithm::Aes { mode, length } => mode.jwk(length),
            KeyAlgorithm::Rsa { scheme, hash, .. } => scheme.jwk_alg(hash).to_string(),
            KeyAlgorithm::Ec { curve, .. } => match curve {
                Curve::P256 => "ES256".into(),
                Curve::P384 => "ES384".into(),
                Curve::P521 => "ES512".into(),
            },
            KeyAlgorithm::Kdf(k) => k.name().into(),
        }
    }

    /// The usages a secret key of this algorithm may have; for a key pair, those of
    /// either half (see [`KeyAlgorithm::pair_usages`]).
    pub(crate) fn allowed_usages(self) -> &'static [Usage] {
        match self {
            KeyAlgorithm::Hmac { .. } => &[Usage::Sign, Usage::Verify],
            // k6 refuses encrypt/decrypt for AES-KW, as WebCrypto does.
            KeyAlgorithm::Aes {
                mode: AesMode::Kw, ..
            } => &[Usage::WrapKey, Usage::UnwrapKey],
            KeyAlgorithm::Aes { .. } => &[
                Usage::Encrypt,
                Usage::Decrypt,
                Usage::WrapKey,
                Usage::UnwrapKey,
            ],
            KeyAlgorithm::Ec {
                kind: EcKind::Ecdsa,
                ..
            }
            | KeyAlgorithm::Rsa {
                scheme: RsaScheme::Pkcs1 | RsaScheme::Pss,
                ..
            } => &[Usage::Sign, Usage::Verify],
            KeyAlgorithm::Ec {
                kind: EcKind::Ecdh, ..
            }
            | KeyAlgorithm::Kdf(_) => &[Usage::DeriveKey, Usage::DeriveBits],
            KeyAlgorithm::Rsa {
                scheme: RsaScheme::Oaep,
                ..
            } => &[
                Usage::Encrypt,
                Usage::Decrypt,
                Usage::WrapKey,
                Usage::UnwrapKey,
            ],
        }
    }

    /// The usages the private and the public half of a generated key pair may keep.
    pub(crate) fn pair_usages(self) -> (&'static [Usage], &'static [Usage]) {
        match self.allowed_usages() {
            [Usage::Sign, Usage::Verify] => (&[Usage::Sign], &[Usage::Verify]),
            [Usage::DeriveKey, Usage::DeriveBits] => (&[Usage::DeriveKey, Usage::DeriveBits], &[]),
            _ => (
                &[Usage::Decrypt, Usage::UnwrapKey],
                &[Usage::Encrypt, Usage::WrapKey],
            ),
        }
    }
}

/// A key usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Usage {
    Encrypt,
    Decrypt,
    Sign,
    Verify,
    DeriveKey,
    DeriveBits,
    WrapKey,
    UnwrapKey,
}

impl Usage {
    /// Parses a usage (case-sensitive, as in WebCrypto).
    pub(crate) fn from_name(name: &str) -> Option<Usage> {
        Some(match name {
            "encrypt" => Usage::Encrypt,
            "decrypt" => Usage::Decrypt,
            "sign" => Usage::Sign,
            "verify" => Usage::Verify,
            "deriveKey" => Usage::DeriveKey,
            "deriveBits" => Usage::DeriveBits,
            "wrapKey" => Usage::WrapKey,
            "unwrapKey" => Usage::UnwrapKey,
            _ => return None,
        })
    }

    /// The usage's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Usage::Encrypt => "encrypt",
            Usage::Decrypt => "decrypt",
            Usage::Sign => "sign",
            Usage::Verify => "verify",
            Usage::DeriveKey => "deriveKey",
            Usage::DeriveBits => "deriveBits",
            Usage::WrapKey => "wrapKey",
            Usage::UnwrapKey => "unwrapKey",
        }
    }
}

/// Checks `usages` against what `algorithm` allows; a secret key needs at least one.
pub(crate) fn check_usages(algorithm: KeyAlgorithm, usages: &[Usage]) -> Result<(), CryptoError> {
    if let Some(bad) = usages
        .iter()
        .find(|u| !algorithm.allowed_usages().contains(u))
    {
        return Err(CryptoError::new(
            ErrorName::Syntax,
            format!("invalid key usage for {}: {}", algorithm.name(), bad.name()),
        ));
    }
    if usages.is_empty() {
        return Err(CryptoError::new(
            ErrorName::Syntax,
            "a secret key needs at least one usage",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive() {
        assert_eq!(
            Name::parse("sha-256", "digest").unwrap(),
            Name::Digest(Hash::Sha256)
        );
        assert_eq!(
            Name::parse("aes-gcm", "encrypt").unwrap(),
            Name::Aes(AesMode::Gcm)
        );
        assert_eq!(Name::parse("Hmac", "sign").unwrap(), Name::Hmac);
        let err = Name::parse("MD5", "digest").unwrap_err();
        assert_eq!(err.name, ErrorName::NotSupported);
    }

    #[test]
    fn usages_are_checked() {
        let hmac = KeyAlgorithm::Hmac {
            hash: Hash::Sha256,
            length: 256,
        };
        assert!(check_usages(hmac, &[Usage::Sign, Usage::Verify]).is_ok());
        assert_eq!(
            check_usages(hmac, &[Usage::Encrypt]).unwrap_err().name,
            ErrorName::Syntax
        );
        assert_eq!(check_usages(hmac, &[]).unwrap_err().name, ErrorName::Syntax);
    }

    #[test]
    fn jwk_names() {
        assert_eq!(
            KeyAlgorithm::Aes {
                mode: AesMode::Gcm,
                length: 256
            }
            .jwk_alg(),
            "A256GCM"
        );
        assert_eq!(
            KeyAlgorithm::Hmac {
                hash: Hash::Sha384,
                length: 1024
            }
            .jwk_alg(),
            "HS384"
        );
    }
}
