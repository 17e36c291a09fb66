//! k6's network options — `dns`, `hosts`, `blacklistIPs`, `blockHostnames`, `localIPs` and
//! `rps` — checked and set on the HTTP client's config.

use std::sync::Arc;

use rk6_http::{ClientConfig, DnsOptions, LocalIps, RateLimiter};
use rk6_options::{parse_go_duration, Dns, Options, OptionsError};

/// k6's `dns.ttl`: `inf`, `0`, or a positive duration (a bare number is milliseconds).
fn dns_ttl(text: &str) -> Result<Option<std::time::Duration>, OptionsError> {
    if text == "inf" {
        return Ok(None);
    }
    // k6 checks the TTL only when it builds the resolver, so a bad one is a generic failure.
    parse_go_duration(text)
        .ok()
        .and_then(|d| d.to_std())
        .map(Some)
        .ok_or_else(|| OptionsError::failure(format!("invalid DNS TTL: {text}")))
}

fn dns_options(dns: &Dns) -> Result<DnsOptions, OptionsError> {
    let mut opts = dns_choice(dns)?;
    if let Some(ttl) = &dns.ttl {
        opts.ttl = dns_ttl(ttl)?;
    }
    Ok(opts)
}

/// `dns.select` and `dns.policy`, which k6 checks while it decodes the options (104), before
/// the scenarios and long before the TTL.
fn dns_choice(dns: &Dns) -> Result<DnsOptions, OptionsError> {
    let mut opts = DnsOptions::default();
    let invalid = |e: rk6_http::DnsValueError| OptionsError::invalid(e.to_string());
    if let Some(s) = &dns.select {
        opts.select = s.parse().map_err(invalid)?;
    }
    if let Some(p) = &dns.policy {
        opts.policy = p.parse().map_err(invalid)?;
    }
    Ok(opts)
}

/// The DNS settings checked in k6's order, as the stages of the run's plan need them: the
/// choice values (at decoding) or, with `ttl`, the whole of them (the TTL is checked when
/// the resolver is built, a generic failure).
pub fn check_dns(options: &Options, ttl: bool) -> Result<(), OptionsError> {
    if ttl {
        dns_options(&options.dns).map(drop)
    } else {
        dns_choice(&options.dns).map(drop)
    }
}

/// Checks the network options and sets them on `config`; the error carries k6's exit code.
pub fn apply(options: &Options, config: &mut ClientConfig) -> Result<(), OptionsError> {
    let invalid = |e: &dyn std::fmt::Display| OptionsError::invalid(e.to_string());
    config.dns = dns_options(&options.dns)?;
    for (k, v) in options.hosts.iter().flatten() {
        config.hosts.insert(k, v).map_err(|e| invalid(&e))?;
    }
    for p in options.block_hostnames.iter().flatten() {
        config.block_hostnames.insert(p).map_err(|e| invalid(&e))?;
    }
    for c in options.blacklist_ips.iter().flatten() {
        config
            .blacklist_ips
            .push(c.parse().map_err(|e: rk6_http::RuleError| invalid(&e))?);
    }
    if let Some(v) = &options.local_ips {
        let pool: LocalIps = v
            .parse()
            .map_err(|e: rk6_http::LocalIpsError| OptionsError::failure(e.to_string()))?;
        config.local_ips = Some(pool);
    }
    // k6 ignores zero and negative limits.
    if let Some(n) = options.rps.filter(|n| *n > 0) {
        config.rps = Some(Arc::new(RateLimiter::new(n as u64)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_http::{DnsPolicy, DnsSelect};
    use rk6_options::ExitCode;
    use serde_json::{json, Value};

    fn applied(v: Value) -> Result<ClientConfig, OptionsError> {
        let mut c = ClientConfig::default();
        let options = Options::from_json(&v)?.options;
        apply(&options, &mut c).map(|()| c)
    }

    fn err(v: Value) -> (ExitCode, String) {
        let e = applied(v).unwrap_err();
        (e.code, e.message)
    }

    #[test]
    fn dns_object_form_and_defaults() {
        let c = applied(json!({})).unwrap();
        assert_eq!(c.dns, DnsOptions::default());
        let c = applied(json!({"dns": {"ttl": "inf", "select": "first", "x": 1}})).unwrap();
        assert_eq!(c.dns.ttl, None);
        assert_eq!(c.dns.select, DnsSelect::First);
        assert_eq!(c.dns.policy, DnsPolicy::PreferIPv4);
        let c = applied(json!({"dns": {"ttl": "0"}})).unwrap();
        assert_eq!(c.dns.ttl, Some(std::time::Duration::ZERO));
        let c = applied(json!({"dns": {"ttl": "250"}})).unwrap();
        assert_eq!(c.dns.ttl, Some(std::time::Duration::from_millis(250)));
        let c = applied(json!({"dns": {"ttl": "1d"}})).unwrap();
        assert_eq!(c.dns.ttl, Some(std::time::Duration::from_secs(86_400)));
        assert_eq!(
            err(json!({"dns": {"ttl": "abc"}})),
            (ExitCode::Failure, "invalid DNS TTL: abc".to_string())
        );
        assert_eq!(err(json!({"dns": {"ttl": "-1s"}})).0, ExitCode::Failure);
        assert_eq!(
            err(json!({"dns": {"policy": "xx"}})),
            (
                ExitCode::InvalidConfig,
                "xx does not belong to DNSPolicy values".to_string()
            )
        );
        assert_eq!(
            err(json!({"dns": {"select": "foo"}})).1,
            "foo does not belong to DNSSelect values"
        );
        assert!(applied(json!({"dns": "ttl=1m"})).is_err());
        assert!(applied(json!({"dns": {"ttl": 5000}})).is_err());
    }

    #[test]
    fn lists_rules_and_rps() {
        let c = applied(json!({
            "hosts": {"a.test": "127.0.0.1:81"},
            "blockHostnames": ["*.b.test"],
            "blacklistIPs": ["10.0.0.0/8"],
            "rps": 5
        }))
        .unwrap();
        assert!(!c.hosts.is_empty());
        assert_eq!(c.blacklist_ips.len(), 1);
        assert!(c.rps.is_some());
        assert!(applied(json!({"rps": -5})).unwrap().rps.is_none());
        assert!(applied(json!({"rps": "x"})).is_err());
        assert_eq!(
            err(json!({"blockHostnames": ["a*b"]})).1,
            "invalid hostname pattern 'a*b'"
        );
        assert_eq!(
            err(json!({"blacklistIPs": ["1.2.3.4"]})).1,
            "failed to parse CIDR '1.2.3.4': invalid CIDR address: 1.2.3.4"
        );
        assert_eq!(
            err(json!({"hosts": {"a*.test": "127.0.0.1"}})).1,
            "invalid host pattern 'a*.test'"
        );
        let mut c = ClientConfig::default();
        let options = Options {
            local_ips: Some("bogus".into()),
            ..Options::default()
        };
        let e = apply(&options, &mut c).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                ExitCode::Failure,
                "bogus is not a valid IP, IP range or CIDR"
            )
        );
    }
}
