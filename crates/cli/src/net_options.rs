//! k6's network options: `dns`, `hosts`, `blacklistIPs`, `blockHostnames`, `localIPs` and
//! `rps` — their `K6_*`/flag forms, and their validation into the HTTP client's config.

use std::sync::Arc;

use rk6_http::{ClientConfig, DnsOptions, DnsPolicy, DnsSelect, LocalIps, RateLimiter};
use serde_json::{Map, Value};

use crate::args::RunArgs;
use crate::exit::ExitCode;

/// The `--dns`/`K6_DNS` form `ttl=1m,select=first,policy=any` as the script's object form.
/// `select` and `policy` are checked here; `ttl` later, as k6 does (different exit code).
fn dns_object(text: &str) -> Result<Value, String> {
    let mut m = Map::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("no value for key {part}"))?;
        let (k, v) = (k.trim(), v.trim());
        match k {
            "ttl" => {}
            "select" => drop(v.parse::<DnsSelect>().map_err(|e| e.to_string())?),
            "policy" => drop(v.parse::<DnsPolicy>().map_err(|e| e.to_string())?),
            _ => return Err(format!("unknown DNS configuration field: {k}")),
        }
        m.insert(k.to_string(), Value::String(v.to_string()));
    }
    Ok(Value::Object(m))
}

/// `a,b` as a JSON array of trimmed, non-empty strings.
fn list<'a>(parts: impl IntoIterator<Item = &'a str>) -> Value {
    Value::Array(
        parts
            .into_iter()
            .flat_map(|p| p.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| Value::String(s.to_string()))
            .collect(),
    )
}

/// Adds the options set by `K6_DNS`, `K6_BLACKLIST_IPS`, `K6_BLOCK_HOSTNAMES`,
/// `K6_LOCAL_IPS` and `K6_RPS` (k6 reads no `K6_HOSTS`).
pub fn env_layer(
    env: &impl Fn(&str) -> Option<String>,
    m: &mut Map<String, Value>,
) -> Result<(), String> {
    if let Some(v) = env("K6_DNS") {
        let dns = dns_object(&v).map_err(|e| format!("K6_DNS: {e}"))?;
        m.insert("dns".into(), dns);
    }
    if let Some(v) = env("K6_BLACKLIST_IPS") {
        m.insert("blacklistIPs".into(), list([v.as_str()]));
    }
    if let Some(v) = env("K6_BLOCK_HOSTNAMES") {
        m.insert("blockHostnames".into(), list([v.as_str()]));
    }
    if let Some(v) = env("K6_LOCAL_IPS") {
        m.insert("localIPs".into(), Value::String(v));
    }
    if let Some(v) = env("K6_RPS") {
        let n: i64 = v
            .trim()
            .parse()
            .map_err(|_| format!("K6_RPS: \"{v}\" is not an integer"))?;
        m.insert("rps".into(), n.into());
    }
    Ok(())
}

/// Adds the options set by `--dns`, `--blacklist-ip`, `--block-hostnames`, `--local-ips`
/// and `--rps`.
pub fn cli_layer(args: &RunArgs, m: &mut Map<String, Value>) -> Result<(), String> {
    if let Some(v) = &args.dns {
        m.insert("dns".into(), dns_object(v)?);
    }
    if !args.blacklist_ip.is_empty() {
        m.insert(
            "blacklistIPs".into(),
            list(args.blacklist_ip.iter().map(String::as_str)),
        );
    }
    if let Some(v) = &args.block_hostnames {
        m.insert("blockHostnames".into(), list([v.as_str()]));
    }
    if let Some(v) = &args.local_ips {
        m.insert("localIPs".into(), Value::String(v.clone()));
    }
    if let Some(v) = args.rps {
        m.insert("rps".into(), v.into());
    }
    Ok(())
}

/// k6 merges `dns` field by field across layers: a higher layer's `select` keeps a lower
/// layer's `ttl`.
pub fn merge_dns(lower: Option<&Value>, higher: Value) -> Value {
    match (lower, higher) {
        (Some(Value::Object(lo)), Value::Object(hi)) => {
            let mut m = lo.clone();
            m.extend(hi);
            Value::Object(m)
        }
        (_, higher) => higher,
    }
}

