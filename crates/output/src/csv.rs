//! The `csv` output: a header, then one row per sample. System tags get a column each;
//! any other tags go to `extra_tags` as `k=v&k2=v2`.

use std::io::{self, Write};
use std::time::SystemTime;

use rk6_metrics::{Registry, Sample};

use crate::out_file::OutFile;
use crate::outputs::OutputError;
use crate::sample_writer::SampleFormat;
use crate::timestamp::{rfc3339, unix};

/// The system tags k6 enables by default, in column order.
const TAG_COLUMNS: [&str; 14] = rk6_metrics::tags::DEFAULT_SYSTEM_TAGS;

/// How the `timestamp` column is written (`K6_CSV_TIME_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// Whole seconds since the epoch (the default).
    Unix,
    /// Nanoseconds since the epoch.
    UnixNano,
    /// Microseconds since the epoch.
    UnixMicro,
    /// Milliseconds since the epoch.
    UnixMilli,
    /// `2026-11-30T01:48:04Z`.
    Rfc3339,
    /// `2026-11-30T01:48:04.25132088Z`.
    Rfc3339Nano,
}

impl TimeFormat {
    /// Parses k6's names (`unix`, `unix_nano`, ..., `rfc3339_nano`).
    pub fn parse(s: &str) -> Option<TimeFormat> {
        Some(match s {
            "unix" => TimeFormat::Unix,
            "unix_nano" => TimeFormat::UnixNano,
            "unix_micro" => TimeFormat::UnixMicro,
            "unix_milli" => TimeFormat::UnixMilli,
            "rfc3339" => TimeFormat::Rfc3339,
            "rfc3339_nano" => TimeFormat::Rfc3339Nano,
            _ => return None,
        })
    }

    fn format(self, t: SystemTime) -> String {
        let (secs, ns) = unix(t);
        let total = i128::from(secs) * 1_000_000_000 + i128::from(ns);
        match self {
            TimeFormat::Unix => secs.to_string(),
            TimeFormat::UnixNano => total.to_string(),
            TimeFormat::UnixMicro => (total / 1_000).to_string(),
            TimeFormat::UnixMilli => (total / 1_000_000).to_string(),
            TimeFormat::Rfc3339 => rfc3339(t, false),
            TimeFormat::Rfc3339Nano => rfc3339(t, true),
        }
    }
}

/// The header line, without the newline.
pub fn csv_header() -> String {
    let mut h = String::from("metric_name,timestamp,metric_value");
    for c in TAG_COLUMNS {
        h.push(',');
        h.push_str(c);
    }
    h.push_str(",extra_tags,metadata");
    h
}

/// k6's CSV rows, after the header line.
pub(crate) struct CsvFormat {
    time_format: TimeFormat,
    header: Vec<u8>,
    row: String,
}

impl CsvFormat {
    /// Rows with timestamps in `time_format`.
    pub(crate) fn new(time_format: TimeFormat) -> CsvFormat {
        CsvFormat {
            time_format,
            header: format!("{}\n", csv_header()).into_bytes(),
            row: String::with_capacity(256),
        }
    }
}

impl SampleFormat for CsvFormat {
    const NAME: &'static str = "csv";

    fn header(&self) -> &[u8] {
        &self.header
    }

    fn write(
        &mut self,
        out: &mut OutFile,
        _registry: &Registry,
        name: &str,
        _first: bool,
        s: &Sample,
    ) -> io::Result<()> {
        row(&mut self.row, name, s, self.time_format);
        out.write_all(self.row.as_bytes())
    }
}

/// One row (with its newline) into `buf`, replacing its contents.
fn row(buf: &mut String, metric: &str, s: &Sample, time_format: TimeFormat) {
    buf.clear();
    field(buf, metric);
    buf.push(',');
    buf.push_str(&time_format.format(s.time));
    buf.push(',');
    buf.push_str(&format!("{:.6}", s.value));
    for c in TAG_COLUMNS {
        buf.push(',');
        field(buf, s.tags.get(c).unwrap_or(""));
    }
    buf.push(',');
    let mut extra = String::new();
    for (k, v) in s.tags.iter().filter(|(k, _)| !TAG_COLUMNS.contains(k)) {
        if !extra.is_empty() {
            extra.push('&');
        }
        extra.push_str(k);
        extra.push('=');
        extra.push_str(v);
    }
    field(buf, &extra);
    // metadata: rk6 has no per-VU metadata yet.
    buf.push_str(",\n");
}

