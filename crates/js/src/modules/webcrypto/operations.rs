//! The operations of `crypto.subtle` on keys and typed parameters: generation, signatures,
//! encryption and ECDH. The JS-facing checks (names, usages) are done before these run.

use super::aes_modes::{self, Direction};
use super::algorithm::{check_usages, Hash, KeyAlgorithm, Usage};
use super::ec::EcKey;
use super::error::{fail, ErrorName, Fail};
use super::key::{CryptoKey, Material};
use super::oaep;
use super::params::{CipherParams, KdfParams, KeyParams, SignParams};
use super::rsa_keys::RsaKey;

/// What `generateKey` makes.
#[derive(Debug)]
pub(crate) enum Generated {
    Key(CryptoKey),
    Pair {
        private: CryptoKey,
        public: CryptoKey,
    },
}

fn random(len: usize) -> Result<Vec<u8>, Fail> {
    let mut out = vec![0u8; len];
    getrandom::getrandom(&mut out)
        .map_err(|e| fail(ErrorName::Operation, format!("no random numbers: {e}")))?;
    Ok(out)
}

/// `usages` that are in `allowed`, in their given order.
fn intersect(usages: &[Usage], allowed: &[Usage]) -> Vec<Usage> {
    usages
        .iter()
        .copied()
        .filter(|u| allowed.contains(u))
        .collect()
}

/// Generates a secret key or a key pair. Key pairs follow k6: a public half is always
/// extractable, and each half keeps the requested usages it can have (possibly none).
pub(crate) fn generate_key(
    params: &KeyParams,
    extractable: bool,
    usages: Vec<Usage>,
) -> Result<Generated, Fail> {
    let (algorithm, material) = match params {
        KeyParams::Kdf(k) => {
            return Err(super::algorithm::unsupported(k.name(), "generateKey").into())
        }
        KeyParams::Hmac { .. } | KeyParams::Aes { .. } => {
            let algorithm = params.secret_algorithm(None)?;
            check_usages(algorithm, &usages)?;
            let bits = match algorithm {
                KeyAlgorithm::Hmac { length, .. } | KeyAlgorithm::Aes { length, .. } => length,
                _ => unreachable!("a secret algorithm"),
            };
            let mut secret = random(bits.div_ceil(8))?;
            if bits % 8 != 0 {
                // Only the first `bits` bits are key material.
                if let Some(last) = secret.last_mut() {
                    *last &= 0xffu8 << (8 - bits % 8);
                }
            }
            let key = CryptoKey::new(algorithm, extractable, usages, Material::Secret(secret));
            return Ok(Generated::Key(key));
        }
        KeyParams::Ec { kind, curve } => {
            let algorithm = KeyAlgorithm::Ec {
                kind: *kind,
                curve: *curve,
            };
            check_pair_usages(algorithm, &usages, "invalid key usage".into())?;
            (algorithm, Material::Ec(EcKey::generate(*curve)))
        }
        KeyParams::Rsa {
            scheme,
            hash,
            generate,
        } => {
            let (bits, exponent) = generate.as_ref().ok_or_else(|| {
                fail(
                    ErrorName::Syntax,
                    "could not get modulusLength from algorithm parameter",
                )
            })?;
            let e = RsaKey::exponent(exponent)?;
            let algorithm = KeyAlgorithm::Rsa {
                scheme: *scheme,
                hash: *hash,
                modulus_length: *bits,
                public_exponent: e,
            };
            let bad = usages
                .iter()
                .find(|u| !algorithm.allowed_usages().contains(u))
                .map(|u| format!("invalid key usage: {}", u.name()));
            check_pair_usages(algorithm, &usages, bad.unwrap_or_default())?;
            (algorithm, Material::Rsa(RsaKey::generate(*bits, e)?))
        }
    };
    let (private_usages, public_usages) = algorithm.pair_usages();
    let public = match &material {
        Material::Ec(k) => Material::Ec(k.public_half()),
        Material::Rsa(k) => Material::Rsa(k.public_half()),
        Material::Secret(_) => unreachable!("a key pair"),
    };
    Ok(Generated::Pair {
        private: CryptoKey::new(
            algorithm,
            extractable,
            intersect(&usages, private_usages),
            material,
        ),
        public: CryptoKey::new(algorithm, true, intersect(&usages, public_usages), public),
    })
}

