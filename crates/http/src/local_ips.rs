//! k6's `localIPs`: the source addresses VUs bind their connections to, handed out
//! round-robin by VU id over the ranges in the order given.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A `localIPs` entry that is not an IP, `first-last` range or CIDR.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not a valid IP, IP range or CIDR")]
pub struct LocalIpsError(pub String);

/// A contiguous run of addresses of one family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    first: u128,
    count: u128,
    v6: bool,
}

/// The pool parsed from `--local-ips` / `K6_LOCAL_IPS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalIps {
    ranges: Vec<Range>,
}

fn bits(ip: IpAddr) -> (u128, bool) {
    match ip {
        IpAddr::V4(v4) => (u128::from(v4.to_bits()), false),
        IpAddr::V6(v6) => (v6.to_bits(), true),
    }
}

fn parse_range(s: &str) -> Option<Range> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        let (first, v6) = bits(ip);
        return Some(Range {
            first,
            count: 1,
            v6,
        });
    }
    if let Some((a, b)) = s.split_once('-') {
        let (first, v6) = bits(a.trim().parse().ok()?);
        let (last, v6b) = bits(b.trim().parse().ok()?);
        return (v6 == v6b && last >= first).then(|| Range {
            first,
            count: (last - first).saturating_add(1),
            v6,
        });
    }
    let (ip, prefix) = s.split_once('/')?;
    let (addr, v6) = bits(ip.parse().ok()?);
    let width: u32 = if v6 { 128 } else { 32 };
    let prefix: u32 = prefix.parse().ok().filter(|p| *p <= width)?;
    let host_bits = width - prefix;
    let count = 1u128.checked_shl(host_bits).unwrap_or(u128::MAX);
    let first = if host_bits >= 128 {
        0
    } else {
        addr >> host_bits << host_bits
    };
    Some(Range { first, count, v6 })
}

impl FromStr for LocalIps {
    type Err = LocalIpsError;
    /// Parses a comma-separated list of IPs, `first-last` ranges and CIDRs.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let ranges = s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| parse_range(p).ok_or_else(|| LocalIpsError(p.to_owned())))
            .collect::<Result<Vec<_>, _>>()?;
        if ranges.is_empty() {
            return Err(LocalIpsError(s.to_owned()));
        }
        Ok(Self { ranges })
    }
}

impl LocalIps {
    /// The address of VU `vu_id` (1-based; 0, the setup/teardown VU, gets the first).
    pub fn for_vu(&self, vu_id: u64) -> IpAddr {
        let total = self
            .ranges
            .iter()
            .fold(0u128, |t, r| t.saturating_add(r.count));
        let mut i = u128::from(vu_id.saturating_sub(1)) % total;
        for r in &self.ranges {
            if i < r.count {
                let n = r.first + i;
                return if r.v6 {
                    IpAddr::V6(Ipv6Addr::from_bits(n))
                } else {
                    IpAddr::V4(Ipv4Addr::from_bits(n as u32))
                };
            }
            i -= r.count;
        }
        unreachable!("the index is below the total of the ranges")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(pool: &str, vus: u64) -> Vec<String> {
        let p: LocalIps = pool.parse().unwrap();
        (1..=vus).map(|v| p.for_vu(v).to_string()).collect()
    }

    #[test]
    fn vus_take_addresses_in_turn_across_ranges() {
        assert_eq!(
            seq("127.0.0.2-127.0.0.3", 3),
            ["127.0.0.2", "127.0.0.3", "127.0.0.2"]
        );
        // A CIDR covers its whole block, network address included, as in k6.
        assert_eq!(
            seq("127.0.0.5/31,127.0.0.9", 4),
            ["127.0.0.4", "127.0.0.5", "127.0.0.9", "127.0.0.4"]
        );
        assert_eq!(seq("fd:1::0/127", 2), ["fd:1::", "fd:1::1"]);
        let any: LocalIps = "::/0".parse().unwrap();
        assert_eq!(any.for_vu(3).to_string(), "::2");
    }

    #[test]
    fn bad_entries_are_named() {
        let e = "127.0.0.1,bogus".parse::<LocalIps>().unwrap_err();
        assert_eq!(e.to_string(), "bogus is not a valid IP, IP range or CIDR");
        assert!("127.0.0.3-127.0.0.2".parse::<LocalIps>().is_err());
        assert!("127.0.0.1-::1".parse::<LocalIps>().is_err());
        assert!("127.0.0.1/33".parse::<LocalIps>().is_err());
    }
}
