//! Real-time outputs (`-o name[=arg]`): every sample of the test, streamed to a file.
//!
//! The metrics thread owns the outputs and hands each one every batch right after the
//! aggregator has seen it, so an output sees exactly the samples the summary counts.
//! Writes are buffered; [`Output::flush`] runs about once a second and [`Output::finish`]
//! at the end of the test (also after Ctrl+C).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use flate2::write::GzEncoder;
use flate2::Compression;
use rk6_metrics::{MetricId, Registry, Sample, SummaryData, ThresholdSet};
use thiserror::Error;

use crate::csv::{CsvOutput, TimeFormat};
use crate::json_lines::JsonOutput;
use crate::prometheus_rw::config::RwConfig;
use crate::prometheus_rw::PrometheusRwOutput;
use crate::report::{ReportConfig, ReportOutput};

/// A destination for every sample of a test run.
pub trait Output: Send {
    /// How the banner names it, e.g. `json (out.json)`.
    fn description(&self) -> String;
    /// Writes one batch of samples.
    fn add(&mut self, registry: &Registry, batch: &[Sample]);
    /// Pushes buffered data to the file (an error is kept for `finish`).
    fn flush(&mut self);
    /// The end-of-test summary (checks, final threshold verdicts), given once before
    /// `finish` when the run produced one. Streaming outputs ignore it.
    fn end_of_test(&mut self, _summary: &SummaryData) {}
    /// Writes everything still buffered and closes the file; reports the first write error.
    fn finish(&mut self) -> io::Result<()>;
}

/// Why an `-o` value was refused.
#[derive(Debug, Error)]
pub enum OutputError {
    /// An output k6 has and rk6 does not.
    #[error(
        "output {0} is not supported by rk6 yet (supported: json, csv, experimental-prometheus-rw, web-dashboard; see docs/compatibility.md)"
    )]
    Unsupported(String),
    /// A name neither k6 nor rk6 knows.
    #[error(
        "invalid output type '{0}', available types are: csv, experimental-prometheus-rw, json, web-dashboard"
    )]
    Unknown(String),
    /// A bad argument, e.g. an unknown csv key.
    #[error("{0}")]
    InvalidArgument(String),
    /// The file could not be created.
    #[error("could not create the '{kind}' output: {source}")]
    Create {
        /// `json`, `csv`, `experimental-prometheus-rw` or `web-dashboard`.
        kind: &'static str,
        /// The I/O error.
        source: io::Error,
    },
}

