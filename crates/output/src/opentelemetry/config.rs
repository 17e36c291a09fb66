//! Settings of the `opentelemetry` output (`experimental-opentelemetry` before k6 1.4),
//! read from the `K6_OTEL_*` variables with k6's defaults and its accept/reject decisions:
//! an empty variable counts as unset, booleans are exactly `true` or `false`, durations
//! are k6 durations (a bare number is milliseconds). A value k6 cannot parse ends the run
//! with 255, a value k6 parses but refuses in its validation with 104
//! ([`OutputError::InvalidConfig`]).
//!
//! rk6 reads what k6 1.1 and k6 2.x read: `K6_OTEL_EXPORTER_PROTOCOL` (k6 1.4) before the
//! 1.x `K6_OTEL_EXPORTER_TYPE`, the basic-auth pair (k6 2.1), and
//! `K6_OTEL_SINGLE_COUNTER_FOR_RATE` (k6 1.4 to 1.7). The name the output was asked for
//! picks the defaults where k6 releases differ ([`OtelName`]).

use std::time::Duration;

use base64::Engine;
use percent_encoding::percent_decode_str;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

use super::streams::RateEncoding;
use crate::outputs::OutputError;
use crate::transport::TlsMinimum;

/// The name the output was asked for by. k6 1.4 graduated the output as `opentelemetry`
/// and kept `experimental-opentelemetry` with a warning; rk6 lets the name choose the k6
/// release whose behaviour the output follows where releases differ: the stable name
/// behaves as k6 2.x, the experimental one as k6 1.1 (which `tests/parity` compares with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtelName {
    /// `opentelemetry`: a Rate as one counter, TLS 1.3 once TLS is configured.
    Stable,
    /// `experimental-opentelemetry`: a Rate as two counters, TLS 1.2 allowed.
    Experimental,
}

impl OtelName {
    /// The name as given to `-o`.
    pub fn as_str(self) -> &'static str {
        match self {
            OtelName::Stable => "opentelemetry",
            OtelName::Experimental => "experimental-opentelemetry",
        }
    }
}

/// The export interval when `K6_OTEL_EXPORT_INTERVAL` is unset (or not positive, as the
/// OpenTelemetry SDK k6 uses falls back to its default then).
const DEFAULT_EXPORT_INTERVAL: Duration = Duration::from_secs(10);

/// The OTLP transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exporter {
    /// OTLP/gRPC (`K6_OTEL_EXPORTER_PROTOCOL=grpc`, the default).
    Grpc {
        /// `host:port`.
        endpoint: String,
        /// Plain-text HTTP/2 instead of TLS.
        insecure: bool,
    },
    /// OTLP/HTTP with protobuf bodies (`K6_OTEL_EXPORTER_PROTOCOL=http/protobuf`).
    Http {
        /// `host:port`.
        endpoint: String,
        /// `http://` instead of `https://`.
        insecure: bool,
        /// The request path, `/v1/metrics` by default.
        url_path: String,
    },
}

/// The gRPC method of the OTLP metrics service.
pub const GRPC_PATH: &str = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";

impl Exporter {
    /// The URL requests go to.
    pub fn url(&self) -> String {
        match self {
            Exporter::Grpc { endpoint, insecure } => {
                format!("{}://{endpoint}{}", scheme(*insecure), GRPC_PATH)
            }
            Exporter::Http {
                endpoint,
                insecure,
                url_path,
            } => format!("{}://{endpoint}{url_path}", scheme(*insecure)),
        }
    }
}

fn scheme(insecure: bool) -> &'static str {
    if insecure {
        "http"
    } else {
        "https"
    }
}

/// How TLS connections are checked and which certificate the client presents.
#[derive(Debug, Clone, Default)]
pub struct TlsSettings {
    /// `K6_OTEL_TLS_INSECURE_SKIP_VERIFY`.
    pub insecure_skip_verify: bool,
    /// The certificates of `K6_OTEL_TLS_CERTIFICATE` (a PEM file): the only roots trusted.
    pub roots: Option<Vec<CertificateDer<'static>>>,
    /// `K6_OTEL_TLS_CLIENT_CERTIFICATE` and `K6_OTEL_TLS_CLIENT_KEY`, as read.
    pub client: Option<ClientCert>,
    /// The oldest TLS version accepted.
    pub(crate) minimum: TlsMinimum,
}

/// A client certificate chain and its key, both PEM.
#[derive(Debug, Clone)]
pub struct ClientCert {
    /// The certificate chain.
    pub cert_pem: Vec<u8>,
    /// The private key.
    pub key_pem: Vec<u8>,
}

