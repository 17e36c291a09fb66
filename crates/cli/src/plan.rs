//! What the consolidated options mean for a command, worked out once: the summary's
//! settings, the thresholds, the option warnings. `run`, `aggregate`, `archive` and
//! `inspect` read these instead of deriving them each on its own.

use std::time::Duration;

use rk6_js::log::{Level, Logger};
use rk6_metrics::{Registry, ThresholdSet};
use rk6_options::{ExitCode, Options};
use rk6_output::SummaryMode;
use serde_json::Value;

use crate::run_error::RunError;

/// k6's default trend columns.
pub const DEFAULT_TREND_STATS: &[&str] = &["avg", "min", "med", "max", "p(90)", "p(95)"];

/// k6 2.2's default `handleSummaryTimeout` (the limit k6 1.x had built in).
const DEFAULT_HANDLE_SUMMARY_TIMEOUT: Duration = Duration::from_secs(120);

/// How the end of the test is reported.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryPlan {
    /// Whether there is an end-of-test summary at all (`handleSummary`, the text, the
    /// export): off with `--summary-mode=disabled` (k6 1.3) or the deprecated `--no-summary`.
    pub shown: bool,
    /// The text summary's layout.
    pub mode: SummaryMode,
    /// The trend columns (`summaryTrendStats`), checked.
    pub trend_stats: Vec<String>,
    /// `summaryTimeUnit`.
    pub time_unit: Option<String>,
    /// How long `handleSummary()` may run (`handleSummaryTimeout`, k6 2.2).
    pub handle_summary_timeout: Duration,
    /// Deprecation lines to print (what k6 2.0 removed and rk6 keeps).
    pub deprecations: Vec<String>,
    /// k6 1.5's `--new-machine-readable-summary`: `handleSummary`'s data and the export in
    /// the schema 1.0.0 shape. Never in legacy mode, where k6 1.5 kept the old shapes.
    pub machine_readable: bool,
}

impl SummaryPlan {
    /// The settings from the consolidated options; `no_summary` is the `--no-summary` flag
    /// (or `K6_NO_SUMMARY`), which k6 2.0 removed in favour of `--summary-mode=disabled`.
    pub fn from_options(options: &Options, no_summary: bool) -> Result<SummaryPlan, RunError> {
        let trend_stats: Vec<String> = match &options.summary_trend_stats {
            Some(stats) => stats.clone(),
            None => DEFAULT_TREND_STATS.iter().map(|s| s.to_string()).collect(),
        };
        if let Some(s) = trend_stats
            .iter()
            .find(|s| rk6_metrics::Stat::parse_trend_stat(s).is_none())
        {
            // k6 refuses it only when it builds the summary: a generic failure.
            return Err(RunError::new(
                ExitCode::Failure,
                format!("invalid summaryTrendStats value \"{s}\""),
            ));
        }
        let mut deprecations = Vec::new();
        if no_summary {
            deprecations.push(
                "--no-summary is deprecated and k6 2.0 removed it: use --summary-mode=disabled"
                    .to_string(),
            );
        }
        let mode = match options.summary_mode.as_deref() {
            Some("full") => SummaryMode::Full,
            Some("legacy") => {
                deprecations.push(
                    "the legacy summary mode is deprecated and k6 2.0 removed it: use --summary-mode=compact or full"
                        .to_string(),
                );
                SummaryMode::Legacy
            }
            _ => SummaryMode::Compact,
        };
        Ok(SummaryPlan {
            shown: !no_summary && options.summary_mode.as_deref() != Some("disabled"),
            mode,
            trend_stats,
            time_unit: options.summary_time_unit.clone().filter(|s| !s.is_empty()),
            handle_summary_timeout: options
                .handle_summary_timeout
                .map_or(DEFAULT_HANDLE_SUMMARY_TIMEOUT, |d| d.to_std_or_zero()),
            deprecations,
            machine_readable: false,
        })
    }

    /// With the machine-readable summary asked for (see [`machine_readable_summary`]).
    pub fn machine_readable(mut self, on: bool) -> SummaryPlan {
        self.machine_readable = on && self.mode != SummaryMode::Legacy;
        self
    }

    /// Logs the deprecation lines.
    pub fn warn(&self, logger: &Logger) {
        for d in &self.deprecations {
            logger.log(Level::Warning, d, &[]);
        }
    }
}