/// Outputs k6 1.1 knows that rk6 does not have (built in, removed or via extensions).
const K6_ONLY: &[&str] = &[
    "influxdb",
    "cloud",
    "experimental-opentelemetry",
    "statsd",
    "datadog",
    "kafka",
    "xk6-influxdb",
];

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
    /// k6's `web-dashboard`, of which rk6 has only the HTML report export.
    WebDashboard,
    /// k6's `experimental-prometheus-rw` (Prometheus remote write).
    PrometheusRw,
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
            n if K6_ONLY.contains(&n) => return Err(OutputError::Unsupported(n.to_string())),
            n => return Err(OutputError::Unknown(n.to_string())),
        };
        Ok(OutputSpec {
            kind,
            arg: arg.to_string(),
        })
    }

    /// The web-dashboard output the environment asks for (`K6_WEB_DASHBOARD=true` or
    /// `K6_WEB_DASHBOARD_EXPORT=FILE`), as if given with `-o web-dashboard`.
    pub fn from_env(
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<OutputSpec>, OutputError> {
        Ok(crate::report::enabled_by_env(env)?.then(|| OutputSpec {
            kind: OutputKind::WebDashboard,
            arg: String::new(),
        }))
    }

    /// Creates the output (its file, or its pusher thread). `env` reads `K6_CSV_*`,
    /// `K6_WEB_DASHBOARD_*` and `K6_PROMETHEUS_RW_*` variables.
    pub fn open(
        &self,
        thresholds: &ThresholdSet,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Box<dyn Output>, OutputError> {
        match self.kind {
            OutputKind::Json => {
                let target = if self.arg.is_empty() || self.arg == "-" {
                    Target::Stdout
                } else {
                    Target::File(self.arg.clone())
                };
                let w = OutFile::create(&target).map_err(|source| OutputError::Create {
                    kind: "json",
                    source,
                })?;
                Ok(Box::new(JsonOutput::new(w, target.name(), thresholds)))
            }
            OutputKind::Csv => {
                let cfg = CsvConfig::parse(&self.arg, env)?;
                let target = Target::File(cfg.file_name.clone());
                let w = OutFile::create(&target).map_err(|source| OutputError::Create {
                    kind: "csv",
                    source,
                })?;
                Ok(Box::new(CsvOutput::new(w, cfg.file_name, cfg.time_format)))
            }
            OutputKind::WebDashboard => {
                let cfg = ReportConfig::parse(&self.arg, env)?;
                let out = ReportOutput::create(&cfg, SystemTime::now()).map_err(|source| {
                    OutputError::Create {
                        kind: "web-dashboard",
                        source,
                    }
                })?;
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
        }
    }
}

/// Settings of the csv output: `-o csv=FILE` or `-o csv=fileName=FILE,timeFormat=...`,
/// with `K6_CSV_FILENAME` / `K6_CSV_TIME_FORMAT` below the argument.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CsvConfig {
    file_name: String,
    time_format: TimeFormat,
}

impl CsvConfig {
    fn parse(arg: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<CsvConfig, OutputError> {
        let time = |s: &str| {
            TimeFormat::parse(s).ok_or_else(|| {
                OutputError::InvalidArgument(format!(
                    "unknown csv time format \"{s}\"; use unix, unix_nano, unix_micro, unix_milli, rfc3339 or rfc3339_nano"
                ))
            })
        };
        let mut cfg = CsvConfig {
            file_name: env("K6_CSV_FILENAME")
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "file.csv".to_string()),
            time_format: match env("K6_CSV_TIME_FORMAT").filter(|s| !s.is_empty()) {
                Some(s) => time(&s)?,
                None => TimeFormat::Unix,
            },
        };
        if arg.is_empty() {
            return Ok(cfg);
        }
        if !arg.contains('=') {
            cfg.file_name = arg.to_string();
            return Ok(cfg);
        }
        for pair in arg.split(',') {
            let Some((k, v)) = pair.split_once('=') else {
                return Err(OutputError::InvalidArgument(format!(
                    "couldn't parse \"{arg}\" as argument for the csv output"
                )));
            };
            match k {
                "fileName" | "file_name" => cfg.file_name = v.to_string(),
                "timeFormat" => cfg.time_format = time(v)?,
                // rk6 flushes about once a second regardless.
                "saveInterval" | "save_interval" => {}
                other => {
                    return Err(OutputError::InvalidArgument(format!(
                        "unknown key \"{other}\" in the csv output argument"
                    )))
                }
            }
        }
        Ok(cfg)
    }
}

/// Where an output writes.
enum Target {
    Stdout,
    File(String),
}

impl Target {
    fn name(&self) -> String {
        match self {
            Target::Stdout => "stdout".to_string(),
            Target::File(f) => f.clone(),
        }
    }
}

const BUFFER: usize = 64 * 1024;

/// A buffered output file, gzipped when its name ends in `.gz`.
pub(crate) enum OutFile {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
    Stdout(BufWriter<io::Stdout>),
    /// Closed by `close`.
    Closed,
}

impl OutFile {
    fn create(target: &Target) -> io::Result<OutFile> {
        match target {
            Target::Stdout => Ok(OutFile::Stdout(BufWriter::with_capacity(
                BUFFER,
                io::stdout(),
            ))),
            Target::File(name) => {
                let file = BufWriter::with_capacity(BUFFER, File::create(Path::new(name))?);
                if name.ends_with(".gz") {
                    Ok(OutFile::Gzip(GzEncoder::new(file, Compression::fast())))
                } else {
                    Ok(OutFile::Plain(file))
                }
            }
        }
    }

    /// An in-memory-free sink for tests: writes to a plain file at `path`.
    #[cfg(test)]
    pub(crate) fn for_test(path: &Path) -> OutFile {
        OutFile::create(&Target::File(path.to_string_lossy().into_owned())).unwrap()
    }

    /// Flushes everything and ends the gzip stream.
    pub(crate) fn close(&mut self) -> io::Result<()> {
        match std::mem::replace(self, OutFile::Closed) {
            OutFile::Plain(mut w) => w.flush(),
            OutFile::Gzip(g) => g.finish()?.flush(),
            OutFile::Stdout(mut w) => w.flush(),
            OutFile::Closed => Ok(()),
        }
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutFile::Plain(w) => w.write(buf),
            OutFile::Gzip(w) => w.write(buf),
            OutFile::Stdout(w) => w.write(buf),
            OutFile::Closed => Err(io::Error::other("output already closed")),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            OutFile::Plain(w) => w.write_all(buf),
            OutFile::Gzip(w) => w.write_all(buf),
            OutFile::Stdout(w) => w.write_all(buf),
            OutFile::Closed => Err(io::Error::other("output already closed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutFile::Plain(w) => w.flush(),
            OutFile::Gzip(w) => w.flush(),
            OutFile::Stdout(w) => w.flush(),
            OutFile::Closed => Ok(()),
        }
    }
}

/// Metric names by id, read from the registry once per metric.
#[derive(Default)]
pub(crate) struct Names(Vec<Option<Box<str>>>);

impl Names {
    /// The name of `id`, and whether this is the first time it is asked for.
    pub(crate) fn get(&mut self, registry: &Registry, id: MetricId) -> (&str, bool) {
        let i = id.index();
        if i >= self.0.len() {
            self.0.resize(i + 1, None);
        }
        let first = self.0[i].is_none();
        if first {
            self.0[i] = Some(registry.info(id).name.into_boxed_str());
        }
        (self.0[i].as_deref().unwrap_or_default(), first)
    }
}

/// Seconds and nanoseconds since the Unix epoch (0 for earlier times).
pub(crate) fn unix(time: SystemTime) -> (i64, u32) {
    time.duration_since(UNIX_EPOCH)
        .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos()))
}

