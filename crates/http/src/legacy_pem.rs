//! OpenSSL's legacy password-protected PEM keys (`Proc-Type: 4,ENCRYPTED` and a
//! `DEK-Info` header, what `openssl rsa -aes256 -traditional` writes), decrypted as Go's
//! `x509.DecryptPEMBlock` does for k6's gRPC `tls.password`, with Go's error texts.
//!
//! The key is OpenSSL's `EVP_BytesToKey` with MD5, one round, salted with the IV's first 8
//! bytes; the body is CBC with PKCS#7 padding. Only the AES modes are here: the DES ones Go
//! also reads would need a DES implementation rk6 does not carry.

use aes::cipher::{block_padding::NoPadding, BlockDecryptMut, KeyIvInit};
use base64::Engine;
use md5_digest::{Digest, Md5};

/// Go's text for a wrong password (its padding check failed).
pub const INCORRECT_PASSWORD: &str = "x509: decryption password incorrect";

/// The PEM `key` decrypted with `password`, as PEM without the encryption headers (the
/// block type kept), or the error k6 throws.
pub fn decrypt_legacy_pem_key(key: &[u8], password: &[u8]) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(key);
    let Some((kind, headers, body)) = first_block(&text) else {
        return Err("failed to decode PEM key".into());
    };
    if kind == "ENCRYPTED PRIVATE KEY" {
        return Err("encrypted pkcs8 formatted key is not supported".into());
    }
    let Some(dek) = headers
        .iter()
        .find_map(|(k, v)| (*k == "DEK-Info").then_some(*v))
    else {
        return Err("x509: no DEK-Info header in block".into());
    };
    let Some((mode, iv_hex)) = dek.split_once(',') else {
        return Err("x509: malformed DEK-Info header".into());
    };
    let key_len = match mode {
        "AES-128-CBC" => 16,
        "AES-192-CBC" => 24,
        "AES-256-CBC" => 32,
        "DES-CBC" | "DES-EDE3-CBC" => {
            return Err(format!(
                "x509: {mode} keys are not supported by rk6; re-encrypt the key with AES \
                 (`openssl rsa -aes256 -traditional`) or decrypt it first"
            ))
        }
        _ => return Err("x509: unknown encryption mode".into()),
    };
    let iv = hex(iv_hex.trim()).ok_or("x509: cannot decode IV")?;
    if iv.len() != 16 {
        return Err("x509: incorrect IV size".into());
    }
    let mut data = base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| "failed to decode PEM key".to_string())?;
    if data.len() % 16 != 0 {
        return Err("x509: encrypted PEM data is not a multiple of the block size".into());
    }
    let derived = derive_key(password, &iv[..8], key_len);
    let decrypted = match key_len {
        16 => cbc::Decryptor::<aes::Aes128>::new_from_slices(&derived, &iv)
            .map_err(|e| e.to_string())?
            .decrypt_padded_mut::<NoPadding>(&mut data)
            .map(<[u8]>::len),
        24 => cbc::Decryptor::<aes::Aes192>::new_from_slices(&derived, &iv)
            .map_err(|e| e.to_string())?
            .decrypt_padded_mut::<NoPadding>(&mut data)
            .map(<[u8]>::len),
        _ => cbc::Decryptor::<aes::Aes256>::new_from_slices(&derived, &iv)
            .map_err(|e| e.to_string())?
            .decrypt_padded_mut::<NoPadding>(&mut data)
            .map(<[u8]>::len),
    }
    .map_err(|_| INCORRECT_PASSWORD.to_string())?;
    data.truncate(decrypted);
    // PKCS#7, checked as Go checks it: a bad padding is the only sign of a wrong password.
    let pad = usize::from(*data.last().ok_or(INCORRECT_PASSWORD)?);
    if pad == 0
        || pad > 16
        || pad > data.len()
        || data[data.len() - pad..]
            .iter()
            .any(|&b| usize::from(b) != pad)
    {
        return Err(INCORRECT_PASSWORD.into());
    }
    data.truncate(data.len() - pad);
    Ok(encode(kind, &data))
}