/// Everything the output needs to know before the test starts.
#[derive(Debug, Clone)]
pub struct OtelConfig {
    /// The name the output was asked for by.
    pub name: OtelName,
    /// How the protocol was named (`grpc`, `http/protobuf`, or the 1.x `http`), for the
    /// banner.
    pub protocol: String,
    /// The resource's `service.name` (`K6_OTEL_SERVICE_NAME`, else `OTEL_SERVICE_NAME`).
    pub service_name: String,
    /// The resource's `service.version`.
    pub service_version: String,
    /// Put before every metric name.
    pub metric_prefix: String,
    /// `K6_OTEL_FLUSH_INTERVAL`: validated as k6 does; rk6 folds samples in as they come.
    pub flush_interval: Duration,
    /// Time between exports.
    pub export_interval: Duration,
    /// Where and how to send.
    pub exporter: Exporter,
    /// `K6_OTEL_HEADERS`, sorted by name, a repeated name keeping its last value, with
    /// `Authorization` from the basic-auth pair in place of any given there.
    pub headers: Vec<(String, String)>,
    /// The `K6_OTEL_TLS_*` settings.
    pub tls: TlsSettings,
    /// Extra resource attributes from `OTEL_RESOURCE_ATTRIBUTES` (`service.*` set above win).
    pub resource_attributes: Vec<(String, String)>,
    /// How a Rate is exported.
    pub rates: RateEncoding,
    /// Lines to log: settings k6 2.0 removed that rk6 still reads.
    pub deprecations: Vec<String>,
}

