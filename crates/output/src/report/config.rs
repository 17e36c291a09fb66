//! Settings of the web dashboard from `-o web-dashboard=k=v&k=v` and `K6_WEB_DASHBOARD_*`:
//! the live server (`host`, `port`, `period`, `open`, `tags`) and the HTML report
//! (`export`).

use std::time::Duration;

use crate::OutputError;

/// The report's initial bucket width when no period is given; long runs coarsen it (see
/// the timeline). Finer than k6's 10 s so short runs still draw lines.
const REPORT_PERIOD: Duration = Duration::from_secs(1);

/// k6's default period of the live event stream.
const STREAM_PERIOD: Duration = Duration::from_secs(10);

/// k6's default port.
pub const DEFAULT_PORT: i64 = 5665;

/// At most this many snapshots per run: a longer run gets a period that is a multiple of
/// the configured one (k6's rule, which bounds the event log).
const MAX_POINTS: u64 = 2880;

/// Where the dashboard listens, how finely the run is sliced and where the report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportConfig {
    /// The HTML file (`export`, or k6's older `report`).
    pub export: Option<String>,
    /// `period` as given.
    pub period: Option<Duration>,
    /// The listen address (`host`); rk6 defaults to the loopback address.
    pub host: String,
    /// The port (`port`); negative turns the server off, 0 picks a free one.
    pub port: i64,
    /// Open the page in a browser once the server listens (`open`).
    pub open: bool,
    /// Tags whose values split each metric into sub-metrics in the stream (`tag`/`tags`).
    pub tags: Vec<String>,
}

/// Whether the environment asks for the dashboard: `K6_WEB_DASHBOARD` true, or an
/// export file named (unless `K6_WEB_DASHBOARD` is explicitly false).
pub fn enabled_by_env(env: &dyn Fn(&str) -> Option<String>) -> Result<bool, OutputError> {
    let export = env("K6_WEB_DASHBOARD_EXPORT").is_some_and(|s| !s.is_empty());
    match env("K6_WEB_DASHBOARD").filter(|s| !s.is_empty()) {
        None => Ok(export),
        Some(v) => parse_bool("K6_WEB_DASHBOARD", &v),
    }
}

impl ReportConfig {
    /// Reads `arg` (`export=FILE&period=2s&port=-1`, k6's query-string form) over the
    /// `K6_WEB_DASHBOARD_*` variables.
    pub fn parse(
        arg: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ReportConfig, OutputError> {
        let var = |k: &str| env(&format!("K6_WEB_DASHBOARD_{k}"));
        let mut c = ReportConfig {
            export: var("EXPORT")
                .or_else(|| var("REPORT"))
                .filter(|s| !s.is_empty()),
            period: None,
            host: "127.0.0.1".to_string(),
            port: DEFAULT_PORT,
            open: false,
            tags: vec!["group".to_string()],
        };
        if let Some(p) = var("PERIOD") {
            c.period = Some(parse_period(&p)?);
        }
        if let Some(p) = var("PORT") {
            c.port = parse_port(&p)?;
        }
        if let Some(h) = var("HOST") {
            c.host = h;
        }
        // k6 reads only the exact word `true` here.
        c.open = var("OPEN").as_deref() == Some("true");
        if let Some(t) = var("TAGS") {
            c.tags = t.split(',').map(str::to_string).collect();
        }
        let mut tag_params = Vec::new();
        for pair in arg.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = match pair.split_once('=') {
                Some((k, v)) => (k, v),
                // A bare `open` means open=true, as in k6.
                None if pair == "open" => (pair, ""),
                None => {
                    return Err(OutputError::InvalidArgument(format!(
                        "couldn't parse \"{arg}\" as argument for the web-dashboard output (expected key=value pairs joined by &)"
                    )))
                }
            };
            let v = percent_encoding::percent_decode_str(&v.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned();
            match k {
                "export" | "report" if !v.is_empty() => c.export = Some(v),
                "export" | "report" => {}
                "period" if !v.is_empty() => c.period = Some(parse_period(&v)?),
                "port" if !v.is_empty() => c.port = parse_port(&v)?,
                "host" if !v.is_empty() => c.host = v,
                "open" => c.open = v.is_empty() || v == "true",
                "tag" => tag_params.push(v),
                "tags" => c.tags.extend(v.split(',').map(str::to_string)),
                "period" | "port" | "host" => {}
                "record" => {
                    return Err(OutputError::InvalidArgument(
                        "web-dashboard record: rk6 does not record the event stream to a file (use export=FILE for the HTML report)".to_string(),
                    ))
                }
                other => {
                    return Err(OutputError::InvalidArgument(format!(
                        "unknown key \"{other}\" in the web-dashboard output argument (rk6 supports export, period, host, port, open, tag and tags)"
                    )))
                }
            }
        }
        if !tag_params.is_empty() {
            c.tags = tag_params;
        }
        c.tags.retain(|t| !t.is_empty());
        c.tags.dedup();
        Ok(c)
    }

    /// Whether the live server runs (a negative port turns it off, as in k6).
    pub fn serves(&self) -> bool {
        self.port >= 0
    }

    /// The report timeline's initial bucket width.
    pub fn report_period(&self) -> Duration {
        self.period.unwrap_or(REPORT_PERIOD)
    }

    /// The event stream's period for a run of at most `end_offset`: the configured one
    /// (10 s by default), times the smallest factor that keeps the run to 2880 snapshots.
    pub fn stream_period(&self, end_offset: Duration) -> Duration {
        let period = self.period.unwrap_or(STREAM_PERIOD);
        let optimal = end_offset.as_nanos() / MAX_POINTS as u128;
        let factor = optimal.div_ceil(period.as_nanos().max(1)).max(1);
        period * factor.min(u32::MAX as u128) as u32
    }
}

fn parse_period(s: &str) -> Result<Duration, OutputError> {
    match humantime::parse_duration(s) {
        Ok(d) if d >= Duration::from_millis(1) => Ok(d),
        _ => Err(OutputError::InvalidArgument(format!(
            "invalid web-dashboard period \"{s}\" (expected a duration such as 1s or 10s)"
        ))),
    }
}

/// Go's `strconv.Atoi`, which k6 uses for the port.
fn parse_port(s: &str) -> Result<i64, OutputError> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    match s.parse::<i64>() {
        Ok(p) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => Ok(p),
        _ => Err(OutputError::InvalidArgument(format!(
            "strconv.Atoi: parsing \"{s}\": invalid syntax"
        ))),
    }
}

