//! Executors: each turns a scenario's options into an [`IterationSource`] that VU loops pull
//! iterations from. One file per executor.

mod constant_vus;
mod per_vu_iterations;
mod shared_iterations;

use std::time::Duration;

use tokio::time::Instant;

use crate::config::{Executor, Scenario};

/// Hands out iterations to the VUs of one scenario.
pub trait IterationSource: Send + Sync {
    /// The next iteration number (within the scenario) for a VU that has already run
    /// `vu_iterations` iterations of this scenario, or `None` when that VU is done.
    fn next(&self, vu_iterations: u64) -> Option<u64>;
    /// Iterations that were planned but never started, known once the scenario ended.
    fn dropped(&self) -> u64 {
        0
    }
    /// How long the scenario hands out new iterations (its `duration`/`maxDuration`).
    fn run_time(&self) -> Duration;
}

/// The iteration source for `scenario`, whose own clock starts at `start`.
pub fn source_for(scenario: &Scenario, start: Instant) -> Box<dyn IterationSource> {
    match scenario.executor {
        Executor::SharedIterations {
            iterations,
            max_duration,
            ..
        } => Box::new(shared_iterations::SharedIterations::new(
            iterations,
            start + max_duration,
            max_duration,
        )),
        Executor::PerVuIterations {
            vus,
            iterations,
            max_duration,
        } => Box::new(per_vu_iterations::PerVuIterations::new(
            vus,
            iterations,
            start + max_duration,
            max_duration,
        )),
        Executor::ConstantVus { duration, .. } => {
            Box::new(constant_vus::ConstantVus::new(start + duration, duration))
        }
    }
}
