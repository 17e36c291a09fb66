//! RSA keys (RustCrypto's `rsa`): generation, SPKI/PKCS #8/JWK parts, and RSASSA-PKCS1-v1_5
//! and RSA-PSS signatures. OAEP is in `oaep.rs`.

use rand_core::OsRng;
use rsa::pkcs1::der::Decode;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{BigUint, Pkcs1v15Sign, Pss, RsaPrivateKey, RsaPublicKey};

use super::algorithm::Hash;
use super::error::{CryptoError, ErrorName};

/// The largest modulus rk6 imports or generates, in bits.
const MAX_BITS: usize = 16384;

/// Runs `$body` with `$d` the RustCrypto digest type of `$hash`.
macro_rules! with_digest {
    ($hash:expr, |$d:ident| $body:expr) => {
        match $hash {
            Hash::Sha1 => {
                type $d = sha1::Sha1;
                $body
            }
            Hash::Sha256 => {
                type $d = sha2::Sha256;
                $body
            }
            Hash::Sha384 => {
                type $d = sha2::Sha384;
                $body
            }
            Hash::Sha512 => {
                type $d = sha2::Sha512;
                $body
            }
        }
    };
}

fn op_error(message: impl Into<String>) -> CryptoError {
    CryptoError::new(ErrorName::Operation, message)
}

fn data_error(message: impl Into<String>) -> CryptoError {
    CryptoError::new(ErrorName::Data, message)
}

/// An RSA key, private or public.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RsaKey {
    /// Boxed: a private key is several times the size of a public one.
    Private(Box<RsaPrivateKey>),
    Public(RsaPublicKey),
}

/// The components of an RSA JWK, as big-endian bytes without leading zeros.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RsaParts {
    pub(crate) n: Vec<u8>,
    pub(crate) e: Vec<u8>,
    /// `d, p, q, dp, dq, qi` of a private key.
    pub(crate) private: Option<[Vec<u8>; 6]>,
}

impl RsaKey {
    /// Whether this is the private half.
    pub(crate) fn is_private(&self) -> bool {
        matches!(self, RsaKey::Private(_))
    }

    fn parts(&self) -> &dyn PublicKeyParts {
        match self {
            RsaKey::Private(k) => k.as_ref(),
            RsaKey::Public(k) => k,
        }
    }

    /// The public half of this key.
    pub(crate) fn public_half(&self) -> RsaKey {
        match self {
            RsaKey::Private(k) => RsaKey::Public(k.to_public_key()),
            RsaKey::Public(k) => RsaKey::Public(k.clone()),
        }
    }

    /// The public key of either half.
    pub(crate) fn public(&self) -> RsaPublicKey {
        match self {
            RsaKey::Private(k) => k.to_public_key(),
            RsaKey::Public(k) => k.clone(),
        }
    }

    /// The modulus length in bits.
    pub(crate) fn modulus_bits(&self) -> usize {
        self.parts().n().bits()
    }

    /// The public exponent (at most 2^33 - 1, which the `rsa` crate enforces).
    pub(crate) fn public_exponent(&self) -> u64 {
        let e = self.parts().e().to_bytes_be();
        e.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
    }

