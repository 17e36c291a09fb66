//! Scenario configuration: k6's `scenarios` option, the shortcut options that derive a
//! `default` scenario, and their validation.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::duration::{duration_from_json, format_duration};
use crate::segment::Stripe;

/// A scenario configuration k6 would reject (the CLI exits with 104).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn bad(msg: impl Into<String>) -> ConfigError {
    ConfigError(msg.into())
}

/// What a scenario's VUs do; one variant per executor rk6 runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Executor {
    /// A fixed number of iterations shared among VUs.
    SharedIterations {
        vus: u64,
        iterations: u64,
        max_duration: Duration,
    },
    /// Each VU runs the same number of iterations.
    PerVuIterations {
        vus: u64,
        iterations: u64,
        max_duration: Duration,
    },
    /// A fixed number of VUs loop for a duration.
    ConstantVus { vus: u64, duration: Duration },
    /// The number of looping VUs follows linear stages.
    RampingVus {
        start_vus: u64,
        stages: Vec<Stage>,
        graceful_ramp_down: Duration,
    },
    /// `rate` iterations start every `time_unit`, whether or not earlier ones finished.
    ConstantArrivalRate {
        rate: u64,
        time_unit: Duration,
        duration: Duration,
        pre_allocated_vus: u64,
        max_vus: u64,
    },
    /// The arrival rate follows linear stages.
    RampingArrivalRate {
        start_rate: u64,
        time_unit: Duration,
        stages: Vec<Stage>,
        pre_allocated_vus: u64,
        max_vus: u64,
    },
    /// VUs are set while the test runs, through the control API (`rk6 scale`).
    ExternallyControlled {
        vus: u64,
        max_vus: u64,
        /// `None` runs until stopped (k6's `duration: 0`).
        duration: Option<Duration>,
    },
}

/// How this instance's execution segment splits a scenario (both full without a segment).
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Deals out the scenario's VUs.
    pub vus: Stripe,
    /// Deals out its iterations (derived from how the VUs were split, as k6 does).
    pub iterations: Stripe,
}

impl Default for Split {
    fn default() -> Self {
        Split {
            vus: Stripe::full(),
            iterations: Stripe::full(),
        }
    }
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

/// Parses k6's `stages` array.
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
        let duration = obj
            .get("duration")
            .map(duration_from_json)
            .transpose()
            .map_err(|e| bad(format!("scenario {name}: stage {i}: {e}")))?
            .ok_or_else(|| bad(format!("scenario {name}: stage {i} has no duration")))?;
        let target = match obj.get("target") {
            None => 0,
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64))
                .ok_or_else(|| bad(format!("scenario {name}: stage {i}: target must be a non-negative integer, got {v}")))?,
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

/// One named scenario with the options every executor shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Scenario name (the `scenario` tag).
    pub name: String,
    /// Executor and its own options.
    pub executor: Executor,
    /// Offset from the test start.
    pub start_time: Duration,
    /// Time running iterations get after the scenario ends before they are interrupted.
    pub graceful_stop: Duration,
    /// Exported function to run for each iteration.
    pub exec: String,
    /// Extra `__ENV` entries for this scenario.
    pub env: BTreeMap<String, String>,
    /// Tags added to every sample of this scenario.
    pub tags: BTreeMap<String, String>,
    /// This instance's part of the scenario (`--execution-segment`).
    pub split: Split,
}

const EXECUTORS: &[&str] = &[
    "shared-iterations",
    "per-vu-iterations",
    "constant-vus",
    "ramping-vus",
    "constant-arrival-rate",
    "ramping-arrival-rate",
    "externally-controlled",
];
const COMMON_KEYS: &[&str] = &[
    "executor",
    "startTime",
    "gracefulStop",
    "exec",
    "env",
    "tags",
    "options",
];

