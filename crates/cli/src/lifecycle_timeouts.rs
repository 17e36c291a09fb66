//! `setupTimeout` / `teardownTimeout`: how long `setup()` and `teardown()` may run.

use std::time::Duration;

use rk6_options::Options;

/// k6's default for both limits.
const DEFAULT: Duration = Duration::from_secs(60);

/// The time limits of the lifecycle functions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LifecycleTimeouts {
    pub setup: Duration,
    pub teardown: Duration,
}

impl LifecycleTimeouts {
    /// Both limits from the consolidated options (validated: `setupTimeout` is positive; a
    /// negative `teardownTimeout`, which k6 accepts, leaves no time).
    pub fn from_options(options: &Options) -> LifecycleTimeouts {
        let limit = |d: Option<rk6_options::GoDuration>| d.map_or(DEFAULT, |d| d.to_std_or_zero());
        LifecycleTimeouts {
            setup: limit(options.setup_timeout),
            teardown: limit(options.teardown_timeout),
        }
    }
}

/// The error and hint k6 logs when `function()` (setup or teardown) outlives its `option`.
pub fn timed_out(function: &str, option: &str, limit: Duration) -> (String, String) {
    (
        // Whole seconds, rounded, as k6 prints them ("after 2 seconds" for 1500ms).
        format!(
            "{function}() execution timed out after {:.0} seconds",
            limit.as_secs_f64()
        ),
        format!("You can increase the time limit via the {option} option"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn read(v: Value) -> Result<LifecycleTimeouts, String> {
        let options = Options::from_json(&v).map_err(|e| e.message)?.options;
        options.validate().map_err(|e| e.message)?;
        Ok(LifecycleTimeouts::from_options(&options))
    }

    #[test]
    fn defaults_strings_and_milliseconds() {
        let d = read(json!({})).unwrap();
        assert_eq!((d.setup, d.teardown), (DEFAULT, DEFAULT));
        let t = read(json!({"setupTimeout": "1m30s", "teardownTimeout": 250})).unwrap();
        assert_eq!(t.setup, Duration::from_secs(90));
        assert_eq!(t.teardown, Duration::from_millis(250));
        // k6 reads days.
        let t = read(json!({"setupTimeout": "1d"})).unwrap();
        assert_eq!(t.setup, Duration::from_secs(86_400));
    }

    #[test]
    fn bad_values_are_rejected() {
        assert_eq!(
            read(json!({"setupTimeout": "soon"})).unwrap_err(),
            "invalid setupTimeout \"soon\""
        );
        assert!(read(json!({"teardownTimeout": true})).is_err());
        assert_eq!(
            read(json!({"setupTimeout": -5})).unwrap_err(),
            "setupTimeout must be positive"
        );
        assert_eq!(
            read(json!({"teardownTimeout": -5})).unwrap().teardown,
            Duration::ZERO
        );
    }

    #[test]
    fn message_rounds_to_whole_seconds_like_k6() {
        let (msg, hint) = timed_out("setup", "setupTimeout", Duration::from_millis(1500));
        assert_eq!(msg, "setup() execution timed out after 2 seconds");
        assert_eq!(
            hint,
            "You can increase the time limit via the setupTimeout option"
        );
        let (msg, _) = timed_out("teardown", "teardownTimeout", Duration::from_secs(60));
        assert_eq!(msg, "teardown() execution timed out after 60 seconds");
    }
}