    /// The public exponent of `generateKey`, a big-endian Uint8Array, checked as k6
    /// (Go) checks it, with its messages.
    pub(crate) fn exponent(bytes: &[u8]) -> Result<u64, CryptoError> {
        let e = match bytes.iter().position(|b| *b != 0) {
            Some(i) if bytes.len() - i > 8 => u64::MAX,
            Some(i) => bytes[i..]
                .iter()
                .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)),
            None => 0,
        };
        let invalid = |why: &str| op_error(format!("invalid public exponent: {why}"));
        if e % 2 == 0 {
            return Err(invalid("public exponent is even"));
        }
        if e < 3 {
            return Err(invalid("public exponent too small"));
        }
        if e > (1 << 31) - 1 {
            return Err(invalid("public exponent too large"));
        }
        Ok(e)
    }

    /// A new key pair's private half, with a modulus of `bits` and exponent `e`.
    pub(crate) fn generate(bits: usize, e: u64) -> Result<RsaKey, CryptoError> {
        if !(256..=MAX_BITS).contains(&bits) {
            return Err(op_error(format!(
                "could not generate RSA key pair: modulusLength must be between 256 and {MAX_BITS}, not {bits}"
            )));
        }
        RsaPrivateKey::new_with_exp(&mut OsRng, bits, &BigUint::from(e))
            .map(|k| RsaKey::Private(Box::new(k)))
            .map_err(|e| op_error(format!("could not generate RSA key pair: {e}")))
    }

    /// A public key from a DER SubjectPublicKeyInfo. Parsed here rather than with the
    /// `rsa` crate's decoder, which refuses moduli over 4096 bits.
    pub(crate) fn from_spki(der: &[u8]) -> Result<RsaKey, CryptoError> {
        let bad = |e: &dyn std::fmt::Display| {
            data_error(format!("the data is not an SPKI RSA public key: {e}"))
        };
        let spki = rsa::pkcs8::SubjectPublicKeyInfoRef::from_der(der).map_err(|e| bad(&e))?;
        if spki.algorithm.oid != rsa::pkcs1::ALGORITHM_OID {
            return Err(data_error(format!(
                "the SPKI key is not an RSA key (algorithm {})",
                spki.algorithm.oid
            )));
        }
        let bits = spki
            .subject_public_key
            .as_bytes()
            .ok_or_else(|| bad(&"unaligned bit string"))?;
        let key = rsa::pkcs1::RsaPublicKey::from_der(bits).map_err(|e| bad(&e))?;
        public_key(key.modulus.as_bytes(), key.public_exponent.as_bytes())
    }

    /// A private key from a DER PKCS #8 PrivateKeyInfo.
    pub(crate) fn from_pkcs8(der: &[u8]) -> Result<RsaKey, CryptoError> {
        RsaPrivateKey::from_pkcs8_der(der)
            .map(|k| RsaKey::Private(Box::new(k)))
            .map_err(|e| data_error(format!("the data is not a PKCS #8 RSA private key: {e}")))
    }

    /// A key from JWK components. A private key needs `d`; `p` and `q` are recovered
    /// when absent, and the CRT values are recomputed from them.
    pub(crate) fn from_parts(
        n: &[u8],
        e: &[u8],
        d: Option<&[u8]>,
        p: Option<&[u8]>,
        q: Option<&[u8]>,
    ) -> Result<RsaKey, CryptoError> {
        let Some(d) = d else {
            return public_key(n, e);
        };
        let primes = match (p, q) {
            (Some(p), Some(q)) => vec![BigUint::from_bytes_be(p), BigUint::from_bytes_be(q)],
            (None, None) => Vec::new(),
            _ => return Err(data_error("the RSA JWK has only one of 'p' and 'q'")),
        };
        RsaPrivateKey::from_components(
            BigUint::from_bytes_be(n),
            BigUint::from_bytes_be(e),
            BigUint::from_bytes_be(d),
            primes,
        )
        .map(|k| RsaKey::Private(Box::new(k)))
        .map_err(|e| data_error(format!("the RSA JWK is not a valid private key: {e}")))
    }

    /// The JWK components of this key.
    pub(crate) fn to_parts(&self) -> Result<RsaParts, CryptoError> {
        let parts = self.parts();
        let mut out = RsaParts {
            n: parts.n().to_bytes_be(),
            e: parts.e().to_bytes_be(),
            private: None,
        };
        if let RsaKey::Private(k) = self {
            let [p, q] = k.primes() else {
                return Err(op_error("multi-prime RSA keys cannot be exported"));
            };
            let one = BigUint::from(1u8);
            let qi = k
                .crt_coefficient()
                .ok_or_else(|| op_error("the RSA key has no CRT coefficient"))?;
            out.private = Some([
                k.d().to_bytes_be(),
                p.to_bytes_be(),
                q.to_bytes_be(),
                (k.d() % (p - &one)).to_bytes_be(),
                (k.d() % (q - &one)).to_bytes_be(),
                qi.to_bytes_be(),
            ]);
        }
        Ok(out)
    }

    /// The DER SubjectPublicKeyInfo of the public key.
    pub(crate) fn spki(&self) -> Result<Vec<u8>, CryptoError> {
        self.public()
            .to_public_key_der()
            .map(|d| d.as_bytes().to_vec())
            .map_err(|e| op_error(format!("SPKI encoding failed: {e}")))
    }

    /// The DER PKCS #8 PrivateKeyInfo of a private key.
    pub(crate) fn pkcs8(&self) -> Result<Vec<u8>, CryptoError> {
        let RsaKey::Private(k) = self else {
            return Err(CryptoError::new(
                ErrorName::InvalidAccess,
                "the key is not a private RSA key",
            ));
        };
        k.to_pkcs8_der()
            .map(|d| d.as_bytes().to_vec())
            .map_err(|e| op_error(format!("PKCS #8 encoding failed: {e}")))
    }

    fn private(&self) -> Result<&RsaPrivateKey, CryptoError> {
        match self {
            RsaKey::Private(k) => Ok(k),
            RsaKey::Public(_) => Err(CryptoError::new(
                ErrorName::InvalidAccess,
                "the key is not a private RSA key",
            )),
        }
    }

    /// The private RSA key, for OAEP.
    pub(crate) fn private_key(&self) -> Result<&RsaPrivateKey, CryptoError> {
        self.private()
    }

    /// An RSASSA-PKCS1-v1_5 signature of `data` hashed with `hash`.
    pub(crate) fn sign_pkcs1(&self, hash: Hash, data: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let key = self.private()?;
        let scheme = with_digest!(hash, |D| Pkcs1v15Sign::new::<D>());
        key.sign_with_rng(&mut OsRng, scheme, &hash.digest(data))
            .map_err(|e| op_error(format!("could not sign data: {e}")))
    }

    /// Whether `signature` is an RSASSA-PKCS1-v1_5 signature of `data` by this key.
    pub(crate) fn verify_pkcs1(&self, hash: Hash, signature: &[u8], data: &[u8]) -> bool {
        let scheme = with_digest!(hash, |D| Pkcs1v15Sign::new::<D>());
        self.public()
            .verify(scheme, &hash.digest(data), signature)
            .is_ok()
    }

    /// An RSA-PSS signature with a random salt of `salt_len` bytes.
    pub(crate) fn sign_pss(
        &self,
        hash: Hash,
        salt_len: usize,
        data: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        let key = self.private()?;
        let max = (key.n().bits() - 1).div_ceil(8);
        if salt_len.saturating_add(hash.output_len() + 2) > max {
            return Err(op_error(format!(
                "could not sign data: a salt of {salt_len} bytes is too long for this key and hash"
            )));
        }
        let scheme = with_digest!(hash, |D| Pss::new_blinded_with_salt::<D>(salt_len));
        key.sign_with_rng(&mut OsRng, scheme, &hash.digest(data))
            .map_err(|e| op_error(format!("could not sign data: {e}")))
    }

    /// Whether `signature` is an RSA-PSS signature of `data` with a salt of `salt_len`
    /// bytes. A `salt_len` of 0 accepts any salt length (k6 rejects 0 outright).
    pub(crate) fn verify_pss(
        &self,
        hash: Hash,
        salt_len: usize,
        signature: &[u8],
        data: &[u8],
    ) -> bool {
        let public = self.public();
        let salt_len = if salt_len == 0 {
            match pss_salt_len(&public, hash, signature) {
                Some(n) => n,
                None => return false,
            }
        } else {
            salt_len
        };
        // The `rsa` crate adds the salt length to others without checking for overflow.
        if salt_len > public.size() {
            return false;
        }
        let scheme = with_digest!(hash, |D| Pss::new_with_salt::<D>(salt_len));
        public.verify(scheme, &hash.digest(data), signature).is_ok()
    }
}

