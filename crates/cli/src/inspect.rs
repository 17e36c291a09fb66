//! `rk6 inspect`: the script's (or an archive's) options as k6 reports them (every option
//! key, `null` when unset), for tools that read `k6 inspect` output.

use std::path::Path;
use std::sync::Arc;

use rk6_js::log::{Level, Logger};
use rk6_js::{read_init, InitInfo, Program};
use rk6_metrics::Registry;
use rk6_options::{format_duration, script_layer, Options, ScriptLayer};
use rk6_scheduler::{scenarios_from_options, Scenario};
use serde_json::{Map, Value};

use crate::args::InspectArgs;
use crate::exit::ExitCode;
use crate::options_json;
use crate::test_file::TestFile;

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

/// The options a script (or archive) exports, read as `k6 inspect` reads them: its init
/// context run once with `env`, no other option layer. Also the program and what its init
/// context exported, for callers that go on to run it (`rk6 aggregate`).
pub(crate) fn script_options(
    script: &Path,
    include_system_env_vars: bool,
    env: &[String],
    registry: Arc<Registry>,
    logger: Logger,
) -> Result<(Arc<Program>, InitInfo, ScriptLayer), (ExitCode, String)> {
    let script_failure = |e: rk6_js::ScriptError| match e.kind {
        rk6_js::ScriptErrorKind::Load => (ExitCode::Failure, e.message),
        _ => (ExitCode::ScriptException, e.message),
    };
    let test = TestFile::open(script, None).map_err(script_failure)?;
    // Like `k6 inspect`, the system environment is not in __ENV unless asked for.
    let env = test
        .env(include_system_env_vars, env)
        .map_err(|e| (ExitCode::InvalidConfig, e))?;
    let program = test.program(env).map_err(script_failure)?;
    let init = read_init(program.clone(), registry, logger).map_err(script_failure)?;
    let layer =
        script_layer(test.script_options(&init.options)).map_err(|e| (e.code, e.message))?;
    Ok((program, init, layer))
}

fn inspect(args: &InspectArgs, logger: Logger) -> Result<String, (ExitCode, String)> {
    let (_, _, script) = script_options(
        &args.script,
        args.include_system_env_vars,
        &args.env,
        Arc::new(Registry::new()),
        logger,
    )?;
    crate::plan::warn_unknown_keys(&logger, &script.unknown);
    let options = script.options;
    let mut out = k6_shape(&options);
    if args.execution_requirements {
        requirements(&options, &mut out).map_err(|e| (ExitCode::InvalidConfig, e))?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(out))
        .map_err(|e| (ExitCode::ScriptException, e.to_string()))?;
    Ok(go_escape(&text))
}

/// The options with every key k6 knows, in k6's order, `null` where unset.
pub(crate) fn k6_shape(options: &Options) -> Map<String, Value> {
    let mut out = options.to_k6_json();
    if let Ok(s) = options_json::scenarios(options, false) {
        out.insert("scenarios".into(), s);
    }
    out
}

/// `--execution-requirements`: the scenarios the shortcuts stand for, the longest the test
/// can take and the VUs it needs.
fn requirements(options: &Options, out: &mut Map<String, Value>) -> Result<(), String> {
    let scenarios = scenarios_from_options(options).map_err(|e| e.0)?;
    let derived = options_json::scenarios(options, true).map_err(|e| e.0)?;
    out.insert("scenarios".into(), derived);
    *out = options_json::with_defaults(std::mem::take(out));
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
    use rk6_options::INSPECT_KEYS;
    use serde_json::json;

    fn opts(v: Value) -> Options {
        Options::from_json(&v).unwrap().options
    }

    #[test]
    fn fills_every_key_in_k6_order() {
        let options =
            json!({"vus": 2, "scenarios": {"s": {"executor": "constant-vus", "duration": "5s"}}});
        let out = k6_shape(&opts(options));
        let keys: Vec<&String> = out.keys().collect();
        assert_eq!(keys.len(), INSPECT_KEYS.len());
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
        let options = opts(json!({"vus": 3, "iterations": 10}));
        let mut out = k6_shape(&options);
        requirements(&options, &mut out).unwrap();
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
            let o = opts(options(start));
            let mut out = k6_shape(&o);
            requirements(&o, &mut out).unwrap();
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
