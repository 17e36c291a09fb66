//! The certificates Go's TLS client trusts on Linux, which k6 users rely on when they point
//! `SSL_CERT_FILE` or `SSL_CERT_DIR` at a private CA: the first system bundle found (or the
//! file `SSL_CERT_FILE` names instead), and every file in the system certificate
//! directories (or in the colon-separated `SSL_CERT_DIR` list instead).

use std::path::Path;

/// Go's list of system bundle files on Linux, in the order it tries them.
const CERT_FILES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// Go's system certificate directories on Linux.
const CERT_DIRS: &[&str] = &["/etc/ssl/certs", "/etc/pki/tls/certs"];

/// PEM blobs to trust on top of the bundled roots ([`crate::ClientConfig::extra_root_certs_pem`]),
/// read as Go reads the system pool; `env` looks up `SSL_CERT_FILE`/`SSL_CERT_DIR`.
pub fn go_system_roots(env: impl Fn(&str) -> Option<String>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    match env("SSL_CERT_FILE").filter(|v| !v.is_empty()) {
        Some(file) => out.extend(std::fs::read(file)),
        None => out.extend(CERT_FILES.iter().find_map(|f| std::fs::read(f).ok())),
    }
    match env("SSL_CERT_DIR").filter(|v| !v.is_empty()) {
        Some(list) => read_dirs(list.split(':'), &mut out),
        None => read_dirs(CERT_DIRS.iter().copied(), &mut out),
    }
    out
}

/// Only what `SSL_CERT_FILE` and `SSL_CERT_DIR` name, when set: the certificates a user
/// points Go at, for clients that trust them on top of the bundled roots instead of reading
/// the system's (the k6/http client, the outputs).
pub fn go_env_roots(env: impl Fn(&str) -> Option<String>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if let Some(file) = env("SSL_CERT_FILE").filter(|v| !v.is_empty()) {
        out.extend(std::fs::read(file));
    }
    if let Some(list) = env("SSL_CERT_DIR").filter(|v| !v.is_empty()) {
        read_dirs(list.split(':'), &mut out);
    }
    out
}

/// Every file of `dirs` that holds PEM text, pushed onto `out`.
fn read_dirs<'a>(dirs: impl Iterator<Item = &'a str>, out: &mut Vec<Vec<u8>>) {
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(Path::new(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            if let Ok(data) = std::fs::read(entry.path()) {
                if data.starts_with(b"-----BEGIN") || data.windows(10).any(|w| w == b"-----BEGIN") {
                    out.push(data);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_cert_file_and_dir_replace_the_system_locations() {
        let dir = std::env::temp_dir().join(format!("rk6-trust-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("d")).unwrap();
        let pem = b"-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n";
        std::fs::write(dir.join("ca.pem"), pem).unwrap();
        std::fs::write(dir.join("d/one.pem"), pem).unwrap();
        std::fs::write(dir.join("d/notes.txt"), b"not a certificate").unwrap();
        let file = dir.join("ca.pem").to_string_lossy().into_owned();
        let d = dir.join("d").to_string_lossy().into_owned();
        let roots = go_system_roots(|k| match k {
            "SSL_CERT_FILE" => Some(file.clone()),
            "SSL_CERT_DIR" => Some(d.clone()),
            _ => None,
        });
        assert_eq!(roots.len(), 2);
        assert!(roots.iter().all(|r| r.as_slice() == pem));
        let only_dir = go_env_roots(|k| (k == "SSL_CERT_DIR").then(|| d.clone()));
        assert_eq!(only_dir, vec![pem.to_vec()]);
        assert!(go_env_roots(|_| None).is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
