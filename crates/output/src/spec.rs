//! `-o name[=arg]`: which output, and opening it.

use std::time::SystemTime;

use rk6_metrics::ThresholdSet;

use crate::aggregate::AggregateOutput;
use crate::csv::{CsvConfig, CsvFormat};
use crate::influxdb::config::InfluxConfig;
use crate::influxdb::InfluxDbOutput;
use crate::json_lines::JsonLines;
use crate::opentelemetry::config::OtelName;
use crate::opentelemetry::OtelOutput;
use crate::out_file::{OutFile, Target};
use crate::outputs::{Output, OutputError, RunInfo};
use crate::prometheus_rw::config::RwConfig;
use crate::prometheus_rw::PrometheusRwOutput;
use crate::report::{ReportConfig, ReportOutput};
use crate::sample_writer::SampleWriter;

/// Outputs k6 1.1 knows that rk6 does not have (built in, removed or via extensions).
const K6_ONLY: &[&str] = &["cloud", "statsd", "datadog", "kafka", "xk6-influxdb"];

/// One parsed `-o` value: `name` or `name=arg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    /// Which output.
    pub kind: OutputKind,
    /// Everything after the first `=` (may be empty).
    pub arg: String,
}

/// The outputs rk6 implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// One JSON object per line (k6's `json`).
    Json,
    /// k6's `csv`.
    Csv,
    /// k6's `web-dashboard`: the live page and the HTML report export.
    WebDashboard,
    /// k6's `experimental-prometheus-rw` (Prometheus remote write).
    PrometheusRw,
    /// k6's `opentelemetry` (OTLP metrics over gRPC or HTTP; the stable name since k6 1.4).
    OpenTelemetry,
    /// The same output by its pre-1.4 name, `experimental-opentelemetry`: k6's deprecation
    /// warning, and k6 1.1's Rate encoding by default.
    ExperimentalOpenTelemetry,
    /// k6's `influxdb` (InfluxDB v1 line protocol over HTTP).
    InfluxDb,
    /// rk6's `aggregate`: this runner's deltas pushed to `rk6 aggregate`.
    Aggregate,
}

impl OutputSpec {
    /// Parses `name[=arg]`; names rk6 does not implement are errors.
    pub fn parse(s: &str) -> Result<OutputSpec, OutputError> {
        let (name, arg) = s.split_once('=').unwrap_or((s, ""));
        let kind = match name {
            "json" => OutputKind::Json,
            "csv" => OutputKind::Csv,
            "web-dashboard" => OutputKind::WebDashboard,
            "experimental-prometheus-rw" => OutputKind::PrometheusRw,
            "opentelemetry" => OutputKind::OpenTelemetry,
            "experimental-opentelemetry" => OutputKind::ExperimentalOpenTelemetry,
            "influxdb" => OutputKind::InfluxDb,
            "aggregate" => OutputKind::Aggregate,
            n if K6_ONLY.contains(&n) => return Err(OutputError::Unsupported(n.to_string())),
            n => return Err(OutputError::Unknown(n.to_string())),
        };
        Ok(OutputSpec {
            kind,
            arg: arg.to_string(),
        })
    }

