//! Option layering: defaults < `--config` file < script `options` < `K6_*` environment <
//! CLI flags.

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
    for (var, key) in [
        ("K6_SETUP_TIMEOUT", "setupTimeout"),
        ("K6_TEARDOWN_TIMEOUT", "teardownTimeout"),
    ] {
        if let Some(v) = env(var) {
            m.insert(key.into(), Value::String(v));
        }
    }
    if let Some(v) = env("K6_MAX_REDIRECTS") {
        m.insert("maxRedirects".into(), int("K6_MAX_REDIRECTS", v)?);
    }
    if let Some(v) = env("K6_BATCH") {
        m.insert("batch".into(), int("K6_BATCH", v)?);
    }
    if let Some(v) = env("K6_BATCH_PER_HOST") {
        m.insert("batchPerHost".into(), int("K6_BATCH_PER_HOST", v)?);
    }
    if let Some(v) = env("K6_USER_AGENT") {
        m.insert("userAgent".into(), Value::String(v));
    }
    if let Some(v) = env("K6_TLSAUTH") {
        let auth = serde_json::from_str(&v).map_err(|e| format!("K6_TLSAUTH: {e}"))?;
        m.insert("tlsAuth".into(), auth);
    }
    if let Some(v) = env("K6_HTTP_DEBUG") {
        m.insert("httpDebug".into(), Value::String(v));
    }
    let boolean = |v: String| Value::Bool(v == "true" || v == "1");
    for (var, key) in [
        ("K6_INSECURE_SKIP_TLS_VERIFY", "insecureSkipTLSVerify"),
        ("K6_PAUSED", "paused"),
        ("K6_NO_CONNECTION_REUSE", "noConnectionReuse"),
        ("K6_NO_VU_CONNECTION_REUSE", "noVUConnectionReuse"),
        ("K6_NO_COOKIES_RESET", "noCookiesReset"),
        ("K6_NO_SETUP", "noSetup"),
        ("K6_NO_TEARDOWN", "noTeardown"),
    ] {
        if let Some(v) = env(var) {
            m.insert(key.into(), boolean(v));
        }
    }
    if let Some(v) = env("K6_STAGES") {
        m.insert("stages".into(), stages_value("K6_STAGES", &v)?);
    }
    if let Some(v) = env("K6_SUMMARY_TREND_STATS") {
        m.insert("summaryTrendStats".into(), list(&v));
    }
    if let Some(v) = env("K6_SUMMARY_TIME_UNIT") {
        m.insert("summaryTimeUnit".into(), Value::String(v));
    }
    if let Some(v) = env("K6_SUMMARY_MODE") {
        m.insert("summaryMode".into(), Value::String(v));
    }
    crate::net_options::env_layer(env, &mut m)?;
    Ok(m)
}

/// `a,b,c` as a JSON array of strings.
fn list(v: &str) -> Value {
    Value::Array(
        v.split(',')
            .map(|s| Value::String(s.trim().to_string()))
            .filter(|s| s.as_str() != Some(""))
            .collect(),
    )
}

/// k6's `--stage`/`K6_STAGES` form `30s:10,1m:0` (duration:target).
fn stages_value(name: &str, v: &str) -> Result<Value, String> {
    let mut out = Vec::new();
    for part in v.split(',') {
        let (d, t) = part.split_once(':').unwrap_or((part, "0"));
        let target: u64 = t
            .trim()
            .parse()
            .map_err(|_| format!("{name}: \"{part}\" is not duration:target"))?;
        out.push(serde_json::json!({"duration": d.trim(), "target": target}));
    }
    Ok(Value::Array(out))
}