impl OtelConfig {
    /// Reads the settings of the output asked for as `name` through `env`.
    pub fn from_env(
        env: &dyn Fn(&str) -> Option<String>,
        name: OtelName,
    ) -> Result<OtelConfig, OutputError> {
        // envconfig, which k6 reads these with, treats an empty variable as unset.
        let var = |k: &str| env(k).filter(|v| !v.is_empty());
        // k6 names the output as the user did.
        let output = name.as_str();
        let failure = |m: String| {
            OutputError::InvalidArgument(format!("could not create the '{output}' output: {m}"))
        };
        let invalid = |m: &str| {
            OutputError::InvalidConfig(format!(
                "could not create the '{output}' output: error validating OpenTelemetry output config: {m}"
            ))
        };
        let opt_bool_var = |key: &str| -> Result<Option<bool>, OutputError> {
            match var(key).as_deref() {
                None => Ok(None),
                Some("false") => Ok(Some(false)),
                Some("true") => Ok(Some(true)),
                Some(v) => Err(failure(format!("invalid {key} \"{v}\": use true or false"))),
            }
        };
        let bool_var = |key: &str| opt_bool_var(key).map(|b| b.unwrap_or(false));
        let duration_var = |key: &str, default: Duration| -> Result<Duration, OutputError> {
            let Some(v) = var(key) else {
                return Ok(default);
            };
            let d = rk6_options::parse_go_duration(&v)
                .map_err(|_| failure(format!("invalid {key} \"{v}\": not a duration")))?;
            // Not positive: `None` here, each caller decides what that means.
            Ok(d.to_std()
                .filter(|d| !d.is_zero())
                .unwrap_or(Duration::ZERO))
        };

        let service_name = var("K6_OTEL_SERVICE_NAME")
            .or_else(|| var("OTEL_SERVICE_NAME"))
            .unwrap_or_else(|| "k6".into());
        let service_version =
            var("K6_OTEL_SERVICE_VERSION").unwrap_or_else(|| env!("CARGO_PKG_VERSION").into());
        let flush_interval = duration_var("K6_OTEL_FLUSH_INTERVAL", Duration::from_secs(1))?;
        if flush_interval.is_zero() {
            let v = var("K6_OTEL_FLUSH_INTERVAL").unwrap_or_default();
            return Err(OutputError::InvalidArgument(format!(
                "metric flush period should be positive but was {v}"
            )));
        }
        let export_interval =
            match duration_var("K6_OTEL_EXPORT_INTERVAL", DEFAULT_EXPORT_INTERVAL)? {
                d if d.is_zero() => DEFAULT_EXPORT_INTERVAL,
                d => d,
            };
        let grpc_insecure = bool_var("K6_OTEL_GRPC_EXPORTER_INSECURE")?;
        let http_insecure = bool_var("K6_OTEL_HTTP_EXPORTER_INSECURE")?;
        let tls_insecure_skip_verify = bool_var("K6_OTEL_TLS_INSECURE_SKIP_VERIFY")?;
        let mut deprecations = Vec::new();
        // k6 1.4 (#5164): `K6_OTEL_EXPORTER_PROTOCOL` is `grpc` or `http/protobuf` and wins
        // over the 1.x `K6_OTEL_EXPORTER_TYPE` (`grpc` or `http`), which k6 2.0 dropped and
        // rk6 still reads when no protocol is given.
        let protocol = match (var("K6_OTEL_EXPORTER_PROTOCOL"), var("K6_OTEL_EXPORTER_TYPE")) {
            (Some(p), _) => match p.as_str() {
                "grpc" | "http/protobuf" => p,
                other => {
                    return Err(invalid(&format!(
                        "unsupported exporter protocol \"{other}\", only \"grpc\" and \"http/protobuf\" are supported"
                    )))
                }
            },
            (None, Some(t)) => match t.as_str() {
                "grpc" | "http" => {
                    deprecations.push(
                        "K6_OTEL_EXPORTER_TYPE is deprecated and k6 2.0 removed it: use K6_OTEL_EXPORTER_PROTOCOL (grpc or http/protobuf)".to_string(),
                    );
                    t
                }
                other => {
                    return Err(invalid(&format!(
                        "unsupported exporter type \"{other}\", currently only \"grpc\" and \"http\" are supported"
                    )))
                }
            },
            (None, None) => "grpc".to_string(),
        };
        let exporter = match protocol.as_str() {
            "grpc" => {
                let mut endpoint = var("K6_OTEL_GRPC_EXPORTER_ENDPOINT")
                    .unwrap_or_else(|| "localhost:4317".into());
                // gRPC's default port, whether or not TLS is used.
                if endpoint
                    .parse::<http::uri::Authority>()
                    .is_ok_and(|a| a.port().is_none())
                {
                    endpoint.push_str(":443");
                }
                Exporter::Grpc {
                    endpoint,
                    insecure: grpc_insecure,
                }
            }
            // `http/protobuf`, or the 1.x `http`.
            _ => {
                let endpoint = var("K6_OTEL_HTTP_EXPORTER_ENDPOINT")
                    .unwrap_or_else(|| "localhost:4318".into());
                if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
                    return Err(invalid(
                        "HTTP exporter endpoint must only be host and port, no scheme",
                    ));
                }
                let mut url_path =
                    var("K6_OTEL_HTTP_EXPORTER_URL_PATH").unwrap_or_else(|| "/v1/metrics".into());
                if !url_path.starts_with('/') {
                    url_path.insert(0, '/');
                }
                Exporter::Http {
                    endpoint,
                    insecure: http_insecure,
                    url_path,
                }
            }
        };
        let endpoint = match &exporter {
            Exporter::Grpc { endpoint, .. } | Exporter::Http { endpoint, .. } => endpoint,
        };
        if endpoint.parse::<http::uri::Authority>().is_err()
            || exporter.url().parse::<http::Uri>().is_err()
        {
            return Err(failure(format!(
                "invalid OpenTelemetry exporter endpoint \"{endpoint}\": use host:port"
            )));
        }
        let mut headers = match var("K6_OTEL_HEADERS") {
            None => Vec::new(),
            Some(raw) => parse_headers(&raw).map_err(|e| {
                OutputError::InvalidArgument(format!(
                    "failed to create OpenTelemetry exporter: failed to parse headers: {e}"
                ))
            })?,
        };
        // k6 2.1 (#5997): a username turns on basic auth, on either exporter (gRPC
        // metadata too, as k6 does), over an `Authorization` from K6_OTEL_HEADERS.
        if let Some(user) = var("K6_OTEL_HTTP_EXPORTER_USERNAME") {
            let pass = var("K6_OTEL_HTTP_EXPORTER_PASSWORD").unwrap_or_default();
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
            headers.push(("Authorization".into(), format!("Basic {token}")));
            headers.sort();
        }
        let exporter_failure = |e: String| {
            OutputError::InvalidArgument(format!("failed to create OpenTelemetry exporter: {e}"))
        };
        // k6 1.2 asks for TLS 1.3 in the TLS settings it builds, which it builds only when
        // one of these is set (a client key alone is not; without them the exporter's own
        // default allows TLS 1.2). rk6 does so for the stable name; the experimental one
        // keeps k6 1.1's TLS 1.2.
        let tls_configured = [
            "K6_OTEL_TLS_INSECURE_SKIP_VERIFY",
            "K6_OTEL_TLS_CERTIFICATE",
            "K6_OTEL_TLS_CLIENT_CERTIFICATE",
        ]
        .iter()
        .any(|k| var(k).is_some());
        let minimum = if tls_configured && name == OtelName::Stable {
            TlsMinimum::Tls13
        } else {
            TlsMinimum::Tls12
        };
        // k6 1.4 to 1.7 (#5333): `false` brings back the pair of counters (default true);
        // k6 2.0 removed the switch. rk6's default follows the name (see `OtelName`).
        let single = opt_bool_var("K6_OTEL_SINGLE_COUNTER_FOR_RATE")?;
        if single.is_some() {
            deprecations.push(
                "K6_OTEL_SINGLE_COUNTER_FOR_RATE is deprecated and k6 2.0 removed it: k6 2.x exports a Rate as one counter, as -o opentelemetry does".to_string(),
            );
        }
        let rates = if single.unwrap_or(name == OtelName::Stable) {
            RateEncoding::SingleCounter
        } else {
            RateEncoding::CounterPair
        };
        let roots = match var("K6_OTEL_TLS_CERTIFICATE") {
            None => None,
            Some(path) => Some(read_roots(&path).map_err(exporter_failure)?),
        };
        // As Go's `tls.LoadX509KeyPair`: a key without a certificate is ignored.
        let client = match var("K6_OTEL_TLS_CLIENT_CERTIFICATE") {
            None => None,
            Some(cert) => {
                let key = var("K6_OTEL_TLS_CLIENT_KEY").unwrap_or_default();
                let read = |path: &str| {
                    std::fs::read(path).map_err(|e| {
                        exporter_failure(format!(
                            "failed to load client certificate: open {path}: {e}"
                        ))
                    })
                };
                Some(ClientCert {
                    cert_pem: read(&cert)?,
                    key_pem: read(&key)?,
                })
            }
        };
        Ok(OtelConfig {
            name,
            protocol,
            service_name,
            service_version,
            metric_prefix: var("K6_OTEL_METRIC_PREFIX").unwrap_or_default(),
            flush_interval,
            export_interval,
            exporter,
            headers,
            tls: TlsSettings {
                insecure_skip_verify: tls_insecure_skip_verify,
                roots,
                client,
                minimum,
            },
            resource_attributes: var("OTEL_RESOURCE_ATTRIBUTES")
                .map(|raw| resource_attributes(&raw))
                .unwrap_or_default(),
            rates,
            deprecations,
        })
    }

    /// What the banner shows after `opentelemetry`, in k6's words: `grpc (insecure),
    /// localhost:4317` or `http/protobuf, https://localhost:4318/v1/metrics` (`http, …`
    /// when chosen with the 1.x `K6_OTEL_EXPORTER_TYPE=http`).
    pub fn describe(&self) -> String {
        match &self.exporter {
            Exporter::Grpc { endpoint, insecure } => {
                let mode = if *insecure { " (insecure)" } else { "" };
                format!("grpc{mode}, {endpoint}")
            }
            Exporter::Http { .. } => format!("{}, {}", self.protocol, self.exporter.url()),
        }
    }
}