/// The thresholds of the options (none with `--no-thresholds`, which k6 does not even
/// parse), against the metrics of `registry`.
pub fn thresholds(
    options: &Options,
    registry: &Registry,
    off: bool,
) -> Result<ThresholdSet, RunError> {
    match (&options.thresholds, off) {
        (Some(t), false) => ThresholdSet::parse(&Value::Object(t.clone()), registry),
        _ => ThresholdSet::parse(&Value::Null, registry),
    }
    .map_err(|e| RunError::invalid(e.to_string()))
}

/// k6's warning for each key of the script's options it does not know.
pub fn warn_unknown_keys(logger: &Logger, unknown: &[String]) {
    for key in unknown {
        logger.log(
            Level::Warning,
            "There were unknown fields in the options exported in the script",
            &[("error", &format!("json: unknown field \"{key}\""))],
        );
    }
}

/// Where the REST API listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiPlan {
    /// `host:port`, or none: no API.
    pub address: Option<String>,
    /// Chosen by rk6, not the user (k6 1.x's default): when it is taken, the test runs
    /// without the API after a warning, as k6 1.x did.
    pub defaulted: bool,
    /// Why it was chosen, to print.
    pub note: Option<String>,
}

/// k6 1.x's API address.
pub const DEFAULT_API_ADDRESS: &str = "localhost:6565";

impl ApiPlan {
    /// As k6 2.0: the API starts only with `--address` or `K6_ADDRESS` (`''` disables it).
    /// Without either, a test that needs the API to go on (`--paused`, an
    /// `externally-controlled` scenario: what k6 2.0 keeps or removed) gets it on k6 1.x's
    /// `localhost:6565`, with a line saying so.
    pub fn new(
        flag: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
        paused: bool,
        externally_controlled: bool,
    ) -> ApiPlan {
        let given = flag.map(str::to_owned).or_else(|| env("K6_ADDRESS"));
        if let Some(a) = given {
            return ApiPlan {
                address: (!a.is_empty()).then_some(a),
                defaulted: false,
                note: None,
            };
        }
        if paused || externally_controlled {
            let why = if paused {
                "--paused"
            } else {
                "the externally-controlled executor"
            };
            return ApiPlan {
                address: Some(DEFAULT_API_ADDRESS.into()),
                defaulted: true,
                note: Some(format!(
                    "the REST API starts only with --address since k6 2.0; it listens on {DEFAULT_API_ADDRESS} (k6 1.x's default) because {why} needs it: pass --address to choose"
                )),
            };
        }
        ApiPlan {
            address: None,
            defaulted: false,
            note: None,
        }
    }
}

/// Whether `--no-summary` (or k6 1.x's `K6_NO_SUMMARY`) asks for no summary.
pub fn no_summary_flag(flag: bool, env: impl Fn(&str) -> Option<String>) -> bool {
    flag || matches!(
        env("K6_NO_SUMMARY").as_deref(),
        Some("1" | "t" | "T" | "true" | "TRUE" | "True")
    )
}

/// The environment variable of `--new-machine-readable-summary`.
pub const MACHINE_READABLE_SUMMARY_ENV: &str = "K6_NEW_MACHINE_READABLE_SUMMARY";

