//! Scenario configuration: what every scenario has whatever its executor (name, `exec`,
//! `env`, `tags`, `startTime`, `gracefulStop`), the `default` scenario the shortcut options
//! stand for, and validation. Each executor's own fields are read in its file under
//! `executor/`.

use std::collections::BTreeMap;
use std::time::Duration;

use rk6_options::{json, GoDuration, Options};
use serde_json::{Map, Value};

use crate::executor::{
    ConstantArrivalRateConfig, ConstantVusConfig, ExecutorConfig, ExternallyControlledConfig,
    PerVuIterationsConfig, RampingArrivalRateConfig, RampingVusConfig, SharedIterationsConfig,
    Sizes,
};
use crate::fields::bad;
pub use crate::fields::{stages_from_json, ConfigError, Fields, Stage};
use crate::segment::Stripe;

/// What a scenario's VUs do; one variant per executor rk6 runs, holding that executor's
/// configuration (see its file under `executor/`).
#[derive(Debug, Clone, PartialEq)]
pub enum Executor {
    /// A fixed number of iterations shared among VUs.
    SharedIterations(SharedIterationsConfig),
    /// Each VU runs the same number of iterations.
    PerVuIterations(PerVuIterationsConfig),
    /// A fixed number of VUs loop for a duration.
    ConstantVus(ConstantVusConfig),
    /// The number of looping VUs follows linear stages.
    RampingVus(RampingVusConfig),
    /// `rate` iterations start every `time_unit`, whether or not earlier ones finished.
    ConstantArrivalRate(ConstantArrivalRateConfig),
    /// The arrival rate follows linear stages.
    RampingArrivalRate(RampingArrivalRateConfig),
    /// VUs are set while the test runs, through the control API (`rk6 scale`).
    ExternallyControlled(ExternallyControlledConfig),
}

/// Calls `$body` with the executor's configuration as `$c`, whatever its type.
macro_rules! each {
    ($executor:expr, $c:ident => $body:expr) => {
        match $executor {
            Executor::SharedIterations($c) => $body,
            Executor::PerVuIterations($c) => $body,
            Executor::ConstantVus($c) => $body,
            Executor::RampingVus($c) => $body,
            Executor::ConstantArrivalRate($c) => $body,
            Executor::RampingArrivalRate($c) => $body,
            Executor::ExternallyControlled($c) => $body,
        }
    };
}

/// Every executor's name, in k6's order, and its own keys.
const EXECUTORS: &[(&str, &[&str])] = &[
    (SharedIterationsConfig::NAME, SharedIterationsConfig::KEYS),
    (PerVuIterationsConfig::NAME, PerVuIterationsConfig::KEYS),
    (ConstantVusConfig::NAME, ConstantVusConfig::KEYS),
    (RampingVusConfig::NAME, RampingVusConfig::KEYS),
    (
        ConstantArrivalRateConfig::NAME,
        ConstantArrivalRateConfig::KEYS,
    ),
    (
        RampingArrivalRateConfig::NAME,
        RampingArrivalRateConfig::KEYS,
    ),
    (
        ExternallyControlledConfig::NAME,
        ExternallyControlledConfig::KEYS,
    ),
];

/// The keys an executor of this name has of its own, in k6's order (`k6 inspect`).
pub fn executor_keys(executor: &str) -> &'static [&'static str] {
    EXECUTORS
        .iter()
        .find(|(n, _)| *n == executor)
        .map_or(&[], |(_, keys)| keys)
}

/// Keys every scenario may have, in the order `k6 inspect` prints them (`options` aside).
pub const COMMON_KEYS: &[&str] = &[
    "executor",
    "startTime",
    "gracefulStop",
    "env",
    "exec",
    "tags",
    "options",
];

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
    /// `options.browser.type`: the scenario's VUs may use `k6/browser` (k6 checks the
    /// value when a VU first needs the browser, not here).
    pub browser: Option<String>,
}

impl Scenario {
    /// Parses one entry of the `scenarios` option; a scenario breaking k6's rules fails
    /// with all its problems, as k6 reports them.
    pub fn from_json(name: &str, value: &Value) -> Result<Scenario, ConfigError> {
        let (scenario, issues) = Scenario::read(name, value)?;
        if issues.is_empty() {
            Ok(scenario)
        } else {
            Err(problems(&[(name, issues)]))
        }
    }

