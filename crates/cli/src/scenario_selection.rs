//! `--scenario` and `--once` (k6 2.3): run only the named scenarios, each as configured,
//! or run the test's scenario (or each selected one) once, one VU, one iteration.

use rk6_options::{Options, OptionsError};
use serde_json::{json, Map, Value};

use crate::args::OptionFlags;

/// What the two flags ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// `--scenario`: the names, in order, split on commas.
    pub names: Vec<String>,
    /// `--once`.
    pub once: bool,
}

impl Selection {
    /// The selection of the flags.
    pub fn of(flags: &OptionFlags) -> Selection {
        Selection {
            names: flags
                .scenario
                .iter()
                .flat_map(|v| v.split(','))
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect(),
            once: flags.once,
        }
    }

    fn active(&self) -> bool {
        self.once || !self.names.is_empty()
    }

    /// Refuses what the flags cannot be combined with on the command line (k6's exit 104).
    pub fn check_flags(&self, flags: &OptionFlags) -> Result<(), OptionsError> {
        let mut conflicts: Vec<&str> = Vec::new();
        if flags.vus.is_some() {
            conflicts.push("vus");
        }
        if flags.duration.is_some() {
            conflicts.push("duration");
        }
        if flags.iterations.is_some() {
            conflicts.push("iterations");
        }
        if !flags.stage.is_empty() {
            conflicts.push("stage");
        }
        let segments = [
            ("execution-segment", flags.execution_segment.is_some()),
            (
                "execution-segment-sequence",
                flags.execution_segment_sequence.is_some(),
            ),
        ];
        if self.once {
            if let Some(c) = conflicts.first() {
                return Err(OptionsError::invalid(format!(
                    "--once cannot be combined with --{c}"
                )));
            }
            if let Some((c, _)) = segments.iter().find(|(_, set)| *set) {
                return Err(OptionsError::invalid(format!(
                    "--once cannot be combined with --{c}"
                )));
            }
        }
        if !self.names.is_empty() {
            if let Some(c) = conflicts.first() {
                return Err(OptionsError::invalid(format!(
                    "--scenario cannot be combined with --{c}"
                )));
            }
        }
        if !flags.scenario.is_empty() && self.names.is_empty() {
            return Err(OptionsError::invalid(
                "--scenario needs at least one scenario name",
            ));
        }
        Ok(())
    }

    /// Clears what a lower layer (`config`, `script`, `env`) sets that would replace the
    /// scenarios, with k6's warning.
    pub fn clear_layer(&self, name: &str, layer: &mut Options) -> Option<String> {
        if !self.active() {
            return None;
        }
        let mut cleared = Vec::new();
        if layer.vus.take().is_some() {
            cleared.push("vus");
        }
        if layer.duration.take().is_some() {
            cleared.push("duration");
        }
        if layer.iterations.take().is_some() {
            cleared.push("iterations");
        }
        if layer.stages.take().is_some() {
            cleared.push("stages");
        }
        if self.once {
            if layer.execution_segment.take().is_some() {
                cleared.push("executionSegment");
            }
            if layer.execution_segment_sequence.take().is_some() {
                cleared.push("executionSegmentSequence");
            }
        }
        if cleared.is_empty() {
            return None;
        }
        let flag = if self.once { "--once" } else { "--scenario" };
        let layer_name = if name == "env" { "environment" } else { name };
        Some(format!(
            "{flag} overrode {} in \"{layer_name}\" configuration",
            cleared.join(", ")
        ))
    }

