//! A scenario's work for one VU, and the loop a VU runs to do it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::Scenario;
use crate::executor::{IterationSource, Next};
use crate::state::ExecutionState;
use crate::vu::{Iteration, IterationOutcome, Vu};

/// What a VU must do for one scenario; shared by the scenario's VUs.
pub struct Job {
    /// The scenario.
    pub scenario: Arc<Scenario>,
    /// Index of the scenario in [`ExecutionState::scenarios`].
    pub index: usize,
    /// Id of the scenario's first VU; its VUs are `first_vu..first_vu + max_vus`.
    pub first_vu: u64,
    /// Where the VU gets its iterations from.
    pub source: Arc<dyn IterationSource>,
    /// Cancelled to interrupt running iterations.
    pub interrupt: CancellationToken,
    /// Cancelled when a VU asks to abort the whole test.
    pub abort: CancellationToken,
    /// Live counters.
    pub state: Arc<ExecutionState>,
}

/// Runs iterations of `job` on VU `vu_id` until the executor says stop or the job is
/// interrupted.
pub async fn run_vu_loop<V: Vu>(vu: &mut V, job: &Job, vu_id: u64) {
    let counters = &job.state.scenarios[job.index];
    let index = vu_id - job.first_vu;
    let mut done = 0u64;
    loop {
        if job.interrupt.is_cancelled() {
            break;
        }
        let mut planned_start = None;
        let n = match job.source.next(index, done) {
            Next::Now(n) => n,
            Next::At(at, n) => {
                planned_start = Some(at);
                if !sleep_until(at, &job.interrupt).await {
                    // The scenario ended while this VU waited for its planned start.
                    counters.dropped.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                n
            }
            Next::Wait(at) => {
                if !sleep_until(at, &job.interrupt).await {
                    break;
                }
                continue;
            }
            Next::Done => break,
        };
        let iteration = Iteration {
            scenario: job.scenario.clone(),
            iteration_in_scenario: n,
            vu_iteration_in_scenario: done,
            planned_start,
            interrupt: job.interrupt.clone(),
        };
        counters.active_vus.fetch_add(1, Ordering::Relaxed);
        let outcome = match job.source.ramp_down_deadline(index) {
            None => vu.run_iteration(iteration).await,
            Some(deadline) => {
                // This VU is ramped down while the iteration may still run: it gets
                // `gracefulRampDown`, then is interrupted like at the end of a scenario.
                let token = job.interrupt.child_token();
                let iteration = Iteration {
                    interrupt: token.clone(),
                    ..iteration
                };
                let run = vu.run_iteration(iteration);
                tokio::pin!(run);
                tokio::select! {
                    outcome = &mut run => outcome,
                    _ = tokio::time::sleep_until(deadline) => {
                        token.cancel();
                        run.await
                    }
                }
            }
        };
        counters.active_vus.fetch_sub(1, Ordering::Relaxed);
        match outcome {
            IterationOutcome::Completed => counters.completed.fetch_add(1, Ordering::Relaxed),
            IterationOutcome::Interrupted => counters.interrupted.fetch_add(1, Ordering::Relaxed),
            IterationOutcome::AbortTest => {
                counters.interrupted.fetch_add(1, Ordering::Relaxed);
                job.abort.cancel();
                break;
            }
        };
        done += 1;
        // An iteration that never waited (CPU-bound script, no I/O) would otherwise run the
        // next one at once: let the worker's other VUs and its lag probe have their turn.
        tokio::task::yield_now().await;
    }
}

/// Sleeps until `at`; false if interrupted first.
async fn sleep_until(at: Instant, interrupt: &CancellationToken) -> bool {
    tokio::select! {
        _ = tokio::time::sleep_until(at) => true,
        _ = interrupt.cancelled() => false,
    }
}
