//! Where a request connects: k6's `hosts` overrides, `blockHostnames`, `blacklistIPs`, then
//! DNS. Hostname blocking is checked before any override or lookup, IP blacklisting on the
//! address finally chosen (IP literals included), as k6 does.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use crate::dns::{DnsCache, DnsOptions};
use crate::error::{self, HttpError};

/// An invalid `hosts`, `blockHostnames` or `blacklistIPs` entry (k6's messages).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A `hosts` key that is not a name, `*.name`, or either with `:port`.
    #[error("invalid host pattern '{0}'")]
    HostPattern(String),
    /// A `hosts` value whose port is not a decimal integer (k6 reads it with Go's `Atoi`).
    #[error("strconv.Atoi: parsing \"{0}\": invalid syntax")]
    HostValuePort(String),
    /// A `blockHostnames` entry with a `*` anywhere but at the start.
    #[error("invalid hostname pattern '{0}'")]
    HostnamePattern(String),
    /// A `blacklistIPs` entry that is not a CIDR.
    #[error("failed to parse CIDR '{0}': invalid CIDR address: {0}")]
    Cidr(String),
}

/// What a `hosts` entry sends a name to: an IP or another name, maybe a different port.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Target {
    host: String,
    ip: Option<IpAddr>,
    /// `None`: the request's port (also for an explicit `:0`, as k6).
    port: Option<u16>,
    /// A port outside 0..=65535 as written: k6 accepts it and fails each dial with it.
    invalid_port: Option<String>,
}

/// A `name` or `*.suffix` pattern, lower-cased, with an optional port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Pattern {
    /// The name, or for a wildcard the suffix including its leading dot.
    name: String,
    wildcard: bool,
    port: Option<u16>,
}

/// A DNS name (letters, digits, `-`, `_`, dots), the shape accepted as a `hosts` value.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// One label of a k6 pattern: letters and digits, hyphens only inside.
fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Parses a `*.suffix` or exact name pattern (no port) with k6's rule: an optional `*` or
/// `*.`, then nothing or dot-separated labels (so k6 refuses `_`, `a..b`, `-a`, and takes
/// `""` and `*`). Returns the lower-cased name (for a wildcard, what follows the `*`).
fn name_pattern(s: &str) -> Option<(String, bool)> {
    let lower = s.to_ascii_lowercase();
    let (wildcard, rest) = match lower.strip_prefix('*') {
        Some(rest) => (true, rest),
        None => (false, lower.as_str()),
    };
    let name = if wildcard {
        rest.strip_prefix('.').unwrap_or(rest)
    } else {
        rest
    };
    (name.is_empty() || name.split('.').all(is_label)).then(|| (rest.to_owned(), wildcard))
}

impl Pattern {
    fn matches(&self, host: &str) -> bool {
        if self.wildcard {
            host.len() > self.name.len() && ends_with_ignore_case(host, &self.name)
        } else {
            host.eq_ignore_ascii_case(&self.name)
        }
    }
}

fn ends_with_ignore_case(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// k6's `hosts` option: exact names win over wildcards, and a key with the request's port
/// over one without; among wildcards the longest suffix wins.
#[derive(Clone, Debug, Default)]
pub struct HostOverrides {
    exact: HashMap<(String, Option<u16>), Target>,
    wildcards: Vec<(Pattern, Target)>,
}

impl HostOverrides {
    /// Adds `key` (`name`, `*.name`, either with `:port`) → `value` (IP or name, `:port`).
    pub fn insert(&mut self, key: &str, value: &str) -> Result<(), RuleError> {
        let bad_key = || RuleError::HostPattern(key.to_owned());
        let (name, port_text) = match key.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (key, None),
        };
        let (name, wildcard) = name_pattern(name).ok_or_else(bad_key)?;
        // k6 takes a port of one to five digits, so also 65536..=99999, which no request
        // port can match: such an entry is accepted and never used.
        let port: Option<Option<u16>> = match port_text {
            None => Some(None),
            Some(p) if (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse::<u16>().ok().map(Some)
            }
            Some(_) => return Err(bad_key()),
        };
        let target = parse_target(value)?;
        let Some(port) = port else {
            return Ok(());
        };
        if wildcard {
            let pattern = Pattern {
                name,
                wildcard,
                port,
            };
            self.wildcards.retain(|(p, _)| *p != pattern);
            self.wildcards.push((pattern, target));
            // Longest suffix first, so the first match is the most specific.
            self.wildcards
                .sort_by_key(|(p, _)| std::cmp::Reverse((p.name.len(), p.port.is_some())));
        } else {
            self.exact.insert((name, port), target);
        }
        Ok(())
    }

    /// True when no override is set.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.wildcards.is_empty()
    }

    fn lookup(&self, host: &str, port: u16) -> Option<&Target> {
        if self.is_empty() {
            return None;
        }
        let lower = host.to_ascii_lowercase();
        self.exact
            .get(&(lower.clone(), Some(port)))
            .or_else(|| self.exact.get(&(lower, None)))
            .or_else(|| {
                self.wildcards
                    .iter()
                    .find(|(p, _)| p.port.is_none_or(|pp| pp == port) && p.matches(host))
                    .map(|(_, t)| t)
            })
    }
}

