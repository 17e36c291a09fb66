//! ECDSA and ECDH keys on P-256, P-384 and P-521 (RustCrypto's `p256`, `p384`, `p521`).
//! A key is kept as bytes (the SEC1 point and the scalar) and parsed for each operation:
//! parsing costs a few field operations, small beside a signature, and keeps one key type
//! for the three curves.

use p256::ecdsa::signature::hazmat::{PrehashVerifier, RandomizedPrehashSigner};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use rand_core::OsRng;

use super::algorithm::{Curve, Hash};
use super::error::{CryptoError, ErrorName};

/// Runs `$body` with `$m` naming the RustCrypto crate of `$curve`.
macro_rules! on_curve {
    ($curve:expr, |$m:ident| $body:expr) => {
        match $curve {
            Curve::P256 => {
                use p256 as $m;
                $body
            }
            Curve::P384 => {
                use p384 as $m;
                $body
            }
            Curve::P521 => {
                use p521 as $m;
                $body
            }
        }
    };
}

fn data_error(message: impl Into<String>) -> CryptoError {
    CryptoError::new(ErrorName::Data, message)
}

/// An elliptic-curve key: always the public point, and the scalar for a private key.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct EcKey {
    curve: Curve,
    /// The SEC1 uncompressed point (`04 || x || y`).
    public: Vec<u8>,
    /// The big-endian scalar, `curve.field_len()` bytes.
    private: Option<Vec<u8>>,
}

impl std::fmt::Debug for EcKey {
    // Never print the scalar.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EcKey")
            .field("curve", &self.curve)
            .field("private", &self.private.is_some())
            .finish()
    }
}

impl EcKey {
    /// The key's curve.
    pub(crate) fn curve(&self) -> Curve {
        self.curve
    }

    /// Whether the key holds a scalar.
    pub(crate) fn is_private(&self) -> bool {
        self.private.is_some()
    }

    /// The public half of this key.
    pub(crate) fn public_half(&self) -> EcKey {
        EcKey {
            curve: self.curve,
            public: self.public.clone(),
            private: None,
        }
    }

    /// A new random private key.
    pub(crate) fn generate(curve: Curve) -> EcKey {
        let (scalar, public) = on_curve!(curve, |m| {
            let secret = m::SecretKey::random(&mut OsRng);
            let public = secret.public_key().to_encoded_point(false);
            (secret.to_bytes().to_vec(), public.as_bytes().to_vec())
        });
        EcKey {
            curve,
            public,
            private: Some(scalar),
        }
    }

    /// A public key from a SEC1 point (uncompressed or compressed), the `raw` format.
    pub(crate) fn from_raw(curve: Curve, bytes: &[u8]) -> Result<EcKey, CryptoError> {
        let public = on_curve!(curve, |m| {
            m::PublicKey::from_sec1_bytes(bytes)
                .map(|k| k.to_encoded_point(false).as_bytes().to_vec())
        })
        .map_err(|_| data_error(format!("the data is not a {} public key", curve.name())))?;
        Ok(EcKey {
            curve,
            public,
            private: None,
        })
    }

    /// A public key from a DER SubjectPublicKeyInfo.
    pub(crate) fn from_spki(curve: Curve, der: &[u8]) -> Result<EcKey, CryptoError> {
        let parsed = on_curve!(curve, |m| m::PublicKey::from_public_key_der(der)
            .map(|k| k.to_encoded_point(false).as_bytes().to_vec()));
        match parsed {
            Ok(public) => Ok(EcKey {
                curve,
                public,
                private: None,
            }),
            Err(e) => Err(wrong_curve(curve, |c| {
                on_curve!(c, |m| m::PublicKey::from_public_key_der(der).is_ok())
            })
            .unwrap_or_else(|| {
                data_error(format!(
                    "the data is not an SPKI {} public key: {e}",
                    curve.name()
                ))
            })),
        }
    }

