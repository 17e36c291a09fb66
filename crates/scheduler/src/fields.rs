//! What scenario configurations are read with: the error they fail with, the reader of one
//! scenario's fields (rk6-options' rules for each kind of value, errors naming the scenario
//! and the field) and the stages of ramping executors.

use std::cell::RefCell;
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
///
/// A value of the wrong kind fails at once (k6 fails while decoding the JSON); a value of
/// the right kind that breaks a rule is noted with [`Fields::invalid`] and reading goes on,
/// since k6 validates every field and lists all of a scenario's problems together.
pub struct Fields<'a> {
    /// The scenario's name.
    pub name: &'a str,
    pub(crate) obj: &'a Map<String, Value>,
    pub(crate) issues: RefCell<Vec<String>>,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(name: &'a str, obj: &'a Map<String, Value>) -> Self {
        Fields {
            name,
            obj,
            issues: RefCell::new(Vec::new()),
        }
    }

    /// Notes a validation problem (k6's words, without the scenario's name).
    pub fn invalid(&self, msg: impl Into<String>) {
        self.issues.borrow_mut().push(msg.into());
    }

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

    /// A duration field that may not be negative; `negative` is the problem noted when it
    /// is (zero stands in for it).
    pub fn duration(
        &self,
        key: &str,
        default: Duration,
        negative: &str,
    ) -> Result<Duration, ConfigError> {
        let d = self.signed_duration(key, GoDuration::from_std(default))?;
        Ok(d.to_std().unwrap_or_else(|| {
            self.invalid(negative);
            Duration::ZERO
        }))
    }

    /// A `stages` array; stages breaking a rule are noted (k6's `stage N …` problems).
    pub fn stages(&self, key: &str) -> Result<Vec<Stage>, ConfigError> {
        let (stages, issues) = read_stages(self.get(key), self.name)?;
        self.issues.borrow_mut().extend(issues);
        Ok(stages)
    }
}

/// Parses k6's `stages` array of a scenario; the first problem fails it.
pub fn stages_from_json(value: &Value, name: &str) -> Result<Vec<Stage>, ConfigError> {
    let (stages, issues) = read_stages(value, name)?;
    match issues.into_iter().next() {
        Some(issue) => Err(bad(format!("scenario {name}: {issue}"))),
        None => Ok(stages),
    }
}

/// Reads a `stages` array: values of the wrong kind fail, rule breaks (a missing or
/// negative duration or target, no stage at all) are returned in k6's words and order.
fn read_stages(value: &Value, name: &str) -> Result<(Vec<Stage>, Vec<String>), ConfigError> {
    let arr = value
        .as_array()
        .ok_or_else(|| bad(format!("scenario {name}: stages must be an array")))?;
    let mut out = Vec::with_capacity(arr.len());
    let mut issues = Vec::new();
    if arr.is_empty() {
        issues.push("at least one stage has to be specified".to_string());
    }
    for (i, st) in arr.iter().enumerate() {
        let obj = st
            .as_object()
            .ok_or_else(|| bad(format!("scenario {name}: stage {i} must be an object")))?;
        if let Some(k) = obj.keys().find(|k| *k != "duration" && *k != "target") {
            return Err(bad(format!(
                "scenario {name}: json: unknown field \"{k}\" in stage {i}"
            )));
        }
        // k6 counts stages from 1 in its problems.
        let n = i + 1;
        let duration =
            json::duration(obj.get("duration").unwrap_or(&Value::Null)).map_err(|e| {
                bad(format!(
                    "scenario {name}: stage {i}: {}",
                    e.naming("duration")
                ))
            })?;
        let duration = match duration.map(|d| d.to_std()) {
            None => {
                issues.push(format!("stage {n} doesn't have a duration"));
                Duration::ZERO
            }
            Some(None) => {
                issues.push(format!("the duration for stage {n} can't be negative"));
                Duration::ZERO
            }
            Some(Some(d)) => d,
        };
        let target = match json::int(obj.get("target").unwrap_or(&Value::Null)) {
            Ok(None) => {
                issues.push(format!("stage {n} doesn't have a target"));
                0
            }
            Ok(Some(t)) if t >= 0 => t as u64,
            Ok(Some(_)) => {
                issues.push(format!("the target for stage {n} can't be negative"));
                0
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
    Ok((out, issues))
}