    /// Reads one scenario: a value of the wrong kind or an unknown field fails (k6 fails
    /// while decoding), the problems k6's validation finds are returned beside it.
    fn read(name: &str, value: &Value) -> Result<(Scenario, Vec<String>), ConfigError> {
        let obj = value.as_object().ok_or_else(|| {
            bad(format!(
                "scenario {name}: the configuration must be an object"
            ))
        })?;
        let executor = match obj.get("executor") {
            Some(Value::String(e)) => e.as_str(),
            None | Some(Value::Null) => {
                return Err(bad(format!("scenario {name}: executor type is required")))
            }
            Some(other) => {
                return Err(bad(format!(
                    "scenario {name}: executor must be a string, got {other}"
                )))
            }
        };
        let Some((_, own_keys)) = EXECUTORS.iter().find(|(n, _)| *n == executor) else {
            let names: Vec<&str> = EXECUTORS.iter().map(|(n, _)| *n).collect();
            return Err(bad(format!(
                "scenario {name}: unknown executor type '{executor}'; valid types are: {}",
                names.join(", ")
            )));
        };
        for key in obj.keys() {
            if !COMMON_KEYS.contains(&key.as_str()) && !own_keys.contains(&key.as_str()) {
                return Err(bad(format!(
                    "scenario {name}: json: unknown field \"{key}\" (executor '{executor}')"
                )));
            }
        }
        let f = Fields::new(name, obj);
        // k6 lists the problems of the fields every scenario has before its executor's.
        if name.is_empty() {
            f.invalid("scenario name can't be empty");
        } else if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            f.invalid(
                "the scenario name should contain only numbers, latin letters, underscores, and dashes",
            );
        }
        let strings = |key: &str| -> Result<BTreeMap<String, String>, ConfigError> {
            json::string_map(f.get(key))
                .map(Option::unwrap_or_default)
                .map_err(|e| bad(format!("scenario {name}: {}", e.naming(key))))
        };
        let exec = json::string(f.get("exec"))
            .map_err(|e| bad(format!("scenario {name}: {}", e.naming("exec"))))?;
        if exec.as_deref() == Some("") {
            f.invalid("exec value cannot be empty");
        }
        let start_time = f.duration(
            "startTime",
            Duration::ZERO,
            "the startTime can't be negative",
        )?;
        let external = executor == ExternallyControlledConfig::NAME;
        let graceful_stop = if external {
            Duration::ZERO
        } else {
            f.duration(
                "gracefulStop",
                Duration::from_secs(30),
                "the gracefulStop timeout can't be negative",
            )?
        };
        let env = strings("env")?;
        let tags = strings("tags")?;
        let browser = obj
            .get("options")
            .and_then(|o| o.get("browser"))
            .and_then(|b| b.get("type"))
            .map(|t| match t {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        let executor = match executor {
            SharedIterationsConfig::NAME => Executor::SharedIterations(ExecutorConfig::parse(&f)?),
            PerVuIterationsConfig::NAME => Executor::PerVuIterations(ExecutorConfig::parse(&f)?),
            ConstantVusConfig::NAME => Executor::ConstantVus(ExecutorConfig::parse(&f)?),
            RampingVusConfig::NAME => Executor::RampingVus(ExecutorConfig::parse(&f)?),
            ConstantArrivalRateConfig::NAME => {
                Executor::ConstantArrivalRate(ExecutorConfig::parse(&f)?)
            }
            RampingArrivalRateConfig::NAME => {
                Executor::RampingArrivalRate(ExecutorConfig::parse(&f)?)
            }
            _ => Executor::ExternallyControlled(ExecutorConfig::parse(&f)?),
        };
        // k6 notes this after the executor's own problems.
        if external && obj.contains_key("gracefulStop") {
            f.invalid("gracefulStop is not supported by the externally controlled executor");
        }
        let scenario = Scenario {
            name: name.to_string(),
            executor,
            start_time,
            graceful_stop,
            exec: exec.unwrap_or_else(|| "default".into()),
            env,
            tags,
            split: Split::default(),
            browser,
        };
        Ok((scenario, f.issues.into_inner()))
    }

    /// The most VUs this instance runs for the scenario at once.
    pub fn max_vus(&self) -> u64 {
        self.split
            .vus
            .scale(each!(&self.executor, c => c.total_max_vus()))
    }

    /// VUs the scenario has from its start; open-model executors add more, up to
    /// [`Scenario::max_vus`], when iterations would otherwise be dropped.
    pub fn initial_vus(&self) -> u64 {
        match each!(&self.executor, c => c.pre_allocated_vus()) {
            Some(pre) => self.split.vus.scale(pre),
            None => self.max_vus(),
        }
    }

    /// VUs looping when an externally-controlled scenario starts (this instance's part).
    pub fn starting_vus(&self) -> u64 {
        match &self.executor {
            Executor::ExternallyControlled(c) => self.split.vus.scale(c.vus),
            _ => self.initial_vus(),
        }
    }

    /// This instance's iterations: in all for shared-iterations, per VU for per-vu-iterations.
    pub fn iterations(&self) -> Option<u64> {
        match &self.executor {
            Executor::SharedIterations(c) => Some(self.split.iterations.scale(c.iterations)),
            Executor::PerVuIterations(c) => Some(c.iterations),
            _ => None,
        }
    }

    /// Restricts the scenario to this instance's execution segment (`vus` is the segment's
    /// stripe), dealing VUs and iterations as k6 does.
    pub fn apply_segment(&mut self, vus: &Stripe) {
        let iterations = each!(&self.executor, c => c.iteration_stripe(vus));
        self.split = Split {
            vus: vus.clone(),
            iterations,
        };
    }

    /// How long the scenario hands out iterations (its `duration`, `maxDuration` or stages).
    pub fn run_time(&self) -> Duration {
        each!(&self.executor, c => c.run_time())
    }

    /// How long the scenario may run from the test start: start time, run time and graceful stop.
    pub fn max_duration(&self) -> Duration {
        self.start_time + self.run_time() + self.graceful_stop
    }

    /// Whether iterations arrive on a schedule, whoever is free to run them (the
    /// arrival-rate executors): an iteration can then start late or be dropped.
    pub fn is_open_model(&self) -> bool {
        matches!(
            self.executor,
            Executor::ConstantArrivalRate(_) | Executor::RampingArrivalRate(_)
        )
    }

    /// The executor name as k6 spells it.
    pub fn executor_name(&self) -> &'static str {
        each!(&self.executor, c => c.name())
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
                rk6_options::format_duration(self.start_time)
            ));
        }
        tail.push_str(&format!(
            ", gracefulStop: {}",
            rk6_options::format_duration(self.graceful_stop)
        ));
        let sizes = Sizes {
            max_vus: self.max_vus(),
            initial_vus: self.initial_vus(),
            starting_vus: self.starting_vus(),
            iterations: self.iterations(),
            iteration_share: self.split.iterations.share(),
        };
        each!(&self.executor, c => c.describe(&sizes, &tail))
    }
}

