//! k6's TLS options (`tlsVersion`, `tlsCipherSuites`, `tlsAuth`) and Go's `SSL_CERT_FILE`,
//! taken from the consolidated options and checked before the test starts.

use rk6_http::{ClientCertPem, ClientConfig, TlsOptions, TlsSpec, TlsVersion};
use rk6_options::{Options, TlsAuth};

/// The checked TLS settings of a run.
pub struct Tls {
    options: TlsOptions,
    extra_roots: Vec<Vec<u8>>,
    /// What rk6 honours differently from k6, to log once at start.
    pub warnings: Vec<String>,
}

impl Tls {
    /// Puts these settings into an HTTP client config.
    pub fn apply(self, config: ClientConfig) -> ClientConfig {
        let mut extra_root_certs_pem = config.extra_root_certs_pem;
        extra_root_certs_pem.extend(self.extra_roots);
        ClientConfig {
            tls: self.options,
            extra_root_certs_pem,
            ..config
        }
    }
}

/// Reads and validates the TLS options; an error stops the run (exit 104, as k6).
pub fn from_options(
    options: &Options,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Tls, String> {
    let versions = options.tls_version.clone().unwrap_or_default();
    let spec = TlsSpec {
        min_version: version(versions.min.as_deref())?,
        max_version: version(versions.max.as_deref())?,
        cipher_suites: options.tls_cipher_suites.clone().filter(|s| !s.is_empty()),
        client_certs: client_certs(options.tls_auth.as_deref().unwrap_or_default())?,
    };
    let options = TlsOptions::new(&spec).map_err(|e| e.to_string())?;
    let mut warnings = options.warnings().to_vec();
    let mut extra_roots = Vec::new();
    // Go's TLS client on Linux trusts the certificates in SSL_CERT_FILE, and k6 users point
    // it at a private CA; rk6 trusts them on top of its bundled roots.
    if let Some(path) = env("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        match std::fs::read(&path) {
            Ok(pem) => extra_roots.push(pem),
            Err(e) => warnings.push(format!(
                "SSL_CERT_FILE {path}: {e}; its certificates are not trusted"
            )),
        }
    }
    // And, as Go, the certificate files of the colon-separated directories of SSL_CERT_DIR.
    extra_roots.extend(rk6_http::trust::go_env_roots(|k| {
        (k == "SSL_CERT_DIR").then(|| env(k)).flatten()
    }));
    Ok(Tls {
        options,
        extra_roots,
        warnings,
    })
}

/// One end of `tlsVersion` (empty: any).
fn version(v: Option<&str>) -> Result<Option<TlsVersion>, String> {
    match v {
        None | Some("") => Ok(None),
        Some(s) => TlsVersion::parse(s).map(Some).ok_or_else(|| {
            format!("tlsVersion: unknown TLS version \"{s}\" (use ssl3.0, tls1.0, tls1.1, tls1.2 or tls1.3)")
        }),
    }
}

fn client_certs(entries: &[TlsAuth]) -> Result<Vec<ClientCertPem>, String> {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let n = i + 1;
            let required = |k: &str, v: &Option<String>| {
                v.clone().filter(|s| !s.is_empty()).ok_or_else(|| {
                    format!("tlsAuth[{n}]: {k} is missing (PEM text, e.g. open('{k}.pem'))")
                })
            };
            Ok(ClientCertPem {
                domains: e.domains.clone().unwrap_or_default(),
                cert: required("cert", &e.cert)?,
                key: required("key", &e.key)?,
                password: e.password.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn opts(v: Value) -> Result<Options, String> {
        Options::from_json(&v)
            .map(|l| l.options)
            .map_err(|e| e.message)
    }

    fn parse(v: Value) -> Result<Tls, String> {
        from_options(&opts(v)?, |_| None)
    }

    #[test]
    fn versions_forms() {
        let v = |v: Value| opts(json!({ "tlsVersion": v })).map(|o| o.tls_version.unwrap());
        let both = v(json!("tls1.2")).unwrap();
        assert_eq!(
            (version(both.min.as_deref()), version(both.max.as_deref())),
            (Ok(Some(TlsVersion::Tls12)), Ok(Some(TlsVersion::Tls12)))
        );
        let max = v(json!({"max": "tls1.2"})).unwrap();
        assert_eq!(
            (version(max.min.as_deref()), version(max.max.as_deref())),
            (Ok(None), Ok(Some(TlsVersion::Tls12)))
        );
        assert!(parse(json!({"tlsVersion": "tls9"}))
            .err()
            .unwrap()
            .contains("tls9"));
        assert!(v(json!(12)).is_err());
        assert!(
            parse(json!({"tlsVersion": {"min": "tls1.0", "max": "tls1.1"}}))
                .err()
                .unwrap()
                .contains("only TLS 1.2 and TLS 1.3")
        );
        let t = parse(json!({"tlsVersion": {"min": "tls1.0"}})).unwrap();
        assert_eq!(t.warnings.len(), 1);
    }

    #[test]
    fn suites_and_auth_errors() {
        assert_eq!(
            parse(json!({"tlsCipherSuites": ["TLS_FOO"]}))
                .err()
                .unwrap(),
            "unknown cipher suite 'TLS_FOO'"
        );
        assert!(parse(json!({"tlsCipherSuites": []})).is_ok());
        assert!(parse(json!({"tlsCipherSuites": [1]})).is_err());
        let e = parse(json!({"tlsAuth": [{"cert": "x"}]})).err().unwrap();
        assert!(e.contains("tlsAuth[1]: key is missing"), "{e}");
        let e = parse(json!({"tlsAuth": [{"cert": "x", "key": "y"}]}))
            .err()
            .unwrap();
        assert!(e.contains("no PEM certificate"), "{e}");
        assert!(parse(json!({"tlsAuth": "x"})).is_err());
    }

    #[test]
    fn ssl_cert_file_adds_roots_or_warns() {
        let dir = std::env::temp_dir().join(format!("rk6-tls-opt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ca.pem");
        std::fs::write(&file, b"PEM").unwrap();
        let path = file.to_str().unwrap().to_string();
        let t = from_options(&Options::default(), |k| {
            (k == "SSL_CERT_FILE").then(|| path.clone())
        })
        .unwrap();
        let cfg = t.apply(ClientConfig::default());
        assert_eq!(cfg.extra_root_certs_pem, vec![b"PEM".to_vec()]);
        std::fs::remove_dir_all(&dir).unwrap();
        let t = from_options(&Options::default(), |k| {
            (k == "SSL_CERT_FILE").then(|| path.clone())
        })
        .unwrap();
        assert!(t.warnings[0].contains("SSL_CERT_FILE"));
    }

    #[test]
    fn ssl_cert_dir_adds_the_pem_files_of_its_directories() {
        let dir = std::env::temp_dir().join(format!("rk6-tls-dir-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("a/one.pem"), b"-----BEGIN CERTIFICATE-----\n").unwrap();
        std::fs::write(dir.join("b/two.crt"), b"-----BEGIN CERTIFICATE-----\n").unwrap();
        std::fs::write(dir.join("b/notes"), b"not PEM").unwrap();
        let list = format!("{}:{}", dir.join("a").display(), dir.join("b").display());
        let t = from_options(&Options::default(), |k| {
            (k == "SSL_CERT_DIR").then(|| list.clone())
        })
        .unwrap();
        assert!(t.warnings.is_empty());
        assert_eq!(
            t.apply(ClientConfig::default()).extra_root_certs_pem.len(),
            2
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
