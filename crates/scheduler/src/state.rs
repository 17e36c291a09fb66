//! Live counters of a running test, read by the progress display and the metrics ticker.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::config::Scenario;

/// Counters for one scenario.
#[derive(Debug)]
pub struct ScenarioState {
    /// The scenario's configuration.
    pub scenario: Arc<Scenario>,
    /// VUs currently running iterations of this scenario.
    pub active_vus: AtomicU64,
    /// Iterations that ran to the end.
    pub completed: AtomicU64,
    /// Iterations cut short by a stop.
    pub interrupted: AtomicU64,
    /// Iterations that were planned but never started (k6's `dropped_iterations`): those
    /// known to the VUs while running, and the schedule's once the scenario is done.
    pub dropped: AtomicU64,
    /// Planned starts the schedule has let pass so far with no free VU (arrival-rate
    /// executors), refreshed while the scenario runs; part of `dropped` once it is done.
    pub schedule_dropped: AtomicU64,
    /// Elapsed time of this scenario in µs since its own start (0 before it starts).
    pub elapsed_us: AtomicU64,
    /// Set once the scenario has finished.
    pub done: std::sync::atomic::AtomicBool,
    /// When the scenario started, in ms since the Unix epoch (0 before it starts).
    pub started_at_unix_ms: AtomicU64,
    /// VUs an externally-controlled scenario should loop now (set by the control API).
    pub target_vus: AtomicU64,
}

impl ScenarioState {
    /// Fresh counters for `scenario`.
    pub fn new(scenario: Arc<Scenario>) -> Self {
        let target_vus = AtomicU64::new(scenario.starting_vus());
        ScenarioState {
            scenario,
            active_vus: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            interrupted: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            schedule_dropped: AtomicU64::new(0),
            elapsed_us: AtomicU64::new(0),
            done: std::sync::atomic::AtomicBool::new(false),
            started_at_unix_ms: AtomicU64::new(0),
            target_vus,
        }
    }

    /// Iterations dropped so far (as they happen, for `dropped_iterations` samples).
    pub fn dropped_so_far(&self) -> u64 {
        let dropped = self.dropped.load(Ordering::Relaxed);
        if self.done.load(Ordering::Relaxed) {
            dropped
        } else {
            dropped + self.schedule_dropped.load(Ordering::Relaxed)
        }
    }

    /// Elapsed time since the scenario started.
    pub fn elapsed(&self) -> Duration {
        Duration::from_micros(self.elapsed_us.load(Ordering::Relaxed))
    }
}

/// Counters for the whole test.
#[derive(Debug)]
pub struct ExecutionState {
    /// One entry per scenario, sorted by name.
    pub scenarios: Vec<ScenarioState>,
    /// VUs initialised for the test (`vus_max`).
    pub vus_max: AtomicU64,
    /// When the run started.
    pub started: std::sync::OnceLock<std::time::Instant>,
    /// Paused through the control API: externally-controlled VUs start no iterations.
    pub paused: std::sync::atomic::AtomicBool,
}

impl ExecutionState {
    /// State for these scenarios.
    pub fn new(scenarios: &[Arc<Scenario>]) -> Arc<Self> {
        Arc::new(ExecutionState {
            scenarios: scenarios.iter().cloned().map(ScenarioState::new).collect(),
            vus_max: AtomicU64::new(0),
            started: std::sync::OnceLock::new(),
            paused: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// VUs running iterations right now, over all scenarios.
    pub fn active_vus(&self) -> u64 {
        self.scenarios
            .iter()
            .map(|s| s.active_vus.load(Ordering::Relaxed))
            .sum()
    }

    /// Completed iterations over all scenarios.
    pub fn completed(&self) -> u64 {
        self.scenarios
            .iter()
            .map(|s| s.completed.load(Ordering::Relaxed))
            .sum()
    }

    /// Interrupted iterations over all scenarios.
    pub fn interrupted(&self) -> u64 {
        self.scenarios
            .iter()
            .map(|s| s.interrupted.load(Ordering::Relaxed))
            .sum()
    }
}