/// The `default` scenario's configuration the shortcut options (`vus`, `duration`,
/// `iterations`, `stages`) stand for, in k6's JSON form; `None` when `scenarios` is set.
pub fn shortcut_scenario(options: &Options) -> Result<Option<Map<String, Value>>, ConfigError> {
    if options.scenarios.is_some() {
        return Ok(None);
    }
    let stages = options.stages.as_ref().filter(|s| !s.is_empty());
    let (iterations, duration, vus) = (options.iterations, options.duration, options.vus);
    if stages.is_some() && (iterations.is_some() || duration.is_some()) {
        let with = if iterations.is_some() {
            "iterations"
        } else {
            "duration"
        };
        return Err(bad(format!(
            "using `{with}` and `stages` options simultaneously is not allowed"
        )));
    }
    let mut cfg = Map::new();
    let vus = || vus.map(Value::from);
    let text = |d: GoDuration| Value::String(d.to_string());
    if let Some(stages) = stages {
        cfg.insert("executor".into(), RampingVusConfig::NAME.into());
        if let Some(v) = vus() {
            cfg.insert("startVUs".into(), v);
        }
        let stages = stages
            .iter()
            .map(|s| {
                let mut m = Map::new();
                m.insert("duration".into(), s.duration.map_or(Value::Null, text));
                m.insert("target".into(), s.target.map_or(Value::Null, Value::from));
                Value::Object(m)
            })
            .collect();
        cfg.insert("stages".into(), Value::Array(stages));
    } else if let Some(iters) = iterations {
        cfg.insert("executor".into(), SharedIterationsConfig::NAME.into());
        if let Some(v) = vus() {
            cfg.insert("vus".into(), v);
        }
        cfg.insert("iterations".into(), iters.into());
        if let Some(d) = duration {
            cfg.insert("maxDuration".into(), text(d));
        }
    } else if let Some(d) = duration {
        if d.as_nanos() <= 0 {
            return Err(bad(
                "the duration must be more than 0 (an unlimited duration is not supported)",
            ));
        }
        cfg.insert("executor".into(), ConstantVusConfig::NAME.into());
        if let Some(v) = vus() {
            cfg.insert("vus".into(), v);
        }
        cfg.insert("duration".into(), text(d));
    } else {
        cfg.insert("executor".into(), PerVuIterationsConfig::NAME.into());
        cfg.insert("vus".into(), 1.into());
        cfg.insert("iterations".into(), 1.into());
    }
    Ok(Some(cfg))
}

