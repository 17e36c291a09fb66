//! Feature flags (k6 2.1+): `--features`, `K6_FEATURES` or the config file's `features`
//! turn on behaviour that is not the default yet; `rk6 features` lists them.

use crate::options::Options;

/// Where a flag is in its life, as `k6 features` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lifecycle {
    /// Off unless asked for.
    Experimental,
    /// On its way out.
    Deprecated,
    /// Always on; naming it only earns a reminder.
    Ga,
}

impl Lifecycle {
    /// k6's name of the stage.
    pub fn name(self) -> &'static str {
        match self {
            Lifecycle::Experimental => "Experimental",
            Lifecycle::Deprecated => "Deprecated",
            Lifecycle::Ga => "GA",
        }
    }
}

/// One flag rk6 knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    /// Its name on the command line.
    pub name: &'static str,
    /// Its stage.
    pub lifecycle: Lifecycle,
    /// What turning it on changes, in rk6.
    pub description: &'static str,
}

/// Every flag rk6 knows, those of k6 2.3 (`k6 features`).
pub const FLAGS: &[Flag] = &[
    Flag {
        name: "async-metric-context",
        lifecycle: Lifecycle::Experimental,
        description: "Keep group tags and durations across await in async group() callbacks",
    },
    Flag {
        name: "freeze-env",
        lifecycle: Lifecycle::Experimental,
        description: "Freeze __ENV object to prevent modifications from JS code",
    },
    Flag {
        name: "merge-run-tags",
        lifecycle: Lifecycle::Experimental,
        description: "Merge run tags across config layers instead of replacing",
    },
    Flag {
        name: "native-histograms",
        lifecycle: Lifecycle::Experimental,
        description: "Send trends as native histograms in the Prometheus remote-write output",
    },
];

/// The flags in effect: the highest layer's list (k6 does not merge the layers' lists),
/// split on commas, trimmed, deduplicated; names rk6 does not know are kept aside.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Features {
    enabled: Vec<&'static Flag>,
    unknown: Vec<String>,
}

impl Features {
    /// The flags the consolidated options turn on.
    pub fn of(options: &Options) -> Features {
        let mut out = Features::default();
        for name in options
            .features
            .iter()
            .flatten()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            match FLAGS.iter().find(|f| f.name == name) {
                Some(f) if !out.enabled.contains(&f) => out.enabled.push(f),
                Some(_) => {}
                None if !out.unknown.iter().any(|u| u == name) => out.unknown.push(name.into()),
                None => {}
            }
        }
        out.enabled.sort_by_key(|f| f.name);
        out
    }

    /// Whether the flag named `name` is on.
    pub fn is_on(&self, name: &str) -> bool {
        self.enabled.iter().any(|f| f.name == name)
    }

    /// `merge-run-tags`.
    pub fn merge_run_tags(&self) -> bool {
        self.is_on("merge-run-tags")
    }

    /// `native-histograms`.
    pub fn native_histograms(&self) -> bool {
        self.is_on("native-histograms")
    }

    /// The flags on, sorted by name.
    pub fn enabled(&self) -> impl Iterator<Item = &Flag> {
        self.enabled.iter().copied()
    }

    /// Names given that rk6 does not know (k6 logs each and goes on).
    pub fn unknown(&self) -> &[String] {
        &self.unknown
    }

    /// The run tags k6 adds for the flags on: `k6_feature_<name with _>` = `"true"`.
    pub fn run_tags(&self) -> Vec<(String, String)> {
        self.enabled
            .iter()
            .map(|f| {
                (
                    format!("k6_feature_{}", f.name.replace('-', "_")),
                    "true".into(),
                )
            })
            .collect()
    }

    /// `K6_FEATURES` as the script's `__ENV` sees it: the flags on, sorted, comma-joined;
    /// `None` when none is on.
    pub fn env_value(&self) -> Option<String> {
        (!self.enabled.is_empty()).then(|| {
            self.enabled
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(",")
        })
    }
}

/// One line k6 logs about the flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Logged as an error (an unknown or deprecated flag) rather than info.
    pub error: bool,
    /// The message.
    pub message: String,
    /// Its fields (`feature`, `outcome`, `source`).
    pub fields: Vec<(String, String)>,
}

