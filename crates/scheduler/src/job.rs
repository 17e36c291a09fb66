//! A scenario's work for one VU, and the loop a VU runs to do it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::Scenario;
use crate::executor::IterationSource;
use crate::state::ExecutionState;
use crate::vu::{Iteration, IterationOutcome, Vu};

/// What a VU must do for one scenario; shared by the scenario's VUs.
pub struct Job {
    /// The scenario.
    pub scenario: Arc<Scenario>,
    /// Index of the scenario in [`ExecutionState::scenarios`].
    pub index: usize,
    /// Where the VU gets its iterations from.
    pub source: Arc<dyn IterationSource>,
    /// Cancelled to interrupt running iterations.
    pub interrupt: CancellationToken,
    /// Cancelled when a VU asks to abort the whole test.
    pub abort: CancellationToken,
    /// Live counters.
    pub state: Arc<ExecutionState>,
}

/// Runs iterations of `job` on `vu` until the executor says stop or the job is interrupted.
pub async fn run_vu_loop<V: Vu>(vu: &mut V, job: &Job) {
    let counters = &job.state.scenarios[job.index];
    counters.active_vus.fetch_add(1, Ordering::Relaxed);
    let mut done = 0u64;
    while !job.interrupt.is_cancelled() {
        let Some(n) = job.source.next(done) else {
            break;
        };
        let iteration = Iteration {
            scenario: job.scenario.clone(),
            iteration_in_scenario: n,
            interrupt: job.interrupt.clone(),
        };
        match vu.run_iteration(iteration).await {
            IterationOutcome::Completed => counters.completed.fetch_add(1, Ordering::Relaxed),
            IterationOutcome::Interrupted => counters.interrupted.fetch_add(1, Ordering::Relaxed),
            IterationOutcome::AbortTest => {
                counters.interrupted.fetch_add(1, Ordering::Relaxed);
                job.abort.cancel();
                break;
            }
        };
        done += 1;
    }
    counters.active_vus.fetch_sub(1, Ordering::Relaxed);
}
