//! Settings of the `experimental-prometheus-rw` output, read from `K6_PROMETHEUS_RW_*`
//! environment variables as k6 reads them.

use std::time::Duration;

use base64::Engine;
use rk6_metrics::Stat;
use url::Url;

use crate::outputs::OutputError;
use crate::transport::TlsMinimum;

/// Where k6 pushes when `K6_PROMETHEUS_RW_SERVER_URL` is unset.
pub const DEFAULT_URL: &str = "http://localhost:9090/api/v1/write";

/// The push interval when `K6_PROMETHEUS_RW_PUSH_INTERVAL` is unset.
const DEFAULT_PUSH_INTERVAL: Duration = Duration::from_secs(5);

/// Options k6 documents that rk6 refuses rather than silently ignores.
const UNSUPPORTED: &[&str] = &[
    "K6_PROMETHEUS_RW_CLIENT_CERTIFICATE",
    "K6_PROMETHEUS_RW_CLIENT_CERTIFICATE_KEY",
    "K6_PROMETHEUS_RW_SIGV4_REGION",
    "K6_PROMETHEUS_RW_SIGV4_ACCESS_KEY",
    "K6_PROMETHEUS_RW_SIGV4_SECRET_KEY",
];

/// One Trend statistic to push, and the suffix of its series name.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendStat {
    /// What to compute.
    pub kind: TrendStatKind,
    /// Appended to the metric name after `_`: `p99`, `p999`, `min`, `count`, ...
    pub suffix: String,
}

/// A Trend statistic: one of the summary's, or the sum (which only this output offers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrendStatKind {
    /// `count`, `min`, `max`, `avg`, `med` or `p(N)`.
    Stat(Stat),
    /// The sum of all values.
    Sum,
}

impl TrendStat {
    /// Parses one entry of `K6_PROMETHEUS_RW_TREND_STATS`.
    pub fn parse(s: &str) -> Result<TrendStat, OutputError> {
        let s = s.trim();
        if s == "sum" {
            return Ok(TrendStat {
                kind: TrendStatKind::Sum,
                suffix: "sum".into(),
            });
        }
        let stat = Stat::parse_trend_stat(s).ok_or_else(|| {
            OutputError::InvalidArgument(format!(
                "invalid trend stat \"{s}\" in K6_PROMETHEUS_RW_TREND_STATS; use count, sum, min, max, avg, med or p(N)"
            ))
        })?;
        // k6 names p(99.9) `p999` and p(0.5) `p05`: the number without its dot.
        let suffix = match s.strip_prefix("p(").and_then(|r| r.strip_suffix(')')) {
            Some(n) => format!("p{}", n.replace('.', "")),
            None => s.to_string(),
        };
        Ok(TrendStat {
            kind: TrendStatKind::Stat(stat),
            suffix,
        })
    }

    /// Parses the comma-separated list; repeated entries are kept once.
    pub fn parse_list(list: &str) -> Result<Vec<TrendStat>, OutputError> {
        let mut out: Vec<TrendStat> = Vec::new();
        for entry in list.split(',') {
            let stat = TrendStat::parse(entry)?;
            if !out.iter().any(|s| s.suffix == stat.suffix) {
                out.push(stat);
            }
        }
        Ok(out)
    }
}

/// Everything the output needs to know before the test starts.
#[derive(Debug, Clone)]
pub struct RwConfig {
    /// The remote-write endpoint.
    pub url: Url,
    /// Time between pushes.
    pub push_interval: Duration,
    /// Stats pushed for every Trend series.
    pub trend_stats: Vec<TrendStat>,
    /// Push Trends as native histograms instead of `trend_stats`.
    pub native_histograms: bool,
    /// Send stale markers for every series at the end.
    pub stale_markers: bool,
    /// Accept any server certificate.
    pub insecure_skip_tls_verify: bool,
    /// The oldest TLS version accepted ([`tls_minimum`]).
    pub(crate) tls_minimum: TlsMinimum,
    /// Extra request headers, `Authorization` included when auth is configured.
    pub headers: Vec<(String, String)>,
    /// Labels added to every series unless a tag of the same name is present.
    pub static_labels: Vec<(String, String)>,
}