/// The log lines for the flags in effect, as k6 logs them: unknown names, experimental flags
/// turned on, GA flags to remove.
pub fn log_lines(features: &Features, source: &str) -> Vec<LogLine> {
    let mut out = Vec::new();
    for name in features.unknown() {
        out.push(LogLine {
            error: true,
            message: "Unknown feature flag".to_string(),
            fields: vec![
                ("feature".into(), name.clone()),
                ("outcome".into(), "unknown".into()),
                ("source".into(), source.into()),
            ],
        });
    }
    for f in features.enabled() {
        let (warn, msg) = match f.lifecycle {
            Lifecycle::Experimental => (false, "Experimental feature enabled"),
            Lifecycle::Deprecated => (true, "Deprecated feature enabled"),
            Lifecycle::Ga => (false, "Feature is generally available; remove the flag"),
        };
        out.push(LogLine {
            error: warn,
            message: msg.to_string(),
            fields: vec![
                ("feature".into(), f.name.into()),
                ("source".into(), source.into()),
            ],
        });
    }
    out
}

/// `rk6 features`: k6's table (FEATURE, LIFECYCLE, DESCRIPTION), Experimental first, then
/// Deprecated, then GA, each by name; or with `json` an indented array.
pub fn listing(json: bool) -> String {
    let mut flags: Vec<&Flag> = FLAGS.iter().collect();
    flags.sort_by_key(|f| (f.lifecycle, f.name));
    if json {
        let list: Vec<serde_json::Value> = flags
            .iter()
            .map(|f| {
                serde_json::json!({
                    "feature": f.name,
                    "lifecycle": f.lifecycle.name(),
                    "description": f.description,
                })
            })
            .collect();
        return serde_json::to_string_pretty(&list).unwrap_or_default() + "\n";
    }
    let w = flags.iter().map(|f| f.name.len()).max().unwrap_or(0).max(7) + 3;
    let l = "Experimental".len() + 3;
    let mut out = format!("{:<w$}{:<l$}{}\n", "FEATURE", "LIFECYCLE", "DESCRIPTION");
    for f in flags {
        out.push_str(&format!(
            "{:<w$}{:<l$}{}\n",
            f.name,
            f.lifecycle.name(),
            f.description
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(list: &[&str]) -> Features {
        Features::of(&Options {
            features: Some(list.iter().map(|s| s.to_string()).collect()),
            ..Options::default()
        })
    }

    #[test]
    fn flags_are_split_trimmed_and_deduplicated() {
        let f = with(&[
            "merge-run-tags, freeze-env",
            "freeze-env",
            " ",
            "nope",
            "nope",
        ]);
        assert!(f.merge_run_tags() && f.is_on("freeze-env") && !f.native_histograms());
        assert_eq!(f.unknown(), ["nope"]);
        assert_eq!(f.env_value().as_deref(), Some("freeze-env,merge-run-tags"));
        assert_eq!(
            f.run_tags(),
            [
                ("k6_feature_freeze_env".to_string(), "true".to_string()),
                ("k6_feature_merge_run_tags".to_string(), "true".to_string())
            ]
        );
        assert_eq!(with(&[]).env_value(), None);
    }

    #[test]
    fn the_listing_has_k6s_columns() {
        let text = listing(false);
        assert!(text.starts_with("FEATURE"), "{text}");
        assert!(text.contains("freeze-env") && text.contains("Experimental"));
        let json: serde_json::Value = serde_json::from_str(&listing(true)).unwrap();
        assert_eq!(json.as_array().unwrap().len(), FLAGS.len());
        assert_eq!(json[0]["lifecycle"], "Experimental");
    }

    #[test]
    fn an_unknown_name_is_logged_and_a_known_one_announced() {
        let lines = log_lines(&with(&["x", "freeze-env"]), "env");
        assert_eq!(lines[0].message, "Unknown feature flag");
        assert!(lines[0].error);
        assert_eq!(lines[1].message, "Experimental feature enabled");
    }
}
