//! Client certificates (`tlsAuth`) and how one is chosen for a server that asks for one.
//!
//! k6 v1.1.0 leaves the choice to Go's TLS client: the first configured certificate the
//! server can accept is sent, to any server. "Can accept" means one of its signature schemes
//! fits the key and, when the server names acceptable CAs, one certificate of the chain was
//! issued by one of them. The `domains` list does not take part in the choice (k6 only warns
//! that it is deprecated); verified against k6 v1.1.0 with two certificates whose `domains`
//! named `localhost` and `127.0.0.1`: both hosts got the first certificate. rk6 does the same.

use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::SignatureScheme;

/// One `tlsAuth` entry as the script gives it.
#[derive(Clone, Debug, Default)]
pub struct ClientCertPem {
    /// Host names the script meant the certificate for (k6 ignores them when choosing).
    pub domains: Vec<String>,
    /// PEM certificate chain, leaf first.
    pub cert: String,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key: String,
    /// Password of an encrypted key.
    pub password: Option<String>,
}

/// A parsed client certificate with the raw issuer names of its chain.
#[derive(Debug)]
struct Identity {
    key: Arc<CertifiedKey>,
    issuers: Vec<Vec<u8>>,
}

/// Chooses a client certificate the way Go's client does (see the module docs).
#[derive(Debug)]
pub(crate) struct ClientCerts(Vec<Identity>);

impl ClientCerts {
    /// Parses every entry; the first failure gives the entry (1-based, as a user counts) and
    /// what is wrong with it.
    pub(crate) fn parse(
        entries: &[ClientCertPem],
        provider: &CryptoProvider,
    ) -> Result<Self, (usize, String)> {
        entries
            .iter()
            .enumerate()
            .map(|(i, e)| parse_one(e, provider).map_err(|m| (i + 1, m)))
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }
}

fn parse_one(e: &ClientCertPem, provider: &CryptoProvider) -> Result<Identity, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(e.cert.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|err| format!("cert: {err}"))?;
    if chain.is_empty() {
        return Err("cert: no PEM certificate found".into());
    }
    if e.key.contains("ENCRYPTED") || e.password.as_deref().is_some_and(|p| !p.is_empty()) {
        // Go decrypts only legacy OpenSSL-encrypted PEM (DEK-Info) and k6 refuses encrypted
        // PKCS#8; no well-kept Rust crate does the former, so rk6 says so instead.
        return Err("password-protected keys are not supported by rk6; decrypt the key first (`openssl pkey -in key.pem -out plain.pem`)".into());
    }
    let key = PrivateKeyDer::from_pem_slice(e.key.as_bytes()).map_err(|err| match err {
        rustls::pki_types::pem::Error::NoItemsFound => "key: no PEM private key found".to_string(),
        other => format!("key: {other}"),
    })?;
    let signer = provider
        .key_provider
        .load_private_key(key)
        .map_err(|err| format!("key: {err}"))?;
    let issuers = chain
        .iter()
        .filter_map(|c| issuer(c).map(<[u8]>::to_vec))
        .collect();
    let key = CertifiedKey::new(chain, signer);
    key.keys_match()
        .map_err(|_| "the private key does not match the certificate's public key".to_string())?;
    Ok(Identity {
        key: Arc::new(key),
        issuers,
    })
}

impl ResolvesClientCert for ClientCerts {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.0
            .iter()
            .find(|id| {
                id.key.key.choose_scheme(sigschemes).is_some()
                    && (root_hint_subjects.is_empty()
                        || id
                            .issuers
                            .iter()
                            .any(|i| root_hint_subjects.contains(&i.as_slice())))
            })
            .map(|id| id.key.clone())
    }

    fn has_certs(&self) -> bool {
        !self.0.is_empty()
    }
}

/// The DER `issuer` Name of an X.509 certificate, tag and length included (what a server
/// lists as an acceptable CA).
fn issuer<'a>(cert: &'a CertificateDer<'_>) -> Option<&'a [u8]> {
    let (_, cert_body, _) = tlv(cert.as_ref())?;
    let (_, mut tbs, _) = tlv(cert_body)?;
    // tbsCertificate: [0] version (optional), serialNumber, signature, issuer, …
    if tbs.first() == Some(&0xa0) {
        tbs = tlv(tbs)?.2;
    }
    let serial_rest = tlv(tbs)?.2;
    let sigalg_rest = tlv(serial_rest)?.2;
    let (whole, _, _) = tlv(sigalg_rest)?;
    Some(whole)
}