    /// The web-dashboard output the environment asks for (`K6_WEB_DASHBOARD=true` or
    /// `K6_WEB_DASHBOARD_EXPORT=FILE`), as if given with `-o web-dashboard`. An export file
    /// alone (an rk6 convenience: k6 needs `K6_WEB_DASHBOARD=true` too) asks for the file
    /// only, so the live server runs only when `K6_WEB_DASHBOARD_PORT` is set as well.
    pub fn from_env(
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<OutputSpec>, OutputError> {
        if !crate::report::enabled_by_env(env)? {
            return Ok(None);
        }
        let switched_on = env("K6_WEB_DASHBOARD").is_some_and(|v| !v.is_empty());
        let port_set = env("K6_WEB_DASHBOARD_PORT").is_some();
        let arg = if switched_on || port_set {
            String::new()
        } else {
            "port=-1".to_string()
        };
        Ok(Some(OutputSpec {
            kind: OutputKind::WebDashboard,
            arg,
        }))
    }

    /// Creates the output (its file, its pusher thread, or its server). `env` reads
    /// `K6_CSV_*`, `K6_WEB_DASHBOARD_*`, `K6_PROMETHEUS_RW_*`, `K6_OTEL_*` and
    /// `K6_INFLUXDB_*` variables.
    pub fn open(
        &self,
        thresholds: &ThresholdSet,
        env: &dyn Fn(&str) -> Option<String>,
        run: &RunInfo,
    ) -> Result<Box<dyn Output>, OutputError> {
        match self.kind {
            OutputKind::Json => {
                let target = Target::stdout_or_file(&self.arg);
                let w = OutFile::create(&target).map_err(|source| OutputError::Create {
                    kind: "json",
                    source,
                })?;
                Ok(Box::new(SampleWriter::new(
                    w,
                    target.name(),
                    JsonLines::new(thresholds),
                )))
            }
            OutputKind::Csv => {
                let cfg = CsvConfig::parse(&self.arg, env)?;
                let target = Target::File(cfg.file_name.clone());
                let w = OutFile::create(&target).map_err(|source| OutputError::Create {
                    kind: "csv",
                    source,
                })?;
                Ok(Box::new(SampleWriter::new(
                    w,
                    cfg.file_name,
                    CsvFormat::new(cfg.time_format),
                )))
            }
            OutputKind::WebDashboard => {
                let cfg = ReportConfig::parse(&self.arg, env)?;
                let mut out = ReportOutput::create(&cfg, SystemTime::now()).map_err(|source| {
                    OutputError::Create {
                        kind: "web-dashboard",
                        source,
                    }
                })?;
                if cfg.serves() {
                    out.serve(&cfg, thresholds, run)
                        .map_err(OutputError::Listen)?;
                }
                Ok(Box::new(out))
            }
            OutputKind::PrometheusRw => {
                // k6 ignores an argument here; refusing it beats a silently unused URL.
                if !self.arg.is_empty() {
                    return Err(OutputError::InvalidArgument(format!(
                        "the experimental-prometheus-rw output takes no argument (got \"{}\"); set K6_PROMETHEUS_RW_SERVER_URL and the other K6_PROMETHEUS_RW_* variables instead",
                        self.arg
                    )));
                }
                // The `_HEADERS_<name>` variables can only be found by listing them all.
                let vars: Vec<(String, String)> = std::env::vars()
                    .filter(|(k, _)| k.starts_with("K6_PROMETHEUS_RW_"))
                    .collect();
                let cfg = RwConfig::from_env(env, &vars)?;
                Ok(Box::new(PrometheusRwOutput::new(cfg)?))
            }
            OutputKind::OpenTelemetry | OutputKind::ExperimentalOpenTelemetry => {
                let name = if self.kind == OutputKind::OpenTelemetry {
                    OtelName::Stable
                } else {
                    OtelName::Experimental
                };
                // k6 ignores an argument here; refusing it beats a silently unused endpoint.
                if !self.arg.is_empty() {
                    return Err(OutputError::InvalidArgument(format!(
                        "the {} output takes no argument (got \"{}\"); set K6_OTEL_GRPC_EXPORTER_ENDPOINT and the other K6_OTEL_* variables instead",
                        name.as_str(),
                        self.arg
                    )));
                }
                Ok(Box::new(OtelOutput::open(name, env)?))
            }
            OutputKind::InfluxDb => {
                let cfg = InfluxConfig::parse(&self.arg, env)?;
                Ok(Box::new(InfluxDbOutput::new(cfg)?))
            }
            OutputKind::Aggregate => {
                Ok(Box::new(AggregateOutput::new(&self.arg, thresholds, run)?))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        let s = OutputSpec::parse("json=out.json").unwrap();
        assert_eq!((s.kind, s.arg.as_str()), (OutputKind::Json, "out.json"));
        let s = OutputSpec::parse("csv").unwrap();
        assert_eq!((s.kind, s.arg.as_str()), (OutputKind::Csv, ""));
        let s = OutputSpec::parse("web-dashboard=export=r.html&period=2s").unwrap();
        assert_eq!(
            (s.kind, s.arg.as_str()),
            (OutputKind::WebDashboard, "export=r.html&period=2s")
        );
        let s = OutputSpec::parse("influxdb=http://localhost:8086/k6").unwrap();
        assert_eq!(
            (s.kind, s.arg.as_str()),
            (OutputKind::InfluxDb, "http://localhost:8086/k6")
        );
        let e = OutputSpec::parse("statsd").unwrap_err();
        assert_eq!(
            e.to_string(),
            "output statsd is not supported by rk6 yet (supported: aggregate, json, csv, opentelemetry (or experimental-opentelemetry), experimental-prometheus-rw, influxdb, web-dashboard; see docs/compatibility.md)"
        );
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let export_only = OutputSpec::from_env(&env(&[("K6_WEB_DASHBOARD_EXPORT", "r.html")]));
        assert_eq!(
            export_only.unwrap().unwrap().arg,
            "port=-1",
            "a file, no server"
        );
        let on = OutputSpec::from_env(&env(&[
            ("K6_WEB_DASHBOARD", "true"),
            ("K6_WEB_DASHBOARD_EXPORT", "r.html"),
        ]));
        assert_eq!(on.unwrap().unwrap().arg, "");
        let s = OutputSpec::parse("experimental-prometheus-rw").unwrap();
        assert_eq!(s.kind, OutputKind::PrometheusRw);
        let none = |_: &str| None;
        let e = OutputSpec::parse("experimental-prometheus-rw=http://x/")
            .unwrap()
            .open(&ThresholdSet::default(), &none, &RunInfo::default())
            .err()
            .unwrap();
        assert!(e.to_string().contains("takes no argument"), "{e}");
        // k6 v1.4.0 release notes, #5334: the stable name, the experimental one kept.
        for (name, kind) in [
            ("opentelemetry", OutputKind::OpenTelemetry),
            (
                "experimental-opentelemetry",
                OutputKind::ExperimentalOpenTelemetry,
            ),
        ] {
            assert_eq!(OutputSpec::parse(name).unwrap().kind, kind);
            let e = OutputSpec::parse(&format!("{name}=localhost:4317"))
                .unwrap()
                .open(&ThresholdSet::default(), &none, &RunInfo::default())
                .err()
                .unwrap();
            assert!(
                e.to_string()
                    .starts_with(&format!("the {name} output takes no argument")),
                "{e}"
            );
        }
        assert!(matches!(
            OutputSpec::parse("nope").unwrap_err(),
            OutputError::Unknown(_)
        ));
    }
}
