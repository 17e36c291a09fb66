//! k6's TLS options (`tlsVersion`, `tlsCipherSuites`, `tlsAuth`) and Go's `SSL_CERT_FILE`,
//! read from the consolidated options and checked before the test starts.

use rk6_http::{ClientCertPem, ClientConfig, TlsOptions, TlsSpec, TlsVersion};
use serde_json::{Map, Value};

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
    options: &Map<String, Value>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Tls, String> {
    let (min_version, max_version) = versions(options.get("tlsVersion"))?;
    let spec = TlsSpec {
        min_version,
        max_version,
        cipher_suites: cipher_suites(options.get("tlsCipherSuites"))?,
        client_certs: client_certs(options.get("tlsAuth"))?,
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
    Ok(Tls {
        options,
        extra_roots,
        warnings,
    })
}

fn version(v: &Value) -> Result<Option<TlsVersion>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) if s.is_empty() => Ok(None),
        Value::String(s) => TlsVersion::parse(s).map(Some).ok_or_else(|| {
            format!("tlsVersion: unknown TLS version \"{s}\" (use ssl3.0, tls1.0, tls1.1, tls1.2 or tls1.3)")
        }),
        other => Err(format!("tlsVersion: a version must be a string, not {other}")),
    }
}

/// A string sets both ends; an object sets `min` and/or `max`.
fn versions(v: Option<&Value>) -> Result<(Option<TlsVersion>, Option<TlsVersion>), String> {
    match v {
        None | Some(Value::Null) => Ok((None, None)),
        Some(s @ Value::String(_)) => {
            let v = version(s)?;
            Ok((v, v))
        }
        Some(Value::Object(o)) => Ok((
            version(o.get("min").unwrap_or(&Value::Null))?,
            version(o.get("max").unwrap_or(&Value::Null))?,
        )),
        Some(other) => Err(format!(
            "tlsVersion must be a string or {{min, max}}, not {other}"
        )),
    }
}

fn cipher_suites(v: Option<&Value>) -> Result<Option<Vec<String>>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) if a.is_empty() => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|n| {
                n.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("tlsCipherSuites: {n} is not a cipher suite name"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(format!(
            "tlsCipherSuites must be an array of names, not {other}"
        )),
    }
}

fn client_certs(v: Option<&Value>) -> Result<Vec<ClientCertPem>, String> {
    let entries = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(other) => return Err(format!("tlsAuth must be an array, not {other}")),
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let n = i + 1;
            let text = |k: &str| -> Result<Option<String>, String> {
                match e.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(other) => Err(format!("tlsAuth[{n}].{k} must be a string, not {other}")),
                }
            };
            let required = |k: &str| {
                text(k)?.filter(|s| !s.is_empty()).ok_or_else(|| {
                    format!("tlsAuth[{n}]: {k} is missing (PEM text, e.g. open('{k}.pem'))")
                })
            };
            if !e.is_object() {
                return Err(format!("tlsAuth[{n}] must be an object with cert and key"));
            }
            let domains = match e.get("domains") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(d)) => d
                    .iter()
                    .map(|x| x.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("tlsAuth[{n}].domains must be strings"))?,
                Some(other) => {
                    return Err(format!(
                        "tlsAuth[{n}].domains must be an array, not {other}"
                    ))
                }
            };
            Ok(ClientCertPem {
                domains,
                cert: required("cert")?,
                key: required("key")?,
                password: text("password")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Tls, String> {
        from_options(v.as_object().unwrap(), |_| None)
    }

    #[test]
    fn versions_forms() {
        assert_eq!(
            versions(Some(&json!("tls1.2"))).unwrap(),
            (Some(TlsVersion::Tls12), Some(TlsVersion::Tls12))
        );
        assert_eq!(
            versions(Some(&json!({"max": "tls1.2"}))).unwrap(),
            (None, Some(TlsVersion::Tls12))
        );
        assert!(versions(Some(&json!("tls9"))).unwrap_err().contains("tls9"));
        assert!(versions(Some(&json!(12))).is_err());
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
        let t = from_options(&Map::new(), |k| {
            (k == "SSL_CERT_FILE").then(|| path.clone())
        })
        .unwrap();
        let cfg = t.apply(ClientConfig::default());
        assert_eq!(cfg.extra_root_certs_pem, vec![b"PEM".to_vec()]);
        std::fs::remove_dir_all(&dir).unwrap();
        let t = from_options(&Map::new(), |k| {
            (k == "SSL_CERT_FILE").then(|| path.clone())
        })
        .unwrap();
        assert!(t.warnings[0].contains("SSL_CERT_FILE"));
    }
}
