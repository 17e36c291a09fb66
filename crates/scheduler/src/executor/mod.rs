//! Executors, one file each (as k6's `lib/executor/<name>.go`): the executor's own
//! configuration fields (read and checked with k6's messages), its banner line, and the
//! [`IterationSource`] that VU loops pull its iterations from.

mod arrival_rate;
mod constant_arrival_rate;
mod constant_vus;
mod externally_controlled;
mod per_vu_iterations;
mod ramping_arrival_rate;
mod ramping_vus;
mod shared_iterations;

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

pub use constant_arrival_rate::ConstantArrivalRateConfig;
pub use constant_vus::ConstantVusConfig;
pub use externally_controlled::ExternallyControlledConfig;
pub use per_vu_iterations::PerVuIterationsConfig;
pub use ramping_arrival_rate::RampingArrivalRateConfig;
pub use ramping_vus::RampingVusConfig;
pub use shared_iterations::SharedIterationsConfig;

use crate::config::{ConfigError, Executor, Fields, Scenario, Stage};
use crate::segment::Stripe;
use crate::state::ExecutionState;

/// What every executor's configuration answers.
pub trait ExecutorConfig: Sized {
    /// The executor's name as k6 spells it (`constant-vus`).
    const NAME: &'static str;
    /// Its own configuration keys, in k6's order.
    const KEYS: &'static [&'static str];

    /// Reads and checks its fields of a scenario's configuration.
    fn parse(f: &Fields) -> Result<Self, ConfigError>;

    /// [`ExecutorConfig::NAME`].
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// The most VUs it uses at once in the whole test (every segment together).
    fn total_max_vus(&self) -> u64;

    /// VUs initialised before the test when fewer than the most (arrival-rate executors).
    fn pre_allocated_vus(&self) -> Option<u64> {
        None
    }

    /// How this instance's iterations are dealt, given how its VUs are (`vus`).
    fn iteration_stripe(&self, vus: &Stripe) -> Stripe {
        vus.clone()
    }

    /// How long it hands out iterations.
    fn run_time(&self) -> Duration;

    /// k6's banner line for the scenario; `tail` is the common `, exec: …, gracefulStop: …`.
    fn describe(&self, scenario: &Scenario, tail: &str) -> String;
}

/// What a VU does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run iteration `n` (numbered within the scenario) now.
    Now(u64),
    /// Run iteration `n` at the planned instant (open-model executors).
    At(Instant, u64),
    /// Nothing to do before this instant; ask again then.
    Wait(Instant),
    /// This VU is done with the scenario.
    Done,
}

/// Hands out iterations to the VUs of one scenario.
pub trait IterationSource: Send + Sync {
    /// What VU number `vu_index` (0-based within the scenario), which has already run
    /// `vu_iterations` iterations of this scenario, does next.
    fn next(&self, vu_index: u64, vu_iterations: u64) -> Next;
    /// Iterations that were planned but never started, known once the scenario ended.
    fn dropped(&self) -> u64 {
        0
    }

    /// Planned starts that have passed with no free VU so far (while it runs).
    fn dropped_so_far(&self) -> u64 {
        0
    }
    /// How long the scenario hands out new iterations (its `duration`/`maxDuration`).
    fn run_time(&self) -> Duration;

    /// Whether a planned iteration start has passed with no VU to take it: the scenario then
    /// starts another VU if it may (arrival-rate executors up to `maxVUs`).
    fn behind(&self) -> bool {
        false
    }

    /// For an iteration VU `vu_index` starts now: the instant after which it must be
    /// interrupted because the VU was ramped down (ramping-vus' `gracefulRampDown`).
    fn ramp_down_deadline(&self, _vu_index: u64) -> Option<Instant> {
        None
    }
}

/// The iteration source for `scenario` (number `index` in `state`), whose own clock starts
/// at `start`.
pub fn source_for(
    scenario: &Scenario,
    start: Instant,
    state: &Arc<ExecutionState>,
    index: usize,
) -> Box<dyn IterationSource> {
    let split = &scenario.split;
    match &scenario.executor {
        Executor::SharedIterations(c) => Box::new(shared_iterations::SharedIterations::new(
            scenario.iterations().unwrap_or(0),
            start + c.max_duration,
            c.max_duration,
        )),
        Executor::PerVuIterations(c) => Box::new(per_vu_iterations::PerVuIterations::new(
            scenario.max_vus(),
            c.iterations,
            start + c.max_duration,
            c.max_duration,
        )),
        Executor::ConstantVus(c) => Box::new(constant_vus::ConstantVus::new(
            start + c.duration,
            c.duration,
        )),
        Executor::RampingVus(c) => Box::new(ramping_vus::RampingVus::new(
            start,
            c.start_vus,
            c.stages.clone(),
            c.graceful_ramp_down,
            split.vus.clone(),
        )),
        Executor::ConstantArrivalRate(c) => {
            let stages = vec![Stage {
                duration: c.duration,
                target: c.rate,
            }];
            Box::new(arrival_rate::ArrivalRate::new(
                c.rate,
                c.time_unit,
                stages,
                true,
                split.iterations.clone(),
            ))
        }
        Executor::RampingArrivalRate(c) => Box::new(arrival_rate::ArrivalRate::new(
            c.start_rate,
            c.time_unit,
            c.stages.clone(),
            false,
            split.iterations.clone(),
        )),
        Executor::ExternallyControlled(_) => {
            let run_time = scenario.run_time();
            Box::new(externally_controlled::ExternallyControlled::new(
                start + run_time,
                run_time,
                state.clone(),
                index,
            ))
        }
    }
}
