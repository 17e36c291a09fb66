//! Option layering: script `options` < `K6_*` environment < CLI flags.

use serde_json::{Map, Value};

use crate::args::RunArgs;

/// The consolidated options and what layering decided on the way.
pub struct Consolidated {
    /// The options in effect.
    pub options: Map<String, Value>,
    /// Warnings to print (e.g. a shortcut replacing scenarios).
    pub warnings: Vec<String>,
}

/// Options set by `K6_*` environment variables (those rk6 knows).
fn env_layer(env: &impl Fn(&str) -> Option<String>) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    let int = |k: &str, v: String| -> Result<Value, String> {
        v.trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("{k}: \"{v}\" is not an integer"))
    };
    if let Some(v) = env("K6_VUS") {
        m.insert("vus".into(), int("K6_VUS", v)?);
    }
    if let Some(v) = env("K6_ITERATIONS") {
        m.insert("iterations".into(), int("K6_ITERATIONS", v)?);
    }
    if let Some(v) = env("K6_DURATION") {
        m.insert("duration".into(), Value::String(v));
    }
    if let Some(v) = env("K6_MAX_REDIRECTS") {
        m.insert("maxRedirects".into(), int("K6_MAX_REDIRECTS", v)?);
    }
    if let Some(v) = env("K6_USER_AGENT") {
        m.insert("userAgent".into(), Value::String(v));
    }
    if let Some(v) = env("K6_INSECURE_SKIP_TLS_VERIFY") {
        m.insert(
            "insecureSkipTLSVerify".into(),
            Value::Bool(v == "true" || v == "1"),
        );
    }
    Ok(m)
}

fn cli_layer(args: &RunArgs) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(v) = args.vus {
        m.insert("vus".into(), v.into());
    }
    if let Some(v) = args.iterations {
        m.insert("iterations".into(), v.into());
    }
    if let Some(v) = &args.duration {
        m.insert("duration".into(), Value::String(v.clone()));
    }
    if let Some(v) = args.max_redirects {
        m.insert("maxRedirects".into(), v.into());
    }
    if let Some(v) = &args.user_agent {
        m.insert("userAgent".into(), Value::String(v.clone()));
    }
    if args.insecure_skip_tls_verify {
        m.insert("insecureSkipTLSVerify".into(), Value::Bool(true));
    }
    if !args.tag.is_empty() {
        let tags: Map<String, Value> = args
            .tag
            .iter()
            .filter_map(|t| {
                t.split_once('=')
                    .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            })
            .collect();
        m.insert("tags".into(), Value::Object(tags));
    }
    m
}

const SHORTCUTS: &[&str] = &["duration", "iterations", "stages"];

/// Every option key k6 1.1 accepts in a script's `options` (k6 warns about others and runs).
const KNOWN: &[&str] = &[
    "paused",
    "vus",
    "duration",
    "iterations",
    "stages",
    "scenarios",
    "executionSegment",
    "executionSegmentSequence",
    "noSetup",
    "setupTimeout",
    "noTeardown",
    "teardownTimeout",
    "rps",
    "dns",
    "maxRedirects",
    "userAgent",
    "batch",
    "batchPerHost",
    "httpDebug",
    "insecureSkipTLSVerify",
    "tlsCipherSuites",
    "tlsVersion",
    "tlsAuth",
    "throw",
    "thresholds",
    "blacklistIPs",
    "blockHostnames",
    "hosts",
    "noConnectionReuse",
    "noVUConnectionReuse",
    "minIterationDuration",
    "ext",
    "summaryTrendStats",
    "summaryTimeUnit",
    "systemTags",
    "tags",
    "metricSamplesBufferSize",
    "noCookiesReset",
    "discardResponseBodies",
    "consoleOutput",
    "localIPs",
    "cloud",
    "summaryMode",
];

/// Script option keys k6 does not know, in the order given.
pub fn unknown_keys(script: &Value) -> Vec<String> {
    script
        .as_object()
        .map(|m| {
            m.keys()
                .filter(|k| !KNOWN.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Merges the layers. A layer above the script that sets an execution shortcut replaces the
/// script's `scenarios`, with k6's warning.
pub fn consolidate(
    script: &Value,
    args: &RunArgs,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Consolidated, String> {
    let mut options = script.as_object().cloned().unwrap_or_default();
    let mut warnings = Vec::new();
    for (layer_name, layer) in [("environment", env_layer(&env)?), ("cli", cli_layer(args))] {
        let sets_shortcut = SHORTCUTS.iter().any(|k| layer.contains_key(*k));
        if sets_shortcut && options.contains_key("scenarios") {
            options.remove("scenarios");
            warnings.push(format!(
                "\"{layer_name}\" level configuration overrode scenarios configuration entirely"
            ));
        }
        for (k, v) in layer {
            options.insert(k, v);
        }
    }
    Ok(Consolidated { options, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn cli_beats_env_beats_script() {
        let script = json!({"vus": 2, "iterations": 2, "userAgent": "script-ua"});
        let args = RunArgs {
            vus: Some(5),
            iterations: Some(10),
            ..Default::default()
        };
        let env = |k: &str| (k == "K6_USER_AGENT").then(|| "env-ua".to_string());
        let c = consolidate(&script, &args, env).unwrap();
        assert_eq!(c.options["vus"], json!(5));
        assert_eq!(c.options["iterations"], json!(10));
        assert_eq!(c.options["userAgent"], json!("env-ua"));
        let c = consolidate(&script, &RunArgs::default(), no_env).unwrap();
        assert_eq!(c.options["vus"], json!(2));
    }

    #[test]
    fn cli_shortcut_replaces_scenarios() {
        let script = json!({"scenarios": {"a": {"executor": "shared-iterations"}}});
        let args = RunArgs {
            duration: Some("1s".into()),
            ..Default::default()
        };
        let c = consolidate(&script, &args, no_env).unwrap();
        assert!(!c.options.contains_key("scenarios"));
        assert_eq!(
            c.warnings,
            vec!["\"cli\" level configuration overrode scenarios configuration entirely"]
        );
    }

    #[test]
    fn layers_merge_field_by_field() {
        // As in k6: script iterations + CLI duration = shared-iterations with a maxDuration.
        let script = json!({"vus": 2, "iterations": 5});
        let args = RunArgs {
            duration: Some("1s".into()),
            ..Default::default()
        };
        let c = consolidate(&script, &args, no_env).unwrap();
        assert_eq!(c.options["iterations"], json!(5));
        assert_eq!(c.options["duration"], json!("1s"));
    }

    #[test]
    fn unknown_script_options_are_found() {
        assert_eq!(
            unknown_keys(&json!({"vus": 1, "vuss": 2, "thresholds": {}})),
            vec!["vuss"]
        );
    }

    #[test]
    fn bad_env_values_are_rejected() {
        let env = |k: &str| (k == "K6_VUS").then(|| "many".to_string());
        assert!(consolidate(&json!({}), &RunArgs::default(), env).is_err());
    }
}
