//! The option layers below the command line — the `--config` file, the script's `options`
//! and the `K6_*` environment — and their consolidation: defaults < config file < script <
//! environment < flags.

use std::path::Path;

use serde_json::Value;

use crate::error::OptionsError;
use crate::options::{is_known, Dns, Options, Stage, TlsAuth};
use crate::text;

/// Keys k6 accepts in a config file that are not script options (rk6 ignores them).
const CONFIG_FILE_ONLY: &[&str] = &[
    "out",
    "linger",
    "noUsageReport",
    "webDashboard",
    "collectors",
];

/// The script's options and what k6 warns about in them.
#[derive(Debug, Clone, Default)]
pub struct ScriptLayer {
    /// The options the script sets.
    pub options: Options,
    /// Keys k6 does not know (warned about, then ignored); `localIPs` is one of them in a
    /// script, as k6 reads it from flags and the environment only.
    pub unknown: Vec<String>,
}

/// Reads a script's exported `options` (`{}` when it exports none).
pub fn script_layer(exported: &Value) -> Result<ScriptLayer, OptionsError> {
    let exported = match exported {
        Value::Null => &Value::Object(Default::default()),
        v => v,
    };
    let layer = Options::from_json(exported)?;
    // k6 reads localIPs from flags and the environment only: in a script it is unknown.
    let unknown = exported
        .as_object()
        .map(|m| {
            m.keys()
                .filter(|k| !is_known(k) || *k == "localIPs")
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let mut options = layer.options;
    options.local_ips = None;
    Ok(ScriptLayer { options, unknown })
}

/// Reads a `--config` file (k6's JSON format: options plus a few keys of its own).
pub fn config_file(path: &Path) -> Result<Options, OptionsError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        OptionsError::invalid(format!(
            "couldn't read the config file {}: {e}",
            path.display()
        ))
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        OptionsError::invalid(format!(
            "couldn't parse the config file {}: {e}",
            path.display()
        ))
    })?;
    let Value::Object(mut m) = value else {
        return Err(OptionsError::invalid(format!(
            "the config file {} must hold a JSON object",
            path.display()
        )));
    };
    for k in CONFIG_FILE_ONLY {
        m.remove(*k);
    }
    if let Some(k) = m.keys().find(|k| !is_known(k)) {
        return Err(OptionsError::invalid(format!(
            "the config file {}: json: unknown field \"{k}\"",
            path.display()
        )));
    }
    let mut options = Options::from_json(&Value::Object(m))
        .map_err(|e| {
            OptionsError::invalid(format!("the config file {}: {}", path.display(), e.message))
        })?
        .options;
    // Flags and the environment only, as in k6.
    options.local_ips = None;
    Ok(options)
}

