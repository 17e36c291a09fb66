//! The rustls client configuration, built once per [`ClientConfig`](crate::ClientConfig) and
//! shared by every VU,
//! and the validated TLS options behind it (`tlsVersion`, `tlsCipherSuites`, `tlsAuth`).
//!
//! # Session resumption: none, as in k6
//!
//! k6 v1.1.0 gives Go's TLS client no session cache, so no connection ever resumes a TLS
//! session: every new connection of every VU pays a full handshake. Checked against the real
//! binary with a server that issues tickets and logs resumed handshakes: with
//! `noConnectionReuse`, four connections of one VU over TLS 1.3 and four over TLS 1.2 were
//! all full handshakes, while a Python client offering the same server its saved session did
//! resume. rk6 therefore disables resumption, which also means no session state exists that
//! VUs could share through this common config; `http_req_tls_handshaking` measures the same
//! full handshake k6 measures.

use std::fmt;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, ProtocolVersion, SignatureScheme, SupportedProtocolVersion};

pub use crate::tls_auth::ClientCertPem;
use crate::tls_auth::ClientCerts;
use crate::tls_suites::{self, Lookup};
use crate::verify::TrustedCerts;

/// A TLS protocol version by k6's name (`http.TLS_1_2` = `"tls1.2"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// `"ssl3.0"`
    Ssl30,
    /// `"tls1.0"`
    Tls10,
    /// `"tls1.1"`
    Tls11,
    /// `"tls1.2"`
    Tls12,
    /// `"tls1.3"`
    Tls13,
}

impl TlsVersion {
    /// Parses k6's name; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "ssl3.0" => Self::Ssl30,
            "tls1.0" => Self::Tls10,
            "tls1.1" => Self::Tls11,
            "tls1.2" => Self::Tls12,
            "tls1.3" => Self::Tls13,
            _ => return None,
        })
    }

    /// k6's name of the version.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ssl30 => "ssl3.0",
            Self::Tls10 => "tls1.0",
            Self::Tls11 => "tls1.1",
            Self::Tls12 => "tls1.2",
            Self::Tls13 => "tls1.3",
        }
    }
}

/// The TLS options of a script as given, before validation.
#[derive(Clone, Debug, Default)]
pub struct TlsSpec {
    /// `tlsVersion.min` (a plain string sets both ends).
    pub min_version: Option<TlsVersion>,
    /// `tlsVersion.max`.
    pub max_version: Option<TlsVersion>,
    /// `tlsCipherSuites` by k6 name; `None` allows every suite.
    pub cipher_suites: Option<Vec<String>>,
    /// `tlsAuth` entries in order.
    pub client_certs: Vec<ClientCertPem>,
}

/// Why the TLS options cannot be honoured; the test must not start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TlsOptionError {
    /// Only TLS versions rustls lacks were allowed.
    #[error("tlsVersion: the highest allowed version is {0}, but rk6 speaks only TLS 1.2 and TLS 1.3 (rustls has no older versions)")]
    VersionUnsupported(&'static str),
    /// `min` above `max`.
    #[error("tlsVersion: min {min} is above max {max}")]
    EmptyVersionRange {
        /// The given minimum.
        min: &'static str,
        /// The given maximum.
        max: &'static str,
    },
    /// A name k6 does not accept either.
    #[error("unknown cipher suite '{0}'")]
    UnknownCipherSuite(String),
    /// A name k6 accepts that rustls does not implement.
    #[error("cipher suite '{0}' is not supported by rk6 (rustls implements only {1})")]
    UnsupportedCipherSuite(String, String),
    /// The suites and versions left nothing to negotiate.
    #[error("tlsCipherSuites and tlsVersion leave no cipher suite to negotiate: {0}")]
    NothingToNegotiate(String),
    /// A `tlsAuth` entry (1-based) could not be used.
    #[error("tlsAuth[{0}]: {1}")]
    ClientCert(usize, String),
}

/// Validated TLS settings, ready to build the rustls config from.
#[derive(Clone, Debug)]
pub struct TlsOptions {
    provider: Arc<CryptoProvider>,
    versions: Vec<&'static SupportedProtocolVersion>,
    client_certs: Option<Arc<ClientCerts>>,
    warnings: Vec<String>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        Self::new(&TlsSpec::default()).expect("the default TLS options are valid")
    }
}

impl TlsOptions {
    /// The protocol versions `tlsVersion` allows.
    pub(crate) fn versions(&self) -> &[&'static SupportedProtocolVersion] {
        &self.versions
    }

