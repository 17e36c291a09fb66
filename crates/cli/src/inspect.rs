//! `rk6 inspect`: the script's options as k6 reports them (every option key, `null` when
//! unset), for tools that read `k6 inspect` output.

use std::collections::BTreeMap;
use std::sync::Arc;

use rk6_js::log::{Level, Logger};
use rk6_js::{read_init, Program};
use rk6_metrics::Registry;
use rk6_scheduler::{format_duration, scenarios_from_options, Scenario};
use serde_json::{Map, Value};

use crate::args::InspectArgs;
use crate::exit::ExitCode;
use crate::options::OPTION_KEYS;

/// Keys every scenario shows, before its executor's own.
const SCENARIO_COMMON: &[&str] = &[
    "executor",
    "startTime",
    "gracefulStop",
    "env",
    "exec",
    "tags",
];

/// Each executor's own keys, in k6's order.
fn executor_keys(executor: &str) -> &'static [&'static str] {
    match executor {
        "shared-iterations" | "per-vu-iterations" => &["vus", "iterations", "maxDuration"],
        "constant-vus" => &["vus", "duration"],
        "ramping-vus" => &["startVUs", "stages", "gracefulRampDown"],
        "constant-arrival-rate" => &["rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"],
        "ramping-arrival-rate" => &[
            "startRate",
            "timeUnit",
            "stages",
            "preAllocatedVUs",
            "maxVUs",
        ],
        "externally-controlled" => &["vus", "duration", "maxVUs"],
        _ => &[],
    }
}

/// Runs `rk6 inspect`.
pub fn run(args: crate::args::InspectArgs) -> ExitCode {
    let logger = Logger::new(false);
    match inspect(&args, logger) {
        Ok(text) => {
            // k6 ends the JSON without a newline.
            print!("{text}");
            ExitCode::Success
        }
        Err((code, msg)) => {
            logger.log(Level::Error, &msg, &[]);
            code
        }
    }
}

fn inspect(args: &InspectArgs, logger: Logger) -> Result<String, (ExitCode, String)> {
    // Like `k6 inspect`, the system environment is not in __ENV unless asked for.
    let mut env: BTreeMap<String, String> = if args.include_system_env_vars {
        std::env::vars().collect()
    } else {
        BTreeMap::new()
    };
    for kv in &args.env {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            (
                ExitCode::InvalidConfig,
                format!("invalid -e/--env value \"{kv}\": expected KEY=VALUE"),
            )
        })?;
        env.insert(k.to_string(), v.to_string());
    }
    let script_failure = |e: rk6_js::ScriptError| (ExitCode::ScriptException, e.message);
    let program = Program::load(&args.script, env).map_err(script_failure)?;
    let init = read_init(program, Arc::new(Registry::new()), logger).map_err(script_failure)?;
    let options = init.options.as_object().cloned().unwrap_or_default();
    for key in crate::options::unknown_keys(&init.options) {
        logger.log(
            Level::Warning,
            "There were unknown fields in the options exported in the script",
            &[("error", &format!("json: unknown field \"{key}\""))],
        );
    }
    let mut out = k6_shape(&options);
    if args.execution_requirements {
        requirements(&options, &mut out).map_err(|e| (ExitCode::InvalidConfig, e))?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(out))
        .map_err(|e| (ExitCode::ScriptException, e.to_string()))?;
    Ok(go_escape(&text))
}

/// The options with every key k6 knows, in k6's order, `null` where unset.
fn k6_shape(options: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for key in OPTION_KEYS {
        let value = options.get(*key).cloned().unwrap_or(Value::Null);
        let value = match *key {
            "dns" => dns(&value),
            "scenarios" => match value {
                Value::Object(s) => Value::Object(
                    s.iter()
                        .map(|(name, sc)| (name.clone(), scenario(sc)))
                        .collect(),
                ),
                other => other,
            },
            _ => value,
        };
        out.insert((*key).to_string(), value);
    }
    out
}

fn dns(value: &Value) -> Value {
    let mut m = Map::new();
    for k in ["ttl", "select", "policy"] {
        m.insert(k.into(), value.get(k).cloned().unwrap_or(Value::Null));
    }
    Value::Object(m)
}

fn scenario(value: &Value) -> Value {
    let executor = value.get("executor").and_then(Value::as_str).unwrap_or("");
    let mut m = Map::new();
    for k in SCENARIO_COMMON.iter().chain(executor_keys(executor)) {
        m.insert((*k).into(), value.get(*k).cloned().unwrap_or(Value::Null));
    }
    Value::Object(m)
}