fn invalid(msg: impl Into<String>) -> (ExitCode, String) {
    (ExitCode::InvalidConfig, msg.into())
}

/// k6's `dns.ttl`: `inf`, `0`, or a positive duration (a bare number is milliseconds).
fn dns_ttl(text: &str) -> Result<Option<std::time::Duration>, (ExitCode, String)> {
    if text == "inf" {
        return Ok(None);
    }
    // k6 checks the TTL only when it builds the resolver, so a bad one is a generic failure.
    rk6_scheduler::duration::parse_duration(text)
        .map(Some)
        .map_err(|_| (ExitCode::Failure, format!("invalid DNS TTL: {text}")))
}

fn dns_options(v: &Value) -> Result<DnsOptions, (ExitCode, String)> {
    let Value::Object(m) = v else {
        return Err(invalid(format!(
            "the \"dns\" option must be an object like {{\"ttl\": \"1m\", \"select\": \"first\", \"policy\": \"any\"}}, got {v}"
        )));
    };
    let mut opts = DnsOptions::default();
    // Unknown fields are ignored, as k6 does; known ones must be strings.
    let field = |k: &str| -> Result<Option<&str>, (ExitCode, String)> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(invalid(format!(
                "the \"dns\" option's \"{k}\" must be a string, got {other}"
            ))),
        }
    };
    if let Some(ttl) = field("ttl")? {
        opts.ttl = dns_ttl(ttl)?;
    }
    if let Some(s) = field("select")? {
        opts.select = s
            .parse()
            .map_err(|e: rk6_http::DnsValueError| invalid(e.to_string()))?;
    }
    if let Some(p) = field("policy")? {
        opts.policy = p
            .parse()
            .map_err(|e: rk6_http::DnsValueError| invalid(e.to_string()))?;
    }
    Ok(opts)
}

/// The strings of a list option (`null` = none).
fn strings<'a>(
    options: &'a Map<String, Value>,
    key: &str,
) -> Result<Vec<&'a str>, (ExitCode, String)> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| invalid(format!("\"{key}\" must be a list of strings, got {v}")))
            })
            .collect(),
        Some(other) => Err(invalid(format!(
            "\"{key}\" must be a list of strings, got {other}"
        ))),
    }
}