    /// Checks `spec` as k6 does at start-up (unknown names, bad certificates) and also
    /// rejects what rustls cannot do instead of quietly doing something else.
    pub fn new(spec: &TlsSpec) -> Result<Self, TlsOptionError> {
        let mut warnings = Vec::new();
        let max = spec.max_version.unwrap_or(TlsVersion::Tls13);
        let min = spec.min_version.unwrap_or(TlsVersion::Tls12);
        if max < TlsVersion::Tls12 {
            return Err(TlsOptionError::VersionUnsupported(max.name()));
        }
        if min > max {
            return Err(TlsOptionError::EmptyVersionRange {
                min: min.name(),
                max: max.name(),
            });
        }
        if min < TlsVersion::Tls12 {
            warnings.push(format!(
                "tlsVersion min {}: rk6 cannot offer versions below TLS 1.2 (rustls has none), so it offers TLS 1.2 and up; a server that speaks only older versions will fail the handshake",
                min.name()
            ));
        }
        let mut versions = Vec::new();
        if max >= TlsVersion::Tls13 {
            versions.push(&rustls::version::TLS13);
        }
        if min <= TlsVersion::Tls12 {
            versions.push(&rustls::version::TLS12);
        }

        let mut provider = ring::default_provider();
        if let Some(names) = &spec.cipher_suites {
            let mut allowed = Vec::with_capacity(names.len());
            for name in names {
                match tls_suites::lookup(name) {
                    Lookup::Supported(s) => allowed.push(s),
                    Lookup::Unsupported => {
                        let list: Vec<_> = tls_suites::supported_names().collect();
                        return Err(TlsOptionError::UnsupportedCipherSuite(
                            name.clone(),
                            list.join(", "),
                        ));
                    }
                    Lookup::Unknown => {
                        return Err(TlsOptionError::UnknownCipherSuite(name.clone()))
                    }
                }
            }
            // As in Go, the list restricts TLS 1.2 only; TLS 1.3 suites are not configurable.
            provider
                .cipher_suites
                .retain(|s| s.version() == &rustls::version::TLS13 || allowed.contains(&s.suite()));
            let tls12_left = provider
                .cipher_suites
                .iter()
                .any(|s| s.version() == &rustls::version::TLS12);
            if versions == [&rustls::version::TLS12] && !tls12_left {
                return Err(TlsOptionError::NothingToNegotiate(
                    "only TLS 1.2 is allowed and none of the listed suites is a TLS 1.2 suite"
                        .into(),
                ));
            }
        }
        provider
            .cipher_suites
            .sort_by_key(|s| tls_suites::go_rank(s.suite()));
        let provider = Arc::new(provider);
        rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| TlsOptionError::NothingToNegotiate(e.to_string()))?;

        let client_certs = if spec.client_certs.is_empty() {
            None
        } else {
            if spec.client_certs.iter().any(|c| !c.domains.is_empty()) {
                warnings.push("tlsAuth domains do not choose the certificate, as in k6: a server that asks for one gets the first certificate it can accept".into());
            }
            let certs = ClientCerts::parse(&spec.client_certs, &provider)
                .map_err(|(entry, why)| TlsOptionError::ClientCert(entry, why))?;
            Some(Arc::new(certs))
        };
        Ok(Self {
            provider,
            versions,
            client_certs,
            warnings,
        })
    }

    /// Things the script asked for that rk6 honours differently; log them at start.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// Lazily built TLS configuration stored inside a [`ClientConfig`](crate::ClientConfig); leave
/// it at its default.
#[derive(Clone, Default)]
pub struct TlsCache(OnceLock<Arc<rustls::ClientConfig>>);

impl fmt::Debug for TlsCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "TlsCache(built)"
        } else {
            "TlsCache(empty)"
        })
    }
}

impl TlsCache {
    /// The cached config, built by `build` on first use.
    pub(crate) fn get_or_init(
        &self,
        build: impl FnOnce() -> rustls::ClientConfig,
    ) -> Arc<rustls::ClientConfig> {
        self.0.get_or_init(|| Arc::new(build())).clone()
    }
}

/// The rustls config for validated options `opts`; `insecure` trusts any certificate,
/// otherwise the Mozilla roots and `extra_roots_pem` are trusted, as Go trusts them
/// ([`crate::verify`]: a server may also present one of `extra_roots_pem` itself).
pub(crate) fn build(
    opts: &TlsOptions,
    insecure: bool,
    extra_roots_pem: &[Vec<u8>],
    aia: Option<Arc<crate::aia::AiaFetcher>>,
) -> rustls::ClientConfig {
    let provider = opts.provider.clone();
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&opts.versions)
        .expect("TlsOptions::new checked these versions against these suites");
    let wants_cert = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(
                provider.signature_verification_algorithms,
            )))
    } else {
        let mut trusted = TrustedCerts::bundled();
        for pem in extra_roots_pem {
            // Unparsable extra roots are skipped: the contract keeps `Client::new` infallible,
            // and a missing root surfaces as error 1310 on the first request.
            trusted.add_pem(pem);
        }
        builder
            .dangerous()
            .with_custom_certificate_verifier(trusted.verifier_fetching(&provider, aia))
    };
    let mut tls = match &opts.client_certs {
        Some(certs) => wants_cert.with_client_cert_resolver(certs.clone()),
        None => wants_cert.with_no_client_auth(),
    };
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    tls.resumption = Resumption::disabled();
    tls
}

