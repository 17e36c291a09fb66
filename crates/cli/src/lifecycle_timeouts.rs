//! `setupTimeout` / `teardownTimeout`: how long `setup()` and `teardown()` may run.

use std::time::Duration;

use rk6_scheduler::duration::parse_duration;
use serde_json::{Map, Value};

/// k6's default for both limits.
const DEFAULT: Duration = Duration::from_secs(60);

/// The time limits of the lifecycle functions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LifecycleTimeouts {
    pub setup: Duration,
    pub teardown: Duration,
}

impl LifecycleTimeouts {
    /// Reads both limits from the merged options (a duration string or milliseconds).
    pub fn from_options(options: &Map<String, Value>) -> Result<LifecycleTimeouts, String> {
        Ok(LifecycleTimeouts {
            setup: limit(options, "setupTimeout")?,
            teardown: limit(options, "teardownTimeout")?,
        })
    }
}

fn limit(options: &Map<String, Value>, key: &str) -> Result<Duration, String> {
    let invalid = |v: &Value| format!("invalid {key} \"{}\"", v.as_str().unwrap_or(&v.to_string()));
    match options.get(key) {
        None | Some(Value::Null) => Ok(DEFAULT),
        Some(Value::String(s)) => parse_duration(s).map_err(|_| invalid(&Value::from(s.as_str()))),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(ms) if ms >= 0.0 && ms.is_finite() => Ok(Duration::from_secs_f64(ms / 1000.0)),
            _ => Err(invalid(&Value::Number(n.clone()))),
        },
        Some(other) => Err(invalid(other)),
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
    use serde_json::json;

    fn read(v: Value) -> Result<LifecycleTimeouts, String> {
        LifecycleTimeouts::from_options(v.as_object().unwrap())
    }

    #[test]
    fn defaults_strings_and_milliseconds() {
        let d = read(json!({})).unwrap();
        assert_eq!((d.setup, d.teardown), (DEFAULT, DEFAULT));
        let t = read(json!({"setupTimeout": "1m30s", "teardownTimeout": 250})).unwrap();
        assert_eq!(t.setup, Duration::from_secs(90));
        assert_eq!(t.teardown, Duration::from_millis(250));
    }

    #[test]
    fn bad_values_are_rejected() {
        assert_eq!(
            read(json!({"setupTimeout": "soon"})).unwrap_err(),
            "invalid setupTimeout \"soon\""
        );
        assert!(read(json!({"teardownTimeout": true})).is_err());
        assert!(read(json!({"teardownTimeout": -5})).is_err());
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