/// The options set by `K6_*` environment variables (those of k6 that rk6 honours).
pub fn env_layer(env: &dyn Fn(&str) -> Option<String>) -> Result<Options, OptionsError> {
    let mut o = Options::default();
    let bad = |var: &str, e: &dyn std::fmt::Display| OptionsError::invalid(format!("{var}: {e}"));
    let boolean = |var: &str| -> Result<Option<bool>, OptionsError> {
        env(var).map_or(Ok(None), |v| text::boolean(&v).map_err(|e| bad(var, &e)))
    };
    let int = |var: &str| -> Result<Option<i64>, OptionsError> {
        env(var).map_or(Ok(None), |v| text::opt_int(&v).map_err(|e| bad(var, &e)))
    };
    let count = |var: &str| -> Result<Option<u64>, OptionsError> {
        int(var)?
            .map(|n| {
                u64::try_from(n).map_err(|_| {
                    OptionsError::invalid(format!("{var} must be a non-negative integer, got {n}"))
                })
            })
            .transpose()
    };
    let duration =
        |var: &str| env(var).map_or(Ok(None), |v| text::duration(&v).map_err(|e| bad(var, &e)));
    let string = |var: &str| env(var).and_then(|v| text::string(&v));
    let list = |var: &str| env(var).map(|v| text::list(&v));

    o.paused = boolean("K6_PAUSED")?;
    o.vus = int("K6_VUS")?;
    o.duration = duration("K6_DURATION")?;
    o.iterations = int("K6_ITERATIONS")?;
    if let Some(v) = env("K6_STAGES") {
        o.stages = Some(stages_text(&v).map_err(|e| bad("K6_STAGES", &e))?);
    }
    o.no_setup = boolean("K6_NO_SETUP")?;
    o.setup_timeout = duration("K6_SETUP_TIMEOUT")?;
    o.no_teardown = boolean("K6_NO_TEARDOWN")?;
    o.teardown_timeout = duration("K6_TEARDOWN_TIMEOUT")?;
    o.rps = int("K6_RPS")?;
    if let Some(v) = env("K6_DNS") {
        o.dns = Dns::from_text(&v).map_err(|e| bad("K6_DNS", &e))?;
    }
    o.max_redirects = int("K6_MAX_REDIRECTS")?;
    // An empty K6_USER_AGENT leaves the option unset, as in k6.
    o.user_agent = string("K6_USER_AGENT");
    o.batch = count("K6_BATCH")?;
    o.batch_per_host = count("K6_BATCH_PER_HOST")?;
    o.http_debug = string("K6_HTTP_DEBUG");
    o.insecure_skip_tls_verify = boolean("K6_INSECURE_SKIP_TLS_VERIFY")?;
    o.tls_aia_fetch = boolean("K6_TLS_AIA_FETCH")?;
    o.tls_cipher_suites = list("K6_TLS_CIPHER_SUITES");
    if let Some(v) = env("K6_TLSAUTH") {
        let auth: Vec<TlsAuth> = serde_json::from_str(&v).map_err(|e| bad("K6_TLSAUTH", &e))?;
        o.tls_auth = Some(auth);
    }
    o.throw = boolean("K6_THROW")?;
    o.blacklist_ips = list("K6_BLACKLIST_IPS");
    o.block_hostnames = list("K6_BLOCK_HOSTNAMES");
    o.no_connection_reuse = boolean("K6_NO_CONNECTION_REUSE")?;
    o.no_vu_connection_reuse = boolean("K6_NO_VU_CONNECTION_REUSE")?;
    o.min_iteration_duration = duration("K6_MIN_ITERATION_DURATION")?;
    o.summary_trend_stats = list("K6_SUMMARY_TREND_STATS");
    o.summary_time_unit = string("K6_SUMMARY_TIME_UNIT");
    o.system_tags = list("K6_SYSTEM_TAGS");
    if let Some(v) = env("K6_TAGS") {
        o.tags = Some(tags_text(&v).map_err(|e| bad("K6_TAGS", &e))?);
    }
    o.metric_samples_buffer_size = int("K6_METRIC_SAMPLES_BUFFER_SIZE")?;
    o.no_cookies_reset = boolean("K6_NO_COOKIES_RESET")?;
    o.discard_response_bodies = boolean("K6_DISCARD_RESPONSE_BODIES")?;
    o.local_ips = string("K6_LOCAL_IPS");
    o.summary_mode = string("K6_SUMMARY_MODE");
    o.handle_summary_timeout = duration("K6_HANDLE_SUMMARY_TIMEOUT")?;
    o.features = list("K6_FEATURES").filter(|l| !l.is_empty());
    Ok(o)
}

/// k6's `K6_STAGES` form `30s:10,1m:0` (duration:target). A stage without a target is
/// left without one, which the scenario then refuses as k6 does.
pub fn stages_text(v: &str) -> Result<Vec<Stage>, String> {
    v.split(',')
        .map(|part| {
            let (d, t) = part.split_once(':').unwrap_or((part, ""));
            let malformed = || format!("\"{part}\" is not duration:target");
            let duration = text::duration(d.trim()).map_err(|_| malformed())?;
            let target = text::opt_int(t.trim()).map_err(|_| malformed())?;
            if duration.is_none() {
                return Err(malformed());
            }
            Ok(Stage { duration, target })
        })
        .collect()
}

/// envconfig's map form `a:1,b:2`.
fn tags_text(v: &str) -> Result<std::collections::BTreeMap<String, String>, String> {
    v.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|pair| match pair.split(':').collect::<Vec<_>>()[..] {
            [k, v] => Ok((k.to_string(), v.to_string())),
            _ => Err(format!("invalid map item: \"{pair}\"")),
        })
        .collect()
}