/// OpenSSL's `EVP_BytesToKey(MD5, salt, password, 1 round)`.
fn derive_key(password: &[u8], salt: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 16);
    let mut prev: Vec<u8> = Vec::new();
    while out.len() < len {
        let mut h = Md5::new();
        h.update(&prev);
        h.update(password);
        h.update(salt);
        prev = h.finalize().to_vec();
        out.extend_from_slice(&prev);
    }
    out.truncate(len);
    out
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A PEM block: its type, its `Name: value` headers and its base64 body (whitespace
/// removed).
type Block<'a> = (&'a str, Vec<(&'a str, &'a str)>, String);

/// The first PEM block of `text`.
fn first_block(text: &str) -> Option<Block<'_>> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let (kind, rest) = rest.split_once("-----")?;
    let end = rest.find(&format!("-----END {kind}-----"))?;
    let inner = &rest[..end];
    let mut headers = Vec::new();
    let mut body = String::new();
    for line in inner.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.split_once(':') {
            Some((k, v)) if body.is_empty() => headers.push((k.trim(), v.trim())),
            _ => body.push_str(line),
        }
    }
    Some((kind, headers, body))
}

fn encode(kind: &str, der: &[u8]) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {kind}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {kind}-----\n"));
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout `openssl rsa -aes128 -traditional` writes.
    const AES128: &str = "-----BEGIN RSA PRIVATE KEY-----
Proc-Type: 4,ENCRYPTED
DEK-Info: AES-128-CBC,@IV@

@BODY@
-----END RSA PRIVATE KEY-----
";

    /// Encrypts `der` the way OpenSSL does, for the round trip.
    fn encrypt(der: &[u8], password: &[u8], iv: [u8; 16]) -> String {
        use aes::cipher::{block_padding::Pkcs7, BlockEncryptMut};
        let key = derive_key(password, &iv[..8], 16);
        let ct = cbc::Encryptor::<aes::Aes128>::new_from_slices(&key, &iv)
            .unwrap()
            .encrypt_padded_vec_mut::<Pkcs7>(der);
        let iv_hex: String = iv.iter().map(|b| format!("{b:02X}")).collect();
        AES128.replace("@IV@", &iv_hex).replace(
            "@BODY@",
            &base64::engine::general_purpose::STANDARD.encode(ct),
        )
    }

    #[test]
    fn the_key_derivation_is_openssls() {
        // `openssl enc -aes-128-cbc -pass pass:secret -S 0102030405060708 -md md5 -P`
        let salt = [1, 2, 3, 4, 5, 6, 7, 8];
        let want = hex("C9E5A1BD216DBE1317E230CEF48F38EE").unwrap();
        assert_eq!(derive_key(b"secret", &salt, 16), want);
        // Longer keys chain further digests (`-aes-256-cbc`).
        let want = hex("C9E5A1BD216DBE1317E230CEF48F38EE7F0E17AD64022144BCCEC4A1AA2879AB").unwrap();
        assert_eq!(derive_key(b"secret", &salt, 32), want);
    }

    #[test]
    fn decrypts_with_the_right_password_and_says_go_s_words_otherwise() {
        let der: Vec<u8> = (0..100u8).collect();
        let pem = encrypt(&der, b"secret", [7; 16]);
        let plain = decrypt_legacy_pem_key(pem.as_bytes(), b"secret").unwrap();
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            encode("RSA PRIVATE KEY", &der)
                .iter()
                .map(|&b| b as char)
                .collect::<String>()
        );
        assert_eq!(
            decrypt_legacy_pem_key(pem.as_bytes(), b"wrong").unwrap_err(),
            INCORRECT_PASSWORD
        );
        let unencrypted = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        assert_eq!(
            decrypt_legacy_pem_key(unencrypted.as_bytes(), b"x").unwrap_err(),
            "x509: no DEK-Info header in block"
        );
        let pkcs8 =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert_eq!(
            decrypt_legacy_pem_key(pkcs8.as_bytes(), b"x").unwrap_err(),
            "encrypted pkcs8 formatted key is not supported"
        );
        assert_eq!(
            decrypt_legacy_pem_key(b"not pem", b"x").unwrap_err(),
            "failed to decode PEM key"
        );
    }
}