impl RwConfig {
    /// Reads the settings. `vars` is the whole environment (for the `_HEADERS_<name>`
    /// prefix); `env` looks one variable up.
    pub fn from_env(
        env: &dyn Fn(&str) -> Option<String>,
        vars: &[(String, String)],
    ) -> Result<RwConfig, OutputError> {
        let invalid = |m: String| OutputError::InvalidArgument(m);
        for key in UNSUPPORTED {
            if env(key).is_some_and(|v| !v.is_empty()) {
                return Err(invalid(format!(
                    "{key} is not supported by rk6 yet (see docs/compatibility.md)"
                )));
            }
        }
        let raw_url = env("K6_PROMETHEUS_RW_SERVER_URL").unwrap_or_else(|| DEFAULT_URL.into());
        let url = Url::parse(&raw_url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| {
                invalid(format!(
                    "invalid K6_PROMETHEUS_RW_SERVER_URL \"{raw_url}\": an http:// or https:// URL is required"
                ))
            })?;
        let push_interval = match env("K6_PROMETHEUS_RW_PUSH_INTERVAL") {
            None => DEFAULT_PUSH_INTERVAL,
            Some(s) => rk6_options::parse_duration(&s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    invalid(format!(
                        "invalid K6_PROMETHEUS_RW_PUSH_INTERVAL \"{s}\": a positive duration such as 5s is required"
                    ))
                })?,
        };
        let trend_stats = match env("K6_PROMETHEUS_RW_TREND_STATS") {
            None => TrendStat::parse_list("p(99)")?,
            Some(s) => TrendStat::parse_list(&s)?,
        };
        let mut headers = Vec::new();
        // k6 reads `K6_PROMETHEUS_RW_HTTP_HEADERS=k1:v1,k2:v2` and `..._HEADERS_<name>=v`.
        if let Some(list) = env("K6_PROMETHEUS_RW_HTTP_HEADERS").filter(|s| !s.is_empty()) {
            for pair in list.split(',') {
                let (k, v) = pair.split_once(':').ok_or_else(|| {
                    invalid(format!(
                        "invalid K6_PROMETHEUS_RW_HTTP_HEADERS entry \"{pair}\": use name:value"
                    ))
                })?;
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let mut prefixed: Vec<(String, String)> = vars
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix("K6_PROMETHEUS_RW_HEADERS_")
                    .filter(|name| !name.is_empty())
                    .map(|name| (name.to_string(), v.clone()))
            })
            .collect();
        prefixed.sort();
        headers.extend(prefixed);
        if let Some(user) = env("K6_PROMETHEUS_RW_USERNAME") {
            let pass = env("K6_PROMETHEUS_RW_PASSWORD").unwrap_or_default();
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
            headers.push(("Authorization".into(), format!("Basic {token}")));
        } else if let Some(token) = env("K6_PROMETHEUS_RW_BEARER_TOKEN").filter(|t| !t.is_empty()) {
            headers.push(("Authorization".into(), format!("Bearer {token}")));
        }
        let mut static_labels: Vec<(String, String)> = Vec::new();
        if let Some(list) = env("K6_PROMETHEUS_RW_LABELS").filter(|s| !s.is_empty()) {
            for pair in list.split(',') {
                // k6 2.3's words (release notes, #6071).
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    invalid(format!(
                        "the provided label ({pair}) does not respect the expected format <label key>=<value>"
                    ))
                })?;
                let (k, v) = (k.trim(), v.trim());
                // As k6: empty names or values and the reserved `__name__` are ignored.
                if !k.is_empty() && !v.is_empty() && k != "__name__" {
                    static_labels.retain(|(n, _)| n != k);
                    static_labels.push((k.to_string(), v.to_string()));
                }
            }
        }
        Ok(RwConfig {
            url,
            push_interval,
            trend_stats,
            native_histograms: bool_var(env, "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM")?
                .unwrap_or(false),
            stale_markers: bool_var(env, "K6_PROMETHEUS_RW_STALE_MARKERS")?.unwrap_or(false),
            insecure_skip_tls_verify: bool_var(env, "K6_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY")?
                .unwrap_or(false),
            tls_minimum: tls_minimum(env),
            headers,
            static_labels,
        })
    }
}