/// `name=value,name=value`, each side percent-decoded; a later repeat of a name wins.
fn parse_headers(raw: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for entry in raw.split(',') {
        let (k, v) = entry
            .split_once('=')
            .ok_or_else(|| format!("invalid header \"{entry}\", expected format key=value"))?;
        let k = unescape(k).map_err(|e| format!("failed to unescape header key \"{k}\": {e}"))?;
        let v = unescape(v).map_err(|e| format!("failed to unescape header value \"{v}\": {e}"))?;
        out.retain(|(n, _)| *n != k);
        out.push((k, v));
    }
    out.sort();
    Ok(out)
}

/// The certificates of a PEM file, in k6's words when there are none.
fn read_roots(path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = std::fs::read(path)
        .map_err(|e| format!("failed to read root certificate from \"{path}\": {e}"))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .filter_map(Result::ok)
        .collect();
    if certs.is_empty() {
        return Err("failed to append root certificate to the pool".into());
    }
    Ok(certs)
}

/// `OTEL_RESOURCE_ATTRIBUTES`, as the OpenTelemetry SDKs read it: `key=value` pairs
/// separated by commas, both sides trimmed, values percent-decoded; an entry without `=`
/// or with an empty key is skipped, a later repeat of a key wins.
fn resource_attributes(raw: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for entry in raw.split(',') {
        let Some((k, v)) = entry.split_once('=') else {
            continue;
        };
        let k = k.trim();
        if k.is_empty() {
            continue;
        }
        let v = percent_decode_str(v.trim())
            .decode_utf8_lossy()
            .into_owned();
        out.retain(|(n, _)| n != k);
        out.push((k.to_string(), v));
    }
    out
}