/// Whether the machine-readable summary is asked for: `--new-machine-readable-summary`, else
/// `K6_NEW_MACHINE_READABLE_SUMMARY` (Go's boolean forms). As k6 reads its runtime options,
/// a value of the variable Go cannot read (an empty one too) is an error even when the flag
/// is given.
pub fn machine_readable_summary(
    flag: Option<bool>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<bool, RunError> {
    let from_env = match env(MACHINE_READABLE_SUMMARY_ENV) {
        Some(v) => Some(rk6_options::text::go_bool(&v).map_err(|_| {
            let quoted = serde_json::to_string(&v).unwrap_or_default();
            RunError::new(
                ExitCode::Failure,
                format!(
                    "env var '{MACHINE_READABLE_SUMMARY_ENV}' is not a valid boolean value: strconv.ParseBool: parsing {quoted}: invalid syntax"
                ),
            )
        })?),
        None => None,
    };
    Ok(flag.or(from_env).unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(v: Value, no_summary: bool) -> Result<SummaryPlan, String> {
        let options = Options::from_json(&v).map_err(|e| e.message)?.options;
        options.validate().map_err(|e| e.message)?;
        SummaryPlan::from_options(&options, no_summary).map_err(|e| e.message)
    }

    #[test]
    fn defaults() {
        let p = plan(json!({}), false).unwrap();
        assert!(p.shown && p.deprecations.is_empty());
        assert_eq!(p.mode, SummaryMode::Compact);
        assert_eq!(p.trend_stats, DEFAULT_TREND_STATS);
        assert_eq!(p.handle_summary_timeout, Duration::from_secs(120));
    }

    /// k6 1.3 added `disabled` (release notes v1.3.0, #5118); k6 2.0 removed `--no-summary`
    /// and `legacy` (v2.0.0, #5729, #5730), which rk6 keeps with a deprecation line.
    #[test]
    fn disabled_no_summary_and_legacy() {
        assert!(
            !plan(json!({"summaryMode": "disabled"}), false)
                .unwrap()
                .shown
        );
        let p = plan(json!({}), true).unwrap();
        assert!(!p.shown);
        assert!(p.deprecations[0].contains("--summary-mode=disabled"));
        let p = plan(json!({"summaryMode": "legacy"}), false).unwrap();
        assert!(p.shown && p.mode == SummaryMode::Legacy);
        assert!(p.deprecations[0].contains("legacy summary mode is deprecated"));
    }

    /// k6 2.2 (release notes v2.2.0, #5854): `handleSummaryTimeout`.
    #[test]
    fn handle_summary_timeout_is_read() {
        let p = plan(json!({"handleSummaryTimeout": "3s"}), false).unwrap();
        assert_eq!(p.handle_summary_timeout, Duration::from_secs(3));
        assert!(plan(json!({"handleSummaryTimeout": "0s"}), false).is_err());
    }

    /// k6 2.0 (release notes v2.0.0, #5876): no REST API without `--address`.
    #[test]
    fn the_api_needs_an_address_unless_the_test_needs_the_api() {
        let none = |_: &str| None;
        assert_eq!(ApiPlan::new(None, none, false, false).address, None);
        let p = ApiPlan::new(Some("127.0.0.1:0"), none, false, false);
        assert_eq!(
            (p.address.as_deref(), p.defaulted),
            (Some("127.0.0.1:0"), false)
        );
        assert_eq!(ApiPlan::new(Some(""), none, true, false).address, None);
        let env = |k: &str| (k == "K6_ADDRESS").then(|| "127.0.0.1:7".to_string());
        assert_eq!(
            ApiPlan::new(None, env, false, false).address.as_deref(),
            Some("127.0.0.1:7")
        );
        let p = ApiPlan::new(None, none, true, false);
        assert!(p.defaulted && p.note.is_some());
        assert_eq!(p.address.as_deref(), Some(DEFAULT_API_ADDRESS));
    }

    /// k6 v1.5.0 release notes, #5338: `--new-machine-readable-summary` or
    /// `K6_NEW_MACHINE_READABLE_SUMMARY`, off by default, and not for the legacy summary.
    #[test]
    fn machine_readable_summary_from_the_flag_or_the_env() {
        let env = |v: &'static str| {
            move |k: &str| (k == MACHINE_READABLE_SUMMARY_ENV).then(|| v.to_string())
        };
        let none = |_: &str| None;
        assert!(!machine_readable_summary(None, none).unwrap());
        assert!(machine_readable_summary(Some(true), none).unwrap());
        for on in ["1", "t", "T", "TRUE", "true", "True"] {
            assert!(machine_readable_summary(None, env(on)).unwrap(), "{on}");
        }
        for off in ["0", "f", "F", "FALSE", "false", "False"] {
            assert!(!machine_readable_summary(None, env(off)).unwrap(), "{off}");
        }
        // The flag wins over the variable.
        assert!(!machine_readable_summary(Some(false), env("true")).unwrap());
        assert!(machine_readable_summary(Some(true), env("0")).unwrap());
        for bad in ["yes", ""] {
            let e = machine_readable_summary(Some(true), env(bad)).unwrap_err();
            assert_eq!(e.code, ExitCode::Failure);
            assert_eq!(
                e.message,
                format!("env var 'K6_NEW_MACHINE_READABLE_SUMMARY' is not a valid boolean value: strconv.ParseBool: parsing \"{bad}\": invalid syntax")
            );
        }
        let p = plan(json!({}), false).unwrap();
        assert!(!p.machine_readable);
        assert!(p.machine_readable(true).machine_readable);
        let legacy = plan(json!({"summaryMode": "legacy"}), false).unwrap();
        assert!(!legacy.machine_readable(true).machine_readable);
    }

    #[test]
    fn bad_trend_stats_are_a_failure() {
        let e = plan(json!({"summaryTrendStats": ["avg", "p(x)"]}), false).unwrap_err();
        assert_eq!(e, "invalid summaryTrendStats value \"p(x)\"");
    }
}