impl Scenario {
    /// Parses one entry of the `scenarios` option.
    pub fn from_json(name: &str, value: &Value) -> Result<Scenario, ConfigError> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad(format!(
                "the scenario name \"{name}\" is invalid: it may contain only letters, digits, '_' and '-'"
            )));
        }
        let obj = value.as_object().ok_or_else(|| {
            bad(format!(
                "scenario {name}: the configuration must be an object"
            ))
        })?;
        let executor = obj
            .get("executor")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("scenario {name}: executor type is required")))?;
        if !EXECUTORS.contains(&executor) {
            return Err(bad(format!(
                "scenario {name}: unknown executor type '{executor}'; valid types are: {}",
                EXECUTORS.join(", ")
            )));
        }
        let own_keys: &[&str] = match executor {
            "shared-iterations" | "per-vu-iterations" => &["vus", "iterations", "maxDuration"],
            "constant-vus" => &["vus", "duration"],
            "ramping-vus" => &["startVUs", "stages", "gracefulRampDown"],
            "constant-arrival-rate" => {
                &["rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"]
            }
            "ramping-arrival-rate" => &[
                "startRate",
                "timeUnit",
                "stages",
                "preAllocatedVUs",
                "maxVUs",
            ],
            _ => &["vus", "maxVUs", "duration"],
        };
        if executor == "externally-controlled" && obj.contains_key("gracefulStop") {
            return Err(bad(format!(
                "scenario {name}: gracefulStop is not supported by the externally-controlled executor"
            )));
        }
        for key in obj.keys() {
            if !COMMON_KEYS.contains(&key.as_str()) && !own_keys.contains(&key.as_str()) {
                return Err(bad(format!(
                    "scenario {name}: json: unknown field \"{key}\" (executor '{executor}')"
                )));
            }
        }
        let dur = |key: &str, default: Duration| -> Result<Duration, ConfigError> {
            obj.get(key).map_or(Ok(default), |v| {
                duration_from_json(v).map_err(|e| bad(format!("scenario {name}: {key}: {e}")))
            })
        };
        let int = |key: &str, default: Option<i64>| -> Result<i64, ConfigError> {
            match obj.get(key) {
                None => default.ok_or_else(|| bad(format!("scenario {name}: {key} is required"))),
                Some(v) => v
                    .as_i64()
                    .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                    .ok_or_else(|| {
                        bad(format!(
                            "scenario {name}: {key} must be an integer, got {v}"
                        ))
                    }),
            }
        };
        let executor_is_external = executor == "externally-controlled";
        let executor = match executor {
            "shared-iterations" | "per-vu-iterations" => {
                let vus = int("vus", Some(1))?;
                let iterations = int("iterations", Some(1))?;
                let max_duration = dur("maxDuration", Duration::from_secs(600))?;
                if vus <= 0 {
                    return Err(bad(format!(
                        "scenario {name}: the number of VUs must be more than 0"
                    )));
                }
                if iterations <= 0 {
                    return Err(bad(format!(
                        "scenario {name}: the number of iterations must be more than 0"
                    )));
                }
                if max_duration < Duration::from_secs(1) {
                    return Err(bad(format!(
                        "scenario {name}: the maxDuration must be at least 1s, but is {}",
                        format_duration(max_duration)
                    )));
                }
                let (vus, iterations) = (vus as u64, iterations as u64);
                if executor == "shared-iterations" {
                    if iterations < vus {
                        return Err(bad(format!(
                            "the number of iterations ({iterations}) can't be less than the number of VUs ({vus})"
                        )));
                    }
                    Executor::SharedIterations {
                        vus,
                        iterations,
                        max_duration,
                    }
                } else {
                    Executor::PerVuIterations {
                        vus,
                        iterations,
                        max_duration,
                    }
                }
            }
            "ramping-vus" => {
                let start_vus = int("startVUs", Some(1))?;
                if start_vus < 0 {
                    return Err(bad(format!("scenario {name}: startVUs can't be negative")));
                }
                let stages = stages_from_json(obj.get("stages").unwrap_or(&Value::Null), name)?;
                if start_vus == 0 && stages.iter().all(|s| s.target == 0) {
                    return Err(bad(format!(
                        "scenario {name}: either startVUs or one of the stages' target values must be greater than 0"
                    )));
                }
                Executor::RampingVus {
                    start_vus: start_vus as u64,
                    stages,
                    graceful_ramp_down: dur("gracefulRampDown", Duration::from_secs(30))?,
                }
            }
            "constant-arrival-rate" | "ramping-arrival-rate" => {
                let time_unit = dur("timeUnit", Duration::from_secs(1))?;
                if time_unit.is_zero() {
                    return Err(bad(format!(
                        "scenario {name}: the timeUnit must be more than 0"
                    )));
                }
                let pre = int("preAllocatedVUs", None)?;
                if pre < 0 {
                    return Err(bad(format!(
                        "scenario {name}: the number of preAllocatedVUs can't be negative"
                    )));
                }
                let max = int("maxVUs", Some(pre))?;
                if max < pre {
                    return Err(bad(format!(
                        "scenario {name}: maxVUs can't be less than preAllocatedVUs"
                    )));
                }
                if max == 0 {
                    return Err(bad(format!(
                        "scenario {name}: the number of maxVUs must be more than 0"
                    )));
                }
                let (pre_allocated_vus, max_vus) = (pre as u64, max as u64);
                if executor == "constant-arrival-rate" {
                    let rate = int("rate", None)?;
                    if rate <= 0 {
                        return Err(bad(format!(
                            "scenario {name}: the rate must be more than 0"
                        )));
                    }
                    if !obj.contains_key("duration") {
                        return Err(bad(format!("scenario {name}: the duration is unspecified")));
                    }
                    let duration = dur("duration", Duration::ZERO)?;
                    if duration < Duration::from_secs(1) {
                        return Err(bad(format!(
                            "scenario {name}: the duration must be at least 1s, but is {}",
                            format_duration(duration)
                        )));
                    }
                    Executor::ConstantArrivalRate {
                        rate: rate as u64,
                        time_unit,
                        duration,
                        pre_allocated_vus,
                        max_vus,
                    }
                } else {
                    let start_rate = int("startRate", Some(0))?;
                    if start_rate < 0 {
                        return Err(bad(format!("scenario {name}: startRate can't be negative")));
                    }
                    let stages = stages_from_json(obj.get("stages").unwrap_or(&Value::Null), name)?;
                    Executor::RampingArrivalRate {
                        start_rate: start_rate as u64,
                        time_unit,
                        stages,
                        pre_allocated_vus,
                        max_vus,
                    }
                }
            }
            "externally-controlled" => {
                let vus = int("vus", Some(0))?;
                let max = int("maxVUs", Some(vus))?;
                if vus < 0 {
                    return Err(bad(format!(
                        "scenario {name}: the number of VUs can't be negative"
                    )));
                }
                if max < vus {
                    return Err(bad(format!(
                        "scenario {name}: the number of active VUs ({vus}) must be less than or equal to the number of maxVUs ({max})"
                    )));
                }
                if max == 0 {
                    return Err(bad(format!(
                        "scenario {name}: the number of maxVUs must be more than 0"
                    )));
                }
                if !obj.contains_key("duration") {
                    return Err(bad(format!("scenario {name}: the duration is unspecified")));
                }
                let duration = dur("duration", Duration::ZERO)?;
                Executor::ExternallyControlled {
                    vus: vus as u64,
                    max_vus: max as u64,
                    duration: (!duration.is_zero()).then_some(duration),
                }
            }
            _ => {
                let vus = int("vus", Some(1))?;
                if vus <= 0 {
                    return Err(bad(format!(
                        "scenario {name}: the number of VUs must be more than 0"
                    )));
                }
                if !obj.contains_key("duration") {
                    return Err(bad(format!("scenario {name}: the duration is unspecified")));
                }
                let duration = dur("duration", Duration::ZERO)?;
                if duration < Duration::from_secs(1) {
                    return Err(bad(format!(
                        "scenario {name}: the duration must be at least 1s, but is {}",
                        format_duration(duration)
                    )));
                }
                Executor::ConstantVus {
                    vus: vus as u64,
                    duration,
                }
            }
        };
        let strings = |key: &str| -> Result<BTreeMap<String, String>, ConfigError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(BTreeMap::new()),
                Some(Value::Object(m)) => Ok(m
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map_or_else(|| v.to_string(), str::to_string),
                        )
                    })
                    .collect()),
                Some(v) => Err(bad(format!(
                    "scenario {name}: {key} must be an object, got {v}"
                ))),
            }
        };
        Ok(Scenario {
            name: name.to_string(),
            executor,
            start_time: dur("startTime", Duration::ZERO)?,
            graceful_stop: if executor_is_external {
                Duration::ZERO
            } else {
                dur("gracefulStop", Duration::from_secs(30))?
            },
            exec: match obj.get("exec") {
                None | Some(Value::Null) => "default".into(),
                Some(Value::String(s)) => s.clone(),
                Some(v) => {
                    return Err(bad(format!(
                        "scenario {name}: exec must be a string, got {v}"
                    )))
                }
            },
            env: strings("env")?,
            tags: strings("tags")?,
            split: Split::default(),
        })
    }

    /// The most VUs this scenario uses at once in the whole test (every segment together).
    fn total_max_vus(&self) -> u64 {
        match self.executor {
            Executor::SharedIterations { vus, .. }
            | Executor::PerVuIterations { vus, .. }
            | Executor::ConstantVus { vus, .. } => vus,
            Executor::RampingVus {
                start_vus,
                ref stages,
                ..
            } => stages
                .iter()
                .map(|s| s.target)
                .max()
                .unwrap_or(0)
                .max(start_vus),
            Executor::ConstantArrivalRate { max_vus, .. }
            | Executor::RampingArrivalRate { max_vus, .. }
            | Executor::ExternallyControlled { max_vus, .. } => max_vus,
        }
    }

    /// The most VUs this instance runs for the scenario at once.
    pub fn max_vus(&self) -> u64 {
        self.split.vus.scale(self.total_max_vus())
    }

    /// VUs the scenario has from its start; open-model executors add more, up to
    /// [`Scenario::max_vus`], when iterations would otherwise be dropped.
    pub fn initial_vus(&self) -> u64 {
        match self.executor {
            Executor::ConstantArrivalRate {
                pre_allocated_vus, ..
            }
            | Executor::RampingArrivalRate {
                pre_allocated_vus, ..
            } => self.split.vus.scale(pre_allocated_vus),
            _ => self.max_vus(),
        }
    }

    /// VUs looping when an externally-controlled scenario starts (this instance's part).
    pub fn starting_vus(&self) -> u64 {
        match self.executor {
            Executor::ExternallyControlled { vus, .. } => self.split.vus.scale(vus),
            _ => self.initial_vus(),
        }
    }

    /// This instance's iterations: in all for shared-iterations, per VU for per-vu-iterations.
    pub fn iterations(&self) -> Option<u64> {
        match self.executor {
            Executor::SharedIterations { iterations, .. } => {
                Some(self.split.iterations.scale(iterations))
            }
            Executor::PerVuIterations { iterations, .. } => Some(iterations),
            _ => None,
        }
    }

    /// Restricts the scenario to this instance's execution segment (`vus` is the segment's
    /// stripe), dealing VUs and iterations as k6 does.
    pub fn apply_segment(&mut self, vus: &Stripe) {
        // k6 deals shared iterations along how the VUs were dealt and arrival-rate slots
        // along how maxVUs were; everything else along the segment itself.
        let iterations = match self.executor {
            Executor::SharedIterations { vus: n, .. } => vus.derive(n),
            Executor::ConstantArrivalRate { max_vus, .. }
            | Executor::RampingArrivalRate { max_vus, .. } => vus.derive(max_vus),
            _ => vus.clone(),
        };
        self.split = Split {
            vus: vus.clone(),
            iterations,
        };
    }

    /// How long the scenario hands out iterations (its `duration`, `maxDuration` or stages).
    pub fn run_time(&self) -> Duration {
        match self.executor {
            Executor::SharedIterations { max_duration, .. }
            | Executor::PerVuIterations { max_duration, .. } => max_duration,
            Executor::ConstantVus { duration, .. }
            | Executor::ConstantArrivalRate { duration, .. } => duration,
            Executor::RampingVus { ref stages, .. }
            | Executor::RampingArrivalRate { ref stages, .. } => {
                stages.iter().map(|s| s.duration).sum()
            }
            Executor::ExternallyControlled { duration, .. } => duration.unwrap_or(FOREVER),
        }
    }

    /// How long the scenario may run from the test start: start time, run time and graceful stop.
    pub fn max_duration(&self) -> Duration {
        self.start_time + self.run_time() + self.graceful_stop
    }

    /// The executor name as k6 spells it.
    pub fn executor_name(&self) -> &'static str {
        match self.executor {
            Executor::SharedIterations { .. } => "shared-iterations",
            Executor::PerVuIterations { .. } => "per-vu-iterations",
            Executor::ConstantVus { .. } => "constant-vus",
            Executor::RampingVus { .. } => "ramping-vus",
            Executor::ConstantArrivalRate { .. } => "constant-arrival-rate",
            Executor::RampingArrivalRate { .. } => "ramping-arrival-rate",
            Executor::ExternallyControlled { .. } => "externally-controlled",
        }
    }

    /// The one-line description k6 prints in its start banner (this instance's numbers).
    pub fn description(&self) -> String {
        // k6 lists the executor's own facts, then exec, startTime and gracefulStop.
        let mut tail = String::new();
        if self.exec != "default" {
            tail.push_str(&format!(", exec: {}", self.exec));
        }
        if !self.start_time.is_zero() {
            tail.push_str(&format!(
                ", startTime: {}",
                format_duration(self.start_time)
            ));
        }
        tail.push_str(&format!(
            ", gracefulStop: {}",
            format_duration(self.graceful_stop)
        ));
        let vus = self.max_vus();
        let rate_share = self.split.iterations.share();
        match self.executor {
            Executor::SharedIterations { max_duration, .. } => format!(
                "{} iterations shared among {vus} VUs (maxDuration: {}{tail})",
                self.iterations().unwrap_or(0),
                format_duration(max_duration)
            ),
            Executor::PerVuIterations {
                iterations,
                max_duration,
                ..
            } => format!(
                "{iterations} iterations for each of {vus} VUs (maxDuration: {}{tail})",
                format_duration(max_duration)
            ),
            Executor::ConstantVus { duration, .. } => {
                format!(
                    "{vus} looping VUs for {} ({})",
                    format_duration(duration),
                    &tail[2..]
                )
            }
            Executor::RampingVus {
                ref stages,
                graceful_ramp_down,
                ..
            } => format!(
                "Up to {vus} looping VUs for {} over {} stages (gracefulRampDown: {}{tail})",
                format_duration(stages.iter().map(|s| s.duration).sum()),
                stages.len(),
                format_duration(graceful_ramp_down)
            ),
            Executor::ConstantArrivalRate {
                rate,
                time_unit,
                duration,
                ..
            } => format!(
                "{:.2} iterations/s for {} ({}{tail})",
                rate as f64 * rate_share / time_unit.as_secs_f64(),
                format_duration(duration),
                vus_range(self.initial_vus(), vus)
            ),
            Executor::RampingArrivalRate {
                start_rate,
                time_unit,
                ref stages,
                ..
            } => {
                let peak = stages
                    .iter()
                    .map(|s| s.target)
                    .max()
                    .unwrap_or(0)
                    .max(start_rate);
                format!(
                    "Up to {:.2} iterations/s for {} over {} stages ({}{tail})",
                    peak as f64 * rate_share / time_unit.as_secs_f64(),
                    format_duration(stages.iter().map(|s| s.duration).sum()),
                    stages.len(),
                    vus_range(self.initial_vus(), vus)
                )
            }
            Executor::ExternallyControlled { duration, .. } => format!(
                "Externally controlled execution with {} VUs, {vus} max VUs, {} duration",
                self.starting_vus(),
                format_duration(duration.unwrap_or(Duration::ZERO))
            ),
        }
    }
}

