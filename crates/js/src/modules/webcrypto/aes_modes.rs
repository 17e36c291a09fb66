//! AES-GCM, AES-CBC, AES-CTR and AES-KW as WebCrypto defines their parameters.

use aes::cipher::consts::{U12, U13, U14, U15, U16};
use aes::cipher::{BlockCipher, BlockEncrypt, BlockSizeUser, KeyInit};
use aes::{Aes128, Aes192, Aes256};
use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{AesGcm, Nonce};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};

use super::error::{CryptoError, ErrorName};

/// Encrypt or decrypt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Encrypt,
    Decrypt,
}

fn op_error(message: impl Into<String>) -> CryptoError {
    CryptoError::new(ErrorName::Operation, message)
}

/// Whether `len` bytes is an AES key size.
pub(crate) fn valid_key_len(len: usize) -> bool {
    matches!(len, 16 | 24 | 32)
}

/// Runs `$f::<AesN>(args)` for the AES variant matching the key length.
macro_rules! by_key {
    ($key:expr, $f:ident, $($arg:expr),*) => {
        match $key.len() {
            16 => $f::<Aes128>($key, $($arg),*),
            24 => $f::<Aes192>($key, $($arg),*),
            32 => $f::<Aes256>($key, $($arg),*),
            n => Err(CryptoError::new(
                ErrorName::Data,
                format!("invalid AES key length {n} bytes"),
            )),
        }
    };
}

/// AES-GCM with a 96-bit `iv` and a tag of `tag_bits` (96 to 128, in steps of 8).
pub(crate) fn gcm(
    dir: Direction,
    key: &[u8],
    iv: &[u8],
    aad: &[u8],
    tag_bits: u32,
    data: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    if iv.len() != 12 {
        return Err(CryptoError::new(
            ErrorName::NotSupported,
            format!(
                "AES-GCM ivs of {} bytes are not supported; only 12-byte ivs are",
                iv.len()
            ),
        ));
    }
    match tag_bits {
        96 | 104 | 112 | 120 | 128 => {}
        32 | 64 => {
            return Err(CryptoError::new(
                ErrorName::NotSupported,
                "AES-GCM tag lengths of 32 and 64 bits are not supported",
            ))
        }
        n => return Err(op_error(format!("invalid AES-GCM tagLength {n}"))),
    }
    by_key!(key, gcm_with, dir, iv, aad, tag_bits, data)
}

fn gcm_with<C>(
    key: &[u8],
    dir: Direction,
    iv: &[u8],
    aad: &[u8],
    tag_bits: u32,
    data: &[u8],
) -> Result<Vec<u8>, CryptoError>
where
    C: BlockCipher + BlockSizeUser<BlockSize = U16> + BlockEncrypt + KeyInit,
{
    let run = match tag_bits {
        96 => gcm_tag::<C, U12>,
        104 => gcm_tag::<C, U13>,
        112 => gcm_tag::<C, U14>,
        120 => gcm_tag::<C, U15>,
        _ => gcm_tag::<C, U16>,
    };
    run(key, dir, iv, aad, data)
}

fn gcm_tag<C, T>(
    key: &[u8],
    dir: Direction,
    iv: &[u8],
    aad: &[u8],
    data: &[u8],
) -> Result<Vec<u8>, CryptoError>
where
    C: BlockCipher + BlockSizeUser<BlockSize = U16> + BlockEncrypt + KeyInit,
    T: aes_gcm::TagSize,
{
    let cipher =
        AesGcm::<C, U12, T>::new_from_slice(key).map_err(|_| op_error("invalid AES key length"))?;
    let nonce = Nonce::<U12>::from_slice(iv);
    let payload = Payload { msg: data, aad };
    match dir {
        Direction::Encrypt => cipher
            .encrypt(nonce, payload)
            .map_err(|_| op_error("the data is too long for AES-GCM")),
        Direction::Decrypt => cipher
            .decrypt(nonce, payload)
            .map_err(|_| op_error("the ciphertext could not be decrypted")),
    }
}

/// AES-CBC with PKCS#7 padding and a 16-byte `iv`.
pub(crate) fn cbc(
    dir: Direction,
    key: &[u8],
    iv: &[u8],
    data: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    if iv.len() != 16 {
        return Err(op_error(format!(
            "the AES-CBC iv must be 16 bytes, not {}",
            iv.len()
        )));
    }
    by_key!(key, cbc_with, dir, iv, data)
}

fn cbc_with<C>(key: &[u8], dir: Direction, iv: &[u8], data: &[u8]) -> Result<Vec<u8>, CryptoError>
where
    C: BlockCipher
        + BlockSizeUser<BlockSize = U16>
        + BlockEncrypt
        + aes::cipher::BlockDecrypt
        + KeyInit,
{
    let bad_key = |_| op_error("invalid AES key or iv length");
    match dir {
        Direction::Encrypt => Ok(cbc::Encryptor::<C>::new_from_slices(key, iv)
            .map_err(bad_key)?
            .encrypt_padded_vec_mut::<Pkcs7>(data)),
        Direction::Decrypt => cbc::Decryptor::<C>::new_from_slices(key, iv)
            .map_err(bad_key)?
            .decrypt_padded_vec_mut::<Pkcs7>(data)
            .map_err(|_| op_error("the ciphertext could not be decrypted (bad padding)")),
    }
}