/// Go's `strconv.ParseBool`, which k6 uses for boolean variables.
fn parse_bool(name: &str, v: &str) -> Result<bool, OutputError> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(OutputError::InvalidArgument(format!(
            "invalid {name} value \"{v}\" (expected true or false)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn export_from_env_or_argument() {
        let c = ReportConfig::parse("", &env(&[("K6_WEB_DASHBOARD_EXPORT", "a.html")])).unwrap();
        assert_eq!(c.export.as_deref(), Some("a.html"));
        assert_eq!(c.report_period(), Duration::from_secs(1));
        assert_eq!(c.stream_period(Duration::from_secs(60)), STREAM_PERIOD);
        assert!(
            c.serves(),
            "k6 serves the page on 5665 unless port is negative"
        );
        let c = ReportConfig::parse(
            "export=b.html&period=2s&port=-1&open=false",
            &env(&[
                ("K6_WEB_DASHBOARD_EXPORT", "a.html"),
                ("K6_WEB_DASHBOARD_PERIOD", "10s"),
            ]),
        )
        .unwrap();
        assert_eq!(c.export.as_deref(), Some("b.html"), "the argument wins");
        assert_eq!(c.period, Some(Duration::from_secs(2)));
        assert!(!c.serves() && !c.open);
        let c = ReportConfig::parse(
            "",
            &env(&[
                ("K6_WEB_DASHBOARD_REPORT", "old.html"),
                ("K6_WEB_DASHBOARD_PERIOD", "500ms"),
                ("K6_WEB_DASHBOARD_PORT", "-1"),
            ]),
        )
        .unwrap();
        assert_eq!(c.export.as_deref(), Some("old.html"));
        assert_eq!(c.report_period(), Duration::from_millis(500));
    }

    #[test]
    fn server_settings() {
        let none = |_: &str| None;
        let c = ReportConfig::parse("", &none).unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.open, c.export.clone()),
            ("127.0.0.1", 5665, false, None)
        );
        assert_eq!(c.tags, vec!["group"]);
        let c = ReportConfig::parse(
            "host=localhost&port=0&open&tag=scenario&tag=name",
            &env(&[("K6_WEB_DASHBOARD_PORT", "7000")]),
        )
        .unwrap();
        assert_eq!((c.host.as_str(), c.port, c.open), ("localhost", 0, true));
        assert_eq!(c.tags, vec!["scenario", "name"]);
        let c = ReportConfig::parse(
            "",
            &env(&[
                ("K6_WEB_DASHBOARD_OPEN", "1"),
                ("K6_WEB_DASHBOARD_HOST", "0.0.0.0"),
                ("K6_WEB_DASHBOARD_TAGS", "group,method"),
            ]),
        )
        .unwrap();
        assert!(!c.open, "k6 opens a browser only for the word true");
        assert_eq!(c.host, "0.0.0.0");
        assert_eq!(c.tags, vec!["group", "method"]);
        let e = ReportConfig::parse("port=abc", &none).unwrap_err();
        assert_eq!(
            e.to_string(),
            "strconv.Atoi: parsing \"abc\": invalid syntax"
        );
        assert!(ReportConfig::parse("export=r.html&bogus=1", &none).is_err());
        assert!(ReportConfig::parse("export=r.html&period=soon", &none).is_err());
        assert!(ReportConfig::parse("r.html", &none).is_err());
        assert!(ReportConfig::parse("record=events.ndjson", &none).is_err());
    }

    #[test]
    fn long_runs_get_a_coarser_stream_period() {
        let c = ReportConfig::parse("period=1s", &|_: &str| None).unwrap();
        assert_eq!(
            c.stream_period(Duration::from_secs(34)),
            Duration::from_secs(1)
        );
        // 8 h = 28 800 s over 2 880 points is 10 s.
        assert_eq!(
            c.stream_period(Duration::from_secs(28_800)),
            Duration::from_secs(10)
        );
        assert_eq!(
            c.stream_period(Duration::from_secs(28_801)),
            Duration::from_secs(11)
        );
    }

    #[test]
    fn env_switch() {
        assert!(!enabled_by_env(&|_: &str| None).unwrap());
        assert!(enabled_by_env(&env(&[("K6_WEB_DASHBOARD", "true")])).unwrap());
        assert!(enabled_by_env(&env(&[("K6_WEB_DASHBOARD_EXPORT", "r.html")])).unwrap());
        assert!(!enabled_by_env(&env(&[
            ("K6_WEB_DASHBOARD", "false"),
            ("K6_WEB_DASHBOARD_EXPORT", "r.html")
        ]))
        .unwrap());
        assert!(enabled_by_env(&env(&[("K6_WEB_DASHBOARD", "yes")])).is_err());
    }
}