fn public_key(n: &[u8], e: &[u8]) -> Result<RsaKey, CryptoError> {
    RsaPublicKey::new_with_max_size(
        BigUint::from_bytes_be(n),
        BigUint::from_bytes_be(e),
        MAX_BITS,
    )
    .map(RsaKey::Public)
    .map_err(|e| data_error(format!("not a valid RSA public key: {e}")))
}

/// The salt length a PSS signature was made with, read from its encoded message.
fn pss_salt_len(key: &RsaPublicKey, hash: Hash, signature: &[u8]) -> Option<usize> {
    if signature.len() != key.size() {
        return None;
    }
    let s = BigUint::from_bytes_be(signature);
    if &s >= key.n() {
        return None;
    }
    let m = s.modpow(key.e(), key.n()).to_bytes_be();
    let em_bits = key.n().bits() - 1;
    let em_len = em_bits.div_ceil(8);
    let h_len = hash.output_len();
    if m.len() > em_len || em_len < h_len + 2 {
        return None;
    }
    let mut em = vec![0u8; em_len - m.len()];
    em.extend_from_slice(&m);
    if em[em_len - 1] != 0xbc {
        return None;
    }
    let (masked_db, rest) = em.split_at(em_len - h_len - 1);
    let h = &rest[..h_len];
    let mut db = super::oaep::mgf1(hash, h, masked_db.len());
    for (d, m) in db.iter_mut().zip(masked_db) {
        *d ^= m;
    }
    db[0] &= 0xff >> (8 * em_len - em_bits);
    let one = db.iter().position(|b| *b != 0)?;
    (db[one] == 1).then(|| db.len() - one - 1)
}
