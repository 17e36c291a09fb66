//! Per-client DNS cache honouring k6's `dns` option (`ttl`, `select`, `policy`).
//!
//! Lookups only happen when a new connection is opened, like in k6. The cache keeps every
//! address the policy allows, so `select` picks again for each new connection.

use std::collections::HashMap;
use std::net::IpAddr;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::error::{self, HttpError};

/// Which of a name's addresses a new connection uses (`dns.select`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DnsSelect {
    /// Always the first address.
    First,
    /// A random address each time (k6's default).
    #[default]
    Random,
    /// The addresses in turn.
    RoundRobin,
}

/// Which address families are used (`dns.policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DnsPolicy {
    /// IPv4 addresses if there are any, else IPv6 (k6's default).
    #[default]
    PreferIPv4,
    /// IPv6 addresses if there are any, else IPv4.
    PreferIPv6,
    /// IPv4 addresses only; a name without one fails.
    OnlyIPv4,
    /// IPv6 addresses only; a name without one fails.
    OnlyIPv6,
    /// All addresses in the resolver's order.
    Any,
}

/// A `select` or `policy` value k6 does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{value} does not belong to {kind} values")]
pub struct DnsValueError {
    /// The rejected value.
    pub value: String,
    /// `DNSSelect` or `DNSPolicy`, as k6 names them in the message.
    pub kind: &'static str,
}

impl FromStr for DnsSelect {
    type Err = DnsValueError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "first" => Ok(Self::First),
            "random" => Ok(Self::Random),
            "roundRobin" => Ok(Self::RoundRobin),
            _ => Err(DnsValueError {
                value: s.to_owned(),
                kind: "DNSSelect",
            }),
        }
    }
}

impl FromStr for DnsPolicy {
    type Err = DnsValueError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "preferIPv4" => Ok(Self::PreferIPv4),
            "preferIPv6" => Ok(Self::PreferIPv6),
            "onlyIPv4" => Ok(Self::OnlyIPv4),
            "onlyIPv6" => Ok(Self::OnlyIPv6),
            "any" => Ok(Self::Any),
            _ => Err(DnsValueError {
                value: s.to_owned(),
                kind: "DNSPolicy",
            }),
        }
    }
}

/// k6's `dns` option; the default is `ttl=5m,select=random,policy=preferIPv4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DnsOptions {
    /// How long answers are reused; `None` = forever (`inf`), zero = never cached.
    pub ttl: Option<Duration>,
    /// Address choice among a name's addresses.
    pub select: DnsSelect,
    /// Address families allowed.
    pub policy: DnsPolicy,
}

impl Default for DnsOptions {
    fn default() -> Self {
        Self {
            ttl: Some(Duration::from_secs(5 * 60)),
            select: DnsSelect::default(),
            policy: DnsPolicy::default(),
        }
    }
}

impl DnsPolicy {
    /// The addresses this policy allows, in resolver order; empty if none fits.
    pub(crate) fn filter(self, addrs: &[IpAddr]) -> Vec<IpAddr> {
        let v4 = || {
            addrs
                .iter()
                .copied()
                .filter(IpAddr::is_ipv4)
                .collect::<Vec<_>>()
        };
        let v6 = || {
            addrs
                .iter()
                .copied()
                .filter(IpAddr::is_ipv6)
                .collect::<Vec<_>>()
        };
        match self {
            Self::Any => addrs.to_vec(),
            Self::OnlyIPv4 => v4(),
            Self::OnlyIPv6 => v6(),
            Self::PreferIPv4 => Some(v4()).filter(|a| !a.is_empty()).unwrap_or_else(v6),
            Self::PreferIPv6 => Some(v6()).filter(|a| !a.is_empty()).unwrap_or_else(v4),
        }
    }
}

/// A name's allowed addresses and where round-robin stands.
#[derive(Debug)]
struct Entry {
    addrs: Vec<IpAddr>,
    at: Instant,
    next: usize,
}

impl Entry {
    /// Picks an address by `select`; `addrs` is never empty.
    fn pick(&mut self, select: DnsSelect, rng: &mut fastrand::Rng) -> IpAddr {
        let i = match select {
            DnsSelect::First => 0,
            DnsSelect::Random => rng.usize(..self.addrs.len()),
            DnsSelect::RoundRobin => {
                let i = self.next % self.addrs.len();
                self.next = i + 1;
                i
            }
        };
        self.addrs[i]
    }
}

/// Host name → allowed addresses, with expiry.
#[derive(Debug)]
pub(crate) struct DnsCache {
    entries: HashMap<String, Entry>,
    rng: fastrand::Rng,
}

impl Default for DnsCache {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
            rng: fastrand::Rng::new(),
        }
    }
}