/// UTC time in RFC 3339; with `nanos`, the fraction has up to 9 digits and no trailing
/// zeros (none at all for a whole second), as Go prints `time.RFC3339Nano`.
pub(crate) fn rfc3339(time: SystemTime, nanos: bool) -> String {
    if !nanos {
        return humantime::format_rfc3339_seconds(time).to_string();
    }
    // humantime prints all nine fraction digits; Go trims trailing zeros.
    let full = humantime::format_rfc3339_nanos(time).to_string();
    let body = full
        .trim_end_matches('Z')
        .trim_end_matches('0')
        .trim_end_matches('.');
    format!("{body}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        let e = OutputSpec::parse("influxdb=http://localhost:8086/k6").unwrap_err();
        assert_eq!(
            e.to_string(),
            "output influxdb is not supported by rk6 yet (supported: json, csv, experimental-prometheus-rw, web-dashboard; see docs/compatibility.md)"
        );
        let s = OutputSpec::parse("experimental-prometheus-rw").unwrap();
        assert_eq!(s.kind, OutputKind::PrometheusRw);
        let none = |_: &str| None;
        let e = OutputSpec::parse("experimental-prometheus-rw=http://x/")
            .unwrap()
            .open(&ThresholdSet::default(), &none)
            .err()
            .unwrap();
        assert!(e.to_string().contains("takes no argument"), "{e}");
        assert!(matches!(
            OutputSpec::parse("nope").unwrap_err(),
            OutputError::Unknown(_)
        ));
    }

    #[test]
    fn csv_arguments_and_env() {
        let none = |_: &str| None;
        let c = CsvConfig::parse("", &none).unwrap();
        assert_eq!(c.file_name, "file.csv");
        assert_eq!(c.time_format, TimeFormat::Unix);
        let c = CsvConfig::parse("out.csv.gz", &none).unwrap();
        assert_eq!(c.file_name, "out.csv.gz");
        let c = CsvConfig::parse("fileName=a.csv,timeFormat=rfc3339_nano", &none).unwrap();
        assert_eq!(c.file_name, "a.csv");
        assert_eq!(c.time_format, TimeFormat::Rfc3339Nano);
        assert!(CsvConfig::parse("fileName=a.csv,bogus=1", &none).is_err());
        assert!(CsvConfig::parse("timeFormat=weird", &none).is_err());
        let env = |k: &str| match k {
            "K6_CSV_FILENAME" => Some("env.csv".to_string()),
            "K6_CSV_TIME_FORMAT" => Some("unix_milli".to_string()),
            _ => None,
        };
        let c = CsvConfig::parse("", &env).unwrap();
        assert_eq!(
            (c.file_name.as_str(), c.time_format),
            ("env.csv", TimeFormat::UnixMilli)
        );
        let c = CsvConfig::parse("x.csv", &env).unwrap();
        assert_eq!(c.file_name, "x.csv");
    }

    #[test]
    fn rfc3339_nanos_trims_zeros() {
        let t = UNIX_EPOCH + Duration::new(1_796_003_284, 251_320_880);
        assert_eq!(rfc3339(t, true), "2026-11-30T01:48:04.25132088Z");
        assert_eq!(rfc3339(t, false), "2026-11-30T01:48:04Z");
        let whole = UNIX_EPOCH + Duration::from_secs(1_796_003_284);
        assert_eq!(rfc3339(whole, true), "2026-11-30T01:48:04Z");
        assert_eq!(rfc3339(UNIX_EPOCH, true), "1970-01-01T00:00:00Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap, false), "2000-02-29T00:00:00Z");
    }
}