/// `ip`, `name`, `ip:port`, `name:port`, `[v6]:port`, or a bare IPv6 address. As k6, any
/// host text is taken: one that is neither an IP nor a DNS name (`'y com'`, `''`) stands
/// for the local system, where Go dials an address with an empty host; only a port that is
/// not an integer is refused, and one outside 0..=65535 fails each request that uses it.
fn parse_target(value: &str) -> Result<Target, RuleError> {
    let local = |port, invalid_port| Target {
        host: Ipv4Addr::LOCALHOST.to_string(),
        ip: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        port,
        invalid_port,
    };
    if let Ok(ip) = value.parse::<IpAddr>() {
        return Ok(Target {
            host: value.to_owned(),
            ip: Some(ip),
            port: None,
            invalid_port: None,
        });
    }
    let (host, port_text) = match value.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (value, None),
    };
    let (port, invalid_port) = match port_text {
        None => (None, None),
        Some(p) => match go_atoi(p) {
            Some(0) => (None, None),
            Some(n) => match u16::try_from(n) {
                Ok(n) => (Some(n), None),
                Err(_) => (None, Some(p.to_owned())),
            },
            None => return Err(RuleError::HostValuePort(p.to_owned())),
        },
    };
    let bracketed = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    let ip = bracketed.unwrap_or(host).parse::<IpAddr>().ok();
    Ok(match ip {
        Some(ip) => Target {
            host: ip.to_string(),
            ip: Some(ip),
            port,
            invalid_port,
        },
        None if is_name(host) => Target {
            host: host.to_owned(),
            ip: None,
            port,
            invalid_port,
        },
        None => local(port, invalid_port),
    })
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits that fit in 64 bits.
fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// k6's `blockHostnames`: case-insensitive names with an optional leading `*`.
#[derive(Clone, Debug, Default)]
pub struct HostnameBlocklist {
    patterns: Vec<(Pattern, String)>,
}

impl HostnameBlocklist {
    /// Adds one pattern, e.g. `*.example.com` or `api.example.com`.
    pub fn insert(&mut self, pattern: &str) -> Result<(), RuleError> {
        let (name, wildcard) =
            name_pattern(pattern).ok_or_else(|| RuleError::HostnamePattern(pattern.to_owned()))?;
        let p = Pattern {
            name,
            wildcard,
            port: None,
        };
        self.patterns.push((p, pattern.to_owned()));
        Ok(())
    }

    /// The pattern blocking `host`, if any.
    pub(crate) fn blocking(&self, host: &str) -> Option<&str> {
        self.patterns
            .iter()
            .find(|(p, _)| p.matches(host))
            .map(|(_, text)| text.as_str())
    }
}

/// One `blacklistIPs` range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl std::str::FromStr for Cidr {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, RuleError> {
        let bad = || RuleError::Cidr(s.to_owned());
        let (ip, prefix) = s.split_once('/').ok_or_else(bad)?;
        let net: IpAddr = ip.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return Err(bad());
        }
        Ok(Self { net, prefix })
    }
}

impl Cidr {
    /// Whether `ip` is in the range (families never mix).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let (a, b, bits) = match (self.net, ip) {
            (IpAddr::V4(n), IpAddr::V4(i)) => {
                (u128::from(n.to_bits()), u128::from(i.to_bits()), 32)
            }
            (IpAddr::V6(n), IpAddr::V6(i)) => (n.to_bits(), i.to_bits(), 128),
            _ => return false,
        };
        let shift = bits - u32::from(self.prefix);
        shift >= 128 || (a >> shift) == (b >> shift)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.net, self.prefix)
    }
}

