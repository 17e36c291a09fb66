//! The server-certificate check every rk6 TLS client makes (k6/http over HTTP/1 and HTTP/2,
//! WebSockets, gRPC, remote module downloads, and the outputs' pushes), in the order Go's
//! `crypto/x509` makes it for k6:
//!
//! 1. the leaf's validity period (`current time … is after …`);
//! 2. its names against the host: subject alternative names only (Go ignores the common name
//!    since 1.15, as webpki does);
//! 3. trust: a leaf that is byte for byte one of the trusted certificates is trusted as it is,
//!    whoever issued it and whatever its basic constraints say, as long as its extended key
//!    usage (when it has one) allows server authentication; any other leaf needs a chain to a
//!    trust anchor, built and checked by rustls's webpki verification.
//!
//! The first branch of step 3 is what lets the self-signed certificate of `openssl req -x509`
//! (which marks it `CA:TRUE`), trusted through `SSL_CERT_FILE`, serve a staging server: webpki
//! alone refuses a CA certificate as an end entity, where k6 accepts it. The handshake's own
//! signature is checked with the provider's algorithms either way.
//!
//! Checking the time and the name before the chain also gives Go's answer for a certificate
//! that is both untrusted and for another host (a hostname error, not an unknown authority).

use std::collections::HashSet;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::aia::AiaFetcher;
use crate::der::{Certificate, Der};

/// The certificates a TLS client trusts: trust anchors for chains, and each certificate added
/// itself, trusted as a leaf when a server presents exactly it (Go's rule).
#[derive(Clone, Debug)]
pub struct TrustedCerts {
    anchors: RootCertStore,
    exact: HashSet<Vec<u8>>,
}

impl TrustedCerts {
    /// Nothing trusted.
    pub fn empty() -> Self {
        Self {
            anchors: RootCertStore::empty(),
            exact: HashSet::new(),
        }
    }

    /// rk6's bundled roots (Mozilla's, from webpki-roots). They are anchors only: no server
    /// presents a root as its leaf.
    pub fn bundled() -> Self {
        let mut anchors = RootCertStore::empty();
        anchors.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        Self {
            anchors,
            exact: HashSet::new(),
        }
    }

    /// Trusts `cert`; `false` when it cannot be read as a certificate (it is then ignored, as
    /// Go's pool ignores it). Adding the same certificate again changes nothing.
    pub fn add(&mut self, cert: CertificateDer<'static>) -> bool {
        if self.exact.contains(cert.as_ref()) {
            return true;
        }
        let der = cert.to_vec();
        if self.anchors.add(cert).is_err() {
            return false;
        }
        self.exact.insert(der);
        true
    }

    /// Trusts every certificate of the PEM text `pem` that can be read; returns how many.
    pub fn add_pem(&mut self, pem: &[u8]) -> usize {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem).flatten() {
            added += usize::from(self.add(cert));
        }
        added
    }

    /// The verifier for a rustls client config of `provider`.
    pub fn verifier(self, provider: &CryptoProvider) -> Arc<ServerVerifier> {
        self.verifier_fetching(provider, None)
    }

    /// The verifier, completing chains through `aia` when given (`tlsAIAFetch`).
    pub fn verifier_fetching(
        self,
        provider: &CryptoProvider,
        aia: Option<Arc<AiaFetcher>>,
    ) -> Arc<ServerVerifier> {
        Arc::new(ServerVerifier {
            anchors: Arc::new(self.anchors),
            exact: self.exact,
            algorithms: provider.signature_verification_algorithms,
            aia,
        })
    }
}

/// Checks a server's certificate as Go does for k6 (module docs); made by
/// [`TrustedCerts::verifier`].
#[derive(Debug)]
pub struct ServerVerifier {
    anchors: Arc<RootCertStore>,
    exact: HashSet<Vec<u8>>,
    algorithms: WebPkiSupportedAlgorithms,
    aia: Option<Arc<AiaFetcher>>,
}

