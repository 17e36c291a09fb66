//! Server certificates made the way users make them for a staging server: `openssl req -x509`
//! (self-signed, which OpenSSL marks `CA:TRUE`), and the variants refusal cases need.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A server certificate and its key, PEM.
#[derive(Clone)]
pub struct UserCert {
    pub cert_pem: String,
    pub key_pem: String,
}

/// A scratch directory for one openssl invocation, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("rk6-user-cert-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl is needed to make the certificates users make");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl UserCert {
    /// `openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 2` with `extra`
    /// arguments (`-addext …`).
    pub fn openssl(extra: &[&str]) -> UserCert {
        let dir = Scratch::new();
        let (cert, key) = (dir.path("cert.pem"), dir.path("key.pem"));
        let mut args = vec![
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-days",
            "2",
            "-keyout",
            &key,
            "-out",
            &cert,
        ];
        args.extend_from_slice(extra);
        openssl(&args);
        UserCert {
            cert_pem: dir.read("cert.pem"),
            key_pem: dir.read("key.pem"),
        }
    }

    /// The usual staging certificate: for `localhost` and `127.0.0.1`.
    pub fn staging() -> UserCert {
        UserCert::openssl(&["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
    }

    /// A certificate for `localhost` issued by a private CA of its own (made with openssl
    /// too), which nobody trusts.
    pub fn issued_by_private_ca() -> UserCert {
        let dir = Scratch::new();
        let p = |n: &str| dir.path(n);
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=private ca",
            "-days",
            "2",
            "-keyout",
            &p("ca.key"),
            "-out",
            &p("ca.pem"),
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            &p("key.pem"),
            "-out",
            &p("leaf.csr"),
        ]);
        std::fs::write(p("ext.cnf"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            &p("leaf.csr"),
            "-CA",
            &p("ca.pem"),
            "-CAkey",
            &p("ca.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &p("ext.cnf"),
            "-out",
            &p("cert.pem"),
        ]);
        UserCert {
            cert_pem: dir.read("cert.pem"),
            key_pem: dir.read("key.pem"),
        }
    }

    /// A self-signed `CA:TRUE` certificate for `localhost` that expired on 2021-01-01 (made
    /// with rcgen: openssl cannot back-date without a CA setup).
    pub fn expired() -> UserCert {
        let mut p = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        p.distinguished_name
            .push(rcgen::DnType::CommonName, "localhost");
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2021, 1, 1);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        UserCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// A rustls server presenting this certificate, offering `alpn`.
    pub fn server_config(&self, alpn: &[&[u8]]) -> Arc<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cert = CertificateDer::from_pem_slice(self.cert_pem.as_bytes()).unwrap();
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).unwrap();
        let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
        cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(cfg)
    }
}
