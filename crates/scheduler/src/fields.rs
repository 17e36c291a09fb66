//! What scenario configurations are read with: the error they fail with, the reader of one
//! scenario's fields (rk6-options' rules for each kind of value, errors naming the scenario
//! and the field) and the stages of ramping executors.

use std::time::Duration;

use rk6_options::{json, GoDuration};
use serde_json::{Map, Value};

/// A scenario configuration k6 would reject (the CLI exits with 104).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

pub(crate) fn bad(msg: impl Into<String>) -> ConfigError {
    ConfigError(msg.into())
}

/// One stage of a ramping executor: reach `target` (VUs or iterations per time unit)
/// linearly over `duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// How long the ramp takes.
    pub duration: Duration,
    /// The value at the end of the stage.
    pub target: u64,
}

/// The fields of one scenario's configuration object, read with rk6-options' rules for
/// each kind of value; errors name the scenario and the field.
pub struct Fields<'a> {
    /// The scenario's name.
    pub name: &'a str,
    pub(crate) obj: &'a Map<String, Value>,
}

impl Fields<'_> {
    /// Whether the field is given.
    pub fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    pub(crate) fn get(&self, key: &str) -> &Value {
        self.obj.get(key).unwrap_or(&Value::Null)
    }

    /// An integer field; `default` when absent (`None`: the field is required).
    pub fn int(&self, key: &str, default: Option<i64>) -> Result<i64, ConfigError> {
        let name = self.name;
        match json::int(self.get(key)) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => default.ok_or_else(|| bad(format!("scenario {name}: {key} is required"))),
            Err(e) => Err(bad(format!("scenario {name}: {}", e.naming(key)))),
        }
    }

    /// A duration field, `default` when absent; negative values are returned for the
    /// executor's own message.
    pub fn signed_duration(
        &self,
        key: &str,
        default: GoDuration,
    ) -> Result<GoDuration, ConfigError> {
        json::duration(self.get(key))
            .map(|d| d.unwrap_or(default))
            .map_err(|e| {
                bad(format!(
                    "scenario {}: {key}: {}",
                    self.name,
                    e.naming("duration")
                ))
            })
    }

    /// A duration field that may not be negative.
    pub fn duration(&self, key: &str, default: Duration) -> Result<Duration, ConfigError> {
        let d = self.signed_duration(key, GoDuration::from_std(default))?;
        d.to_std().ok_or_else(|| {
            bad(format!(
                "scenario {}: the {key} can't be negative, but is {d}",
                self.name
            ))
        })
    }

    /// A `stages` array.
    pub fn stages(&self, key: &str) -> Result<Vec<Stage>, ConfigError> {
        stages_from_json(self.get(key), self.name)
    }
}

/// Parses k6's `stages` array of a scenario.
pub fn stages_from_json(value: &Value, name: &str) -> Result<Vec<Stage>, ConfigError> {
    let arr = value
        .as_array()
        .ok_or_else(|| bad(format!("scenario {name}: stages must be an array")))?;
    let mut out = Vec::with_capacity(arr.len());
    for (i, st) in arr.iter().enumerate() {
        let obj = st
            .as_object()
            .ok_or_else(|| bad(format!("scenario {name}: stage {i} must be an object")))?;
        if let Some(k) = obj.keys().find(|k| *k != "duration" && *k != "target") {
            return Err(bad(format!(
                "scenario {name}: json: unknown field \"{k}\" in stage {i}"
            )));
        }
        let duration = json::duration(obj.get("duration").unwrap_or(&Value::Null))
            .map_err(|e| {
                bad(format!(
                    "scenario {name}: stage {i}: {}",
                    e.naming("duration")
                ))
            })?
            .ok_or_else(|| {
                bad(format!(
                    "scenario {name}: stage {} doesn't have a duration",
                    i + 1
                ))
            })?
            .to_std()
            .ok_or_else(|| {
                bad(format!(
                    "scenario {name}: stage {i}: the duration can't be negative"
                ))
            })?;
        let target = match json::int(obj.get("target").unwrap_or(&Value::Null)) {
            // k6 counts stages from 1 in these two messages.
            Ok(None) => {
                return Err(bad(format!(
                    "scenario {name}: stage {} doesn't have a target",
                    i + 1
                )))
            }
            Ok(Some(t)) if t >= 0 => t as u64,
            Ok(Some(_)) => {
                return Err(bad(format!(
                    "scenario {name}: the target for stage {} can't be negative",
                    i + 1
                )))
            }
            Err(e) => {
                return Err(bad(format!(
                    "scenario {name}: stage {i}: {}",
                    e.naming("target")
                )))
            }
        };
        out.push(Stage { duration, target });
    }
    if out.is_empty() {
        return Err(bad(format!(
            "scenario {name}: at least one stage is required"
        )));
    }
    Ok(out)
}