/// Stands in for "until stopped" (externally-controlled `duration: 0`).
const FOREVER: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

fn vus_range(pre: u64, max: u64) -> String {
    if pre == max {
        format!("maxVUs: {max}")
    } else {
        format!("maxVUs: {pre}-{max}")
    }
}

/// Turns consolidated options into the scenarios to run, deriving a `default` scenario from
/// the shortcut options (`vus`, `duration`, `iterations`) as k6 does.
/// Layering (a shortcut on a higher layer replacing `scenarios`) is the caller's job.
pub fn scenarios_from_options(options: &Map<String, Value>) -> Result<Vec<Scenario>, ConfigError> {
    let get = |k: &str| options.get(k).filter(|v| !v.is_null());
    let stages = get("stages").filter(|v| v.as_array().is_none_or(|a| !a.is_empty()));
    let iterations = get("iterations");
    let duration = get("duration");
    let vus = get("vus");
    if let Some(scenarios) = get("scenarios") {
        if iterations.is_some() || duration.is_some() || stages.is_some() {
            return Err(bad(
                "using multiple execution config shortcuts (`duration`, `iterations`, `stages`) simultaneously with `scenarios` is not allowed",
            ));
        }
        let map = scenarios
            .as_object()
            .ok_or_else(|| bad("the `scenarios` option must be an object"))?;
        let mut out = Vec::with_capacity(map.len());
        for (name, cfg) in map {
            out.push(Scenario::from_json(name, cfg)?);
        }
        if out.is_empty() {
            return Err(bad("no scenarios are configured"));
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        return Ok(out);
    }
    let mut cfg = Map::new();
    if iterations.is_some() && stages.is_some() || duration.is_some() && stages.is_some() {
        return Err(bad(
            "using multiple execution config shortcuts (`duration`, `iterations`, `stages`) simultaneously is not allowed",
        ));
    }
    if let Some(stages) = stages {
        cfg.insert("executor".into(), "ramping-vus".into());
        cfg.insert("stages".into(), stages.clone());
        if let Some(v) = vus {
            cfg.insert("startVUs".into(), v.clone());
        }
    } else if let Some(iters) = iterations {
        cfg.insert("executor".into(), "shared-iterations".into());
        cfg.insert("iterations".into(), iters.clone());
        if let Some(v) = vus {
            cfg.insert("vus".into(), v.clone());
        }
        if let Some(d) = duration {
            cfg.insert("maxDuration".into(), d.clone());
        }
    } else if let Some(d) = duration {
        let zero = duration_from_json(d).map(|d| d.is_zero()).unwrap_or(false);
        if zero {
            return Err(bad(
                "the duration must be more than 0 (an unlimited duration is not supported)",
            ));
        }
        cfg.insert("executor".into(), "constant-vus".into());
        cfg.insert("duration".into(), d.clone());
        if let Some(v) = vus {
            cfg.insert("vus".into(), v.clone());
        }
    } else {
        cfg.insert("executor".into(), "per-vu-iterations".into());
        cfg.insert("vus".into(), 1.into());
        cfg.insert("iterations".into(), 1.into());
    }
    Ok(vec![Scenario::from_json("default", &Value::Object(cfg))?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn nothing_set_is_one_vu_one_iteration() {
        let s = scenarios_from_options(&Map::new()).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(
            s[0].executor,
            Executor::PerVuIterations {
                vus: 1,
                iterations: 1,
                max_duration: Duration::from_secs(600)
            }
        );
        assert_eq!(
            s[0].description(),
            "1 iterations for each of 1 VUs (maxDuration: 10m0s, gracefulStop: 30s)"
        );
    }

    #[test]
    fn shortcuts_map_like_k6() {
        let s = scenarios_from_options(&opts(json!({"vus": 2, "iterations": 3, "duration": "5s"})))
            .unwrap();
        assert_eq!(
            s[0].description(),
            "3 iterations shared among 2 VUs (maxDuration: 5s, gracefulStop: 30s)"
        );
        let s = scenarios_from_options(&opts(json!({"vus": 2, "duration": "2s"}))).unwrap();
        assert_eq!(
            s[0].description(),
            "2 looping VUs for 2s (gracefulStop: 30s)"
        );
        assert_eq!(s[0].max_duration(), Duration::from_secs(32));
    }

    #[test]
    fn rejects_bad_configs_with_k6_messages() {
        let e = scenarios_from_options(&opts(json!({"vus": 4, "iterations": 2}))).unwrap_err();
        assert_eq!(
            e.0,
            "the number of iterations (2) can't be less than the number of VUs (4)"
        );
        let e = scenarios_from_options(&opts(json!({"scenarios": {"a": {"executor": "constant-vus", "vus": 1, "duration": "1s", "bogus": 1}}})))
            .unwrap_err();
        assert!(e.0.contains("unknown field \"bogus\""), "{e}");
        let e = scenarios_from_options(&opts(json!({"scenarios": {"a": {"executor": "nope"}}})))
            .unwrap_err();
        assert!(e.0.contains("unknown executor type 'nope'"), "{e}");
        let e = scenarios_from_options(&opts(
            json!({"scenarios": {"a": {"executor": "constant-vus", "vus": 1}}}),
        ))
        .unwrap_err();
        assert!(e.0.contains("duration is unspecified"), "{e}");
        let e =
            scenarios_from_options(&opts(json!({"iterations": 1, "scenarios": {}}))).unwrap_err();
        assert!(e.0.contains("simultaneously with `scenarios`"), "{e}");
    }

    #[test]
    fn new_executors_parse_and_describe_like_k6() {
        let s = scenarios_from_options(&opts(json!({"scenarios": {
            "car": {"executor": "constant-arrival-rate", "rate": 5, "duration": "1s", "preAllocatedVUs": 1, "maxVUs": 2},
            "rar": {"executor": "ramping-arrival-rate", "preAllocatedVUs": 1, "maxVUs": 3, "stages": [{"duration": "1s", "target": 5}]},
            "rv": {"executor": "ramping-vus", "startVUs": 0, "gracefulRampDown": "0s", "stages": [{"duration": "1s", "target": 2}, {"duration": "1s", "target": 0}]}
        }})))
        .unwrap();
        assert_eq!(
            s[0].description(),
            "5.00 iterations/s for 1s (maxVUs: 1-2, gracefulStop: 30s)"
        );
        assert_eq!(
            s[1].description(),
            "Up to 5.00 iterations/s for 1s over 1 stages (maxVUs: 1-3, gracefulStop: 30s)"
        );
        assert_eq!(
            s[2].description(),
            "Up to 2 looping VUs for 2s over 2 stages (gracefulRampDown: 0s, gracefulStop: 30s)"
        );
        assert_eq!(s[2].max_vus(), 2);
        let e = scenarios_from_options(&opts(json!({"scenarios": {"c": {"executor": "constant-arrival-rate", "rate": 5, "duration": "1s"}}}))).unwrap_err();
        assert!(e.0.contains("preAllocatedVUs is required"), "{e}");
        let s = scenarios_from_options(&opts(
            json!({"vus": 3, "stages": [{"duration": "10s", "target": 5}]}),
        ))
        .unwrap();
        assert_eq!(s[0].executor_name(), "ramping-vus");
        assert_eq!(s[0].max_vus(), 5);
    }

    #[test]
    fn scenarios_are_sorted_and_keep_common_options() {
        let s = scenarios_from_options(&opts(json!({"scenarios": {
            "b": {"executor": "per-vu-iterations", "vus": 2, "iterations": 3, "exec": "other", "startTime": "1s", "env": {"X": "1"}, "tags": {"t": "v"}},
            "a": {"executor": "shared-iterations", "iterations": 4, "gracefulStop": "5s"}
        }})))
        .unwrap();
        assert_eq!(s[0].name, "a");
        assert_eq!(s[0].graceful_stop, Duration::from_secs(5));
        assert_eq!(s[1].exec, "other");
        assert_eq!(s[1].env.get("X").map(String::as_str), Some("1"));
        assert_eq!(s[1].tags.get("t").map(String::as_str), Some("v"));
        assert_eq!(
            s[1].description(),
            "3 iterations for each of 2 VUs (maxDuration: 10m0s, exec: other, startTime: 1s, gracefulStop: 30s)"
        );
    }
}
