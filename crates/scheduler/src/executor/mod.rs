//! Executors: each turns a scenario's options into an [`IterationSource`] that VU loops pull
//! iterations from. One file per executor.

mod arrival_rate;
mod constant_vus;
mod externally_controlled;
mod per_vu_iterations;
mod ramping_vus;
mod shared_iterations;

use std::time::Duration;

use tokio::time::Instant;

use std::sync::Arc;

use crate::config::{Executor, Scenario, Stage};
use crate::state::ExecutionState;

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
    match scenario.executor {
        Executor::SharedIterations { max_duration, .. } => {
            Box::new(shared_iterations::SharedIterations::new(
                scenario.iterations().unwrap_or(0),
                start + max_duration,
                max_duration,
            ))
        }
        Executor::PerVuIterations {
            iterations,
            max_duration,
            ..
        } => Box::new(per_vu_iterations::PerVuIterations::new(
            scenario.max_vus(),
            iterations,
            start + max_duration,
            max_duration,
        )),
        Executor::ConstantVus { duration, .. } => {
            Box::new(constant_vus::ConstantVus::new(start + duration, duration))
        }
        Executor::RampingVus {
            start_vus,
            ref stages,
            graceful_ramp_down,
        } => Box::new(ramping_vus::RampingVus::new(
            start,
            start_vus,
            stages.clone(),
            graceful_ramp_down,
            split.vus.clone(),
        )),
        Executor::ConstantArrivalRate {
            rate,
            time_unit,
            duration,
            ..
        } => {
            let stages = vec![Stage {
                duration,
                target: rate,
            }];
            Box::new(arrival_rate::ArrivalRate::new(
                rate,
                time_unit,
                stages,
                true,
                split.iterations.clone(),
            ))
        }
        Executor::RampingArrivalRate {
            start_rate,
            time_unit,
            ref stages,
            ..
        } => Box::new(arrival_rate::ArrivalRate::new(
            start_rate,
            time_unit,
            stages.clone(),
            false,
            split.iterations.clone(),
        )),
        Executor::ExternallyControlled { .. } => {
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