/// k6's checks of a key pair's usages: some, and each one either half may have.
fn check_pair_usages(algorithm: KeyAlgorithm, usages: &[Usage], bad: String) -> Result<(), Fail> {
    if usages.is_empty() {
        return Err(fail(ErrorName::Syntax, "key usages cannot be empty"));
    }
    if usages
        .iter()
        .any(|u| !algorithm.allowed_usages().contains(u))
    {
        return Err(fail(ErrorName::Syntax, bad));
    }
    Ok(())
}

fn wrong_key(what: &str) -> Fail {
    fail(ErrorName::InvalidAccess, format!("the key is not {what}"))
}

/// The RSA key and hash of an RSA `CryptoKey`.
fn rsa_parts(key: &CryptoKey) -> Option<(&RsaKey, super::algorithm::Hash)> {
    match (&*key.material, key.algorithm) {
        (Material::Rsa(k), KeyAlgorithm::Rsa { hash, .. }) => Some((k, hash)),
        _ => None,
    }
}

/// `sign`: a signature of `data` with `key`.
pub(crate) fn sign(params: SignParams, key: &CryptoKey, data: &[u8]) -> Result<Vec<u8>, Fail> {
    match (params, &*key.material, key.algorithm) {
        (SignParams::Hmac, Material::Secret(s), KeyAlgorithm::Hmac { hash, .. }) => {
            Ok(hash.hmac(s, data))
        }
        (SignParams::Ecdsa(hash), Material::Ec(k), _) if k.is_private() => Ok(k.sign(hash, data)?),
        (SignParams::Ecdsa(_), _, _) => Err(wrong_key("a valid ECDSA private key")),
        (SignParams::Pkcs1 | SignParams::Pss(_), _, _) => {
            let (k, hash) = rsa_parts(key)
                .filter(|(k, _)| k.is_private())
                .ok_or_else(|| wrong_key("a private RSA key"))?;
            Ok(match params {
                SignParams::Pss(salt) => k.sign_pss(hash, salt, data)?,
                _ => k.sign_pkcs1(hash, data)?,
            })
        }
        (SignParams::Hmac, _, _) => Err(wrong_key("an HMAC key")),
    }
}

/// `verify`: whether `signature` is `key`'s signature of `data`.
pub(crate) fn verify(
    params: SignParams,
    key: &CryptoKey,
    signature: &[u8],
    data: &[u8],
) -> Result<bool, Fail> {
    match (params, &*key.material, key.algorithm) {
        (SignParams::Hmac, Material::Secret(s), KeyAlgorithm::Hmac { hash, .. }) => {
            let expected = hash.hmac(s, data);
            // Constant time, as signatures may be attacker-chosen.
            Ok(expected.len() == signature.len()
                && expected
                    .iter()
                    .zip(signature)
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0)
        }
        (SignParams::Ecdsa(hash), Material::Ec(k), _) if !k.is_private() => {
            Ok(k.verify(hash, signature, data))
        }
        (SignParams::Ecdsa(_), _, _) => Err(wrong_key("a valid ECDSA public key")),
        (SignParams::Pkcs1 | SignParams::Pss(_), _, _) => {
            let (k, hash) = rsa_parts(key)
                .filter(|(k, _)| !k.is_private())
                .ok_or_else(|| wrong_key("a public RSA key"))?;
            Ok(match params {
                SignParams::Pss(salt) => k.verify_pss(hash, salt, signature, data),
                _ => k.verify_pkcs1(hash, signature, data),
            })
        }
        (SignParams::Hmac, _, _) => Err(wrong_key("an HMAC key")),
    }
}