/// Where a request goes once overrides are applied.
enum Dest<'a> {
    /// Nothing left to resolve.
    Ip(IpAddr),
    /// A name for DNS.
    Name(&'a str),
}

/// The rules that decide where a request connects, borrowed from the client's config.
pub(crate) struct Rules<'a> {
    /// `hosts`.
    pub(crate) hosts: &'a HostOverrides,
    /// `blockHostnames`.
    pub(crate) block_hostnames: &'a HostnameBlocklist,
    /// `blacklistIPs`.
    pub(crate) blacklist_ips: &'a [Cidr],
    /// `dns`.
    pub(crate) dns: &'a DnsOptions,
}

/// Resolves the address to connect to for `host:port` (an IP literal or a name); time
/// spent in DNS (cache included, overrides to an IP excluded) goes to `looking_up`.
pub(crate) async fn resolve_target(
    host: &url::Host<String>,
    port: u16,
    config: &Rules<'_>,
    dns: &mut DnsCache,
    looking_up: &mut Duration,
) -> Result<SocketAddr, HttpError> {
    // Overrides first: the result is an address, or a name left to DNS.
    let (dest, port) = match host {
        url::Host::Ipv4(ip) => {
            // k6 applies `hosts` to IPv4 literals too.
            let target = (!config.hosts.is_empty())
                .then(|| config.hosts.lookup(&ip.to_string(), port))
                .flatten();
            match target {
                Some(t) => t.address(port)?,
                None => (Dest::Ip(IpAddr::V4(*ip)), port),
            }
        }
        url::Host::Ipv6(ip) => (Dest::Ip(IpAddr::V6(*ip)), port),
        url::Host::Domain(name) => {
            if config.block_hostnames.blocking(name).is_some() {
                return Err(HttpError::new(
                    error::BLOCKED_HOSTNAME,
                    "hostname is blocked",
                ));
            }
            match config.hosts.lookup(name, port) {
                Some(t) => t.address(port)?,
                None => (Dest::Name(name), port),
            }
        }
    };
    let ip = match dest {
        Dest::Ip(ip) => ip,
        Dest::Name(name) => {
            // Like k6, a phase that fails counts 0: only completed steps are recorded.
            let t0 = Instant::now();
            let ip = dns.resolve(name, port, config.dns).await?;
            *looking_up = t0.elapsed();
            ip
        }
    };
    if config.blacklist_ips.iter().any(|c| c.contains(ip)) {
        return Err(HttpError::new(error::BLACKLISTED_IP, "ip is blacklisted"));
    }
    Ok(SocketAddr::new(ip, port))
}

/// Where `host:port` connects by the same rules, resolved with the system resolver and
/// blocking: for fetches made inside a certificate check (`tlsAIAFetch`). `None` when a rule
/// refuses it or the name does not resolve.
pub(crate) fn resolve_blocking(
    hosts: &HostOverrides,
    blocked: &HostnameBlocklist,
    blacklist: &[Cidr],
    host: &str,
    port: u16,
) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    if blocked.blocking(host).is_some() {
        return None;
    }
    let (dest, port) = match hosts.lookup(host, port) {
        Some(t) => t.address(port).ok()?,
        None => (Dest::Name(host), port),
    };
    let ip = match dest {
        Dest::Ip(ip) => ip,
        Dest::Name(name) => (name, port).to_socket_addrs().ok()?.next()?.ip(),
    };
    (!blacklist.iter().any(|c| c.contains(ip))).then(|| SocketAddr::new(ip, port))
}