/// Turns consolidated options into the scenarios to run, deriving a `default` scenario from
/// the shortcut options as k6 does. Layering (a shortcut on a higher layer replacing
/// `scenarios`) happened in rk6-options.
pub fn scenarios_from_options(options: &Options) -> Result<Vec<Scenario>, ConfigError> {
    let decoded = decode_scenarios(options)?;
    match decoded.problems {
        Some(e) => Err(e),
        None => Ok(decoded.scenarios),
    }
}

/// The scenarios as k6 decodes them, before it validates them: what decoding refuses (an
/// unknown executor, a badly typed value, a shortcut beside `scenarios`) is the error; what
/// validation finds is kept in [`Decoded::problems`], because k6 checks other options (the
/// DNS TTL, the summary's trend stats) between the two.
pub fn decode_scenarios(options: &Options) -> Result<Decoded, ConfigError> {
    let Some(scenarios) = &options.scenarios else {
        let cfg = shortcut_scenario(options)?.unwrap_or_default();
        return Ok(Decoded::valid(vec![Scenario::from_json(
            "default",
            &Value::Object(cfg),
        )?]));
    };
    // k6 names the first shortcut set, in this order, even beside empty `scenarios`.
    let shortcut = [
        ("iterations", options.iterations.is_some()),
        ("duration", options.duration.is_some()),
        (
            "stages",
            options.stages.as_ref().is_some_and(|s| !s.is_empty()),
        ),
    ]
    .into_iter()
    .find_map(|(name, set)| set.then_some(name));
    if let Some(name) = shortcut {
        return Err(bad(format!(
            "using `{name}` and `scenarios` options simultaneously is not allowed"
        )));
    }
    if scenarios.is_empty() {
        // As k6 (which warns, see rk6-options): 1 iteration of 1 VU.
        let cfg = shortcut_scenario(&Options::default())?.unwrap_or_default();
        return Ok(Decoded::valid(vec![Scenario::from_json(
            "default",
            &Value::Object(cfg),
        )?]));
    }
    // Every scenario is read before any is judged: k6 fails on a badly typed value while
    // decoding, then validates them all and lists every problem of every scenario.
    let read = scenarios
        .iter()
        .map(|(name, cfg)| Scenario::read(name, cfg))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(read.len());
    let mut failing = Vec::new();
    for (scenario, issues) in read {
        if issues.is_empty() {
            out.push(scenario);
        } else {
            failing.push((scenario.name, issues));
        }
    }
    // k6 lists them in Go's map order, which varies; by name is one of its orders.
    failing.sort();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Decoded {
        scenarios: out,
        problems: (!failing.is_empty()).then(|| problems(&failing)),
    })
}