/// The chain was still incomplete after fetching intermediates (`tlsAIAFetch`): an unknown
/// authority, reported with k6's warning.
#[derive(Debug)]
pub(crate) struct AiaIncomplete;

impl std::fmt::Display for AiaIncomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(crate::aia::INCOMPLETE)
    }
}

impl std::error::Error for AiaIncomplete {}

impl ServerCertVerifier for ServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self.aia.is_some() && matches!(server_name, ServerName::IpAddress(_)) {
            return Err(rustls::Error::General(crate::aia::IP_LITERAL.to_owned()));
        }
        let cert = ParsedCertificate::try_from(end_entity)?;
        let leaf = Leaf::read(end_entity).ok_or(CertificateError::BadEncoding)?;
        leaf.check_time(now)?;
        verify_server_name(&cert, server_name)?;
        if self.exact.contains(end_entity.as_ref()) {
            if !leaf.serves_tls {
                return Err(CertificateError::InvalidPurpose.into());
            }
            return Ok(ServerCertVerified::assertion());
        }
        let chain = |intermediates: &[CertificateDer<'_>]| {
            verify_server_cert_signed_by_trust_anchor(
                &cert,
                &self.anchors,
                intermediates,
                now,
                self.algorithms.all,
            )
        };
        match (chain(intermediates), &self.aia) {
            // Only a missing issuer sends k6 to the AIA URLs; any other failure stands.
            (
                Err(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)),
                Some(aia),
            ) => {
                if aia.complete(end_entity, intermediates, |c| chain(c).is_ok()) {
                    Ok(ServerCertVerified::assertion())
                } else {
                    Err(CertificateError::Other(rustls::OtherError(Arc::new(AiaIncomplete))).into())
                }
            }
            (result, _) => result.map(|()| ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// What Go checks of a leaf besides its names: the validity period (seconds since the
/// epoch, negative before 1970) and whether its extended key usage allows a TLS server.
#[derive(Debug, PartialEq, Eq)]
struct Leaf {
    not_before: i64,
    not_after: i64,
    serves_tls: bool,
}

/// id-ce-extKeyUsage (2.5.29.37).
const EXT_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25];

/// The key purposes Go accepts for a server: any (2.5.29.37.0), serverAuth
/// (1.3.6.1.5.5.7.3.1), and the old Microsoft and Netscape server-gated-crypto ones.
const SERVER_PURPOSES: &[&[u8]] = &[
    &[0x55, 0x1d, 0x25, 0x00],
    &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01],
    &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x0a, 0x03, 0x03],
    &[0x60, 0x86, 0x48, 0x01, 0x86, 0xf8, 0x42, 0x04, 0x01],
];

impl Leaf {
    /// Reads the fields from a DER certificate; `None` when it is malformed.
    fn read(der: &[u8]) -> Option<Leaf> {
        let cert = Certificate::read(der)?;
        let not_before = time(cert.not_before)?;
        let not_after = time(cert.not_after)?;
        let serves_tls = match cert.extension(EXT_KEY_USAGE) {
            None => true,
            Some(value) => {
                let mut purposes = Der(Der(value).expect(0x30)?);
                let mut any = false;
                let mut serves = false;
                while let Some(purpose) = purposes.expect(0x06) {
                    any = true;
                    serves |= SERVER_PURPOSES.contains(&purpose);
                }
                // An empty list restricts nothing, as in Go.
                serves || !any
            }
        };
        Some(Leaf {
            not_before,
            not_after,
            serves_tls,
        })
    }

    /// Go's order: not yet valid first, then expired.
    fn check_time(&self, now: UnixTime) -> Result<(), CertificateError> {
        let secs = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        let at =
            |s: i64| UnixTime::since_unix_epoch(std::time::Duration::from_secs(s.max(0) as u64));
        if secs < self.not_before {
            return Err(CertificateError::NotValidYetContext {
                time: now,
                not_before: at(self.not_before),
            });
        }
        if secs > self.not_after {
            return Err(CertificateError::ExpiredContext {
                time: now,
                not_after: at(self.not_after),
            });
        }
        Ok(())
    }
}