/// The options in effect and what layering decided on the way.
#[derive(Debug, Clone, Default)]
pub struct Consolidated {
    /// The options in effect.
    pub options: Options,
    /// Warnings to print (a shortcut replacing scenarios).
    pub warnings: Vec<String>,
}

/// Merges the layers, lowest first, each named as k6 names it in its warning (`config`,
/// `script`, `env`, `cli`). As in k6, a layer that sets the execution — `duration`,
/// `iterations`, `stages` (even empty) or `scenarios` — replaces all four of the layers
/// below (with k6's warning when that drops their `scenarios`), so `iterations` in a script
/// and `--duration` on the command line run for the duration, not for the iterations. Within
/// one layer they add up (`iterations` with `duration` is a shared-iterations `maxDuration`),
/// or conflict when the scenarios are derived. Every other option is taken from the highest
/// layer that sets it (`vus` too; `dns` field by field).
pub fn consolidate(layers: Vec<(&str, Options)>) -> Consolidated {
    let mut options = Options::default();
    let mut warnings = Vec::new();
    // Which layer last set `vus` and `scenarios`, for the `--vus` shortcut of k6 2.1.
    let (mut vus_layer, mut scenarios_layer) = (None, None);
    // The run tags of every layer merged key by key (the `merge-run-tags` feature, k6 2.2).
    let mut merged_tags: Option<std::collections::BTreeMap<String, String>> = None;
    for (i, (name, layer)) in layers.into_iter().enumerate() {
        if layer.sets_execution() {
            if options.scenarios.is_some() {
                warnings.push(format!(
                    "\"{name}\" level configuration overrode scenarios configuration entirely"
                ));
            }
            options.duration = None;
            options.iterations = None;
            options.stages = None;
            options.scenarios = None;
        }
        if layer.vus.is_some() {
            vus_layer = Some(i);
        }
        if layer.scenarios.is_some() {
            scenarios_layer = Some(i);
        }
        if let Some(tags) = &layer.tags {
            merged_tags
                .get_or_insert_with(Default::default)
                .extend(tags.clone());
        }
        options.apply(layer);
    }
    if crate::features::Features::of(&options).merge_run_tags() {
        options.tags = merged_tags;
    }
    warnings.extend(vus_shortcut(&mut options, vus_layer, scenarios_layer));
    warnings.extend(default_execution_warnings(&options));
    Consolidated { options, warnings }
}

/// k6 2.1's shortcut: `vus` with no `iterations`, `duration` or `stages` runs N iterations
/// shared by N VUs, and overrides scenarios set in a lower layer (`--vus 5` over a script's
/// scenarios), with k6's warning. Before 2.1, k6 ignored such a `vus` and ran 1 iteration;
/// a `vus` beside `scenarios` in the same layer keeps that layer's scenarios as in k6 1.x
/// (k6 2.1 would drop them; a 1.x script that has both means its scenarios).
fn vus_shortcut(
    o: &mut Options,
    vus_layer: Option<usize>,
    scenarios_layer: Option<usize>,
) -> Vec<String> {
    let Some(vus) = o.vus.filter(|v| *v > 0) else {
        return Vec::new();
    };
    if o.iterations.is_some() || o.duration.is_some() || o.stages.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if o.scenarios.is_some() {
        if scenarios_layer >= vus_layer {
            return Vec::new();
        }
        out.push(format!("`vus={vus}` overrides scenarios configuration"));
        o.scenarios = None;
    }
    o.iterations = Some(vus);
    out
}