impl Target {
    /// The address or name, and the port, this target stands for.
    fn address(&self, port: u16) -> Result<(Dest<'_>, u16), HttpError> {
        if let Some(bad) = &self.invalid_port {
            return Err(HttpError::new(
                error::TCP_DIAL,
                format!("dial tcp: address {bad}: invalid port"),
            ));
        }
        let port = self.port.unwrap_or(port);
        Ok(match self.ip {
            Some(ip) => (Dest::Ip(ip), port),
            None => (Dest::Name(&self.host), port),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides(pairs: &[(&str, &str)]) -> HostOverrides {
        let mut h = HostOverrides::default();
        for (k, v) in pairs {
            h.insert(k, v).unwrap();
        }
        h
    }

    fn hit(h: &HostOverrides, host: &str, port: u16) -> Option<(String, Option<u16>)> {
        h.lookup(host, port).map(|t| (t.host.clone(), t.port))
    }

    #[test]
    fn hosts_exact_port_and_wildcard_precedence() {
        let h = overrides(&[
            ("myapp.test", "127.0.0.1"),
            ("port.test:80", "127.0.0.1:8080"),
            ("*.w.test", "127.0.0.1:9000"),
            ("x.w.test", "127.0.0.2"),
            ("*.deep.w.test", "127.0.0.3"),
            ("MIXED.test", "::1"),
            ("name.test", "localhost:81"),
        ]);
        let s = |h: &str, p: Option<u16>| Some((h.to_string(), p));
        assert_eq!(hit(&h, "myapp.test", 1), s("127.0.0.1", None));
        assert_eq!(hit(&h, "MyApp.Test", 1), s("127.0.0.1", None));
        assert_eq!(hit(&h, "port.test", 80), s("127.0.0.1", Some(8080)));
        assert_eq!(hit(&h, "port.test", 81), None, "the key's port must match");
        assert_eq!(hit(&h, "a.w.test", 5), s("127.0.0.1", Some(9000)));
        assert_eq!(hit(&h, "a.b.w.test", 5), s("127.0.0.1", Some(9000)));
        assert_eq!(hit(&h, "w.test", 5), None, "a wildcard needs a subdomain");
        assert_eq!(
            hit(&h, "x.w.test", 5),
            s("127.0.0.2", None),
            "exact beats wildcard"
        );
        assert_eq!(
            hit(&h, "a.deep.w.test", 5),
            s("127.0.0.3", None),
            "longest suffix"
        );
        assert_eq!(hit(&h, "mixed.test", 5), s("::1", None));
        assert_eq!(hit(&h, "name.test", 5), s("localhost", Some(81)));
        assert_eq!(hit(&h, "other.test", 5), None);
    }

    #[test]
    fn bad_host_patterns_are_rejected_with_k6_messages() {
        let mut h = HostOverrides::default();
        let e = h.insert("a*.test", "127.0.0.1").unwrap_err();
        assert_eq!(e.to_string(), "invalid host pattern 'a*.test'");
        assert!(h.insert("[::1]:80", "127.0.0.1").is_err());
        assert!(h.insert("a.test:http", "127.0.0.1").is_err());
        assert!(h.insert("a.test", "[::1]:80").is_ok());
        let e = h.insert("a.test", "127.0.0.1:abc").unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"strconv.Atoi: parsing "abc": invalid syntax"#
        );
        assert!(h.insert("a.test", "127.0.0.1:").is_err());
    }

    #[tokio::test]
    async fn host_values_k6_accepts_are_taken_as_k6_dials_them() {
        let mut config = crate::ClientConfig::default();
        for (k, v) in [
            ("junk.test", "y com"),
            ("empty.test", ""),
            ("zero.test", "127.0.0.2:0"),
            ("far.test", "127.0.0.1:65536"),
        ] {
            config.hosts.insert(k, v).unwrap();
        }
        let mut dns = DnsCache::default();
        let local = SocketAddr::from(([127, 0, 0, 1], 80));
        assert_eq!(go(&config, &mut dns, "junk.test").await.unwrap(), local);
        assert_eq!(go(&config, &mut dns, "empty.test").await.unwrap(), local);
        assert_eq!(
            go(&config, &mut dns, "zero.test").await.unwrap(),
            SocketAddr::from(([127, 0, 0, 2], 80)),
            "port 0 keeps the request's port"
        );
        let e = go(&config, &mut dns, "far.test").await.unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (1210, "dial tcp: address 65536: invalid port")
        );
    }

    #[test]
    fn blocked_hostnames() {
        let mut b = HostnameBlocklist::default();
        b.insert("*.blocked.test").unwrap();
        b.insert("Exact.test").unwrap();
        assert_eq!(b.blocking("x.blocked.test"), Some("*.blocked.test"));
        assert_eq!(b.blocking("a.b.BLOCKED.test"), Some("*.blocked.test"));
        assert_eq!(b.blocking("blocked.test"), None);
        assert_eq!(b.blocking("EXACT.TEST"), Some("Exact.test"));
        assert_eq!(b.blocking("sub.exact.test"), None);
        let e = b.insert("a*b").unwrap_err();
        assert_eq!(e.to_string(), "invalid hostname pattern 'a*b'");
    }

    #[test]
    fn cidrs() {
        let c: Cidr = "127.0.0.0/30".parse().unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(c.contains(ip("127.0.0.3")));
        assert!(!c.contains(ip("127.0.0.4")));
        assert!(!c.contains(ip("::1")));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("8.8.8.8")));
        let v6: Cidr = "fd00::/8".parse().unwrap();
        assert!(v6.contains(ip("fd12::1")));
        assert!(!v6.contains(ip("fe80::1")));
        let one: Cidr = "::1/128".parse().unwrap();
        assert!(one.contains(ip("::1")));
        let e = "1.2.3.4".parse::<Cidr>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "failed to parse CIDR '1.2.3.4': invalid CIDR address: 1.2.3.4"
        );
        assert!("1.2.3.4/33".parse::<Cidr>().is_err());
    }

    async fn go(
        config: &crate::ClientConfig,
        dns: &mut DnsCache,
        h: &str,
    ) -> Result<SocketAddr, HttpError> {
        let mut looking_up = Duration::ZERO;
        resolve_target(
            &url::Host::parse(h).unwrap(),
            80,
            &config.target_rules(),
            dns,
            &mut looking_up,
        )
        .await
    }

    #[tokio::test]
    async fn blocking_comes_before_overrides_and_blacklist_after() {
        let mut config = crate::ClientConfig::default();
        config.hosts.insert("both.test", "127.0.0.2").unwrap();
        config.hosts.insert("ok.test", "127.0.0.1:9").unwrap();
        config.block_hostnames.insert("both.test").unwrap();
        config.blacklist_ips.push("127.0.0.2/32".parse().unwrap());
        let mut dns = DnsCache::default();
        let e = go(&config, &mut dns, "both.test").await.unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (1111, "hostname is blocked"));
        let e = go(&config, &mut dns, "127.0.0.2").await.unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (1110, "ip is blacklisted"));
        let ok = go(&config, &mut dns, "ok.test").await.unwrap();
        assert_eq!(ok, "127.0.0.1:9".parse().unwrap());
    }

    #[tokio::test]
    async fn ipv4_literals_are_overridden_and_overrides_to_ips_take_no_lookup_time() {
        let mut config = crate::ClientConfig::default();
        config.hosts.insert("127.0.0.3", "127.0.0.1").unwrap();
        config.hosts.insert("name.test", "localhost:81").unwrap();
        let mut dns = DnsCache::default();
        let mut looking_up = Duration::from_secs(9);
        let host = url::Host::parse("127.0.0.3").unwrap();
        let addr =
            resolve_target(&host, 80, &config.target_rules(), &mut dns, &mut looking_up).await;
        assert_eq!(addr.unwrap(), "127.0.0.1:80".parse().unwrap());
        assert_eq!(looking_up, Duration::from_secs(9), "no lookup, no time");
        let host = url::Host::parse("name.test").unwrap();
        let addr =
            resolve_target(&host, 80, &config.target_rules(), &mut dns, &mut looking_up).await;
        assert_eq!(addr.unwrap(), "127.0.0.1:81".parse().unwrap());
        assert!(
            looking_up < Duration::from_secs(9),
            "a name value is looked up"
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// k6 1.1.0's rule for a `hosts` key, as the regular expression it documents: an
    /// optional `*` or `*.`, optional dot-separated labels, an optional 1–5 digit port.
    const K6_HOST_KEY: &str = r"^(\*\.?)?((([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9]))?(:[0-9]{1,5})?$";
    /// The same without the port, for `blockHostnames`.
    const K6_HOSTNAME: &str = r"^(\*\.?)?((([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9]))?$";

    static HOST_KEY: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(K6_HOST_KEY).unwrap());
    static HOSTNAME: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(K6_HOSTNAME).unwrap());

    /// Texts of the pattern alphabet, where k6's rule has its edges.
    fn pattern_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[*]?[.]?[a-zA-Z0-9_.-]{0,10}(:[0-9a-z]{0,6})?",
            "([a-z0-9-]{0,4}[.]){0,3}[a-z0-9-]{0,4}",
            "\\PC{0,10}",
        ]
    }

    proptest! {
        #![proptest_config(crate::prop_config(4000))]

        /// A `hosts` key is accepted exactly when k6 1.1.0 accepts it.
        #[test]
        fn host_keys_as_k6(key in pattern_text()) {
            let k6 = HOST_KEY.is_match(&key.to_ascii_lowercase());
            let got = HostOverrides::default().insert(&key, "127.0.0.1");
            prop_assert_eq!(got.is_ok(), k6, "{:?}", key);
            if let Err(e) = got {
                prop_assert_eq!(e, RuleError::HostPattern(key.clone()));
            }
        }

        /// A `blockHostnames` entry is accepted exactly when k6 1.1.0 accepts it.
        #[test]
        fn blocked_hostnames_as_k6(pattern in pattern_text()) {
            let k6 = HOSTNAME.is_match(&pattern.to_ascii_lowercase());
            prop_assert_eq!(HostnameBlocklist::default().insert(&pattern).is_ok(), k6, "{:?}", pattern);
        }

        /// Any `hosts` value: a target or a typed refusal, never a panic.
        #[test]
        fn any_host_value_is_decided(value in prop_oneof!["\\PC{0,16}", "\\[?[0-9a-f:.]{0,12}\\]?(:[0-9]{0,6})?"]) {
            let _ = HostOverrides::default().insert("a.test", &value);
        }

        /// Lookups follow k6's precedence (the model: exact name with the port, exact name,
        /// then the longest matching wildcard suffix, a port-specific one first on a tie),
        /// case-insensitively, the last insert of a key winning.
        #[test]
        fn lookups_follow_precedence(
            entries in prop::collection::vec(
                (any::<bool>(), prop::sample::select(&["a.t", "b.a.t", "t", "c.b.a.t"][..]), prop::option::of(80u16..82), 1u8..255),
                0..8,
            ),
            host in prop::sample::select(&["a.t", "b.a.t", "c.b.a.t", "x.c.b.a.t", "t", "A.T", "z.t"][..]),
            port in 80u16..82,
        ) {
            let mut h = HostOverrides::default();
            let mut model: Vec<(bool, String, Option<u16>, u8)> = Vec::new();
            for (wild, name, p, last) in &entries {
                let key = format!("{}{name}{}", if *wild { "*." } else { "" }, p.map(|p| format!(":{p}")).unwrap_or_default());
                h.insert(&key, &format!("10.0.0.{last}")).unwrap();
                model.retain(|(w, n, pp, _)| !(w == wild && n == name && pp == p));
                model.push((*wild, name.to_string(), *p, *last));
            }
            let lower = host.to_ascii_lowercase();
            let exact = |p: Option<u16>| model.iter().find(|(w, n, pp, _)| !w && *n == lower && *pp == p);
            let wildcard = model
                .iter()
                .filter(|(w, n, pp, _)| *w && pp.is_none_or(|pp| pp == port) && lower.ends_with(&format!(".{n}")))
                .max_by_key(|(_, n, pp, _)| (n.len(), pp.is_some()));
            let want = exact(Some(port)).or_else(|| exact(None)).or(wildcard).map(|e| format!("10.0.0.{}", e.3));
            prop_assert_eq!(h.lookup(host, port).map(|t| t.host.clone()), want);
        }

        /// A CIDR prints back to itself and contains exactly the addresses sharing its
        /// first `prefix` bits (checked bit by bit, families never mixing).
        #[test]
        fn cidrs_as_masks(net in any::<u32>(), prefix in 0u8..=32, ip in any::<u32>(), near in any::<bool>()) {
            let ip = if near { net ^ (ip >> prefix.min(31)) >> u32::from(prefix == 32) } else { ip };
            let text = format!("{}/{prefix}", std::net::Ipv4Addr::from(net));
            let c: Cidr = text.parse().unwrap();
            prop_assert_eq!(c.to_string(), text);
            let same = (0..u32::from(prefix)).all(|i| (net >> (31 - i)) & 1 == (ip >> (31 - i)) & 1);
            prop_assert_eq!(c.contains(IpAddr::from(std::net::Ipv4Addr::from(ip))), same);
            prop_assert!(!c.contains("::1".parse().unwrap()));
        }

        /// Any text as a CIDR: a range or k6's parse error, never a panic.
        #[test]
        fn any_cidr_text_is_decided(text in prop_oneof!["\\PC{0,16}", "[0-9a-f:.]{0,16}/[0-9]{0,4}"]) {
            if let Err(e) = text.parse::<Cidr>() {
                prop_assert_eq!(e, RuleError::Cidr(text.clone()));
            }
        }
    }
}
