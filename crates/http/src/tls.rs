//! The rustls client configuration, built once per [`ClientConfig`] and shared by every VU.
//!
//! Session resumption is disabled: k6 configures no session cache, so each new connection
//! of each VU pays a full handshake, and sharing one config across VUs must not change that.

use std::fmt;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, ProtocolVersion, RootCertStore, SignatureScheme};

use crate::ClientConfig;

/// Lazily built TLS configuration stored inside a [`ClientConfig`]; leave it at its default.
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

/// Returns the shared rustls config for `config`, building it on first use.
pub(crate) fn client_tls(config: &ClientConfig) -> Arc<rustls::ClientConfig> {
    config
        .tls_cache
        .0
        .get_or_init(|| Arc::new(build(config)))
        .clone()
}

fn build(config: &ClientConfig) -> rustls::ClientConfig {
    let provider = Arc::new(ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let mut tls = if config.insecure_skip_tls_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(
                provider.signature_verification_algorithms,
            )))
            .with_no_client_auth()
    } else {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for pem in &config.extra_root_certs_pem {
            // Unparsable extra roots are skipped: the contract keeps `Client::new` infallible,
            // and a missing root surfaces as error 1310 on the first request.
            for cert in CertificateDer::pem_slice_iter(pem).flatten() {
                let _ = roots.add(cert);
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    tls.resumption = Resumption::disabled();
    tls
}

/// k6's constant for a negotiated protocol version (`http.TLS_1_3` = `"tls1.3"`).
pub(crate) fn version_name(v: Option<ProtocolVersion>) -> &'static str {
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
struct AcceptAnyCert(WebPkiSupportedAlgorithms);

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