/// `--execution-requirements`: the scenarios the shortcuts stand for, the longest the test
/// can take and the VUs it needs.
fn requirements(options: &Map<String, Value>, out: &mut Map<String, Value>) -> Result<(), String> {
    let scenarios = scenarios_from_options(options).map_err(|e| e.0)?;
    if !options.get("scenarios").is_some_and(Value::is_object) {
        let (executor, fields) = if options.get("stages").is_some_and(|s| !s.is_null()) {
            ("ramping-vus", vec![("stages", options.get("stages"))])
        } else if options.get("duration").is_some_and(|s| !s.is_null()) {
            (
                "constant-vus",
                vec![
                    ("vus", options.get("vus")),
                    ("duration", options.get("duration")),
                ],
            )
        } else if options.get("iterations").is_some_and(|s| !s.is_null()) {
            (
                "shared-iterations",
                vec![
                    ("vus", options.get("vus")),
                    ("iterations", options.get("iterations")),
                ],
            )
        } else {
            ("per-vu-iterations", vec![])
        };
        let mut sc = Map::new();
        sc.insert("executor".into(), executor.into());
        for (k, v) in fields {
            if let Some(v) = v {
                sc.insert(k.into(), v.clone());
            }
        }
        let mut all = Map::new();
        all.insert("default".into(), scenario(&Value::Object(sc)));
        out.insert("scenarios".into(), Value::Object(all));
    }
    // k6 fills these defaults in once it has consolidated the configuration.
    let defaults: [(&str, &[&str]); 2] = [
        (
            "summaryTrendStats",
            &["avg", "min", "med", "max", "p(90)", "p(95)"],
        ),
        ("systemTags", &rk6_metrics::tags::DEFAULT_SYSTEM_TAGS),
    ];
    for (key, value) in defaults {
        if out.get(key).is_none_or(Value::is_null) {
            out.insert(key.into(), value.iter().map(|s| Value::from(*s)).collect());
        }
    }
    let scenarios: Vec<Arc<_>> = scenarios.into_iter().map(Arc::new).collect();
    let total = scenarios
        .iter()
        .map(|s| s.max_duration())
        .max()
        .unwrap_or_default();
    out.insert("totalDuration".into(), format_duration(total).into());
    out.insert("maxVUs".into(), peak_vus(&scenarios).into());
    Ok(())
}

/// The most VUs needed at once: scenarios that do not overlap in time share their VUs, as
/// in k6's execution plan. The peak is at some scenario's start.
fn peak_vus(scenarios: &[Arc<Scenario>]) -> u64 {
    scenarios
        .iter()
        .map(|s| {
            scenarios
                .iter()
                .filter(|o| o.start_time <= s.start_time && s.start_time < o.max_duration())
                .map(|o| o.max_vus())
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

/// Go's JSON encoder escapes `<`, `>` and `&`; k6 users diff against that output.
fn go_escape(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fills_every_key_in_k6_order() {
        let options =
            json!({"vus": 2, "scenarios": {"s": {"executor": "constant-vus", "duration": "5s"}}});
        let out = k6_shape(options.as_object().unwrap());
        let keys: Vec<&String> = out.keys().collect();
        assert_eq!(keys.len(), OPTION_KEYS.len());
        assert_eq!(keys[0], "paused");
        assert_eq!(out["vus"], json!(2));
        assert_eq!(
            out["dns"],
            json!({"ttl": null, "select": null, "policy": null})
        );
        let s: Vec<&String> = out["scenarios"]["s"].as_object().unwrap().keys().collect();
        assert_eq!(
            s,
            [
                "executor",
                "startTime",
                "gracefulStop",
                "env",
                "exec",
                "tags",
                "vus",
                "duration"
            ]
        );
    }

    #[test]
    fn execution_requirements_from_shortcuts() {
        let options = json!({"vus": 3, "iterations": 10});
        let options = options.as_object().unwrap();
        let mut out = k6_shape(options);
        requirements(options, &mut out).unwrap();
        assert_eq!(out["totalDuration"], json!("10m30s"));
        assert_eq!(out["maxVUs"], json!(3));
        assert_eq!(
            out["scenarios"]["default"]["executor"],
            json!("shared-iterations")
        );
        assert_eq!(out["scenarios"]["default"]["iterations"], json!(10));
        assert_eq!(out["summaryTrendStats"][5], json!("p(95)"));
        assert_eq!(out["systemTags"].as_array().map(Vec::len), Some(14));
    }

    #[test]
    fn max_vus_shares_vus_between_scenarios_that_do_not_overlap() {
        let options = |b_start: &str| {
            json!({"scenarios": {
                "a": {"executor": "constant-vus", "vus": 3, "duration": "10s", "gracefulStop": "5s"},
                "b": {"executor": "constant-arrival-rate", "startTime": b_start, "rate": 1,
                      "duration": "5s", "preAllocatedVUs": 2, "maxVUs": 4},
            }})
        };
        for (start, vus, total) in [("20s", 4, "55s"), ("14s", 7, "49s")] {
            let o = options(start);
            let o = o.as_object().unwrap();
            let mut out = k6_shape(o);
            requirements(o, &mut out).unwrap();
            assert_eq!(out["maxVUs"], json!(vus), "{start}");
            assert_eq!(out["totalDuration"], json!(total), "{start}");
        }
    }

    #[test]
    fn escapes_like_go() {
        assert_eq!(
            go_escape(r#"["p(95)<200&x>1"]"#),
            r#"["p(95)\u003c200\u0026x\u003e1"]"#
        );
    }
}
