//! The settings every VU's client shares ([`ClientConfig`]), and the views of them the
//! connect path takes.

use std::sync::Arc;
use std::time::Duration;

use crate::aia::AiaFetcher;
use crate::debug::HttpDebug;
use crate::dns::DnsOptions;
use crate::local_ips::LocalIps;
use crate::rate::RateLimiter;
use crate::target::{Cidr, HostOverrides, HostnameBlocklist, Rules};
use crate::tls::{self, TlsCache, TlsOptions};

/// Settings shared by all VUs of a test (wrap in an `Arc`).
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Accept any server certificate (`insecureSkipTLSVerify`).
    pub insecure_skip_tls_verify: bool,
    /// Default `User-Agent`; `None` sends none. A user-set header always wins.
    pub user_agent: Option<String>,
    /// Redirects followed before the 3xx itself is returned (`maxRedirects`, default 10).
    pub max_redirects: u32,
    /// Default per-request timeout covering redirects and body (default 60 s).
    pub timeout: Duration,
    /// Never keep connections alive (`noConnectionReuse`).
    pub no_connection_reuse: bool,
    /// `httpDebug`: dump every request and response into [`Response::debug`](crate::Response::debug).
    pub http_debug: HttpDebug,
    /// Idle HTTP/1 connections kept per origin (k6: `batchPerHost`, default 6).
    pub max_idle_per_host: usize,
    /// Send plain `http://` requests as HTTP/2 with prior knowledge (h2c, rk6's `h2c` option).
    pub h2c: bool,
    /// Fetch missing intermediate certificates from AIA URLs (`tlsAIAFetch`, k6 2.3).
    pub tls_aia_fetch: bool,
    /// Extra trusted root certificates, PEM encoded (for tests and private CAs).
    pub extra_root_certs_pem: Vec<Vec<u8>>,
    /// `tlsVersion`, `tlsCipherSuites` and `tlsAuth`, validated.
    pub tls: TlsOptions,
    /// The rustls config built from the fields above on first use; leave at default.
    pub tls_cache: TlsCache,
    /// DNS cache and address choice (`dns`).
    pub dns: DnsOptions,
    /// Name → address overrides (`hosts`).
    pub hosts: HostOverrides,
    /// Names never connected to (`blockHostnames`, error 1111).
    pub block_hostnames: HostnameBlocklist,
    /// Addresses never connected to (`blacklistIPs`, error 1110).
    pub blacklist_ips: Vec<Cidr>,
    /// Source addresses handed to VUs by id (`localIPs`); `None` lets the OS choose.
    pub local_ips: Option<LocalIps>,
    /// Global request rate limit shared by all clients of the config (`rps`).
    pub rps: Option<Arc<RateLimiter>>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            insecure_skip_tls_verify: false,
            user_agent: None,
            max_redirects: 10,
            timeout: Duration::from_secs(60),
            no_connection_reuse: false,
            http_debug: HttpDebug::Off,
            max_idle_per_host: 6,
            h2c: false,
            tls_aia_fetch: false,
            extra_root_certs_pem: Vec::new(),
            tls: TlsOptions::default(),
            tls_cache: TlsCache::default(),
            dns: DnsOptions::default(),
            hosts: HostOverrides::default(),
            block_hostnames: HostnameBlocklist::default(),
            blacklist_ips: Vec::new(),
            local_ips: None,
            rps: None,
        }
    }
}

impl ClientConfig {
    /// The rustls config for these settings, built on first use and shared from then on.
    pub(crate) fn rustls(&self) -> Arc<rustls::ClientConfig> {
        self.tls_cache.get_or_init(|| {
            tls::build(
                &self.tls,
                self.insecure_skip_tls_verify,
                &self.extra_root_certs_pem,
                self.aia_fetcher(),
            )
        })
    }

    /// A fetcher of missing intermediates when `tlsAIAFetch` is on (and certificates are
    /// checked at all): it connects where a request would, by `hosts`, `blockHostnames` and
    /// `blacklistIPs`, through the system resolver.
    pub(crate) fn aia_fetcher(&self) -> Option<Arc<AiaFetcher>> {
        if !self.tls_aia_fetch || self.insecure_skip_tls_verify {
            return None;
        }
        let hosts = self.hosts.clone();
        let blocked = self.block_hostnames.clone();
        let blacklist = self.blacklist_ips.clone();
        Some(AiaFetcher::new(Box::new(move |host, port| {
            crate::target::resolve_blocking(&hosts, &blocked, &blacklist, host, port)
        })))
    }

    /// The rules that decide where a request connects.
    pub(crate) fn target_rules(&self) -> Rules<'_> {
        Rules {
            hosts: &self.hosts,
            block_hostnames: &self.block_hostnames,
            blacklist_ips: &self.blacklist_ips,
            dns: &self.dns,
        }
    }
}