/// k6's `tls_version` and `tls_cipher_suite` of an established connection.
pub(crate) fn negotiated(session: &rustls::ClientConnection) -> (&'static str, &'static str) {
    (
        version_name(session.protocol_version()),
        session
            .negotiated_cipher_suite()
            .map_or("", |s| tls_suites::k6_name(s.suite())),
    )
}

/// k6's constant for a negotiated protocol version (`http.TLS_1_3` = `"tls1.3"`).
fn version_name(v: Option<ProtocolVersion>) -> &'static str {
    match v {
        Some(ProtocolVersion::TLSv1_3) => "tls1.3",
        Some(ProtocolVersion::TLSv1_2) => "tls1.2",
        Some(ProtocolVersion::TLSv1_1) => "tls1.1",
        Some(ProtocolVersion::TLSv1_0) => "tls1.0",
        _ => "",
    }
}

/// `insecureSkipTLSVerify`: trusts any certificate, but still checks handshake signatures
/// against the presented key, as Go does.
#[derive(Debug)]
pub struct AcceptAnyCert(pub WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(min: Option<&str>, max: Option<&str>, suites: Option<&[&str]>) -> TlsSpec {
        TlsSpec {
            min_version: min.map(|v| TlsVersion::parse(v).unwrap()),
            max_version: max.map(|v| TlsVersion::parse(v).unwrap()),
            cipher_suites: suites.map(|s| s.iter().map(|n| n.to_string()).collect()),
            client_certs: Vec::new(),
        }
    }

    fn versions(o: &TlsOptions) -> Vec<ProtocolVersion> {
        o.versions.iter().map(|v| v.version).collect()
    }

    #[test]
    fn version_ranges() {
        use ProtocolVersion::{TLSv1_2, TLSv1_3};
        let ok = |min, max| TlsOptions::new(&spec(min, max, None)).unwrap();
        assert_eq!(versions(&ok(None, None)), [TLSv1_3, TLSv1_2]);
        assert_eq!(versions(&ok(Some("tls1.2"), Some("tls1.2"))), [TLSv1_2]);
        assert_eq!(versions(&ok(Some("tls1.3"), None)), [TLSv1_3]);
        assert!(ok(None, None).warnings().is_empty());
        let old_min = ok(Some("tls1.0"), Some("tls1.3"));
        assert_eq!(versions(&old_min), [TLSv1_3, TLSv1_2]);
        assert!(old_min.warnings()[0].contains("tls1.0"));

        let err = |min, max| TlsOptions::new(&spec(min, max, None)).unwrap_err();
        assert_eq!(
            err(Some("tls1.0"), Some("tls1.1")),
            TlsOptionError::VersionUnsupported("tls1.1")
        );
        assert!(err(None, Some("ssl3.0"))
            .to_string()
            .contains("only TLS 1.2 and TLS 1.3"));
        assert!(matches!(
            err(Some("tls1.3"), Some("tls1.2")),
            TlsOptionError::EmptyVersionRange { .. }
        ));
        assert_eq!(TlsVersion::parse("tls1.4"), None);
        assert_eq!(TlsVersion::Tls11.name(), "tls1.1");
    }

    #[test]
    fn cipher_suites_restrict_tls12_only() {
        let o = TlsOptions::new(&spec(
            None,
            None,
            Some(&["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]),
        ))
        .unwrap();
        let names: Vec<_> = o
            .provider
            .cipher_suites
            .iter()
            .map(|s| tls_suites::k6_name(s.suite()))
            .collect();
        assert!(names.contains(&"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"));
        assert!(!names.contains(&"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"));
        assert!(names.contains(&"TLS_AES_256_GCM_SHA384"), "{names:?}");
        assert_eq!(names[0], "TLS_AES_128_GCM_SHA256", "Go's order: {names:?}");

        let err = |s: &[&str], max| TlsOptions::new(&spec(None, max, Some(s))).unwrap_err();
        assert_eq!(
            err(&["TLS_FOO"], None).to_string(),
            "unknown cipher suite 'TLS_FOO'"
        );
        let msg = err(&["TLS_RSA_WITH_AES_128_CBC_SHA"], None).to_string();
        assert!(
            msg.contains("not supported by rk6") && msg.contains("TLS_AES_128_GCM_SHA256"),
            "{msg}"
        );
        assert!(matches!(
            err(&["TLS_AES_128_GCM_SHA256"], Some("tls1.2")),
            TlsOptionError::NothingToNegotiate(_)
        ));
    }

    #[test]
    fn built_config_never_resumes_and_offers_client_certs() {
        let cfg = crate::ClientConfig::default();
        let tls = cfg.rustls();
        assert!(!tls.client_auth_cert_resolver.has_certs());
        assert_eq!(
            format!("{:?}", tls.resumption),
            format!("{:?}", Resumption::disabled())
        );
    }
}
