//! RSA-OAEP (RFC 8017 §7.1) over the `rsa` crate's raw RSA operations. The `rsa` crate
//! has OAEP, but takes the label as a `String`; WebCrypto labels are any bytes.

use rand_core::{OsRng, RngCore};
use rsa::hazmat::{rsa_decrypt_and_check, rsa_encrypt};
use rsa::traits::PublicKeyParts;
use rsa::BigUint;
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

use super::algorithm::Hash;
use super::error::{CryptoError, ErrorName};
use super::rsa_keys::RsaKey;

fn op_error(message: impl Into<String>) -> CryptoError {
    CryptoError::new(ErrorName::Operation, message)
}

/// MGF1 (RFC 8017 B.2.1): `len` bytes of mask from `seed`.
pub(crate) fn mgf1(hash: Hash, seed: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + hash.output_len());
    let mut input = Vec::with_capacity(seed.len() + 4);
    let mut counter = 0u32;
    while out.len() < len {
        input.clear();
        input.extend_from_slice(seed);
        input.extend_from_slice(&counter.to_be_bytes());
        out.extend_from_slice(&hash.digest(&input));
        counter += 1;
    }
    out.truncate(len);
    out
}

fn xor_in(target: &mut [u8], mask: &[u8]) {
    for (t, m) in target.iter_mut().zip(mask) {
        *t ^= m;
    }
}

/// `value` as `len` big-endian bytes.
fn to_len(value: &BigUint, len: usize) -> Option<Vec<u8>> {
    let bytes = value.to_bytes_be();
    if bytes.len() > len {
        return None;
    }
    let mut out = vec![0u8; len - bytes.len()];
    out.extend_from_slice(&bytes);
    Some(out)
}

/// Encrypts `message` for `key` with OAEP, `hash` for both the label and MGF1.
pub(crate) fn encrypt(
    key: &RsaKey,
    hash: Hash,
    label: &[u8],
    message: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let mut seed = vec![0u8; hash.output_len()];
    OsRng.fill_bytes(&mut seed);
    encrypt_with_seed(key, hash, label, message, &seed)
}

fn encrypt_with_seed(
    key: &RsaKey,
    hash: Hash,
    label: &[u8],
    message: &[u8],
    seed: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let public = key.public();
    let k = public.size();
    let h_len = hash.output_len();
    if k < 2 * h_len + 2 || message.len() > k - 2 * h_len - 2 {
        return Err(op_error(format!(
            "could not encrypt data: a message of {} bytes is too long for this key and hash",
            message.len()
        )));
    }
    // DB = lHash || PS || 0x01 || M
    let mut db = hash.digest(label);
    db.resize(k - h_len - 1 - message.len() - 1, 0);
    db.push(1);
    db.extend_from_slice(message);
    let mask = mgf1(hash, seed, db.len());
    xor_in(&mut db, &mask);
    let mut masked_seed = seed.to_vec();
    xor_in(&mut masked_seed, &mgf1(hash, &db, h_len));
    let mut em = Vec::with_capacity(k);
    em.push(0);
    em.extend_from_slice(&masked_seed);
    em.extend_from_slice(&db);
    let c = rsa_encrypt(&public, &BigUint::from_bytes_be(&em))
        .map_err(|e| op_error(format!("could not encrypt data: {e}")))?;
    to_len(&c, k).ok_or_else(|| op_error("could not encrypt data"))
}

/// Decrypts an OAEP `ciphertext` with the private `key`. Every malformed ciphertext fails
/// alike, and the padding is checked without branching on secret bytes.
pub(crate) fn decrypt(
    key: &RsaKey,
    hash: Hash,
    label: &[u8],
    ciphertext: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let private = key.private_key()?;
    let k = private.size();
    let h_len = hash.output_len();
    let failed = || op_error("could not decrypt data: decryption error");
    if ciphertext.len() != k || k < 2 * h_len + 2 {
        return Err(failed());
    }
    let m = rsa_decrypt_and_check(
        private,
        Some(&mut OsRng),
        &BigUint::from_bytes_be(ciphertext),
    )
    .map_err(|_| failed())?;
    let em = to_len(&m, k).ok_or_else(failed)?;
    let (masked_seed, masked_db) = em[1..].split_at(h_len);
    let mut seed = masked_seed.to_vec();
    xor_in(&mut seed, &mgf1(hash, masked_db, h_len));
    let mut db = masked_db.to_vec();
    let mask = mgf1(hash, &seed, db.len());
    xor_in(&mut db, &mask);
    let l_hash = hash.digest(label);
    let mut good = em[0].ct_eq(&0) & db[..h_len].ct_eq(&l_hash);
    // Find the 0x01 after the zero padding; anything else before it is an error.
    let mut looking = Choice::from(1);
    let mut index = 0u32;
    for (i, b) in db[h_len..].iter().enumerate() {
        let is_one = b.ct_eq(&1);
        index.conditional_assign(&(i as u32), looking & is_one);
        good &= !(looking & !is_one & !b.ct_eq(&0));
        looking &= !is_one;
    }
    good &= !looking;
    if !bool::from(good) {
        return Err(failed());
    }
    Ok(db[h_len + index as usize + 1..].to_vec())
}
