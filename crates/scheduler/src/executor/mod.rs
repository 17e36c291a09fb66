//! Executors, one file each (as k6's `lib/executor/<name>.go`): the executor's own
//! configuration fields (read and checked with k6's messages), its banner line, and the
//! [`IterationSource`] that VU loops pull its iterations from.

mod arrival_rate;
mod constant_arrival_rate;
mod constant_vus;
mod contract;
mod externally_controlled;
mod per_vu_iterations;
mod ramping_arrival_rate;
mod ramping_vus;
mod shared_iterations;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::time::Instant;

pub use constant_arrival_rate::ConstantArrivalRateConfig;
pub use constant_vus::ConstantVusConfig;
pub use contract::{ExecutorConfig, IterationSource, Next, Sizes};
pub use externally_controlled::ExternallyControlledConfig;
pub use per_vu_iterations::PerVuIterationsConfig;
pub use ramping_arrival_rate::RampingArrivalRateConfig;
pub use ramping_vus::RampingVusConfig;
pub use shared_iterations::SharedIterationsConfig;

use crate::config::{Executor, Scenario, Stage};
use crate::state::ExecutionState;

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
            c.graceful_ramp_down.to_std_or_zero(),
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
                Arc::new(StateControls {
                    state: state.clone(),
                    index,
                }),
            ))
        }
    }
}

/// What the control API set for externally-controlled scenario number `index`.
struct StateControls {
    state: Arc<ExecutionState>,
    index: usize,
}

impl externally_controlled::Controls for StateControls {
    fn target_vus(&self) -> u64 {
        self.state.scenarios[self.index]
            .target_vus
            .load(Ordering::Relaxed)
    }

    fn paused(&self) -> bool {
        self.state.paused.load(Ordering::Relaxed)
    }
}