/// Checks the network options and sets them on `config`; the error carries k6's exit code.
pub fn apply(
    options: &Map<String, Value>,
    config: &mut ClientConfig,
) -> Result<(), (ExitCode, String)> {
    if let Some(v) = options.get("dns").filter(|v| !v.is_null()) {
        config.dns = dns_options(v)?;
    }
    match options.get("hosts") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let v = v.as_str().ok_or_else(|| {
                    invalid(format!(
                        "the \"hosts\" value of '{k}' must be a string, got {v}"
                    ))
                })?;
                config
                    .hosts
                    .insert(k, v)
                    .map_err(|e| invalid(e.to_string()))?;
            }
        }
        Some(other) => {
            return Err(invalid(format!(
                "\"hosts\" must be an object of name → address, got {other}"
            )))
        }
    }
    for p in strings(options, "blockHostnames")? {
        config
            .block_hostnames
            .insert(p)
            .map_err(|e| invalid(e.to_string()))?;
    }
    for c in strings(options, "blacklistIPs")? {
        config.blacklist_ips.push(
            c.parse()
                .map_err(|e: rk6_http::RuleError| invalid(e.to_string()))?,
        );
    }
    if let Some(v) = options.get("localIPs").and_then(Value::as_str) {
        let pool: LocalIps = v
            .parse()
            .map_err(|e: rk6_http::LocalIpsError| (ExitCode::Failure, e.to_string()))?;
        config.local_ips = Some(pool);
    }
    match options.get("rps") {
        None | Some(Value::Null) => {}
        Some(v) => {
            // Script numbers arrive as floats; only whole ones are integers.
            let n = v
                .as_i64()
                .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .ok_or_else(|| invalid(format!("\"rps\" must be an integer, got {v}")))?;
            // k6 ignores zero and negative limits.
            if n > 0 {
                config.rps = Some(Arc::new(RateLimiter::new(n as u64)));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn applied(v: Value) -> Result<ClientConfig, (ExitCode, String)> {
        let mut c = ClientConfig::default();
        apply(v.as_object().unwrap(), &mut c).map(|()| c)
    }

    #[test]
    fn dns_string_form() {
        assert_eq!(
            dns_object("ttl=inf, select=roundRobin,policy=onlyIPv6").unwrap(),
            json!({"ttl": "inf", "select": "roundRobin", "policy": "onlyIPv6"})
        );
        assert_eq!(dns_object("").unwrap(), json!({}));
        assert_eq!(
            dns_object("select=foo").unwrap_err(),
            "foo does not belong to DNSSelect values"
        );
        assert_eq!(
            dns_object("policy=bar").unwrap_err(),
            "bar does not belong to DNSPolicy values"
        );
        assert_eq!(
            dns_object("foo=1").unwrap_err(),
            "unknown DNS configuration field: foo"
        );
        assert_eq!(dns_object("ttl").unwrap_err(), "no value for key ttl");
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
        let e = applied(json!({"dns": {"ttl": "abc"}})).unwrap_err();
        assert_eq!(e, (ExitCode::Failure, "invalid DNS TTL: abc".to_string()));
        let e = applied(json!({"dns": {"ttl": "-1s"}})).unwrap_err();
        assert_eq!(e.0, ExitCode::Failure);
        let e = applied(json!({"dns": {"policy": "xx"}})).unwrap_err();
        assert_eq!(
            e,
            (
                ExitCode::InvalidConfig,
                "xx does not belong to DNSPolicy values".to_string()
            )
        );
        assert!(applied(json!({"dns": "ttl=1m"})).is_err());
        assert!(applied(json!({"dns": {"ttl": 5000}})).is_err());
    }

    #[test]
    fn dns_layers_merge_field_by_field() {
        let merged = merge_dns(Some(&json!({"ttl": "1m"})), json!({"select": "first"}));
        assert_eq!(merged, json!({"ttl": "1m", "select": "first"}));
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
        let e = applied(json!({"blockHostnames": ["a*b"]})).unwrap_err();
        assert_eq!(e.1, "invalid hostname pattern 'a*b'");
        let e = applied(json!({"blacklistIPs": ["1.2.3.4"]})).unwrap_err();
        assert_eq!(
            e.1,
            "failed to parse CIDR '1.2.3.4': invalid CIDR address: 1.2.3.4"
        );
        let e = applied(json!({"hosts": {"a*.test": "127.0.0.1"}})).unwrap_err();
        assert_eq!(e.1, "invalid host pattern 'a*.test'");
        let e = applied(json!({"localIPs": "bogus"})).unwrap_err();
        assert_eq!(
            e,
            (
                ExitCode::Failure,
                "bogus is not a valid IP, IP range or CIDR".to_string()
            )
        );
    }

    #[test]
    fn env_and_flags() {
        let env = |k: &str| match k {
            "K6_DNS" => Some("select=first".to_string()),
            "K6_BLACKLIST_IPS" => Some("10.0.0.0/8, 127.0.0.2/32".to_string()),
            "K6_RPS" => Some("7".to_string()),
            _ => None,
        };
        let mut m = Map::new();
        env_layer(&env, &mut m).unwrap();
        assert_eq!(m["dns"], json!({"select": "first"}));
        assert_eq!(m["blacklistIPs"], json!(["10.0.0.0/8", "127.0.0.2/32"]));
        assert_eq!(m["rps"], json!(7));
        let bad = |k: &str| (k == "K6_DNS").then(|| "select=foo".to_string());
        assert!(env_layer(&bad, &mut m).is_err());
        let args = RunArgs {
            blacklist_ip: vec!["10.0.0.0/8".into(), "::1/128,127.0.0.0/8".into()],
            block_hostnames: Some("*.x.test,y.test".into()),
            local_ips: Some("127.0.0.2-127.0.0.3".into()),
            ..Default::default()
        };
        let mut m = Map::new();
        cli_layer(&args, &mut m).unwrap();
        assert_eq!(
            m["blacklistIPs"],
            json!(["10.0.0.0/8", "::1/128", "127.0.0.0/8"])
        );
        assert_eq!(m["blockHostnames"], json!(["*.x.test", "y.test"]));
        assert_eq!(m["localIPs"], json!("127.0.0.2-127.0.0.3"));
    }
}