/// Scenarios decoded, and what validating them found.
#[derive(Debug)]
pub struct Decoded {
    /// The scenarios without problems, by name.
    pub scenarios: Vec<Scenario>,
    /// k6's report of the scenarios with problems, if any.
    pub problems: Option<ConfigError>,
}

impl Decoded {
    fn valid(scenarios: Vec<Scenario>) -> Decoded {
        Decoded {
            scenarios,
            problems: None,
        }
    }
}

/// k6's report of failed validation: a heading, then one line per scenario with all its
/// problems.
fn problems<N: AsRef<str>>(failing: &[(N, Vec<String>)]) -> ConfigError {
    let mut msg = String::from("There were problems with the specified script configuration:");
    for (name, issues) in failing {
        let name = name.as_ref();
        msg.push_str(&format!(
            "\n\t- scenario {name} has configuration errors: {}",
            issues.join(", ")
        ));
    }
    bad(msg)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Typed options from JSON, for tests.
    pub(crate) fn opts(v: Value) -> Options {
        Options::from_json(&v).unwrap().options
    }

    #[test]
    fn nothing_set_is_one_vu_one_iteration() {
        let s = scenarios_from_options(&Options::default()).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(
            s[0].executor,
            Executor::PerVuIterations(PerVuIterationsConfig {
                vus: 1,
                iterations: 1,
                max_duration: Duration::from_secs(600)
            })
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
        let s = scenarios_from_options(&opts(json!({"duration": "1d"}))).unwrap();
        assert_eq!(s[0].run_time(), Duration::from_secs(86_400));
    }

    #[test]
    fn rejects_bad_configs_with_k6_messages() {
        let e = scenarios_from_options(&opts(json!({"vus": 4, "iterations": 2}))).unwrap_err();
        assert_eq!(
            e.0,
            "There were problems with the specified script configuration:\n\t- scenario default has configuration errors: the number of iterations (2) can't be less than the number of VUs (4)"
        );
        let e = scenarios_from_options(&opts(json!({"scenarios": {"a": {"executor": "constant-vus", "vus": 1, "duration": "1s", "bogus": 1}}})))
            .unwrap_err();
        assert!(e.0.contains("unknown field \"bogus\""), "{e}");
        let e = scenarios_from_options(&opts(json!({"scenarios": {"a": {"executor": "nope"}}})))
            .unwrap_err();
        assert!(e.0.contains("unknown executor type 'nope'"), "{e}");
        let e = scenarios_from_options(&opts(json!({"scenarios": {"a": {"executor": 1}}})))
            .unwrap_err();
        assert_eq!(e.0, "scenario a: executor must be a string, got 1");
        let e = scenarios_from_options(&opts(json!({"scenarios": {"a": {}}}))).unwrap_err();
        assert_eq!(e.0, "scenario a: executor type is required");
        let e = scenarios_from_options(&opts(
            json!({"scenarios": {"a": {"executor": "constant-vus", "vus": 1}}}),
        ))
        .unwrap_err();
        assert!(e.0.contains("duration is unspecified"), "{e}");
        let e =
            scenarios_from_options(&opts(json!({"iterations": 1, "scenarios": {}}))).unwrap_err();
        assert_eq!(
            e.0,
            "using `iterations` and `scenarios` options simultaneously is not allowed"
        );
        let e = scenarios_from_options(&opts(
            json!({"duration": "1s", "stages": [{"duration": "1s", "target": 1}]}),
        ))
        .unwrap_err();
        assert_eq!(
            e.0,
            "using `duration` and `stages` options simultaneously is not allowed"
        );
        // Empty scenarios alone run k6's default: 1 iteration of 1 VU.
        let s = scenarios_from_options(&opts(json!({"scenarios": {}}))).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "default");
        // k6's sanity limit on ramping VUs: refused before anything is allocated.
        let e = scenarios_from_options(&opts(
            json!({"stages": [{"duration": "1s", "target": 1}, {"duration": "1s", "target": 100_000_001}]}),
        ))
        .unwrap_err();
        assert_eq!(
            e.0,
            "There were problems with the specified script configuration:\n\t- scenario default has configuration errors: target for stage 2 exceeds max limit of 100000000"
        );
        let e = scenarios_from_options(&opts(json!({"scenarios": {"r": {"executor": "ramping-vus", "startVUs": 1e12, "stages": [{"duration": "1s", "target": 0}]}}})))
            .unwrap_err();
        assert_eq!(
            e.0,
            "There were problems with the specified script configuration:\n\t- scenario r has configuration errors: the startVUs exceed max limit of 100000000"
        );
        assert!(scenarios_from_options(&opts(
            json!({"stages": [{"duration": "1s", "target": 100_000_000}]})
        ))
        .is_ok());
    }

    #[test]
    fn every_problem_of_every_scenario_is_listed() {
        let err = |v: Value| scenarios_from_options(&opts(v)).unwrap_err().0;
        assert_eq!(
            err(json!({"scenarios": {
                "z": {"executor": "ramping-vus", "startVUs": -1, "startTime": "-1s", "stages": [{"duration": "-1s", "target": -1}, {}]},
                "b": {"executor": "constant-vus", "vus": 0},
                "ok": {"executor": "shared-iterations"},
                "c": {"executor": "constant-arrival-rate", "rate": 0, "timeUnit": "0s", "duration": "0s", "preAllocatedVUs": -1, "maxVUs": -3}
            }})),
            "There were problems with the specified script configuration:\
             \n\t- scenario b has configuration errors: the number of VUs must be more than 0, the duration is unspecified\
             \n\t- scenario c has configuration errors: the iteration rate must be more than 0, the timeUnit must be more than 0, the duration must be at least 1s, but is 0s, the number of preAllocatedVUs can't be negative, maxVUs can't be less than preAllocatedVUs\
             \n\t- scenario z has configuration errors: the startTime can't be negative, the number of start VUs can't be negative, either startVUs or one of the stages' target values must be greater than 0, the duration for stage 1 can't be negative, the target for stage 1 can't be negative, stage 2 doesn't have a duration, stage 2 doesn't have a target"
        );
        // A value of the wrong kind still fails alone, before any scenario is validated.
        assert_eq!(
            err(
                json!({"scenarios": {"a": {"executor": "constant-vus", "vus": 0}, "b": {"executor": "shared-iterations", "vus": 1.5}}})
            ),
            "scenario b: vus: json: cannot unmarshal number 1.5 into an integer (int64)"
        );
    }

    #[test]
    fn scenario_fields_use_the_shared_value_rules() {
        let err = |v: Value| scenarios_from_options(&opts(v)).unwrap_err().0;
        assert_eq!(
            err(json!({"scenarios": {"a": {"executor": "shared-iterations", "vus": 1.5}}})),
            "scenario a: vus: json: cannot unmarshal number 1.5 into an integer (int64)"
        );
        assert_eq!(
            err(json!({"scenarios": {"a": {"executor": "shared-iterations", "iterations": true}}})),
            "scenario a: iterations must be an integer, got true"
        );
        assert_eq!(
            err(json!({"scenarios": {"a": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 1e20}]}}})),
            "scenario a: stage 0: target: json: cannot unmarshal number 100000000000000000000 into an integer (int64)"
        );
        assert_eq!(
            err(json!({"scenarios": {"a": {"executor": "shared-iterations", "tags": {"x": 1}}}})),
            "scenario a: tags must be an object of strings, got 1 for \"x\""
        );
        assert_eq!(
            err(json!({"scenarios": {"a": {"executor": "shared-iterations", "startTime": "-1s"}}})),
            "There were problems with the specified script configuration:\n\t- scenario a has configuration errors: the startTime can't be negative"
        );
        // k6 reads integers given as strings, and days.
        let s = scenarios_from_options(&opts(json!({"scenarios": {"a": {"executor": "shared-iterations", "vus": "2", "iterations": 2, "maxDuration": "1d"}}}))).unwrap();
        assert_eq!(s[0].max_vus(), 2);
        assert_eq!(s[0].run_time(), Duration::from_secs(86_400));
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
        assert!(
            e.0.contains("the number of preAllocatedVUs isn't specified"),
            "{e}"
        );
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