/// Appends `s` as a CSV field, quoted when it holds a comma, quote, CR or LF, or starts
/// with white space (quotes inside are doubled).
fn field(buf: &mut String, s: &str) {
    let quote = s.contains([',', '"', '\r', '\n']) || s.starts_with(char::is_whitespace);
    if !quote {
        buf.push_str(s);
        return;
    }
    buf.push('"');
    for ch in s.chars() {
        if ch == '"' {
            buf.push('"');
        }
        buf.push(ch);
    }
    buf.push('"');
}

/// Settings of the csv output: `-o csv=FILE` or `-o csv=fileName=FILE,timeFormat=...`,
/// with `K6_CSV_FILENAME` / `K6_CSV_TIME_FORMAT` below the argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CsvConfig {
    pub(crate) file_name: String,
    pub(crate) time_format: TimeFormat,
}

impl CsvConfig {
    pub(crate) fn parse(
        arg: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<CsvConfig, OutputError> {
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use rk6_metrics::{builtin, TagSet};

    use super::*;
    use crate::outputs::Output;
    use crate::sample_writer::SampleWriter;

    fn at(secs: u64, nanos: u32) -> SystemTime {
        UNIX_EPOCH + Duration::new(secs, nanos)
    }

    #[test]
    fn header_matches_k6() {
        assert_eq!(
            csv_header(),
            "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata"
        );
    }

    #[test]
    fn rows_like_k6() {
        let mut buf = String::new();
        let tags = TagSet::from_pairs([
            ("expected_response", "true"),
            ("group", ""),
            ("method", "GET"),
            ("name", "http://127.0.0.1:18931/json"),
            ("proto", "HTTP/1.1"),
            ("scenario", "default"),
            ("status", "200"),
            ("url", "http://127.0.0.1:18931/json"),
        ]);
        let s = Sample {
            metric: builtin::HTTP_REQS,
            tags,
            value: 1.0,
            time: at(1_796_003_369, 5),
        };
        row(&mut buf, "http_reqs", &s, TimeFormat::Unix);
        assert_eq!(
            buf,
            "http_reqs,1796003369,1.000000,,,,true,,GET,http://127.0.0.1:18931/json,HTTP/1.1,default,,200,,,http://127.0.0.1:18931/json,,\n"
        );
        let s = Sample {
            metric: builtin::CHECKS,
            tags: TagSet::from_pairs([
                ("check", "status is 200, really"),
                ("scenario", "default"),
                ("b", "2"),
                ("a", "1"),
            ]),
            value: 0.272573,
            time: at(1_796_003_369, 123_456_789),
        };
        row(&mut buf, "checks", &s, TimeFormat::UnixMilli);
        assert_eq!(
            buf,
            "checks,1796003369123,0.272573,\"status is 200, really\",,,,,,,,default,,,,,,a=1&b=2,\n"
        );
        row(&mut buf, "checks", &s, TimeFormat::Rfc3339Nano);
        assert!(
            buf.starts_with("checks,2026-11-30T01:49:29.123456789Z,"),
            "{buf}"
        );
        row(&mut buf, "checks", &s, TimeFormat::UnixNano);
        assert!(buf.starts_with("checks,1796003369123456789,"), "{buf}");
    }

    #[test]
    fn quoting() {
        let mut b = String::new();
        field(&mut b, "a\"b");
        field(&mut b, " x");
        field(&mut b, "plain");
        assert_eq!(b, "\"a\"\"b\"\" x\"plain");
    }

    #[test]
    fn writes_header_once_and_gzips() {
        let dir = std::env::temp_dir().join(format!("rk6-csv-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.csv.gz");
        let registry = Registry::new();
        let mut out = SampleWriter::new(
            OutFile::for_test(&path),
            "out.csv.gz".into(),
            CsvFormat::new(TimeFormat::Unix),
        );
        assert_eq!(out.description(), "csv (out.csv.gz)");
        let s = Sample {
            metric: builtin::ITERATIONS,
            tags: TagSet::from_pairs([("scenario", "default"), ("group", "")]),
            value: 1.0,
            time: at(10, 0),
        };
        out.add(&registry, std::slice::from_ref(&s));
        out.add(&registry, &[s.clone(), s]);
        out.finish().unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
            &mut text,
        )
        .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], csv_header());
        assert_eq!(lines[1], "iterations,10,1.000000,,,,,,,,,default,,,,,,,");
        let _ = std::fs::remove_dir_all(&dir);
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
}
