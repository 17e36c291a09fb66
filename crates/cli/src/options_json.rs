//! The options in k6's JSON shape, as `k6 inspect` prints them and `exec.test.options`
//! returns them: every key, `null` where unset, values as k6's types write them.

use rk6_options::{json, Options};
use rk6_scheduler::{executor_keys, shortcut_scenario, ConfigError, COMMON_KEYS};
use serde_json::{Map, Value};

/// Scenario fields that are durations, and integers, in k6's types.
const DURATION_KEYS: &[&str] = &[
    "startTime",
    "gracefulStop",
    "maxDuration",
    "duration",
    "timeUnit",
    "gracefulRampDown",
];
const INT_KEYS: &[&str] = &[
    "vus",
    "iterations",
    "startVUs",
    "rate",
    "startRate",
    "preAllocatedVUs",
    "maxVUs",
];

/// One field as k6 writes it back: durations as Go prints them, integers as numbers
/// (values rk6 could not read are shown as given).
fn field(key: &str, v: &Value) -> Value {
    if DURATION_KEYS.contains(&key) {
        if let Ok(Some(d)) = json::duration(v) {
            return Value::String(d.to_string());
        }
    } else if INT_KEYS.contains(&key) {
        if let Ok(n) = json::int(v) {
            return n.map_or(Value::Null, Value::from);
        }
    } else if key == "stages" {
        if let Value::Array(stages) = v {
            return Value::Array(
                stages
                    .iter()
                    .map(|s| {
                        let mut m = Map::new();
                        for k in ["duration", "target"] {
                            let v = s.get(k).unwrap_or(&Value::Null);
                            let k6 = if k == "target" { "vus" } else { k };
                            m.insert(k.into(), field(k6, v));
                        }
                        Value::Object(m)
                    })
                    .collect(),
            );
        }
    }
    v.clone()
}

/// A scenario with its executor's keys, in k6's order, `null` where unset.
pub fn scenario(value: &Value) -> Value {
    let executor = value.get("executor").and_then(Value::as_str).unwrap_or("");
    let mut m = Map::new();
    let common = COMMON_KEYS.iter().filter(|k| **k != "options");
    for k in common.chain(executor_keys(executor)) {
        let v = value.get(*k).unwrap_or(&Value::Null);
        m.insert((*k).into(), field(k, v));
    }
    Value::Object(m)
}

/// `scenarios` as k6 shows them: the given ones, or (`derive`) the `default` scenario the
/// shortcuts stand for.
pub fn scenarios(options: &Options, derive: bool) -> Result<Value, ConfigError> {
    if let Some(s) = &options.scenarios {
        return Ok(Value::Object(
            s.iter().map(|(n, sc)| (n.clone(), scenario(sc))).collect(),
        ));
    }
    if !derive {
        return Ok(Value::Null);
    }
    let mut all = Map::new();
    if let Some(cfg) = shortcut_scenario(options)? {
        all.insert("default".into(), scenario(&Value::Object(cfg)));
    }
    Ok(Value::Object(all))
}

/// The options with the defaults k6 fills in once it has consolidated them.
pub fn with_defaults(mut shape: Map<String, Value>) -> Map<String, Value> {
    let defaults: [(&str, &[&str]); 2] = [
        (
            "summaryTrendStats",
            &["avg", "min", "med", "max", "p(90)", "p(95)"],
        ),
        ("systemTags", &rk6_metrics::tags::DEFAULT_SYSTEM_TAGS),
    ];
    for (key, value) in defaults {
        if shape.get(key).is_none_or(Value::is_null) {
            shape.insert(key.into(), value.iter().map(|s| Value::from(*s)).collect());
        }
    }
    shape
}

/// `exec.test.options`: the consolidated options as k6 gives them to a VU — scenarios
/// derived from the shortcuts (which are left out), defaults filled in, and `consoleOutput`
/// and `localIPs` at the end.
pub fn test_options(options: &Options) -> Result<Value, ConfigError> {
    let mut shape = options.to_k6_json();
    shape.insert("scenarios".into(), scenarios(options, true)?);
    for k in ["vus", "iterations", "duration", "stages"] {
        shape.remove(k);
    }
    let mut shape = with_defaults(shape);
    let text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
    shape.insert("consoleOutput".into(), text(&options.console_output));
    shape.insert("localIPs".into(), text(&options.local_ips));
    Ok(Value::Object(shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scenarios_show_k6s_types() {
        let s = scenario(
            &json!({"executor": "constant-vus", "vus": "3", "duration": 1000, "gracefulStop": 5000}),
        );
        assert_eq!(
            s,
            json!({"executor": "constant-vus", "startTime": null, "gracefulStop": "5s", "env": null,
                   "exec": null, "tags": null, "vus": 3, "duration": "1s"})
        );
    }

    #[test]
    fn test_options_derive_the_default_scenario() {
        let o = Options::from_json(&json!({"iterations": 1, "setupTimeout": "90s"}))
            .unwrap()
            .options;
        let v = test_options(&o).unwrap();
        assert!(v.get("iterations").is_none());
        assert_eq!(v["scenarios"]["default"]["executor"], "shared-iterations");
        assert_eq!(v["scenarios"]["default"]["iterations"], 1);
        assert_eq!(v["scenarios"]["default"]["vus"], Value::Null);
        assert_eq!(v["setupTimeout"], "1m30s");
        assert_eq!(v["systemTags"].as_array().map(Vec::len), Some(14));
        assert_eq!(v["localIPs"], Value::Null);
    }
}