/// Go's `url.PathUnescape`: `%XX` escapes only, and every `%` must start one.
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    for (i, _) in s.match_indices('%') {
        let ok = b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
        if !ok {
            let end = (i + 3).min(s.len());
            return Err(format!(
                "invalid URL escape \"{}\"",
                s.get(i..end).unwrap_or(&s[i..])
            ));
        }
    }
    Ok(percent_decode_str(s).decode_utf8_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of `-o experimental-opentelemetry` (k6 1.1's name) from `pairs`.
    fn from(pairs: &[(&str, &str)]) -> Result<OtelConfig, OutputError> {
        from_as(OtelName::Experimental, pairs)
    }

    fn from_as(name: OtelName, pairs: &[(&str, &str)]) -> Result<OtelConfig, OutputError> {
        let lookup = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        };
        OtelConfig::from_env(&lookup, name)
    }

    #[test]
    fn defaults_match_k6() {
        let c = from(&[]).unwrap();
        assert_eq!(c.service_name, "k6");
        assert_eq!(c.service_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(c.metric_prefix, "");
        assert_eq!(c.export_interval, Duration::from_secs(10));
        assert_eq!(c.flush_interval, Duration::from_secs(1));
        assert_eq!(
            c.exporter,
            Exporter::Grpc {
                endpoint: "localhost:4317".into(),
                insecure: false
            }
        );
        assert_eq!(c.describe(), "grpc, localhost:4317");
        assert!(c.headers.is_empty() && !c.tls.insecure_skip_verify);
        assert!(c.tls.roots.is_none() && c.tls.client.is_none());
        assert!(c.resource_attributes.is_empty());
        // Empty variables are unset, as envconfig reads them.
        let c = from(&[
            ("K6_OTEL_EXPORTER_TYPE", ""),
            ("K6_OTEL_SERVICE_NAME", ""),
            ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", ""),
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", ""),
            ("K6_OTEL_HEADERS", ""),
        ])
        .unwrap();
        assert_eq!(c.describe(), "grpc, localhost:4317");
        assert_eq!(c.service_name, "k6");
    }

    #[test]
    fn reads_every_supported_variable() {
        let c = from(&[
            ("K6_OTEL_EXPORTER_TYPE", "http"),
            ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", "127.0.0.1:4318"),
            ("K6_OTEL_HTTP_EXPORTER_INSECURE", "true"),
            ("K6_OTEL_HTTP_EXPORTER_URL_PATH", "otlp/metrics"),
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", "false"),
            ("K6_OTEL_METRIC_PREFIX", "k6_"),
            ("K6_OTEL_EXPORT_INTERVAL", "1500"),
            ("K6_OTEL_FLUSH_INTERVAL", "2s"),
            ("OTEL_SERVICE_NAME", "shop"),
            ("K6_OTEL_SERVICE_VERSION", "2.0"),
            (
                "K6_OTEL_HEADERS",
                "X-B=2,Authorization=Bearer%20t%2Cx,X-B=3",
            ),
            ("K6_OTEL_TLS_INSECURE_SKIP_VERIFY", "true"),
        ])
        .unwrap();
        assert_eq!(c.describe(), "http, http://127.0.0.1:4318/otlp/metrics");
        assert_eq!(c.metric_prefix, "k6_");
        assert_eq!(c.export_interval, Duration::from_millis(1500));
        assert_eq!(c.flush_interval, Duration::from_secs(2));
        assert_eq!(
            (c.service_name.as_str(), c.service_version.as_str()),
            ("shop", "2.0")
        );
        assert_eq!(
            c.headers,
            [
                ("Authorization".to_string(), "Bearer t,x".to_string()),
                ("X-B".into(), "3".into())
            ]
        );
        assert!(c.tls.insecure_skip_verify);
        let c = from(&[(
            "OTEL_RESOURCE_ATTRIBUTES",
            " env = ci ,team=a%20b,novalue,=x,env=prod",
        )])
        .unwrap();
        assert_eq!(
            c.resource_attributes,
            [
                ("team".to_string(), "a b".to_string()),
                ("env".into(), "prod".into())
            ]
        );
        let c = from(&[
            ("K6_OTEL_SERVICE_NAME", "a"),
            ("OTEL_SERVICE_NAME", "b"),
            ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", "127.0.0.1:9"),
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", "true"),
            // Not positive: the SDK's default.
            ("K6_OTEL_EXPORT_INTERVAL", "-1s"),
        ])
        .unwrap();
        assert_eq!(c.service_name, "a");
        assert_eq!(c.describe(), "grpc (insecure), 127.0.0.1:9");
        assert_eq!(
            c.exporter.url(),
            "http://127.0.0.1:9/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
        );
        assert_eq!(c.export_interval, Duration::from_secs(10));
        let c = from(&[("K6_OTEL_GRPC_EXPORTER_ENDPOINT", "collector")]).unwrap();
        assert_eq!(c.describe(), "grpc, collector:443");
    }

    #[test]
    fn refuses_what_k6_refuses() {
        // k6's validation: exit 104.
        for (pairs, text) in [
            (
                &[("K6_OTEL_EXPORTER_TYPE", "HTTP")][..],
                "unsupported exporter type \"HTTP\", currently only \"grpc\" and \"http\" are supported",
            ),
            (
                &[
                    ("K6_OTEL_EXPORTER_TYPE", "http"),
                    ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", "http://127.0.0.1:1"),
                ][..],
                "HTTP exporter endpoint must only be host and port, no scheme",
            ),
        ] {
            match from(pairs) {
                Err(OutputError::InvalidConfig(m)) => assert!(
                    m == format!("could not create the 'experimental-opentelemetry' output: error validating OpenTelemetry output config: {text}"),
                    "{m}"
                ),
                other => panic!("{pairs:?}: {other:?}"),
            }
        }
        // Values k6 cannot parse: its generic failure (255).
        for (pairs, text) in [
            (
                &[("K6_OTEL_GRPC_EXPORTER_INSECURE", "1")][..],
                "use true or false",
            ),
            (
                &[("K6_OTEL_HTTP_EXPORTER_INSECURE", "True")][..],
                "use true or false",
            ),
            (&[("K6_OTEL_EXPORT_INTERVAL", "abc")][..], "not a duration"),
            (
                &[("K6_OTEL_FLUSH_INTERVAL", "0s")][..],
                "metric flush period should be positive but was 0s",
            ),
            (
                &[("K6_OTEL_HEADERS", "novalue")][..],
                "invalid header \"novalue\", expected format key=value",
            ),
            (
                &[("K6_OTEL_HEADERS", "a=%zz")][..],
                "failed to unescape header value \"%zz\": invalid URL escape \"%zz\"",
            ),
            (
                &[
                    ("K6_OTEL_EXPORTER_TYPE", "http"),
                    ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", "127.0.0.1:1/x"),
                ][..],
                "use host:port",
            ),
            (
                &[("K6_OTEL_TLS_CERTIFICATE", "/nonexistent/ca.pem")][..],
                "failed to create OpenTelemetry exporter: failed to read root certificate from \"/nonexistent/ca.pem\"",
            ),
            (
                &[("K6_OTEL_TLS_CERTIFICATE", "Cargo.toml")][..],
                "failed to create OpenTelemetry exporter: failed to append root certificate to the pool",
            ),
            (
                &[("K6_OTEL_TLS_CLIENT_CERTIFICATE", "Cargo.toml")][..],
                "failed to create OpenTelemetry exporter: failed to load client certificate: open : ",
            ),
        ] {
            match from(pairs) {
                Err(OutputError::InvalidArgument(m)) => assert!(m.contains(text), "{m}"),
                other => panic!("{pairs:?}: {other:?}"),
            }
        }
    }

    /// k6 v1.4.0 release notes, #5164: `K6_OTEL_EXPORTER_PROTOCOL` is `grpc` or
    /// `http/protobuf`, anything else fails k6's validation (104); it wins over the 1.x
    /// `K6_OTEL_EXPORTER_TYPE`, which k6 v2.0.0 (#5754) removed and rk6 still reads.
    #[test]
    fn exporter_protocol_wins_over_the_exporter_type() {
        for name in [OtelName::Stable, OtelName::Experimental] {
            let c = from_as(name, &[]).unwrap();
            assert_eq!(
                (c.protocol.as_str(), c.describe().as_str()),
                ("grpc", "grpc, localhost:4317")
            );
            assert!(c.deprecations.is_empty());
            let c = from_as(
                name,
                &[
                    ("K6_OTEL_EXPORTER_PROTOCOL", "http/protobuf"),
                    ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", "127.0.0.1:4318"),
                    // Ignored beside a protocol, even a value k6 1.x refused.
                    ("K6_OTEL_EXPORTER_TYPE", "bogus"),
                ],
            )
            .unwrap();
            assert!(matches!(c.exporter, Exporter::Http { .. }));
            assert_eq!(
                c.describe(),
                "http/protobuf, https://127.0.0.1:4318/v1/metrics"
            );
            assert!(c.deprecations.is_empty());
            let c = from_as(
                name,
                &[
                    ("K6_OTEL_EXPORTER_PROTOCOL", "grpc"),
                    ("K6_OTEL_EXPORTER_TYPE", "http"),
                ],
            )
            .unwrap();
            assert!(matches!(c.exporter, Exporter::Grpc { .. }));
            // Empty counts as unset: the type decides, with a deprecation line.
            let c = from_as(
                name,
                &[
                    ("K6_OTEL_EXPORTER_PROTOCOL", ""),
                    ("K6_OTEL_EXPORTER_TYPE", "http"),
                ],
            )
            .unwrap();
            assert_eq!(c.describe(), "http, https://localhost:4318/v1/metrics");
            assert_eq!(
                c.deprecations,
                ["K6_OTEL_EXPORTER_TYPE is deprecated and k6 2.0 removed it: use K6_OTEL_EXPORTER_PROTOCOL (grpc or http/protobuf)"]
            );
        }
        for (pairs, text) in [
            (
                &[("K6_OTEL_EXPORTER_PROTOCOL", "http")][..],
                "unsupported exporter protocol \"http\", only \"grpc\" and \"http/protobuf\" are supported",
            ),
            (
                &[
                    ("K6_OTEL_EXPORTER_PROTOCOL", "HTTP/protobuf"),
                    ("K6_OTEL_EXPORTER_TYPE", "http"),
                ][..],
                "unsupported exporter protocol \"HTTP/protobuf\", only \"grpc\" and \"http/protobuf\" are supported",
            ),
            (
                &[
                    ("K6_OTEL_EXPORTER_PROTOCOL", "http/protobuf"),
                    ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", "https://collector:4318"),
                ][..],
                "HTTP exporter endpoint must only be host and port, no scheme",
            ),
        ] {
            match from_as(OtelName::Stable, pairs) {
                Err(OutputError::InvalidConfig(m)) => assert_eq!(
                    m,
                    format!("could not create the 'opentelemetry' output: error validating OpenTelemetry output config: {text}")
                ),
                other => panic!("{pairs:?}: {other:?}"),
            }
        }
    }

    /// Messages name the output as the user did (k6 v1.4.0 release notes, #5334: both
    /// names work).
    #[test]
    fn messages_name_the_output_given() {
        for name in [OtelName::Stable, OtelName::Experimental] {
            let e = from_as(name, &[("K6_OTEL_GRPC_EXPORTER_INSECURE", "yes")]).unwrap_err();
            assert!(
                e.to_string().starts_with(&format!(
                    "could not create the '{}' output: invalid K6_OTEL_GRPC_EXPORTER_INSECURE",
                    name.as_str()
                )),
                "{e}"
            );
        }
        assert_eq!(OtelName::Stable.as_str(), "opentelemetry");
        assert_eq!(
            OtelName::Experimental.as_str(),
            "experimental-opentelemetry"
        );
    }

    /// k6 v2.1.0 release notes, #5997 (and v2.2.0, #6145: also without K6_OTEL_HEADERS):
    /// a username gives `Authorization: Basic base64(user:pass)`, for gRPC too.
    #[test]
    fn basic_auth_from_username_and_password() {
        for protocol in ["grpc", "http/protobuf"] {
            let c = from_as(
                OtelName::Stable,
                &[
                    ("K6_OTEL_EXPORTER_PROTOCOL", protocol),
                    ("K6_OTEL_HTTP_EXPORTER_USERNAME", "alice"),
                    ("K6_OTEL_HTTP_EXPORTER_PASSWORD", "s3cret"),
                ],
            )
            .unwrap();
            // base64("alice:s3cret")
            assert_eq!(
                c.headers,
                [(
                    "Authorization".to_string(),
                    "Basic YWxpY2U6czNjcmV0".to_string()
                )]
            );
        }
        // Over an Authorization of K6_OTEL_HEADERS, in any case; other headers stay.
        let c = from(&[
            ("K6_OTEL_HEADERS", "authorization=Bearer%20x,X-Tenant=t"),
            ("K6_OTEL_HTTP_EXPORTER_USERNAME", "bob"),
        ])
        .unwrap();
        // base64("bob:")
        assert_eq!(
            c.headers,
            [
                ("Authorization".to_string(), "Basic Ym9iOg==".to_string()),
                ("X-Tenant".into(), "t".into())
            ]
        );
        // A password alone, or an empty username, turns nothing on.
        for pairs in [
            &[("K6_OTEL_HTTP_EXPORTER_PASSWORD", "pw")][..],
            &[
                ("K6_OTEL_HTTP_EXPORTER_USERNAME", ""),
                ("K6_OTEL_HTTP_EXPORTER_PASSWORD", "pw"),
            ][..],
        ] {
            assert!(from(pairs).unwrap().headers.is_empty(), "{pairs:?}");
        }
    }

    /// k6 v1.4.0 release notes, #5333: a Rate is one counter with a `condition` attribute,
    /// `K6_OTEL_SINGLE_COUNTER_FOR_RATE=false` brings back the pair (removed in v2.0.0,
    /// #5830). rk6: the stable name counts once, the experimental one keeps k6 1.1's pair.
    #[test]
    fn rate_encoding_follows_the_name_and_the_switch() {
        use RateEncoding::{CounterPair, SingleCounter};
        for (name, value, want) in [
            (OtelName::Stable, None, SingleCounter),
            (OtelName::Stable, Some("true"), SingleCounter),
            (OtelName::Stable, Some("false"), CounterPair),
            (OtelName::Experimental, None, CounterPair),
            (OtelName::Experimental, Some("false"), CounterPair),
            (OtelName::Experimental, Some("true"), SingleCounter),
            (OtelName::Experimental, Some(""), CounterPair),
        ] {
            let pairs: Vec<(&str, &str)> = value
                .map(|v| ("K6_OTEL_SINGLE_COUNTER_FOR_RATE", v))
                .into_iter()
                .collect();
            let c = from_as(name, &pairs).unwrap();
            assert_eq!(c.rates, want, "{name:?} {value:?}");
            let deprecated = value.is_some_and(|v| !v.is_empty());
            assert_eq!(!c.deprecations.is_empty(), deprecated, "{name:?} {value:?}");
        }
        match from_as(
            OtelName::Stable,
            &[("K6_OTEL_SINGLE_COUNTER_FOR_RATE", "1")],
        ) {
            Err(OutputError::InvalidArgument(m)) => {
                assert!(
                    m.contains("invalid K6_OTEL_SINGLE_COUNTER_FOR_RATE \"1\""),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// k6 v1.2.0 release notes: TLS 1.3 is the exporter's minimum; k6's code asks for it
    /// in the TLS settings it builds once a `K6_OTEL_TLS_*` variable is set. rk6 does so
    /// under the stable name and keeps k6 1.1's TLS 1.2 under the experimental one.
    #[test]
    fn tls_minimum_once_tls_is_configured_under_the_stable_name() {
        // A PEM block is all `K6_OTEL_TLS_CERTIFICATE` needs to be read.
        let ca = std::env::temp_dir().join(format!("rk6-otel-ca-{}.pem", std::process::id()));
        std::fs::write(
            &ca,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let ca = ca.to_str().unwrap();
        for (name, pairs, want) in [
            (OtelName::Stable, &[][..], TlsMinimum::Tls12),
            (
                OtelName::Stable,
                &[("K6_OTEL_TLS_INSECURE_SKIP_VERIFY", "false")][..],
                TlsMinimum::Tls13,
            ),
            (
                OtelName::Stable,
                &[("K6_OTEL_TLS_CERTIFICATE", ca)][..],
                TlsMinimum::Tls13,
            ),
            // A key without a certificate is ignored, by k6 too.
            (
                OtelName::Stable,
                &[("K6_OTEL_TLS_CLIENT_KEY", "unused.pem")][..],
                TlsMinimum::Tls12,
            ),
            (
                OtelName::Experimental,
                &[("K6_OTEL_TLS_INSECURE_SKIP_VERIFY", "true")][..],
                TlsMinimum::Tls12,
            ),
        ] {
            assert_eq!(
                from_as(name, pairs).unwrap().tls.minimum,
                want,
                "{name:?} {pairs:?}"
            );
        }
        let _ = std::fs::remove_file(ca);
    }
}