/// Reads a `--config` file (k6's JSON format: options plus a few CLI-only keys).
pub fn config_layer(path: &std::path::Path) -> Result<Map<String, Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("couldn't read the config file {}: {e}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("couldn't parse the config file {}: {e}", path.display()))?;
    let Value::Object(mut m) = value else {
        return Err(format!(
            "the config file {} must hold a JSON object",
            path.display()
        ));
    };
    // Keys k6 accepts in the file that are not script options.
    for k in [
        "out",
        "linger",
        "noUsageReport",
        "webDashboard",
        "collectors",
    ] {
        m.remove(k);
    }
    if let Some(k) = m.keys().find(|k| !is_known(k)) {
        return Err(format!(
            "the config file {}: json: unknown field \"{k}\"",
            path.display()
        ));
    }
    Ok(m)
}

fn cli_layer(args: &RunArgs) -> Result<Map<String, Value>, String> {
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
    if let Some(v) = args.batch {
        m.insert("batch".into(), v.into());
    }
    if let Some(v) = args.batch_per_host {
        m.insert("batchPerHost".into(), v.into());
    }
    if let Some(v) = &args.user_agent {
        m.insert("userAgent".into(), Value::String(v.clone()));
    }
    if let Some(v) = &args.http_debug {
        m.insert("httpDebug".into(), Value::String(v.clone()));
    }
    if args.insecure_skip_tls_verify {
        m.insert("insecureSkipTLSVerify".into(), Value::Bool(true));
    }
    for (set, key) in [
        (args.paused, "paused"),
        (args.no_connection_reuse, "noConnectionReuse"),
        (args.no_vu_connection_reuse, "noVUConnectionReuse"),
    ] {
        if set {
            m.insert(key.into(), Value::Bool(true));
        }
    }
    if let Some(v) = &args.execution_segment {
        m.insert("executionSegment".into(), Value::String(v.clone()));
    }
    if let Some(v) = &args.execution_segment_sequence {
        m.insert("executionSegmentSequence".into(), Value::String(v.clone()));
    }
    if let Some(v) = &args.summary_trend_stats {
        m.insert("summaryTrendStats".into(), list(v));
    }
    if let Some(v) = &args.summary_time_unit {
        m.insert("summaryTimeUnit".into(), Value::String(v.clone()));
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
    crate::net_options::cli_layer(args, &mut m)?;
    Ok(m)
}

const SHORTCUTS: &[&str] = &["duration", "iterations", "stages"];

/// The option keys k6 1.1 accepts in a script's `options`, in the order `k6 inspect` prints
/// them; [`OTHER_OPTIONS`] are accepted too (k6 warns about any other key and runs).
pub(crate) const OPTION_KEYS: &[&str] = &[
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
];

/// Option keys k6 accepts that `k6 inspect` does not print.
const OTHER_OPTIONS: &[&str] = &["consoleOutput", "localIPs", "cloud", "summaryMode"];

/// Only `--local-ips`/`K6_LOCAL_IPS` set this: k6 ignores it in a script (with the
/// unknown-field warning) and in a config file.
const CLI_ONLY: &str = "localIPs";

/// Options rk6 adds to k6's (see docs/scripting.md); k6 warns about them and ignores them.
const RK6_OPTIONS: &[&str] = &["h2c"];

/// Whether k6 (or rk6, for its own additions) knows the option key.
fn is_known(key: &str) -> bool {
    OPTION_KEYS.contains(&key) || OTHER_OPTIONS.contains(&key) || RK6_OPTIONS.contains(&key)
}

/// Script option keys k6 does not know, in the order given.
pub fn unknown_keys(script: &Value) -> Vec<String> {
    script
        .as_object()
        .map(|m| {
            m.keys()
                .filter(|k| !is_known(k) || *k == CLI_ONLY)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Merges the layers. A layer that sets an execution shortcut replaces the `scenarios` of
/// the layers below it, with k6's warning; one that sets `scenarios` drops their shortcuts.
pub fn consolidate(
    script: &Value,
    args: &RunArgs,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Consolidated, String> {
    let config_path = args
        .config
        .clone()
        .or_else(|| env("K6_CONFIG").map(std::path::PathBuf::from));
    let config = match &config_path {
        Some(path) => config_layer(path)?,
        None => Map::new(),
    };
    let mut options = Map::new();
    let mut warnings = Vec::new();
    let script = script.as_object().cloned().unwrap_or_default();
    for (layer_name, layer) in [
        ("config", config),
        ("script", script),
        ("environment", env_layer(&env)?),
        ("cli", cli_layer(args)?),
    ] {
        let mut layer = layer;
        if matches!(layer_name, "config" | "script") {
            layer.remove(CLI_ONLY);
        }
        let sets_shortcut = SHORTCUTS.iter().any(|k| layer.contains_key(*k));
        if sets_shortcut && options.contains_key("scenarios") {
            options.remove("scenarios");
            warnings.push(format!(
                "\"{layer_name}\" level configuration overrode scenarios configuration entirely"
            ));
        }
        if layer.contains_key("scenarios") {
            for k in SHORTCUTS {
                options.remove(*k);
            }
        }
        for (k, v) in layer {
            let v = if k == "dns" {
                crate::net_options::merge_dns(options.get("dns"), v)
            } else {
                v
            };
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
    fn config_file_is_the_lowest_layer() {
        let dir = std::env::temp_dir().join(format!("rk6-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.json");
        std::fs::write(
            &path,
            r#"{"vus": 7, "duration": "9s", "userAgent": "from-config", "out": ["json=x"]}"#,
        )
        .unwrap();
        let args = RunArgs {
            config: Some(path.clone()),
            ..Default::default()
        };
        let script = json!({"vus": 2});
        let c = consolidate(&script, &args, no_env).unwrap();
        assert_eq!(c.options["vus"], json!(2), "script beats config");
        assert_eq!(c.options["duration"], json!("9s"));
        assert_eq!(c.options["userAgent"], json!("from-config"));
        assert!(!c.options.contains_key("out"));
        // Script scenarios replace the config's shortcut.
        let script = json!({"scenarios": {"a": {"executor": "shared-iterations"}}});
        let c = consolidate(&script, &args, no_env).unwrap();
        assert!(!c.options.contains_key("duration"));
        std::fs::write(&path, r#"{"vuss": 1}"#).unwrap();
        let e = consolidate(&json!({}), &args, no_env).err().unwrap();
        assert!(e.contains("unknown field \"vuss\""), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn env_stages_and_lists() {
        let env = |k: &str| match k {
            "K6_STAGES" => Some("1s:2,3s".to_string()),
            "K6_SUMMARY_TREND_STATS" => Some("avg, p(99)".to_string()),
            _ => None,
        };
        let c = consolidate(&json!({}), &RunArgs::default(), env).unwrap();
        assert_eq!(
            c.options["stages"],
            json!([{"duration": "1s", "target": 2}, {"duration": "3s", "target": 0}])
        );
        assert_eq!(c.options["summaryTrendStats"], json!(["avg", "p(99)"]));
    }

    #[test]
    fn tlsauth_env_is_json() {
        let env = |k: &str| (k == "K6_TLSAUTH").then(|| r#"[{"cert":"c","key":"k"}]"#.to_string());
        let c = consolidate(&json!({}), &RunArgs::default(), env).unwrap();
        assert_eq!(c.options["tlsAuth"], json!([{"cert": "c", "key": "k"}]));
        let bad = |k: &str| (k == "K6_TLSAUTH").then(|| "[".to_string());
        let err = consolidate(&json!({}), &RunArgs::default(), bad)
            .err()
            .unwrap();
        assert!(err.contains("K6_TLSAUTH"), "{err}");
    }

    #[test]
    fn bad_env_values_are_rejected() {
        let env = |k: &str| (k == "K6_VUS").then(|| "many".to_string());
        assert!(consolidate(&json!({}), &RunArgs::default(), env).is_err());
    }
}
