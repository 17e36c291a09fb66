//! k6's cipher-suite names (`tlsCipherSuites`, `res.tls_cipher_suite`) and rustls's suites.
//!
//! k6 accepts Go's names. rustls implements only the AEAD ECDHE suites of TLS 1.2 and the
//! three TLS 1.3 suites, so several names k6 knows have no rustls counterpart.

use rustls::CipherSuite as C;

/// One name k6 accepts, and the rustls suite behind it if rustls has one.
struct Entry {
    name: &'static str,
    suite: Option<C>,
}

const fn e(name: &'static str, suite: Option<C>) -> Entry {
    Entry { name, suite }
}

/// Every name k6 v1.1.0 accepts in `tlsCipherSuites` (checked against the real binary).
const NAMES: &[Entry] = &[
    e("TLS_RSA_WITH_RC4_128_SHA", None),
    e("TLS_RSA_WITH_3DES_EDE_CBC_SHA", None),
    e("TLS_RSA_WITH_AES_128_CBC_SHA", None),
    e("TLS_RSA_WITH_AES_256_CBC_SHA", None),
    e("TLS_RSA_WITH_AES_128_CBC_SHA256", None),
    e("TLS_RSA_WITH_AES_128_GCM_SHA256", None),
    e("TLS_RSA_WITH_AES_256_GCM_SHA384", None),
    e("TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", None),
    e("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", None),
    e("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", None),
    e("TLS_ECDHE_RSA_WITH_RC4_128_SHA", None),
    e("TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", None),
    e("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", None),
    e("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", None),
    e("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", None),
    e("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", None),
    e(
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        Some(C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
    ),
    e(
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        Some(C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
    ),
    e(
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        Some(C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384),
    ),
    e(
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        Some(C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384),
    ),
    e(
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
        Some(C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
    ),
    e(
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
        Some(C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
    ),
    e("TLS_AES_128_GCM_SHA256", Some(C::TLS13_AES_128_GCM_SHA256)),
    e("TLS_AES_256_GCM_SHA384", Some(C::TLS13_AES_256_GCM_SHA384)),
    e(
        "TLS_CHACHA20_POLY1305_SHA256",
        Some(C::TLS13_CHACHA20_POLY1305_SHA256),
    ),
];

/// What a `tlsCipherSuites` entry means to rk6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A name k6 accepts and rustls implements.
    Supported(C),
    /// A name k6 accepts but rustls does not implement.
    Unsupported,
    /// Not a name k6 accepts.
    Unknown,
}

/// Looks up a k6 cipher-suite name (exact, as k6 matches it).
pub(crate) fn lookup(name: &str) -> Lookup {
    match NAMES.iter().find(|n| n.name == name) {
        Some(Entry { suite: Some(s), .. }) => Lookup::Supported(*s),
        Some(_) => Lookup::Unsupported,
        None => Lookup::Unknown,
    }
}

/// k6's name for a negotiated suite (`res.tls_cipher_suite`).
pub(crate) fn k6_name(suite: C) -> &'static str {
    NAMES
        .iter()
        .find(|n| n.suite == Some(suite))
        .map(|n| n.name)
        // rustls only negotiates suites listed above; this keeps a future one visible.
        .or_else(|| suite.as_str())
        .unwrap_or("")
}

/// Go's client preference among the suites rustls has (AES-GCM hardware assumed: AES-128
/// before AES-256 before ChaCha20, ECDSA before RSA); servers that follow the client's
/// order then pick what they pick for k6.
const GO_ORDER: &[C] = &[
    C::TLS13_AES_128_GCM_SHA256,
    C::TLS13_AES_256_GCM_SHA384,
    C::TLS13_CHACHA20_POLY1305_SHA256,
    C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
];

/// Sort key giving Go's client preference; unknown suites go last in their given order.
pub(crate) fn go_rank(suite: C) -> usize {
    GO_ORDER
        .iter()
        .position(|s| *s == suite)
        .unwrap_or(GO_ORDER.len())
}

/// The k6 names rk6 can honour, for error messages.
pub(crate) fn supported_names() -> impl Iterator<Item = &'static str> {
    NAMES.iter().filter(|n| n.suite.is_some()).map(|n| n.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_both_ways() {
        assert_eq!(
            lookup("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"),
            Lookup::Supported(C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256)
        );
        assert_eq!(
            k6_name(C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"
        );
        assert_eq!(
            k6_name(C::TLS13_AES_256_GCM_SHA384),
            "TLS_AES_256_GCM_SHA384"
        );
        assert_eq!(lookup("TLS_RSA_WITH_AES_128_CBC_SHA"), Lookup::Unsupported);
        // k6 knows the Go constant's name, not the IANA one.
        assert_eq!(
            lookup("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
            Lookup::Unknown
        );
        assert_eq!(lookup("tls_aes_128_gcm_sha256"), Lookup::Unknown);
    }

    #[test]
    fn every_supported_name_is_a_ring_suite() {
        let ring = rustls::crypto::ring::default_provider();
        for name in supported_names() {
            let Lookup::Supported(s) = lookup(name) else {
                unreachable!()
            };
            assert!(
                ring.cipher_suites.iter().any(|c| c.suite() == s),
                "{name} not in ring"
            );
        }
        assert_eq!(supported_names().count(), 9);
        assert_eq!(GO_ORDER.len(), 9);
        assert!(ring.cipher_suites.iter().all(|s| go_rank(s.suite()) < 9));
    }
}