impl DnsCache {
    /// Returns an address for `host` chosen as `opts` says, resolving when not cached.
    pub(crate) async fn resolve(
        &mut self,
        host: &str,
        port: u16,
        opts: &DnsOptions,
    ) -> Result<IpAddr, HttpError> {
        let now = Instant::now();
        let fresh = |e: &Entry| opts.ttl.is_none_or(|ttl| now.duration_since(e.at) < ttl);
        if let Some(entry) = self.entries.get_mut(host).filter(|e| fresh(e)) {
            return Ok(entry.pick(opts.select, &mut self.rng));
        }
        let all: Vec<_> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| error::from_dns(host, &e))?
            .map(|a| a.ip())
            .collect();
        if all.is_empty() {
            return Err(error::no_such_host(host));
        }
        let addrs = opts.policy.filter(&all);
        if addrs.is_empty() {
            // k6 reports a name without an address of the required family unclassified.
            return Err(HttpError::new(
                error::GENERIC,
                format!("lookup {host}: no such host"),
            ));
        }
        let mut entry = Entry {
            addrs,
            at: now,
            next: 0,
        };
        let ip = entry.pick(opts.select, &mut self.rng);
        if opts.ttl != Some(Duration::ZERO) {
            self.entries.insert(host.to_owned(), entry);
        }
        Ok(ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn policies_filter_families() {
        let both = ips(&["10.0.0.1", "::1", "10.0.0.2", "::2"]);
        let v4 = ips(&["10.0.0.1", "10.0.0.2"]);
        let v6 = ips(&["::1", "::2"]);
        assert_eq!(DnsPolicy::PreferIPv4.filter(&both), v4);
        assert_eq!(DnsPolicy::PreferIPv6.filter(&both), v6);
        assert_eq!(DnsPolicy::OnlyIPv4.filter(&both), v4);
        assert_eq!(DnsPolicy::OnlyIPv6.filter(&both), v6);
        assert_eq!(DnsPolicy::Any.filter(&both), both);
        // Preference falls back to the other family; "only" does not.
        assert_eq!(DnsPolicy::PreferIPv4.filter(&v6), v6);
        assert_eq!(DnsPolicy::PreferIPv6.filter(&v4), v4);
        assert!(DnsPolicy::OnlyIPv6.filter(&v4).is_empty());
        assert!(DnsPolicy::OnlyIPv4.filter(&v6).is_empty());
    }

    #[test]
    fn selection_strategies() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut entry = Entry {
            addrs: ips(&["10.0.0.1", "10.0.0.2", "10.0.0.3"]),
            at: Instant::now(),
            next: 0,
        };
        let picks = |e: &mut Entry, s, rng: &mut fastrand::Rng| {
            (0..6).map(|_| e.pick(s, rng)).collect::<Vec<_>>()
        };
        let first = picks(&mut entry, DnsSelect::First, &mut rng);
        assert!(first.iter().all(|ip| *ip == entry.addrs[0]));
        let rr = picks(&mut entry, DnsSelect::RoundRobin, &mut rng);
        let a = entry.addrs.clone();
        assert_eq!(rr, vec![a[0], a[1], a[2], a[0], a[1], a[2]]);
        let random: Vec<_> = (0..300)
            .map(|_| entry.pick(DnsSelect::Random, &mut rng))
            .collect();
        for ip in &a {
            let n = random.iter().filter(|r| *r == ip).count();
            assert!((50..150).contains(&n), "{ip} picked {n} times of 300");
        }
    }

    #[test]
    fn values_parse_like_k6() {
        assert_eq!("roundRobin".parse(), Ok(DnsSelect::RoundRobin));
        assert_eq!("onlyIPv6".parse(), Ok(DnsPolicy::OnlyIPv6));
        let e = "foo".parse::<DnsSelect>().unwrap_err();
        assert_eq!(e.to_string(), "foo does not belong to DNSSelect values");
        let e = "roundrobin".parse::<DnsPolicy>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "roundrobin does not belong to DNSPolicy values"
        );
    }

    #[tokio::test]
    async fn ttl_zero_does_not_cache_and_inf_does() {
        let mut cache = DnsCache::default();
        let mut opts = DnsOptions {
            ttl: Some(Duration::ZERO),
            ..DnsOptions::default()
        };
        let ip = cache.resolve("localhost", 80, &opts).await.unwrap();
        assert!(ip.is_loopback());
        assert!(cache.entries.is_empty());
        opts.ttl = None;
        cache.resolve("localhost", 80, &opts).await.unwrap();
        // An entry from long ago is still used with an infinite TTL…
        let old = Instant::now() - Duration::from_secs(3600);
        let entry = cache.entries.get_mut("localhost").unwrap();
        entry.at = old;
        entry.addrs = ips(&["127.0.0.9"]);
        let ip = cache.resolve("localhost", 80, &opts).await.unwrap();
        assert_eq!(ip, ips(&["127.0.0.9"])[0]);
        // …but refreshed once older than a finite one.
        opts.ttl = Some(Duration::from_secs(60));
        let ip = cache.resolve("localhost", 80, &opts).await.unwrap();
        assert_ne!(ip, ips(&["127.0.0.9"])[0]);
    }
}