/// What k6 warns about when nothing sets the execution, so the test is 1 iteration of 1 VU.
fn default_execution_warnings(o: &Options) -> Vec<String> {
    let stages = o.stages.as_ref().is_some_and(|s| !s.is_empty());
    let scenarios = o.scenarios.as_ref().is_some_and(|s| !s.is_empty());
    if o.iterations.is_some() || o.duration.is_some() || stages || scenarios {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(vus) = o.vus {
        out.push(format!(
            "`vus={vus}` option will be ignored, it only works in conjunction with `iterations`, `duration`, or `stages`"
        ));
    }
    let explicitly_empty =
        "was explicitly set to an empty value, running the script with 1 iteration in 1 VU";
    if o.stages.is_some() {
        out.push(format!("`stages` {explicitly_empty}"));
    }
    if o.scenarios.is_some() {
        out.push(format!("`scenarios` {explicitly_empty}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn layer(v: Value) -> Options {
        Options::from_json(&v).unwrap().options
    }

    #[test]
    fn cli_beats_env_beats_script() {
        let script = layer(json!({"vus": 2, "iterations": 2, "userAgent": "script-ua"}));
        let env = |k: &str| (k == "K6_USER_AGENT").then(|| "env-ua".to_string());
        let cli = layer(json!({"vus": 5, "iterations": 10}));
        let c = consolidate(vec![
            ("script", script.clone()),
            ("env", env_layer(&env).unwrap()),
            ("cli", cli),
        ]);
        assert_eq!(c.options.vus, Some(5));
        assert_eq!(c.options.iterations, Some(10));
        assert_eq!(c.options.user_agent.as_deref(), Some("env-ua"));
        let c = consolidate(vec![
            ("script", script),
            ("env", env_layer(&no_env).unwrap()),
        ]);
        assert_eq!(c.options.vus, Some(2));
    }

    #[test]
    fn a_shortcut_replaces_lower_scenarios_with_k6s_warning() {
        let script = layer(json!({"scenarios": {"a": {"executor": "shared-iterations"}}}));
        let cli = layer(json!({"duration": "1s"}));
        let c = consolidate(vec![("script", script.clone()), ("cli", cli)]);
        assert!(c.options.scenarios.is_none());
        assert_eq!(
            c.warnings,
            ["\"cli\" level configuration overrode scenarios configuration entirely"]
        );
        let env = |k: &str| (k == "K6_ITERATIONS").then(|| "3".to_string());
        let c = consolidate(vec![("script", script), ("env", env_layer(&env).unwrap())]);
        assert_eq!(
            c.warnings,
            ["\"env\" level configuration overrode scenarios configuration entirely"]
        );
    }

    #[test]
    fn a_layer_setting_the_execution_replaces_the_lower_ones() {
        // As k6 1.1 (checked side by side): script iterations + CLI duration = constant-vus.
        let c = consolidate(vec![
            ("script", layer(json!({"vus": 2, "iterations": 5}))),
            ("cli", layer(json!({"duration": "1s"}))),
        ]);
        assert_eq!(c.options.iterations, None);
        assert_eq!(c.options.duration, Some(crate::GoDuration::from_secs(1)));
        assert_eq!(c.options.vus, Some(2), "vus is an option of its own");
        // Stages give way to a higher layer's iterations, and an empty stages list still
        // replaces what is below it.
        let c = consolidate(vec![
            (
                "script",
                layer(json!({"stages": [{"duration": "2s", "target": 3}]})),
            ),
            ("cli", layer(json!({"iterations": 1, "vus": 1}))),
        ]);
        assert_eq!(c.options.stages, None);
        assert_eq!(c.options.iterations, Some(1));
        let c = consolidate(vec![
            ("config", layer(json!({"duration": "2s"}))),
            ("script", layer(json!({"stages": []}))),
        ]);
        assert_eq!(c.options.duration, None);
        // A higher layer's scenarios replace lower scenarios with the warning too.
        let c = consolidate(vec![
            (
                "config",
                layer(json!({"scenarios": {"a": {"executor": "shared-iterations"}}})),
            ),
            (
                "script",
                layer(json!({"scenarios": {"b": {"executor": "shared-iterations"}}})),
            ),
        ]);
        assert_eq!(
            c.options.scenarios.unwrap().keys().collect::<Vec<_>>(),
            ["b"]
        );
        assert_eq!(
            c.warnings,
            ["\"script\" level configuration overrode scenarios configuration entirely"]
        );
        // Within one layer they stay together.
        let c = consolidate(vec![(
            "script",
            layer(json!({"iterations": 5, "duration": "3s"})),
        )]);
        assert_eq!(c.options.iterations, Some(5));
        assert_eq!(c.options.duration, Some(crate::GoDuration::from_secs(3)));
    }
    /// k6 2.1 (release notes v2.1.0, #5794): `vus` alone is N iterations shared by N VUs,
    /// and overrides the scenarios of a lower layer with a warning.
    #[test]
    fn vus_alone_is_a_shortcut_as_in_k6_2_1() {
        let c = consolidate(vec![("cli", layer(json!({"vus": 3})))]);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!((c.options.vus, c.options.iterations), (Some(3), Some(3)));
        let scenarios = json!({"scenarios": {"a": {"executor": "shared-iterations"}}});
        let c = consolidate(vec![
            ("script", layer(scenarios.clone())),
            ("cli", layer(json!({"vus": 4}))),
        ]);
        assert_eq!(c.warnings, ["`vus=4` overrides scenarios configuration"]);
        assert!(c.options.scenarios.is_none());
        assert_eq!(c.options.iterations, Some(4));
        // Beside scenarios in one layer, k6 1.x's reading: the scenarios run.
        let mut both = scenarios;
        both["vus"] = json!(5);
        let c = consolidate(vec![("script", layer(both))]);
        assert!(c.options.scenarios.is_some() && c.options.iterations.is_none());
        // `vus=0` is still ignored with k6 1.x's warning.
        let c = consolidate(vec![("cli", layer(json!({"vus": 0})))]);
        assert_eq!(
            c.warnings,
            ["`vus=0` option will be ignored, it only works in conjunction with `iterations`, `duration`, or `stages`"]
        );
        let c = consolidate(vec![("script", layer(json!({"scenarios": {}, "vus": 2})))]);
        assert_eq!(c.warnings.len(), 2);
        assert_eq!(
            c.warnings[1],
            "`scenarios` was explicitly set to an empty value, running the script with 1 iteration in 1 VU"
        );
        let c = consolidate(vec![("script", layer(json!({"vus": 2, "iterations": 2})))]);
        assert!(c.warnings.is_empty());
    }

    /// k6 2.2 (release notes v2.2.0, #5714): with `merge-run-tags`, tags merge key by key
    /// across the layers, the higher winning a key; without it the highest layer's replace.
    #[test]
    fn merge_run_tags_merges_the_layers_tags() {
        let layers = |features: Value| {
            vec![
                (
                    "config",
                    layer(json!({"tags": {"a": "config", "b": "config"}, "features": features})),
                ),
                (
                    "script",
                    layer(json!({"tags": {"b": "script", "c": "script"}})),
                ),
            ]
        };
        let c = consolidate(layers(json!(["merge-run-tags"])));
        let tags = c.options.tags.unwrap();
        assert_eq!(tags.get("a").map(String::as_str), Some("config"));
        assert_eq!(tags.get("b").map(String::as_str), Some("script"));
        let c = consolidate(layers(Value::Null));
        assert!(!c.options.tags.unwrap().contains_key("a"));
    }

    #[test]
    fn stages_without_a_duration_are_dropped_with_k6s_warning() {
        let c = consolidate(vec![("script", layer(json!({"stages": [{"target": 1}]})))]);
        assert_eq!(c.options.stages, Some(vec![]));
        assert_eq!(
            c.warnings,
            ["`stages` was explicitly set to an empty value, running the script with 1 iteration in 1 VU"]
        );
    }

    #[test]
    fn unknown_script_options_are_found() {
        let s = script_layer(&json!({"vus": 1, "vuss": 2, "thresholds": {}})).unwrap();
        assert_eq!(s.unknown, ["vuss"]);
        let s = script_layer(&json!({"localIPs": "127.0.0.2", "x": 1})).unwrap();
        assert_eq!(s.unknown, ["localIPs", "x"]);
        assert_eq!(s.options.local_ips, None, "a script cannot set localIPs");
    }

    #[test]
    fn config_file_is_the_lowest_layer() {
        let dir = std::env::temp_dir().join(format!("rk6-options-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.json");
        std::fs::write(
            &path,
            r#"{"vus": 7, "duration": "9s", "userAgent": "from-config", "out": ["json=x"], "localIPs": "127.0.0.2"}"#,
        )
        .unwrap();
        let config = config_file(&path).unwrap();
        assert_eq!(config.local_ips, None);
        let c = consolidate(vec![
            ("config", config.clone()),
            ("script", layer(json!({"vus": 2}))),
        ]);
        assert_eq!(c.options.vus, Some(2), "script beats config");
        assert_eq!(c.options.duration, Some(crate::GoDuration::from_secs(9)));
        assert_eq!(c.options.user_agent.as_deref(), Some("from-config"));
        // Script scenarios replace the config's shortcut.
        let c = consolidate(vec![
            ("config", config),
            (
                "script",
                layer(json!({"scenarios": {"a": {"executor": "shared-iterations"}}})),
            ),
        ]);
        assert_eq!(c.options.duration, None);
        std::fs::write(&path, r#"{"vuss": 1}"#).unwrap();
        let e = config_file(&path).unwrap_err();
        assert!(e.message.contains("unknown field \"vuss\""), "{e}");
        std::fs::write(&path, r#"{"vus": "x"}"#).unwrap();
        let e = config_file(&path).unwrap_err();
        assert!(
            e.message.ends_with("vus must be an integer, got \"x\""),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn env_values_use_k6s_text_rules() {
        let env = |k: &str| match k {
            "K6_STAGES" => Some("1s:2,3s".to_string()),
            "K6_SUMMARY_TREND_STATS" => Some("avg, p(99)".to_string()),
            "K6_NO_SETUP" => Some("true".to_string()),
            "K6_DNS" => Some("select=first".to_string()),
            "K6_BLACKLIST_IPS" => Some("10.0.0.0/8, 127.0.0.2/32".to_string()),
            "K6_TAGS" => Some("a:1,b:2".to_string()),
            "K6_RPS" => Some("7".to_string()),
            "K6_USER_AGENT" => Some(String::new()),
            _ => None,
        };
        let o = env_layer(&env).unwrap();
        let stages = o.stages.unwrap();
        assert_eq!(stages[1].duration, Some(crate::GoDuration::from_secs(3)));
        assert_eq!(
            stages[1].target, None,
            "no target: refused later, as k6 does"
        );
        assert_eq!(o.summary_trend_stats.unwrap(), ["avg", "p(99)"]);
        assert_eq!(o.no_setup, Some(true));
        assert_eq!(o.dns.select.as_deref(), Some("first"));
        assert_eq!(o.blacklist_ips.unwrap(), ["10.0.0.0/8", "127.0.0.2/32"]);
        assert_eq!(o.tags.unwrap()["b"], "2");
        assert_eq!(o.rps, Some(7));
        assert_eq!(o.user_agent, None, "empty is unset");
    }

    #[test]
    fn bad_env_values_are_rejected() {
        for (var, value, msg) in [
            ("K6_VUS", "many", "K6_VUS: \"many\" is not an integer"),
            ("K6_VUS", " 2", "K6_VUS: \" 2\" is not an integer"),
            (
                "K6_NO_SETUP",
                "1",
                "K6_NO_SETUP: \"1\" is not true or false",
            ),
            ("K6_THROW", "yes", "K6_THROW: \"yes\" is not true or false"),
            ("K6_DURATION", "x", "K6_DURATION: invalid duration \"x\""),
            (
                "K6_BATCH",
                "-1",
                "K6_BATCH must be a non-negative integer, got -1",
            ),
            ("K6_DNS", "select", "K6_DNS: no value for key select"),
            (
                "K6_STAGES",
                "1s:x",
                "K6_STAGES: \"1s:x\" is not duration:target",
            ),
        ] {
            let env = |k: &str| (k == var).then(|| value.to_string());
            let e = env_layer(&env).unwrap_err();
            assert_eq!(e.message, msg);
            assert_eq!(e.code, crate::ExitCode::InvalidConfig);
        }
        let env = |k: &str| (k == "K6_TLSAUTH").then(|| "[".to_string());
        assert!(env_layer(&env)
            .unwrap_err()
            .message
            .starts_with("K6_TLSAUTH: "));
        let env = |k: &str| (k == "K6_TLSAUTH").then(|| r#"[{"cert":"c","key":"k"}]"#.to_string());
        assert_eq!(
            env_layer(&env).unwrap().tls_auth.unwrap()[0].key.as_deref(),
            Some("k")
        );
    }
}