/// AES-CTR: `counter` is the 16-byte initial block whose rightmost `length` bits count
/// (and wrap) while the rest stays fixed. Encryption and decryption are the same.
pub(crate) fn ctr(
    key: &[u8],
    counter: &[u8],
    length: u32,
    data: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let counter: [u8; 16] = counter.try_into().map_err(|_| {
        op_error(format!(
            "the AES-CTR counter must be 16 bytes, not {}",
            counter.len()
        ))
    })?;
    if !(1..=128).contains(&length) {
        return Err(op_error(format!(
            "the AES-CTR length must be between 1 and 128, not {length}"
        )));
    }
    let blocks = data.len().div_ceil(16) as u128;
    if length < 128 && blocks > 1u128 << length {
        return Err(op_error(
            "the data is too long for the AES-CTR counter length",
        ));
    }
    by_key!(key, ctr_with, u128::from_be_bytes(counter), length, data)
}

fn ctr_with<C>(key: &[u8], start: u128, length: u32, data: &[u8]) -> Result<Vec<u8>, CryptoError>
where
    C: BlockCipher + BlockSizeUser<BlockSize = U16> + BlockEncrypt + KeyInit,
{
    let cipher = C::new_from_slice(key).map_err(|_| op_error("invalid AES key length"))?;
    let mask = if length == 128 {
        u128::MAX
    } else {
        (1u128 << length) - 1
    };
    let mut block = start;
    let mut out = Vec::with_capacity(data.len());
    for chunk in data.chunks(16) {
        let mut stream = block.to_be_bytes().into();
        cipher.encrypt_block(&mut stream);
        out.extend(chunk.iter().zip(stream.iter()).map(|(d, k)| d ^ k));
        block = (block & !mask) | (block.wrapping_add(1) & mask);
    }
    Ok(out)
}

/// AES-KW (RFC 3394): wraps key data of a multiple of 8 bytes, at least 16.
pub(crate) fn kw(dir: Direction, key: &[u8], data: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if !data.len().is_multiple_of(8) || data.len() < 16 + usize::from(dir == Direction::Decrypt) * 8
    {
        return Err(op_error(format!(
            "AES-KW needs a multiple of 8 bytes, at least {}, not {}",
            16 + usize::from(dir == Direction::Decrypt) * 8,
            data.len()
        )));
    }
    by_key!(key, kw_with, dir, data)
}