    /// Narrows the consolidated options: the selected scenarios only (and the thresholds
    /// that are not about the others), then `--once`'s rewrite. Returns the warnings.
    pub fn apply(&self, options: &mut Options) -> Result<Vec<String>, OptionsError> {
        let mut warnings = Vec::new();
        if !self.names.is_empty() {
            let all = options.scenarios.clone().unwrap_or_default();
            for n in &self.names {
                if !all.contains_key(n) {
                    let mut names: Vec<&String> = all.keys().collect();
                    names.sort();
                    return Err(OptionsError::invalid(if names.is_empty() {
                        format!("scenario \"{n}\" not found; the script does not have any named scenario")
                    } else {
                        format!(
                            "scenario \"{n}\" not found; available scenarios: {}",
                            names
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }));
                }
            }
            let excluded: Vec<String> = all
                .keys()
                .filter(|k| !self.names.contains(k))
                .cloned()
                .collect();
            let kept: Map<String, Value> = all
                .into_iter()
                .filter(|(k, _)| self.names.contains(k))
                .collect();
            options.scenarios = Some(kept);
            if let Some(t) = &mut options.thresholds {
                let mut dropped: Vec<String> = t
                    .keys()
                    .filter(|k| threshold_scenario(k).is_some_and(|s| excluded.contains(&s)))
                    .cloned()
                    .collect();
                dropped.sort();
                if !dropped.is_empty() {
                    t.retain(|k, _| !dropped.contains(k));
                    warnings.push(format!(
                        "--scenario skipped thresholds for excluded scenarios: {}; these thresholds remain skipped even if another scenario emits matching tags",
                        dropped.join("; ")
                    ));
                }
            }
        }
        if self.once {
            let scenarios = options.scenarios.clone().unwrap_or_default();
            let rewritten: Map<String, Value> = if scenarios.is_empty() {
                Map::from_iter([("default".to_string(), once(None))])
            } else if scenarios.len() > 1 && self.names.is_empty() {
                let mut names: Vec<&String> = scenarios.keys().collect();
                names.sort();
                return Err(OptionsError::invalid(format!(
                    "--once can run only with a single scenario, but got: {}",
                    names
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            } else {
                scenarios
                    .into_iter()
                    .map(|(k, v)| (k, once(Some(&v))))
                    .collect()
            };
            options.scenarios = Some(rewritten);
        }
        Ok(warnings)
    }
}

/// A scenario rewritten by `--once`: its identity (`exec`, `env`, `tags`, `options`) kept,
/// one VU running one shared iteration, every timing field back to its default.
fn once(original: Option<&Value>) -> Value {
    let mut s = json!({"executor": "shared-iterations", "vus": 1, "iterations": 1});
    if let Some(o) = original {
        for key in ["exec", "env", "tags", "options"] {
            if let Some(v) = o.get(key) {
                s[key] = v.clone();
            }
        }
    }
    s
}

/// The `scenario` a threshold's metric filter names (`m{scenario:api}`): trimmed of
/// spaces and quotes, the last one when named twice; `None` without one or when the
/// filter cannot be read.
fn threshold_scenario(key: &str) -> Option<String> {
    let inner = key.split_once('{')?.1.strip_suffix('}')?;
    let clean = |s: &str| s.trim().trim_matches(|c| c == '\'' || c == '"').to_string();
    let mut found = None;
    for part in inner.split(',') {
        let (k, v) = part.split_once(':')?;
        if clean(k) == "scenario" {
            found = Some(clean(v));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(v: Value) -> Options {
        Options::from_json(&v).unwrap().options
    }

    fn select(names: &[&str], once: bool) -> Selection {
        Selection {
            names: names.iter().map(|s| s.to_string()).collect(),
            once,
        }
    }

    /// k6 2.3 (release notes v2.3.0, #6360).
    #[test]
    fn scenario_keeps_the_named_ones_and_their_thresholds() {
        let mut o = options(json!({
            "scenarios": {"api": {"executor": "shared-iterations"}, "ui": {"executor": "shared-iterations"}, "db": {"executor": "shared-iterations"}},
            "thresholds": {"iterations{scenario:ui}": ["count>0"], "iterations{ 'scenario' : 'db', name:x}": ["count>0"], "iterations{scenario:api}": ["count>0"], "iterations{scenario:gone}": ["count>0"], "iterations": ["count>0"]}
        }));
        let w = select(&["api"], false).apply(&mut o).unwrap();
        assert_eq!(
            o.scenarios.as_ref().unwrap().keys().collect::<Vec<_>>(),
            ["api"]
        );
        let mut kept: Vec<&String> = o.thresholds.as_ref().unwrap().keys().collect();
        kept.sort();
        assert_eq!(
            kept,
            [
                "iterations",
                "iterations{scenario:api}",
                "iterations{scenario:gone}"
            ]
        );
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("--scenario skipped thresholds for excluded scenarios: iterations{ 'scenario' : 'db', name:x}; iterations{scenario:ui};"), "{}", w[0]);
        let e = select(&["gone"], false)
            .apply(&mut options(json!({"scenarios": {"b": {}, "a": {}}})))
            .unwrap_err();
        assert_eq!(
            e.message,
            "scenario \"gone\" not found; available scenarios: a, b"
        );
        let e = select(&["x"], false)
            .apply(&mut options(json!({})))
            .unwrap_err();
        assert_eq!(
            e.message,
            "scenario \"x\" not found; the script does not have any named scenario"
        );
    }

    /// k6 2.3 (release notes v2.3.0, #6338).
    #[test]
    fn once_rewrites_the_scenario_keeping_its_identity() {
        let mut o = options(
            json!({"scenarios": {"ui": {"executor": "constant-vus", "vus": 5, "duration": "1m", "startTime": "10s", "exec": "ui", "tags": {"t": "1"}, "options": {"browser": {"type": "chromium"}}}}}),
        );
        select(&[], true).apply(&mut o).unwrap();
        let s = &o.scenarios.as_ref().unwrap()["ui"];
        assert_eq!(s["executor"], "shared-iterations");
        assert_eq!(
            (s["vus"].clone(), s["iterations"].clone()),
            (json!(1), json!(1))
        );
        assert_eq!(s["exec"], "ui");
        assert_eq!(s["options"]["browser"]["type"], "chromium");
        assert!(s.get("startTime").is_none() && s.get("duration").is_none());
        let mut o = options(json!({}));
        select(&[], true).apply(&mut o).unwrap();
        assert!(o.scenarios.unwrap().contains_key("default"));
        let e = select(&[], true)
            .apply(&mut options(json!({"scenarios": {"b": {}, "a": {}}})))
            .unwrap_err();
        assert_eq!(
            e.message,
            "--once can run only with a single scenario, but got: a, b"
        );
        let mut o = options(
            json!({"scenarios": {"b": {"executor": "constant-vus", "vus": 3, "duration": "1s"}, "a": {"executor": "constant-vus", "vus": 3, "duration": "1s"}}}),
        );
        select(&["a", "b"], true).apply(&mut o).unwrap();
        assert_eq!(o.scenarios.unwrap().len(), 2);
    }

    #[test]
    fn lower_layers_lose_their_shortcuts_with_a_warning() {
        let mut layer = options(json!({"vus": 2, "duration": "1s", "executionSegment": "0:1/2"}));
        let w = select(&[], true).clear_layer("env", &mut layer).unwrap();
        assert_eq!(
            w,
            "--once overrode vus, duration, executionSegment in \"environment\" configuration"
        );
        let mut layer = options(json!({"vus": 2}));
        let w = select(&["a"], false)
            .clear_layer("script", &mut layer)
            .unwrap();
        assert_eq!(w, "--scenario overrode vus in \"script\" configuration");
        assert!(select(&[], false)
            .clear_layer("script", &mut options(json!({"vus": 2})))
            .is_none());
    }

    #[test]
    fn cli_conflicts_are_refused() {
        let flags = OptionFlags {
            vus: Some(2),
            ..OptionFlags::default()
        };
        assert_eq!(
            select(&["a"], false)
                .check_flags(&flags)
                .unwrap_err()
                .message,
            "--scenario cannot be combined with --vus"
        );
        let flags = OptionFlags {
            execution_segment: Some("0:1/2".into()),
            ..OptionFlags::default()
        };
        assert!(select(&["a"], false).check_flags(&flags).is_ok());
        assert_eq!(
            select(&[], true).check_flags(&flags).unwrap_err().message,
            "--once cannot be combined with --execution-segment"
        );
    }
}
