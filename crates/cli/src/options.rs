//! The command line's option layer, and the layering of all of them: defaults < `--config`
//! file < script `options` < `K6_*` environment < CLI flags (rk6-options merges them).

use std::collections::BTreeMap;

use rk6_options::features::Features;
use rk6_options::{
    config_file, consolidate, env_layer, script_layer, text, Consolidated, Dns, Options,
    OptionsError, Stage,
};
use serde_json::Value;

use crate::args::{OptionFlags, RunArgs};

/// The options of a run and what to say about them.
pub struct Loaded {
    /// The consolidated options.
    pub options: Options,
    /// Warnings to print (a shortcut replacing scenarios).
    pub warnings: Vec<String>,
    /// The script's option keys k6 does not know (k6 warns about each).
    pub unknown: Vec<String>,
}

/// Builds the options from every layer: `script` is the script's exported `options`, `env`
/// looks up environment variables (`K6_CONFIG` names the config file unless `--config`
/// does).
pub fn load(
    script: &Value,
    args: &OptionFlags,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Loaded, OptionsError> {
    let config_path = args
        .config
        .clone()
        .or_else(|| env("K6_CONFIG").map(std::path::PathBuf::from));
    let selection = crate::scenario_selection::Selection::of(args);
    selection.check_flags(args)?;
    let mut config = match &config_path {
        Some(path) => config_file(path)?,
        None => Options::default(),
    };
    let mut script = script_layer(script)?;
    let mut warnings_before = Vec::new();
    if script.options.features.take().is_some() {
        warnings_before.push(
            "feature flags in script options are not supported; use --features or K6_FEATURES"
                .to_string(),
        );
    }
    let mut env = env_layer(&env)?;
    let cli = cli_layer(args)?;
    for (name, layer) in [
        ("config", &mut config),
        ("script", &mut script.options),
        ("env", &mut env),
    ] {
        warnings_before.extend(selection.clear_layer(name, layer));
    }
    let Consolidated {
        mut options,
        warnings,
    } = consolidate(vec![
        ("config", config),
        ("script", script.options),
        ("env", env),
        ("cli", cli),
    ]);
    options.validate()?;
    warnings_before.extend(warnings);
    warnings_before.extend(selection.apply(&mut options)?);
    Ok(Loaded {
        options,
        warnings: warnings_before,
        unknown: script.unknown,
    })
}

/// The feature flags of the run and the layer they come from (`cli`, `env` or `config`:
/// the highest that names any wins whole, as in k6); the script's `options` never set them,
/// so they are known before the script runs and its `__ENV` can carry them. k6's legacy
/// `K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true` turns on `native-histograms`, with k6's
/// warning.
pub fn features(
    args: &OptionFlags,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(Features, &'static str, Vec<String>), OptionsError> {
    let mut warnings = Vec::new();
    let mut list: Option<(Vec<String>, &'static str)> = None;
    if !args.features.is_empty() {
        list = Some((args.features.clone(), "cli"));
    } else if let Some(v) = env("K6_FEATURES").filter(|v| !v.trim().is_empty()) {
        list = Some((vec![v], "env"));
    } else {
        let path = args
            .config
            .clone()
            .or_else(|| env("K6_CONFIG").map(std::path::PathBuf::from));
        if let Some(path) = path {
            if let Some(f) = config_file(&path)?.features {
                list = Some((f, "config"));
            }
        }
    }
    let (mut names, source) = list.unwrap_or((Vec::new(), "cli"));
    let legacy = env("K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM");
    if matches!(
        legacy.as_deref(),
        Some("1" | "t" | "T" | "true" | "TRUE" | "True")
    ) {
        warnings.push("Legacy env var detected, use --features or K6_FEATURES instead".to_string());
        names.push("native-histograms".into());
    }
    let options = Options {
        features: Some(names),
        ..Options::default()
    };
    Ok((Features::of(&options), source, warnings))
}

/// `--linger` as k6 layers it: the flag, else `K6_LINGER` (Go's boolean forms), else the
/// config file's `linger` key (the file named by `--config` or `K6_CONFIG`).
pub fn linger(args: &RunArgs, env: impl Fn(&str) -> Option<String>) -> bool {
    if args.linger {
        return true;
    }
    match env("K6_LINGER").as_deref() {
        Some("1" | "t" | "T" | "true" | "TRUE" | "True") => return true,
        Some("0" | "f" | "F" | "false" | "FALSE" | "False") => return false,
        _ => {}
    }
    let path = args
        .options
        .config
        .clone()
        .or_else(|| env("K6_CONFIG").map(std::path::PathBuf::from));
    // The file was read and checked with the options; an unreadable one stopped the run.
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("linger").and_then(Value::as_bool))
        .unwrap_or(false)
}

/// The options set by flags (the same for `run` and `archive`).
fn cli_layer(args: &OptionFlags) -> Result<Options, OptionsError> {
    let count = |flag: &str, v: Option<i64>| -> Result<Option<u64>, OptionsError> {
        v.map(|n| {
            u64::try_from(n).map_err(|_| {
                OptionsError::invalid(format!("{flag} must be a non-negative integer, got {n}"))
            })
        })
        .transpose()
    };
    let set = |on: bool| on.then_some(true);
    let tags: BTreeMap<String, String> = args
        .tag
        .iter()
        .filter_map(|t| {
            t.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let dns = match &args.dns {
        Some(v) => Dns::from_text(v).map_err(OptionsError::invalid)?,
        None => Dns::default(),
    };
    let blacklist: Vec<String> = args
        .blacklist_ip
        .iter()
        .flat_map(|v| text::list(v))
        .collect();
    Ok(Options {
        vus: args.vus,
        iterations: args.iterations,
        duration: args.duration,
        stages: stage_flags(&args.stage)?,
        max_redirects: args.max_redirects,
        batch: count("--batch", args.batch)?,
        batch_per_host: count("--batch-per-host", args.batch_per_host)?,
        user_agent: args.user_agent.clone(),
        http_debug: args.http_debug.clone(),
        insecure_skip_tls_verify: set(args.insecure_skip_tls_verify),
        paused: set(args.paused),
        no_connection_reuse: set(args.no_connection_reuse),
        no_vu_connection_reuse: set(args.no_vu_connection_reuse),
        no_setup: set(args.no_setup),
        no_teardown: set(args.no_teardown),
        execution_segment: args.execution_segment.clone(),
        execution_segment_sequence: args.execution_segment_sequence.clone(),
        summary_trend_stats: args.summary_trend_stats.as_deref().map(text::list),
        summary_time_unit: args.summary_time_unit.clone(),
        summary_mode: args.summary_mode.clone(),
        features: (!args.features.is_empty()).then(|| args.features.clone()),
        tags: (!tags.is_empty()).then_some(tags),
        dns,
        blacklist_ips: (!blacklist.is_empty()).then_some(blacklist),
        block_hostnames: args.block_hostnames.as_deref().map(text::list),
        local_ips: args.local_ips.clone(),
        rps: args.rps,
        ..Options::default()
    })
}

/// `--stage` values as k6 reads them: each `DURATION:TARGET` (several per flag with commas),
/// the duration Go's, the target Go's integer, either side left unset when empty; stages are
/// counted from 0 across the flags in the errors, which end the run with k6's exit 255.
fn stage_flags(flags: &[String]) -> Result<Option<Vec<Stage>>, OptionsError> {
    if flags.is_empty() {
        return Ok(None);
    }
    let parts = flags.iter().flat_map(|f| f.split(','));
    let mut stages = Vec::new();
    for (i, part) in parts.enumerate() {
        let (d, t) = part.split_once(':').unwrap_or((part, ""));
        if d.is_empty() {
            return Err(OptionsError::failure(format!(
                "stage {i} doesn't have a specified duration"
            )));
        }
        let stage_error = |e: String| OptionsError::failure(format!("error for stage {i}: {e}"));
        let duration = rk6_options::parse_time_duration(d).map_err(stage_error)?;
        let target = match t {
            "" => None,
            t => Some(text::go_int(t).map_err(stage_error)?),
        };
        stages.push(Stage {
            duration: Some(duration),
            target,
        });
    }
    Ok(Some(stages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_options::GoDuration;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn linger_from_flag_env_or_config_file() {
        let dir = std::env::temp_dir().join(format!("rk6-linger-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("config.json");
        std::fs::write(&config, r#"{"linger": true}"#).unwrap();
        let with_config = RunArgs {
            options: OptionFlags {
                config: Some(config.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(!linger(&RunArgs::default(), no_env));
        assert!(linger(&with_config, no_env));
        let env_false = |k: &str| (k == "K6_LINGER").then(|| "false".to_string());
        assert!(!linger(&with_config, env_false));
        let flag = RunArgs {
            linger: true,
            ..Default::default()
        };
        assert!(linger(&flag, env_false));
        let env_true = |k: &str| (k == "K6_LINGER").then(|| "1".to_string());
        assert!(linger(&RunArgs::default(), env_true));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn cli_beats_env_beats_script() {
        let script = json!({"vus": 2, "iterations": 2, "userAgent": "script-ua"});
        let args = OptionFlags {
            vus: Some(5),
            iterations: Some(10),
            ..Default::default()
        };
        let env = |k: &str| (k == "K6_USER_AGENT").then(|| "env-ua".to_string());
        let c = load(&script, &args, env).unwrap();
        assert_eq!(c.options.vus, Some(5));
        assert_eq!(c.options.iterations, Some(10));
        assert_eq!(c.options.user_agent.as_deref(), Some("env-ua"));
        let c = load(&script, &OptionFlags::default(), no_env).unwrap();
        assert_eq!(c.options.vus, Some(2));
    }

    #[test]
    fn cli_shortcut_replaces_scenarios() {
        let script = json!({"scenarios": {"a": {"executor": "shared-iterations"}}});
        let args = OptionFlags {
            duration: Some(GoDuration::from_secs(1)),
            ..Default::default()
        };
        let c = load(&script, &args, no_env).unwrap();
        assert!(c.options.scenarios.is_none());
        assert_eq!(
            c.warnings,
            vec!["\"cli\" level configuration overrode scenarios configuration entirely"]
        );
    }

    #[test]
    fn layers_merge_field_by_field() {
        // Script iterations + CLI duration = constant-vus for the duration, as k6: the CLI
        // layer's shortcut replaces the script's; vus is an option of its own.
        let script = json!({"vus": 2, "iterations": 5});
        let args = OptionFlags {
            duration: Some(GoDuration::from_secs(1)),
            ..Default::default()
        };
        let c = load(&script, &args, no_env).unwrap();
        assert_eq!(c.options.iterations, None);
        assert_eq!(c.options.vus, Some(2));
        assert_eq!(c.options.duration, Some(GoDuration::from_secs(1)));
    }

    #[test]
    fn unknown_script_options_are_found() {
        let c = load(
            &json!({"vus": 1, "vuss": 2, "thresholds": {}}),
            &OptionFlags::default(),
            no_env,
        )
        .unwrap();
        assert_eq!(c.unknown, vec!["vuss"]);
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
        let args = OptionFlags {
            config: Some(path.clone()),
            ..Default::default()
        };
        let c = load(&json!({"vus": 2}), &args, no_env).unwrap();
        assert_eq!(c.options.vus, Some(2), "script beats config");
        assert_eq!(c.options.duration, Some(GoDuration::from_secs(9)));
        assert_eq!(c.options.user_agent.as_deref(), Some("from-config"));
        // Script scenarios replace the config's shortcut.
        let script = json!({"scenarios": {"a": {"executor": "shared-iterations"}}});
        let c = load(&script, &args, no_env).unwrap();
        assert_eq!(c.options.duration, None);
        std::fs::write(&path, r#"{"vuss": 1}"#).unwrap();
        let e = load(&json!({}), &args, no_env).err().unwrap();
        assert!(e.message.contains("unknown field \"vuss\""), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn env_stages_and_lists() {
        let env = |k: &str| match k {
            "K6_STAGES" => Some("1s:2,3s".to_string()),
            "K6_SUMMARY_TREND_STATS" => Some("avg, p(99)".to_string()),
            _ => None,
        };
        let c = load(&json!({}), &OptionFlags::default(), env).unwrap();
        let stages = c.options.stages.unwrap();
        assert_eq!(
            stages
                .iter()
                .map(|s| (s.duration.unwrap().to_string(), s.target))
                .collect::<Vec<_>>(),
            [("1s".to_string(), Some(2)), ("3s".to_string(), None)]
        );
        assert_eq!(c.options.summary_trend_stats.unwrap(), ["avg", "p(99)"]);
    }

    #[test]
    fn tlsauth_env_is_json() {
        let env = |k: &str| (k == "K6_TLSAUTH").then(|| r#"[{"cert":"c","key":"k"}]"#.to_string());
        let c = load(&json!({}), &OptionFlags::default(), env).unwrap();
        let auth = c.options.tls_auth.unwrap();
        assert_eq!(
            (auth[0].cert.as_deref(), auth[0].key.as_deref()),
            (Some("c"), Some("k"))
        );
        let bad = |k: &str| (k == "K6_TLSAUTH").then(|| "[".to_string());
        let err = load(&json!({}), &OptionFlags::default(), bad)
            .err()
            .unwrap();
        assert!(err.message.contains("K6_TLSAUTH"), "{err}");
    }

    #[test]
    fn bad_env_values_are_rejected() {
        let env = |k: &str| (k == "K6_VUS").then(|| "many".to_string());
        assert!(load(&json!({}), &OptionFlags::default(), env).is_err());
    }

    #[test]
    fn flags_make_their_layer() {
        let args = OptionFlags {
            blacklist_ip: vec!["10.0.0.0/8".into(), "::1/128,127.0.0.0/8".into()],
            block_hostnames: Some("*.x.test,y.test".into()),
            local_ips: Some("127.0.0.2-127.0.0.3".into()),
            dns: Some("select=first".into()),
            tag: vec!["a=1".into()],
            ..Default::default()
        };
        let o = cli_layer(&args).unwrap();
        assert_eq!(
            o.blacklist_ips.unwrap(),
            ["10.0.0.0/8", "::1/128", "127.0.0.0/8"]
        );
        assert_eq!(o.block_hostnames.unwrap(), ["*.x.test", "y.test"]);
        assert_eq!(o.local_ips.as_deref(), Some("127.0.0.2-127.0.0.3"));
        assert_eq!(o.dns.select.as_deref(), Some("first"));
        assert_eq!(o.tags.unwrap()["a"], "1");
        let e = cli_layer(&OptionFlags {
            dns: Some("foo=1".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.message, "unknown DNS configuration field: foo");
    }
}