/// The minimum TLS version (k6 1.6, #5537). k6 reads `K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION`;
/// its release notes name it `K6_PROMETHEUS_RW_TLS_MIN_VERSION`, so both are read, the
/// first winning. As in k6, `1.2` allows TLS 1.2 and any other value asks for TLS 1.3.
/// Unset (or empty), rk6 allows TLS 1.2, as k6 1.1 did and rk6 always has: k6 1.2 made
/// TLS 1.3 its default, which would stop a k6 1.x pipeline pushing to a TLS 1.2 endpoint,
/// and rustls' TLS 1.2 has only forward-secret AEAD suites anyway.
fn tls_minimum(env: &dyn Fn(&str) -> Option<String>) -> TlsMinimum {
    let value = [
        "K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION",
        "K6_PROMETHEUS_RW_TLS_MIN_VERSION",
    ]
    .iter()
    .find_map(|k| env(k).filter(|v| !v.is_empty()));
    match value.as_deref() {
        None | Some("1.2") => TlsMinimum::Tls12,
        Some(_) => TlsMinimum::Tls13,
    }
}

/// A boolean variable in Go's `strconv.ParseBool` spellings, as k6's output reads them.
fn bool_var(env: &dyn Fn(&str) -> Option<String>, key: &str) -> Result<Option<bool>, OutputError> {
    let Some(v) = env(key) else {
        return Ok(None);
    };
    rk6_options::text::go_bool(&v).map(Some).map_err(|_| {
        OutputError::InvalidArgument(format!("invalid {key} \"{v}\": use true or false"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<RwConfig, OutputError> {
        let vars: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        RwConfig::from_env(&lookup, &vars)
    }

    #[test]
    fn defaults_match_k6() {
        let c = from(&[]).unwrap();
        assert_eq!(c.url.as_str(), DEFAULT_URL);
        assert_eq!(c.push_interval, Duration::from_secs(5));
        assert_eq!(c.trend_stats.len(), 1);
        assert_eq!(c.trend_stats[0].suffix, "p99");
        assert!(!c.stale_markers && !c.insecure_skip_tls_verify && !c.native_histograms);
        assert!(c.headers.is_empty() && c.static_labels.is_empty());
        // rk6's default, k6 1.1's: TLS 1.2 allowed (k6 1.2 and later default to TLS 1.3).
        assert_eq!(c.tls_minimum, TlsMinimum::Tls12);
    }

    /// k6 v1.6.0 release notes, #5537: `1.2` allows TLS 1.2, anything else means TLS 1.3;
    /// the code reads `_TLS_MINIMUM_VERSION`, the notes say `_TLS_MIN_VERSION`.
    #[test]
    fn tls_minimum_version_under_either_name() {
        for (pairs, want) in [
            (&[][..], TlsMinimum::Tls12),
            (
                &[("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "")][..],
                TlsMinimum::Tls12,
            ),
            (
                &[("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.2")][..],
                TlsMinimum::Tls12,
            ),
            (
                &[("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.3")][..],
                TlsMinimum::Tls13,
            ),
            (
                &[("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.1")][..],
                TlsMinimum::Tls13,
            ),
            (
                &[("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "tls1.2")][..],
                TlsMinimum::Tls13,
            ),
            (
                &[("K6_PROMETHEUS_RW_TLS_MIN_VERSION", "1.2")][..],
                TlsMinimum::Tls12,
            ),
            (
                &[("K6_PROMETHEUS_RW_TLS_MIN_VERSION", "1.3")][..],
                TlsMinimum::Tls13,
            ),
            (
                &[
                    ("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.2"),
                    ("K6_PROMETHEUS_RW_TLS_MIN_VERSION", "1.3"),
                ][..],
                TlsMinimum::Tls12,
            ),
            (
                &[
                    ("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.3"),
                    ("K6_PROMETHEUS_RW_TLS_MIN_VERSION", "1.2"),
                ][..],
                TlsMinimum::Tls13,
            ),
        ] {
            assert_eq!(from(pairs).unwrap().tls_minimum, want, "{pairs:?}");
        }
    }

    #[test]
    fn trend_stats_names_and_errors() {
        let stats =
            TrendStat::parse_list("p(95),p(99),min,max,avg,med,count,sum,p(99.9),p(0.5),min")
                .unwrap();
        let suffixes: Vec<&str> = stats.iter().map(|s| s.suffix.as_str()).collect();
        assert_eq!(
            suffixes,
            ["p95", "p99", "min", "max", "avg", "med", "count", "sum", "p999", "p05"]
        );
        assert_eq!(stats[1].kind, TrendStatKind::Stat(Stat::Percentile(99.0)));
        assert_eq!(stats[7].kind, TrendStatKind::Sum);
        for bad in ["p(101)", "rate", "value", "", "p99", "mean", "p(95),,min"] {
            let e = TrendStat::parse_list(bad).unwrap_err().to_string();
            assert!(e.contains("invalid trend stat"), "{bad}: {e}");
        }
    }

    #[test]
    fn reads_every_supported_variable() {
        let c = from(&[
            (
                "K6_PROMETHEUS_RW_SERVER_URL",
                "https://prom.example:9443/push",
            ),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "1500ms"),
            ("K6_PROMETHEUS_RW_TREND_STATS", "max, p(90)"),
            ("K6_PROMETHEUS_RW_STALE_MARKERS", "true"),
            ("K6_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY", "1"),
            ("K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", "True"),
            ("K6_PROMETHEUS_RW_USERNAME", "alice"),
            ("K6_PROMETHEUS_RW_PASSWORD", "s3cret"),
            ("K6_PROMETHEUS_RW_HEADERS_X-Scope-OrgID", "tenant1"),
            ("K6_PROMETHEUS_RW_HTTP_HEADERS", "A:1, B : 2"),
            (
                "K6_PROMETHEUS_RW_LABELS",
                "env=ci,=x,empty=,__name__=no,env=prod",
            ),
        ])
        .unwrap();
        assert_eq!(c.url.as_str(), "https://prom.example:9443/push");
        assert_eq!(c.push_interval, Duration::from_millis(1500));
        let suffixes: Vec<&str> = c.trend_stats.iter().map(|s| s.suffix.as_str()).collect();
        assert_eq!(suffixes, ["max", "p90"]);
        assert!(c.stale_markers && c.insecure_skip_tls_verify && c.native_histograms);
        assert_eq!(
            c.headers,
            [
                ("A".to_string(), "1".to_string()),
                ("B".into(), "2".into()),
                ("X-Scope-OrgID".into(), "tenant1".into()),
                // base64("alice:s3cret")
                ("Authorization".into(), "Basic YWxpY2U6czNjcmV0".into()),
            ]
        );
        assert_eq!(c.static_labels, [("env".to_string(), "prod".to_string())]);
        let c = from(&[("K6_PROMETHEUS_RW_BEARER_TOKEN", "tok")]).unwrap();
        assert_eq!(
            c.headers,
            [("Authorization".to_string(), "Bearer tok".to_string())]
        );
    }

    #[test]
    fn refuses_bad_or_unsupported_settings() {
        let err = |pairs: &[(&str, &str)]| from(pairs).unwrap_err().to_string();
        for url in ["not a url", "ftp://x/y", "localhost:9090/api/v1/write", ""] {
            assert!(
                err(&[("K6_PROMETHEUS_RW_SERVER_URL", url)])
                    .contains("invalid K6_PROMETHEUS_RW_SERVER_URL"),
                "{url}"
            );
        }
        for d in ["0s", "soon", "-1s", ""] {
            assert!(err(&[("K6_PROMETHEUS_RW_PUSH_INTERVAL", d)]).contains("PUSH_INTERVAL"));
        }
        assert!(err(&[("K6_PROMETHEUS_RW_STALE_MARKERS", "yes")]).contains("true or false"));
        assert!(
            err(&[("K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", "on")]).contains("true or false")
        );
        assert!(err(&[("K6_PROMETHEUS_RW_SIGV4_REGION", "eu-west-1")])
            .contains("K6_PROMETHEUS_RW_SIGV4_REGION is not supported"));
        assert!(err(&[("K6_PROMETHEUS_RW_HTTP_HEADERS", "novalue")]).contains("name:value"));
        // k6 v2.3.0 release notes, #6071.
        assert_eq!(
            err(&[("K6_PROMETHEUS_RW_LABELS", "env=ci,a")]),
            "the provided label (a) does not respect the expected format <label key>=<value>"
        );
    }
}