    /// A private key from a DER PKCS #8 PrivateKeyInfo.
    pub(crate) fn from_pkcs8(curve: Curve, der: &[u8]) -> Result<EcKey, CryptoError> {
        let parsed = on_curve!(curve, |m| m::SecretKey::from_pkcs8_der(der).map(|k| {
            let public = k.public_key().to_encoded_point(false).as_bytes().to_vec();
            (k.to_bytes().to_vec(), public)
        }));
        match parsed {
            Ok((scalar, public)) => Ok(EcKey {
                curve,
                public,
                private: Some(scalar),
            }),
            Err(e) => Err(wrong_curve(curve, |c| {
                on_curve!(c, |m| m::SecretKey::from_pkcs8_der(der).is_ok())
            })
            .unwrap_or_else(|| {
                data_error(format!(
                    "the data is not a PKCS #8 {} private key: {e}",
                    curve.name()
                ))
            })),
        }
    }

    /// A key from JWK coordinates and, for a private key, its scalar `d`. Shorter
    /// big-endian values are left-padded: k6 exports coordinates without their leading
    /// zeros.
    pub(crate) fn from_coordinates(
        curve: Curve,
        x: &[u8],
        y: &[u8],
        d: Option<&[u8]>,
    ) -> Result<EcKey, CryptoError> {
        let n = curve.field_len();
        let pad = |v: &[u8], what: &str| -> Result<Vec<u8>, CryptoError> {
            if v.len() > n {
                return Err(data_error(format!(
                    "the JWK '{what}' is {} bytes, more than {n} for {}",
                    v.len(),
                    curve.name()
                )));
            }
            let mut out = vec![0u8; n - v.len()];
            out.extend_from_slice(v);
            Ok(out)
        };
        let mut point = vec![4u8];
        point.extend(pad(x, "x")?);
        point.extend(pad(y, "y")?);
        let key = EcKey::from_raw(curve, &point).map_err(|_| {
            data_error(format!(
                "the JWK x and y are not a point of {}",
                curve.name()
            ))
        })?;
        let Some(d) = d else { return Ok(key) };
        let scalar = pad(d, "d")?;
        let public = on_curve!(curve, |m| m::SecretKey::from_slice(&scalar).map(|k| k
            .public_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()))
        .map_err(|_| data_error(format!("the JWK 'd' is not a {} scalar", curve.name())))?;
        if public != key.public {
            return Err(data_error("the JWK 'd' does not match its 'x' and 'y'"));
        }
        Ok(EcKey {
            private: Some(scalar),
            ..key
        })
    }

    /// The SEC1 uncompressed point: the `raw` format.
    pub(crate) fn raw(&self) -> &[u8] {
        &self.public
    }

    /// The x and y coordinates, each `field_len` bytes.
    pub(crate) fn coordinates(&self) -> (&[u8], &[u8]) {
        let n = self.curve.field_len();
        (&self.public[1..1 + n], &self.public[1 + n..])
    }

    /// The scalar of a private key.
    pub(crate) fn scalar(&self) -> Option<&[u8]> {
        self.private.as_deref()
    }

    /// The DER SubjectPublicKeyInfo of the public point.
    pub(crate) fn spki(&self) -> Result<Vec<u8>, CryptoError> {
        let der = on_curve!(self.curve, |m| m::PublicKey::from_sec1_bytes(&self.public)
            .map_err(|e| e.to_string())
            .and_then(|k| k.to_public_key_der().map_err(|e| e.to_string()))
            .map(|d| d.as_bytes().to_vec()));
        der.map_err(|e| {
            CryptoError::new(ErrorName::Operation, format!("SPKI encoding failed: {e}"))
        })
    }

    /// The DER PKCS #8 PrivateKeyInfo of a private key.
    pub(crate) fn pkcs8(&self) -> Result<Vec<u8>, CryptoError> {
        let scalar = self.private_scalar()?;
        let der = on_curve!(self.curve, |m| m::SecretKey::from_slice(scalar)
            .map_err(|e| e.to_string())
            .and_then(|k| k.to_pkcs8_der().map_err(|e| e.to_string()))
            .map(|d| d.as_bytes().to_vec()));
        der.map_err(|e| {
            CryptoError::new(
                ErrorName::Operation,
                format!("PKCS #8 encoding failed: {e}"),
            )
        })
    }

