//! `tlsAIAFetch` (k6 2.3): when a server sends its certificate without the intermediates
//! that link it to a trusted root, fetch them from the "CA Issuers" URLs of the chain's
//! Authority Information Access extensions, as browsers do, and verify again.
//!
//! The fetch runs inside the certificate check, which rustls calls synchronously: it blocks
//! the worker thread for its duration, once per URL per test (the certificates are cached for
//! the run, and concurrent checks wait for one fetch). A VU pays it on its first connection
//! only, so a blocking plain-HTTP GET with a short timeout beats threading an async fetch
//! and a retried handshake through every TLS client.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

use crate::der::{Certificate, Der};

/// id-pe-authorityInfoAccess (1.3.6.1.5.5.7.1.1).
const AUTHORITY_INFO_ACCESS: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x01, 0x01];
/// id-ad-caIssuers (1.3.6.1.5.5.7.48.2).
const CA_ISSUERS: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x02];
/// id-signedData (1.2.840.113549.1.7.2): a PKCS#7 bundle, which k6 does not read either.
const PKCS7_SIGNED_DATA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];

/// At most this many URLs fetched for one verification (k6's limit).
const MAX_FETCHES: usize = 5;
/// One fetch's time limit (k6's).
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest body read (k6's limit).
const MAX_BODY: usize = 64 * 1024;
/// How long a fetched certificate is reused (k6's limit; a test rarely runs as long).
const CACHE_FOR: Duration = Duration::from_secs(24 * 3600);

/// k6's error for every TLS connection to an IP literal while the option is on: without SNI
/// the name to check is missing.
pub(crate) const IP_LITERAL: &str = "tlsAIAFetch: cannot verify hostname for IP-literal target (SNI is not sent for IP addresses); use a hostname, or disable tlsAIAFetch";
/// k6's warning when the fetched certificates still do not reach a trusted root.
pub(crate) const INCOMPLETE: &str = "AIA: certificate chain incomplete after fetching intermediates; verify that the AIA endpoint is reachable and returns a valid certificate";

/// Where a fetch connects for `host:port`: the test's `hosts`, `blockHostnames` and
/// `blacklistIPs` rules applied to the system resolver's answer.
pub type Resolve = dyn Fn(&str, u16) -> Option<SocketAddr> + Send + Sync;

/// Fetches and caches intermediate certificates for one test run.
pub struct AiaFetcher {
    resolve: Box<Resolve>,
    cache: Mutex<HashMap<String, (Instant, Vec<CertificateDer<'static>>)>>,
}

impl std::fmt::Debug for AiaFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AiaFetcher").finish_non_exhaustive()
    }
}

impl AiaFetcher {
    /// A fetcher connecting where `resolve` says.
    pub fn new(resolve: Box<Resolve>) -> Arc<Self> {
        Arc::new(Self {
            resolve,
            cache: Mutex::default(),
        })
    }

    /// A fetcher that resolves names with the system resolver only.
    pub fn direct() -> Arc<Self> {
        Self::new(Box::new(|host, port| {
            (host, port).to_socket_addrs().ok()?.next()
        }))
    }

    /// Fetches issuers breadth-first from the CA Issuers URLs of `leaf` and `presented`,
    /// then of what was fetched, until `verifies` accepts the chain or the fetch budget is
    /// spent; returns whether it did.
    pub(crate) fn complete(
        &self,
        leaf: &CertificateDer<'_>,
        presented: &[CertificateDer<'_>],
        verifies: impl Fn(&[CertificateDer<'_>]) -> bool,
    ) -> bool {
        let mut chain: Vec<CertificateDer<'_>> = presented.to_vec();
        let mut queue: VecDeque<String> = std::iter::once(leaf)
            .chain(presented)
            .flat_map(|c| ca_issuers(c))
            .collect();
        let mut seen: Vec<String> = Vec::new();
        while let Some(url) = queue.pop_front() {
            if seen.contains(&url) {
                continue;
            }
            if seen.len() == MAX_FETCHES {
                break;
            }
            seen.push(url.clone());
            for cert in self.fetch(&url) {
                queue.extend(ca_issuers(&cert));
                chain.push(cert);
            }
            if verifies(&chain) {
                return true;
            }
        }
        false
    }

    /// The certificates at `url`, from the cache or the network; none when the fetch fails.
    fn fetch(&self, url: &str) -> Vec<CertificateDer<'static>> {
        // Held across the fetch: concurrent checks of one chain wait for one download.
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, certs)) = cache.get(url) {
            if at.elapsed() < CACHE_FOR {
                return certs.clone();
            }
        }
        let certs = download(url, &*self.resolve)
            .map(|body| certificates(&body))
            .unwrap_or_default();
        if !certs.is_empty() {
            cache.insert(url.to_owned(), (Instant::now(), certs.clone()));
        }
        certs
    }
}

