//! Per-client DNS cache (k6 default `dns: ttl=5m, policy=preferIPv4`).
//!
//! Lookups only happen when a new connection is opened, like in k6.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::error::{self, HttpError};

/// How long a resolved address is reused.
const TTL: Duration = Duration::from_secs(5 * 60);

/// Host name → address, with expiry.
#[derive(Debug, Default)]
pub(crate) struct DnsCache {
    entries: HashMap<String, (IpAddr, Instant)>,
}

impl DnsCache {
    /// Returns the cached address, or resolves `host` and caches the preferred answer.
    pub(crate) async fn resolve(&mut self, host: &str, port: u16) -> Result<IpAddr, HttpError> {
        let now = Instant::now();
        if let Some((ip, at)) = self.entries.get(host) {
            if now.duration_since(*at) < TTL {
                return Ok(*ip);
            }
        }
        let addrs: Vec<_> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| error::from_dns(host, &e))?
            .map(|a| a.ip())
            .collect();
        let ip = addrs
            .iter()
            .find(|ip| ip.is_ipv4())
            .or_else(|| addrs.first())
            .copied()
            .ok_or_else(error::no_such_host)?;
        self.entries.insert(host.to_owned(), (ip, now));
        Ok(ip)
    }
}