/// `encrypt`/`decrypt` (and the cipher of `wrapKey`/`unwrapKey`).
pub(crate) fn crypt(
    dir: Direction,
    params: &CipherParams,
    key: &CryptoKey,
    data: &[u8],
) -> Result<Vec<u8>, Fail> {
    if let CipherParams::Oaep { label } = params {
        let (k, hash) = rsa_parts(key).ok_or_else(|| wrong_key("an RSA-OAEP key"))?;
        return Ok(match dir {
            Direction::Encrypt if k.is_private() => return Err(wrong_key("a public RSA key")),
            Direction::Encrypt => oaep::encrypt(k, hash, label, data)?,
            Direction::Decrypt if !k.is_private() => return Err(wrong_key("a private RSA key")),
            Direction::Decrypt => oaep::decrypt(k, hash, label, data)?,
        });
    }
    let secret = key.secret().ok_or_else(|| wrong_key("an AES key"))?;
    Ok(match params {
        CipherParams::Gcm { iv, aad, tag_bits } => {
            aes_modes::gcm(dir, secret, iv, aad, *tag_bits, data)?
        }
        CipherParams::Cbc { iv } => aes_modes::cbc(dir, secret, iv, data)?,
        CipherParams::Ctr { counter, length } => aes_modes::ctr(secret, counter, *length, data)?,
        CipherParams::Kw => aes_modes::kw(dir, secret, data)?,
        CipherParams::Oaep { .. } => unreachable!("handled above"),
    })
}

/// ECDH `deriveBits`: the first `length` bits of the shared secret, all of it for
/// `None` or 0 (as k6). k6 derives whole bytes only.
pub(crate) fn derive_bits(
    base: &CryptoKey,
    public: &CryptoKey,
    length: Option<usize>,
) -> Result<Vec<u8>, Fail> {
    let (Material::Ec(private), Material::Ec(peer)) = (&*base.material, &*public.material) else {
        return Err(wrong_key("an ECDH key"));
    };
    if private.curve() != peer.curve() {
        return Err(fail(
            ErrorName::InvalidAccess,
            format!(
                "keys have different curves {} and {}",
                private.curve().name(),
                peer.curve().name()
            ),
        ));
    }
    let length = length.unwrap_or(0);
    if !length.is_multiple_of(8) {
        return Err(fail(
            ErrorName::NotSupported,
            "currently only multiples of 8 are supported for length",
        ));
    }
    let mut secret = private.derive(peer)?;
    if length == 0 {
        return Ok(secret);
    }
    if secret.len() < length / 8 {
        return Err(fail(ErrorName::Operation, "length is too large"));
    }
    secret.truncate(length / 8);
    Ok(secret)
}

/// PBKDF2 or HKDF `deriveBits`: `len` bytes derived from the secret material `secret`.
pub(crate) fn kdf_bits(params: &KdfParams, secret: &[u8], len: usize) -> Result<Vec<u8>, Fail> {
    let mut out = vec![0u8; len];
    match params {
        KdfParams::Pbkdf2 {
            hash,
            salt,
            iterations,
        } => {
            let f = match hash {
                Hash::Sha1 => pbkdf2::pbkdf2_hmac::<sha1::Sha1>,
                Hash::Sha256 => pbkdf2::pbkdf2_hmac::<sha2::Sha256>,
                Hash::Sha384 => pbkdf2::pbkdf2_hmac::<sha2::Sha384>,
                Hash::Sha512 => pbkdf2::pbkdf2_hmac::<sha2::Sha512>,
            };
            f(secret, salt, *iterations, &mut out);
        }
        KdfParams::Hkdf { hash, salt, info } => {
            let done = match hash {
                Hash::Sha1 => hkdf::Hkdf::<sha1::Sha1>::new(Some(salt), secret)
                    .expand(info, &mut out)
                    .is_ok(),
                Hash::Sha256 => hkdf::Hkdf::<sha2::Sha256>::new(Some(salt), secret)
                    .expand(info, &mut out)
                    .is_ok(),
                Hash::Sha384 => hkdf::Hkdf::<sha2::Sha384>::new(Some(salt), secret)
                    .expand(info, &mut out)
                    .is_ok(),
                Hash::Sha512 => hkdf::Hkdf::<sha2::Sha512>::new(Some(salt), secret)
                    .expand(info, &mut out)
                    .is_ok(),
            };
            if !done {
                return Err(fail(
                    ErrorName::Operation,
                    format!(
                        "HKDF with {} derives at most {} bits",
                        hash.name(),
                        255 * hash.output_len() * 8
                    ),
                ));
            }
        }
    }
    Ok(out)
}