/// The `http://` CA Issuers URLs of a certificate's AIA extension.
fn ca_issuers(cert: &[u8]) -> Vec<String> {
    let Some(value) = Certificate::read(cert).and_then(|c| c.extension(AUTHORITY_INFO_ACCESS))
    else {
        return Vec::new();
    };
    let mut urls = Vec::new();
    let Some(list) = Der(value).expect(0x30) else {
        return urls;
    };
    let mut list = Der(list);
    while let Some(description) = list.expect(0x30) {
        let mut description = Der(description);
        let method = description.expect(0x06);
        // accessLocation is a GeneralName; [6] is a uniformResourceIdentifier.
        if let (Some(CA_ISSUERS), Some(uri)) = (method, description.expect(0x86)) {
            if let Ok(uri) = std::str::from_utf8(uri) {
                if uri.starts_with("http://") {
                    urls.push(uri.to_owned());
                }
            }
        }
    }
    urls
}

/// The body of a 200 answer to `GET url`, at most [`MAX_BODY`] bytes.
fn download(url: &str, resolve: &Resolve) -> Option<Vec<u8>> {
    let url = url::Url::parse(url).ok()?;
    let host = url.host()?;
    let port = url.port_or_known_default()?;
    let addr = match host {
        url::Host::Ipv4(ip) => SocketAddr::new(IpAddr::V4(ip), port),
        url::Host::Ipv6(ip) => SocketAddr::new(IpAddr::V6(ip), port),
        url::Host::Domain(name) => resolve(name, port)?,
    };
    let deadline = Instant::now() + FETCH_TIMEOUT;
    let mut stream = TcpStream::connect_timeout(&addr, FETCH_TIMEOUT).ok()?;
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    stream.set_write_timeout(Some(left())).ok()?;
    // HTTP/1.0: the server closes after the body and sends no chunked encoding.
    let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let request = format!(
        "GET {path} HTTP/1.0\r\nHost: {authority}\r\nAccept: */*\r\nUser-Agent: rk6\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        stream.set_read_timeout(Some(left())).ok()?;
        let n = stream.read(&mut buf).ok()?;
        if n == 0 || Instant::now() >= deadline {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if answer.len() > MAX_BODY + 16 * 1024 {
            break;
        }
    }
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let status = std::str::from_utf8(&answer[..end]).ok()?.lines().next()?;
    if status.split_whitespace().nth(1) != Some("200") {
        return None;
    }
    let body = &answer[end + 4..];
    Some(body[..body.len().min(MAX_BODY)].to_vec())
}

/// The certificates of a body: PEM (any number) or one DER certificate.
fn certificates(body: &[u8]) -> Vec<CertificateDer<'static>> {
    if body.trim_ascii_start().starts_with(b"-----BEGIN") {
        return CertificateDer::pem_slice_iter(body).flatten().collect();
    }
    let pkcs7 = Der(body)
        .expect(0x30)
        .and_then(|inner| Der(inner).expect(0x06))
        == Some(PKCS7_SIGNED_DATA);
    if pkcs7 || Certificate::read(body).is_none() {
        return Vec::new();
    }
    vec![CertificateDer::from(body.to_vec())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{
        BasicConstraints, CertificateParams, CustomExtension, IsCa, KeyPair, KeyUsagePurpose,
    };

    /// An AIA extension with one CA Issuers URI.
    fn aia(uri: &str) -> CustomExtension {
        let mut description = vec![0x06, CA_ISSUERS.len() as u8];
        description.extend_from_slice(CA_ISSUERS);
        description.extend([0x86, uri.len() as u8]);
        description.extend_from_slice(uri.as_bytes());
        let mut inner = vec![0x30, description.len() as u8];
        inner.extend(description);
        let mut seq = vec![0x30, inner.len() as u8];
        seq.extend(inner);
        CustomExtension::from_oid_content(&[1, 3, 6, 1, 5, 5, 7, 1, 1], seq)
    }

    #[test]
    fn reads_ca_issuers_urls_and_certificate_bodies() {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["a.test".into()]).unwrap();
        params.custom_extensions = vec![aia("http://127.0.0.1:9/int.der")];
        let cert = params.self_signed(&key).unwrap();
        assert_eq!(ca_issuers(cert.der()), vec!["http://127.0.0.1:9/int.der"]);
        let plain = CertificateParams::new(vec!["b.test".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert!(ca_issuers(plain.der()).is_empty());

        assert_eq!(certificates(cert.der()).len(), 1, "DER");
        let pem = format!("{}{}", cert.pem(), plain.pem());
        assert_eq!(certificates(pem.as_bytes()).len(), 2, "PEM");
        assert!(certificates(b"<html>not found</html>").is_empty());
        // A PKCS#7 SignedData wrapper is not read.
        let mut p7 = vec![0x06, PKCS7_SIGNED_DATA.len() as u8];
        p7.extend_from_slice(PKCS7_SIGNED_DATA);
        let mut wrapped = vec![0x30, p7.len() as u8];
        wrapped.extend(p7);
        assert!(certificates(&wrapped).is_empty());
    }

    #[test]
    fn fetches_once_per_url_and_stops_at_the_budget() {
        // A server that counts the GETs and answers each with a CA certificate whose own AIA
        // points at the next URL, so the walk would go on for ever without its limit.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        {
            let hits = hits.clone();
            std::thread::spawn(move || {
                for conn in listener.incoming().flatten().take(20) {
                    let mut conn = conn;
                    let mut req = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !req.ends_with(b"\r\n\r\n") {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => req.extend_from_slice(&buf[..n]),
                        }
                    }
                    let path = String::from_utf8_lossy(&req)
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or("/")
                        .to_owned();
                    let i = hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let key = KeyPair::generate().unwrap();
                    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
                    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
                    params.key_usages = vec![KeyUsagePurpose::KeyCertSign];
                    params.custom_extensions =
                        vec![aia(&format!("http://127.0.0.1:{port}/n{i}{path}"))];
                    let der = params.self_signed(&key).unwrap().der().to_vec();
                    let _ = write!(
                        conn,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                        der.len()
                    );
                    let _ = conn.write_all(&der);
                }
            });
        }
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["a.test".into()]).unwrap();
        params.custom_extensions = vec![aia(&format!("http://127.0.0.1:{port}/start"))];
        let leaf = params.self_signed(&key).unwrap().der().clone();
        let fetcher = AiaFetcher::direct();
        assert!(!fetcher.complete(&leaf, &[], |_| false));
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), MAX_FETCHES);
        // The first URL is cached for the run: asked again, it is not fetched again.
        assert_eq!(
            fetcher
                .fetch(&format!("http://127.0.0.1:{port}/start"))
                .len(),
            1
        );
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), MAX_FETCHES);
        // A chain that verifies after the first fetch stops the walk there.
        let fresh = AiaFetcher::direct();
        assert!(fresh.complete(&leaf, &[], |chain| chain.len() == 1));
        assert_eq!(
            hits.load(std::sync::atomic::Ordering::SeqCst),
            MAX_FETCHES + 1
        );
    }
}