fn kw_with<C>(key: &[u8], dir: Direction, data: &[u8]) -> Result<Vec<u8>, CryptoError>
where
    aes_kw::Kek<C>: for<'a> TryFrom<&'a [u8]>,
    C: aes::cipher::KeySizeUser
        + KeyInit
        + BlockCipher
        + BlockSizeUser<BlockSize = U16>
        + BlockEncrypt
        + aes::cipher::BlockDecrypt,
{
    let kek = aes_kw::Kek::<C>::try_from(key).map_err(|_| op_error("invalid AES key length"))?;
    match dir {
        Direction::Encrypt => kek
            .wrap_vec(data)
            .map_err(|e| op_error(format!("AES-KW wrapping failed: {e}"))),
        Direction::Decrypt => kek
            .unwrap_vec(data)
            .map_err(|_| op_error("AES-KW unwrapping failed: the integrity check failed")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    // NIST GCM spec (McGrew & Viega) test case 4: AES-128, 12-byte IV, AAD.
    #[test]
    fn gcm_nist_test_case_4() {
        let key = h("feffe9928665731c6d6a8f9467308308");
        let iv = h("cafebabefacedbaddecaf888");
        let pt = h("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
        let aad = h("feedfacedeadbeeffeedfacedeadbeefabaddad2");
        let ct = h("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091");
        let tag = h("5bc94fbc3221a5db94fae95ae7121a47");
        let out = gcm(Direction::Encrypt, &key, &iv, &aad, 128, &pt).unwrap();
        assert_eq!(out, [ct.clone(), tag.clone()].concat());
        let back = gcm(Direction::Decrypt, &key, &iv, &aad, 128, &out).unwrap();
        assert_eq!(back, pt);
        // A truncated tag is the tag's prefix.
        let short = gcm(Direction::Encrypt, &key, &iv, &aad, 96, &pt).unwrap();
        assert_eq!(short, [ct, tag[..12].to_vec()].concat());
        let mut bad = out.clone();
        bad[0] ^= 1;
        let err = gcm(Direction::Decrypt, &key, &iv, &aad, 128, &bad).unwrap_err();
        assert_eq!(err.name, ErrorName::Operation);
    }

    // NIST GCM test case 16: AES-256 with AAD.
    #[test]
    fn gcm_nist_test_case_16() {
        let key = h("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
        let iv = h("cafebabefacedbaddecaf888");
        let pt = h("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
        let aad = h("feedfacedeadbeeffeedfacedeadbeefabaddad2");
        let out = gcm(Direction::Encrypt, &key, &iv, &aad, 128, &pt).unwrap();
        assert_eq!(
            hex::encode(&out[pt.len()..]),
            "76fc6ece0f4e1768cddf8853bb2d551b"
        );
        assert_eq!(hex::encode(&out[..16]), "522dc1f099567d07f47f37a32a84427d");
    }

    #[test]
    fn gcm_parameter_errors() {
        let key = [0u8; 16];
        let e = gcm(Direction::Encrypt, &key, &[0; 16], &[], 128, b"x").unwrap_err();
        assert_eq!(e.name, ErrorName::NotSupported);
        let e = gcm(Direction::Encrypt, &key, &[0; 12], &[], 64, b"x").unwrap_err();
        assert_eq!(e.name, ErrorName::NotSupported);
        let e = gcm(Direction::Encrypt, &key, &[0; 12], &[], 100, b"x").unwrap_err();
        assert_eq!(e.name, ErrorName::Operation);
        let e = gcm(Direction::Encrypt, &[0; 5], &[0; 12], &[], 128, b"x").unwrap_err();
        assert_eq!(e.name, ErrorName::Data);
    }

    // NIST SP 800-38A F.2.1 (CBC-AES128), first two blocks; then a PKCS#7 block follows.
    #[test]
    fn cbc_sp800_38a() {
        let key = h("2b7e151628aed2a6abf7158809cf4f3c");
        let iv = h("000102030405060708090a0b0c0d0e0f");
        let pt = h("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
        let out = cbc(Direction::Encrypt, &key, &iv, &pt).unwrap();
        assert_eq!(out.len(), 48);
        assert_eq!(
            hex::encode(&out[..32]),
            "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
        );
        assert_eq!(cbc(Direction::Decrypt, &key, &iv, &out).unwrap(), pt);
        let e = cbc(Direction::Decrypt, &key, &iv, &out[..40]).unwrap_err();
        assert_eq!(e.name, ErrorName::Operation);
        let e = cbc(Direction::Encrypt, &key, &iv[..8], &pt).unwrap_err();
        assert_eq!(e.name, ErrorName::Operation);
    }

    // NIST SP 800-38A F.5.1 (CTR-AES128).
    #[test]
    fn ctr_sp800_38a() {
        let key = h("2b7e151628aed2a6abf7158809cf4f3c");
        let counter = h("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
        let pt = h("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
        let ct = "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff";
        assert_eq!(hex::encode(ctr(&key, &counter, 128, &pt).unwrap()), ct);
        // With a 64-bit counter the second block is the same: no carry into the nonce.
        assert_eq!(hex::encode(ctr(&key, &counter, 64, &pt).unwrap()), ct);
        assert_eq!(ctr(&key, &counter, 128, &h(ct)).unwrap(), pt);
    }

    #[test]
    fn ctr_counter_wraps_within_its_bits() {
        let key = [7u8; 16];
        let mut counter = [0xffu8; 16];
        counter[0] = 0x12;
        let data = [0u8; 32];
        // An 8-bit counter at 0xff wraps to 0x00 and leaves the other bytes alone.
        let out = ctr(&key, &counter, 8, &data).unwrap();
        let mut second = counter;
        second[15] = 0;
        let expect = ctr(&key, &second, 128, &[0u8; 16]).unwrap();
        assert_eq!(&out[16..], &expect[..]);
        // Two blocks do not fit a 1-bit counter... they do (2 values); three do not.
        assert!(ctr(&key, &counter, 1, &[0u8; 32]).is_ok());
        assert!(ctr(&key, &counter, 1, &[0u8; 33]).is_err());
        assert!(ctr(&key, &counter, 0, &data).is_err());
    }

    // RFC 3394 §4.1 and §4.6: 128 bits of key data under 128- and 256-bit KEKs.
    #[test]
    fn kw_rfc3394() {
        let data = h("00112233445566778899AABBCCDDEEFF");
        let kek = h("000102030405060708090A0B0C0D0E0F");
        let wrapped = kw(Direction::Encrypt, &kek, &data).unwrap();
        assert_eq!(
            hex::encode(&wrapped),
            "1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5"
        );
        assert_eq!(kw(Direction::Decrypt, &kek, &wrapped).unwrap(), data);
        let kek = h("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F");
        let data = h("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F");
        assert_eq!(
            hex::encode(kw(Direction::Encrypt, &kek, &data).unwrap()),
            "28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43bfb988b9b7a02dd21"
        );
        let mut bad = wrapped;
        bad[3] ^= 1;
        let e = kw(
            Direction::Decrypt,
            &h("000102030405060708090A0B0C0D0E0F"),
            &bad,
        )
        .unwrap_err();
        assert_eq!(e.name, ErrorName::Operation);
        let e = kw(Direction::Encrypt, &[0u8; 16], &[0u8; 12]).unwrap_err();
        assert_eq!(e.name, ErrorName::Operation);
    }
}