/// A UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`) in
/// seconds since the epoch.
fn time((tag, value): (u8, &[u8])) -> Option<i64> {
    let digits = value.strip_suffix(b"Z")?;
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = digits.get(range)?;
        part.iter().try_fold(0i64, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0'))
        })
    };
    let (year, rest) = match (tag, digits.len()) {
        (0x17, 12) => {
            let yy = number(0..2)?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, 2)
        }
        (0x18, 14) => (number(0..4)?, 4),
        _ => return None,
    };
    let field = |i: usize| number(rest + 2 * i..rest + 2 * i + 2);
    let (month, day, hour, minute, second) =
        (field(0)?, field(1)?, field(2)?, field(3)?, field(4)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (the era-based days-from-civil rule).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    };

    fn provider() -> CryptoProvider {
        rustls::crypto::ring::default_provider()
    }

    /// A self-signed certificate for `names`, `CA:TRUE` as `openssl req -x509` makes it.
    fn self_signed(
        names: &[&str],
        tweak: impl FnOnce(&mut CertificateParams),
    ) -> CertificateDer<'static> {
        let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
        p.distinguished_name.push(DnType::CommonName, names[0]);
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        tweak(&mut p);
        p.self_signed(&KeyPair::generate().unwrap())
            .unwrap()
            .der()
            .clone()
    }

    fn name(s: &str) -> ServerName<'static> {
        ServerName::try_from(s.to_owned()).unwrap()
    }

    fn now() -> UnixTime {
        UnixTime::now()
    }

    fn verify(
        trusted: &[&CertificateDer<'static>],
        leaf: &CertificateDer<'static>,
        host: &str,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let mut certs = TrustedCerts::empty();
        for c in trusted {
            assert!(certs.add((*c).clone()));
        }
        certs
            .verifier(&provider())
            .verify_server_cert(leaf, &[], &name(host), &[], now())
    }

    fn cert_error(r: Result<ServerCertVerified, rustls::Error>) -> CertificateError {
        match r {
            Err(rustls::Error::InvalidCertificate(e)) => e,
            other => panic!("not a certificate error: {other:?}"),
        }
    }

    #[test]
    fn a_trusted_self_signed_ca_certificate_serves_its_names() {
        let cert = self_signed(&["localhost", "127.0.0.1"], |_| {});
        assert!(verify(&[&cert], &cert, "localhost").is_ok());
        assert!(verify(&[&cert], &cert, "127.0.0.1").is_ok());
        assert!(matches!(
            cert_error(verify(&[&cert], &cert, "staging.test")),
            CertificateError::NotValidForNameContext { .. }
        ));
    }

    #[test]
    fn the_common_name_alone_names_no_host() {
        let cert = self_signed(&["localhost"], |p| p.subject_alt_names.clear());
        assert!(matches!(
            cert_error(verify(&[&cert], &cert, "localhost")),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
        ));
    }

    #[test]
    fn an_untrusted_self_signed_certificate_is_refused() {
        let trusted = self_signed(&["localhost"], |_| {});
        let other = self_signed(&["localhost"], |_| {});
        let e = verify(&[&trusted], &other, "localhost").unwrap_err();
        // webpki's own verdict for a CA leaf, which rk6 reports as an unknown authority.
        assert!(matches!(e, rustls::Error::InvalidCertificate(_)), "{e:?}");
        assert!(verify(&[], &other, "localhost").is_err());
        // Go checks the name before the chain: another host's untrusted certificate is a
        // hostname error.
        assert!(matches!(
            cert_error(verify(&[&trusted], &other, "staging.test")),
            CertificateError::NotValidForNameContext { .. }
        ));
    }

    #[test]
    fn validity_is_checked_first_with_gos_times() {
        let expired = self_signed(&["localhost"], |p| {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2021, 1, 1);
        });
        match cert_error(verify(&[&expired], &expired, "elsewhere")) {
            CertificateError::ExpiredContext { not_after, .. } => {
                assert_eq!(not_after.as_secs(), 1_609_459_200)
            }
            other => panic!("{other:?}"),
        }
        let future = self_signed(&["localhost"], |p| {
            p.not_before = rcgen::date_time_ymd(2090, 1, 1);
            p.not_after = rcgen::date_time_ymd(2091, 1, 1);
        });
        assert!(matches!(
            cert_error(verify(&[&future], &future, "localhost")),
            CertificateError::NotValidYetContext { .. }
        ));
    }

    #[test]
    fn a_trusted_leaf_needs_a_server_key_usage_when_it_names_one() {
        let client_only = self_signed(&["localhost"], |p| {
            p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        });
        assert_eq!(
            cert_error(verify(&[&client_only], &client_only, "localhost")),
            CertificateError::InvalidPurpose
        );
        let server = self_signed(&["localhost"], |p| {
            p.extended_key_usages = vec![
                ExtendedKeyUsagePurpose::ClientAuth,
                ExtendedKeyUsagePurpose::ServerAuth,
            ];
        });
        assert!(verify(&[&server], &server, "localhost").is_ok());
        let any = self_signed(&["localhost"], |p| {
            p.extended_key_usages = vec![ExtendedKeyUsagePurpose::Any];
        });
        assert!(verify(&[&any], &any, "localhost").is_ok());
    }

    #[test]
    fn a_trusted_leaf_needs_no_trusted_issuer() {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "private ca");
        let ca = ca.self_signed(&ca_key).unwrap();
        let leaf = CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .signed_by(&KeyPair::generate().unwrap(), &ca, &ca_key)
            .unwrap()
            .der()
            .clone();
        assert!(verify(&[&leaf], &leaf, "localhost").is_ok());
        // And the usual chain still works through its CA.
        assert!(verify(&[ca.der()], &leaf, "localhost").is_ok());
        assert!(verify(&[ca.der()], &leaf, "other.test").is_err());
    }

    #[test]
    fn pem_blobs_and_duplicates() {
        let cert = self_signed(&["localhost"], |_| {});
        let text = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &cert)
        );
        let mut certs = TrustedCerts::empty();
        assert_eq!(certs.add_pem(format!("{text}junk\n{text}").as_bytes()), 2);
        assert_eq!(certs.exact.len(), 1);
        assert_eq!(certs.anchors.len(), 1);
        assert_eq!(certs.add_pem(b"no certificate here"), 0);
        assert!(!certs.add(CertificateDer::from(vec![0x30, 0x00])));
    }

    #[test]
    fn der_times() {
        assert_eq!(time((0x17, b"700101000000Z")), Some(0));
        assert_eq!(time((0x17, b"491231235959Z")), Some(2_524_607_999));
        assert_eq!(time((0x17, b"500101000000Z")), Some(-631_152_000));
        assert_eq!(time((0x18, b"20210101000000Z")), Some(1_609_459_200));
        assert_eq!(time((0x18, b"20240229120000Z")), Some(1_709_208_000));
        assert_eq!(time((0x17, b"2101010000Z")), None);
        assert_eq!(time((0x17, b"211301000000Z")), None);
        assert_eq!(time((0x18, b"20210101000000+0100")), None);
        assert_eq!(time((0x04, b"700101000000Z")), None);
    }

    #[test]
    fn malformed_der_is_no_leaf() {
        assert_eq!(Leaf::read(&[]), None);
        assert_eq!(Leaf::read(&[0x30, 0x05, 0x30]), None);
        assert_eq!(Leaf::read(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
    }
}