/// Splits one DER TLV off `b`: (the whole element, its contents, what follows).
fn tlv(b: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let first = *b.get(1)?;
    let (len, header) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let len = b
            .get(2..2 + n)?
            .iter()
            .fold(0usize, |acc, &x| (acc << 8) | usize::from(x));
        (len, 2 + n)
    };
    let end = header.checked_add(len)?;
    Some((b.get(..end)?, b.get(header..end)?, b.get(end..)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

    struct Ca {
        cert: rcgen::Certificate,
        key: KeyPair,
    }

    fn ca(name: &str) -> Ca {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        Ca {
            cert: p.self_signed(&key).unwrap(),
            key,
        }
    }

    fn leaf(ca: &Ca, cn: &str) -> ClientCertPem {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &ca.cert, &ca.key).unwrap();
        ClientCertPem {
            cert: cert.pem(),
            key: key.serialize_pem(),
            ..Default::default()
        }
    }

    fn provider() -> CryptoProvider {
        rustls::crypto::ring::default_provider()
    }

    fn subject_der(ca: &Ca) -> Vec<u8> {
        // A CA's subject is its own issuer (self-signed).
        issuer(ca.cert.der()).unwrap().to_vec()
    }

    #[test]
    fn issuer_is_the_signing_cas_subject() {
        let a = ca("CA one");
        let c = leaf(&a, "client");
        let der = CertificateDer::from_pem_slice(c.cert.as_bytes()).unwrap();
        let got = issuer(&der).unwrap();
        assert_eq!(got, subject_der(&a).as_slice());
        assert_eq!(got[0], 0x30, "a Name is a SEQUENCE");
        assert!(got.windows(6).any(|w| w == b"CA one"));
        assert!(issuer(&CertificateDer::from(vec![0x30, 0x05, 1])).is_none());
    }

    #[test]
    fn first_acceptable_certificate_wins() {
        let (a, b) = (ca("CA A"), ca("CA B"));
        let certs = ClientCerts::parse(&[leaf(&a, "one"), leaf(&b, "two")], &provider()).unwrap();
        let schemes = [SignatureScheme::ECDSA_NISTP256_SHA256];
        let first = certs.0[0].key.clone();
        let second = certs.0[1].key.clone();
        let pick = |hints: &[&[u8]]| certs.resolve(hints, &schemes).unwrap();
        assert!(Arc::ptr_eq(&pick(&[]), &first));
        let b_name = subject_der(&b);
        assert!(Arc::ptr_eq(&pick(&[&b_name]), &second));
        let other = subject_der(&ca("CA C"));
        assert!(certs.resolve(&[&other], &schemes).is_none());
        // No signature scheme the key can use: nothing is sent.
        assert!(certs.resolve(&[], &[SignatureScheme::ED25519]).is_none());
    }

    #[test]
    fn bad_entries_are_named() {
        let a = ca("CA");
        let good = leaf(&a, "ok");
        let msg = |e: ClientCertPem| {
            let (entry, why) = ClientCerts::parse(&[good.clone(), e], &provider()).unwrap_err();
            crate::tls::TlsOptionError::ClientCert(entry, why).to_string()
        };
        let no_cert = msg(ClientCertPem {
            cert: "x".into(),
            ..good.clone()
        });
        assert!(
            no_cert.contains("tlsAuth[2]") && no_cert.contains("no PEM certificate"),
            "{no_cert}"
        );
        let mismatch = msg(ClientCertPem {
            key: leaf(&a, "other").key,
            ..good.clone()
        });
        assert!(mismatch.contains("does not match"), "{mismatch}");
        let cert_as_key = msg(ClientCertPem {
            key: good.cert.clone(),
            ..good.clone()
        });
        assert!(cert_as_key.contains("no PEM private key"), "{cert_as_key}");
        let password = msg(ClientCertPem {
            password: Some("secret".into()),
            ..good.clone()
        });
        assert!(password.contains("password-protected"), "{password}");
    }
}