    fn private_scalar(&self) -> Result<&[u8], CryptoError> {
        self.private.as_deref().ok_or_else(|| {
            CryptoError::new(ErrorName::InvalidAccess, "the key is not a private key")
        })
    }

    /// An ECDSA signature of `data` hashed with `hash`, as WebCrypto's `r || s`, with a
    /// random nonce.
    pub(crate) fn sign(&self, hash: Hash, data: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let scalar = self.private_scalar()?;
        let prehash = prehash(self.curve, hash, data);
        let signed = on_curve!(self.curve, |m| {
            m::ecdsa::SigningKey::from_slice(scalar).and_then(|k| {
                let sig: m::ecdsa::Signature = k.sign_prehash_with_rng(&mut OsRng, &prehash)?;
                Ok(sig.to_bytes().to_vec())
            })
        });
        signed.map_err(|e| {
            CryptoError::new(ErrorName::Operation, format!("ECDSA signing failed: {e}"))
        })
    }

    /// Whether `signature` (`r || s`) is this key's ECDSA signature of `data`; a signature
    /// of the wrong length or out of range is just invalid.
    pub(crate) fn verify(&self, hash: Hash, signature: &[u8], data: &[u8]) -> bool {
        if signature.len() != 2 * self.curve.field_len() {
            return false;
        }
        let prehash = prehash(self.curve, hash, data);
        on_curve!(self.curve, |m| {
            let (Ok(key), Ok(sig)) = (
                m::ecdsa::VerifyingKey::from_sec1_bytes(&self.public),
                m::ecdsa::Signature::from_slice(signature),
            ) else {
                return false;
            };
            key.verify_prehash(&prehash, &sig).is_ok()
        })
    }

    /// The ECDH shared secret (the x coordinate) of this private key and `peer`.
    pub(crate) fn derive(&self, peer: &EcKey) -> Result<Vec<u8>, CryptoError> {
        let scalar = self.private_scalar()?;
        if peer.curve != self.curve {
            return Err(CryptoError::new(
                ErrorName::InvalidAccess,
                format!(
                    "the keys are on different curves: {} and {}",
                    self.curve.name(),
                    peer.curve.name()
                ),
            ));
        }
        let secret = on_curve!(self.curve, |m| {
            match (
                m::SecretKey::from_slice(scalar),
                m::PublicKey::from_sec1_bytes(&peer.public),
            ) {
                (Ok(s), Ok(p)) => Some(
                    m::ecdh::diffie_hellman(s.to_nonzero_scalar(), p.as_affine())
                        .raw_secret_bytes()
                        .to_vec(),
                ),
                _ => None,
            }
        });
        secret.ok_or_else(|| CryptoError::new(ErrorName::Operation, "ECDH failed"))
    }
}

/// The error for key data that parses on another curve than the one asked for.
fn wrong_curve(asked: Curve, parses: impl Fn(Curve) -> bool) -> Option<CryptoError> {
    [Curve::P256, Curve::P384, Curve::P521]
        .into_iter()
        .find(|c| *c != asked && parses(*c))
        .map(|c| {
            data_error(format!(
                "the key is on {}, not on the namedCurve {}",
                c.name(),
                asked.name()
            ))
        })
}

/// The digest ECDSA signs, left-padded to the field size when shorter. The integer is the
/// same (FIPS 186 takes the leftmost bits of a longer digest, which RustCrypto does), and
/// RustCrypto refuses digests under half the field size, which WebCrypto allows (SHA-1 or
/// SHA-256 with P-521).
fn prehash(curve: Curve, hash: Hash, data: &[u8]) -> Vec<u8> {
    let digest = hash.digest(data);
    let n = curve.field_len();
    if digest.len() >= n {
        return digest;
    }
    let mut out = vec![0u8; n - digest.len()];
    out.extend_from_slice(&digest);
    out
}
