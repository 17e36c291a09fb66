//! Settings of the `experimental-opentelemetry` output, read from the `K6_OTEL_*`
//! variables with k6 1.1's defaults and its accept/reject decisions: an empty variable
//! counts as unset, booleans are exactly `true` or `false`, durations are k6 durations
//! (a bare number is milliseconds). A value k6 cannot parse ends the run with 255, a
//! value k6 parses but refuses in its validation with 104 ([`OutputError::InvalidConfig`]).

use std::time::Duration;

use percent_encoding::percent_decode_str;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

use crate::outputs::OutputError;

/// The export interval when `K6_OTEL_EXPORT_INTERVAL` is unset (or not positive, as the
/// OpenTelemetry SDK k6 uses falls back to its default then).
const DEFAULT_EXPORT_INTERVAL: Duration = Duration::from_secs(10);

/// The OTLP transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exporter {
    /// OTLP/gRPC (`K6_OTEL_EXPORTER_TYPE=grpc`, the default).
    Grpc {
        /// `host:port`.
        endpoint: String,
        /// Plain-text HTTP/2 instead of TLS.
        insecure: bool,
    },
    /// OTLP/HTTP with protobuf bodies (`K6_OTEL_EXPORTER_TYPE=http`).
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
    /// `K6_OTEL_HEADERS`, sorted by name, a repeated name keeping its last value.
    pub headers: Vec<(String, String)>,
    /// The `K6_OTEL_TLS_*` settings.
    pub tls: TlsSettings,
    /// Extra resource attributes from `OTEL_RESOURCE_ATTRIBUTES` (`service.*` set above win).
    pub resource_attributes: Vec<(String, String)>,
}

impl OtelConfig {
    /// Reads the settings through `env`.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<OtelConfig, OutputError> {
        // envconfig, which k6 reads these with, treats an empty variable as unset.
        let var = |k: &str| env(k).filter(|v| !v.is_empty());
        let failure = |m: String| {
            OutputError::InvalidArgument(format!(
                "could not create the 'experimental-opentelemetry' output: {m}"
            ))
        };
        let invalid = |m: &str| {
            OutputError::InvalidConfig(format!(
                "could not create the 'experimental-opentelemetry' output: error validating OpenTelemetry output config: {m}"
            ))
        };
        let bool_var = |key: &str| -> Result<bool, OutputError> {
            match var(key).as_deref() {
                None | Some("false") => Ok(false),
                Some("true") => Ok(true),
                Some(v) => Err(failure(format!("invalid {key} \"{v}\": use true or false"))),
            }
        };
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
        let exporter = match var("K6_OTEL_EXPORTER_TYPE").as_deref() {
            None | Some("grpc") => {
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
            Some("http") => {
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
            Some(other) => {
                return Err(invalid(&format!(
                    "unsupported exporter type \"{other}\", currently only \"grpc\" and \"http\" are supported"
                )))
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
        let headers = match var("K6_OTEL_HEADERS") {
            None => Vec::new(),
            Some(raw) => parse_headers(&raw).map_err(|e| {
                OutputError::InvalidArgument(format!(
                    "failed to create OpenTelemetry exporter: failed to parse headers: {e}"
                ))
            })?,
        };
        let exporter_failure = |e: String| {
            OutputError::InvalidArgument(format!("failed to create OpenTelemetry exporter: {e}"))
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
            },
            resource_attributes: var("OTEL_RESOURCE_ATTRIBUTES")
                .map(|raw| resource_attributes(&raw))
                .unwrap_or_default(),
        })
    }

    /// What the banner shows after `opentelemetry`, in k6's words: `grpc (insecure),
    /// localhost:4317` or `http, https://localhost:4318/v1/metrics`.
    pub fn describe(&self) -> String {
        match &self.exporter {
            Exporter::Grpc { endpoint, insecure } => {
                let mode = if *insecure { " (insecure)" } else { "" };
                format!("grpc{mode}, {endpoint}")
            }
            Exporter::Http { .. } => format!("http, {}", self.exporter.url()),
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

    fn from(pairs: &[(&str, &str)]) -> Result<OtelConfig, OutputError> {
        let lookup = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        };
        OtelConfig::from_env(&lookup)
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
}
