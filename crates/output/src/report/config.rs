//! Settings of the HTML report from `-o web-dashboard=k=v&k=v` and `K6_WEB_DASHBOARD_*`.

use std::time::Duration;

use crate::OutputError;

/// The initial bucket width; long runs coarsen it (see the timeline).
const DEFAULT_PERIOD: Duration = Duration::from_secs(1);

/// Where the report goes and how finely the run is sliced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportConfig {
    /// The HTML file (`export`).
    pub export: String,
    /// Initial bucket width (`period`).
    pub period: Duration,
}

/// Why no live dashboard: said whenever one is asked for.
const NO_SERVER: &str = "rk6 has no live web dashboard; only the HTML report export is supported: set K6_WEB_DASHBOARD_EXPORT=report.html or use -o 'web-dashboard=export=report.html'";

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
    /// `K6_WEB_DASHBOARD_*` variables. Anything that needs a live server is refused.
    pub fn parse(
        arg: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ReportConfig, OutputError> {
        let mut export = env("K6_WEB_DASHBOARD_EXPORT").filter(|s| !s.is_empty());
        let mut period = match env("K6_WEB_DASHBOARD_PERIOD").filter(|s| !s.is_empty()) {
            Some(p) => parse_period(&p)?,
            None => DEFAULT_PERIOD,
        };
        let mut server = Vec::new();
        for key in ["HOST", "PORT", "OPEN"] {
            let var = format!("K6_WEB_DASHBOARD_{key}");
            if let Some(v) = env(&var).filter(|s| !s.is_empty()) {
                server.push((key.to_ascii_lowercase(), v));
            }
        }
        for pair in arg.split('&').filter(|p| !p.is_empty()) {
            let Some((k, v)) = pair.split_once('=') else {
                return Err(OutputError::InvalidArgument(format!(
                    "couldn't parse \"{arg}\" as argument for the web-dashboard output (expected key=value pairs joined by &)"
                )));
            };
            match k {
                "export" => export = Some(v.to_string()).filter(|s| !s.is_empty()),
                "period" => period = parse_period(v)?,
                "host" | "port" | "open" => server.push((k.to_string(), v.to_string())),
                other => {
                    return Err(OutputError::InvalidArgument(format!(
                        "unknown key \"{other}\" in the web-dashboard output argument (rk6 supports export and period)"
                    )))
                }
            }
        }
        for (k, v) in &server {
            // `port=-1` is how k6 users turn the server off (e.g. in CI): that is rk6's
            // only mode. `open=false` asks for nothing either.
            let harmless = match k.as_str() {
                "port" => v == "-1",
                "open" => !parse_bool("open", v)?,
                _ => false,
            };
            if !harmless {
                return Err(OutputError::InvalidArgument(format!(
                    "web-dashboard {k}={v}: {NO_SERVER}"
                )));
            }
        }
        match export {
            Some(export) => Ok(ReportConfig { export, period }),
            None => Err(OutputError::InvalidArgument(NO_SERVER.to_string())),
        }
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
        assert_eq!(c.export, "a.html");
        assert_eq!(c.period, Duration::from_secs(1));
        let c = ReportConfig::parse(
            "export=b.html&period=2s&port=-1&open=false",
            &env(&[
                ("K6_WEB_DASHBOARD_EXPORT", "a.html"),
                ("K6_WEB_DASHBOARD_PERIOD", "10s"),
            ]),
        )
        .unwrap();
        assert_eq!(c.export, "b.html", "the argument wins over the variable");
        assert_eq!(c.period, Duration::from_secs(2));
        let c = ReportConfig::parse(
            "",
            &env(&[
                ("K6_WEB_DASHBOARD_EXPORT", "a.html"),
                ("K6_WEB_DASHBOARD_PERIOD", "500ms"),
                ("K6_WEB_DASHBOARD_PORT", "-1"),
            ]),
        )
        .unwrap();
        assert_eq!(c.period, Duration::from_millis(500));
    }

    #[test]
    fn a_live_dashboard_is_refused() {
        let none = |_: &str| None;
        let e = ReportConfig::parse("", &none).unwrap_err().to_string();
        assert!(e.contains("rk6 has no live web dashboard"), "{e}");
        assert!(e.contains("K6_WEB_DASHBOARD_EXPORT"), "{e}");
        let e = ReportConfig::parse("export=r.html&port=5665", &none)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("port=5665") && e.contains("no live web dashboard"),
            "{e}"
        );
        let e = ReportConfig::parse(
            "",
            &env(&[
                ("K6_WEB_DASHBOARD_EXPORT", "r.html"),
                ("K6_WEB_DASHBOARD_OPEN", "true"),
            ]),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("open=true"), "{e}");
        assert!(ReportConfig::parse("export=r.html&bogus=1", &none).is_err());
        assert!(ReportConfig::parse("export=r.html&period=soon", &none).is_err());
        assert!(ReportConfig::parse("r.html", &none).is_err());
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
