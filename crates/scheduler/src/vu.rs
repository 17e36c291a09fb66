//! The contract between the scheduler and whatever runs iterations (the JS runtime in
//! production, fake VUs in tests). The caller of the scheduler owns the implementation.

use std::future::Future;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::Scenario;

/// One iteration handed to a VU.
#[derive(Debug, Clone)]
pub struct Iteration {
    /// The scenario this iteration belongs to.
    pub scenario: Arc<Scenario>,
    /// 0-based number of this iteration within its scenario (unique across its VUs).
    pub iteration_in_scenario: u64,
    /// How many iterations of this scenario this VU ran before this one.
    pub vu_iteration_in_scenario: u64,
    /// When an open-model executor planned this iteration to start (its lateness is
    /// reported as `iteration_start_delay`); `None` for closed-model executors.
    pub planned_start: Option<tokio::time::Instant>,
    /// Cancelled when the iteration must stop at once (graceful stop expired, test aborted).
    /// The VU checks it at every blocking call and then reports [`IterationOutcome::Interrupted`].
    pub interrupt: CancellationToken,
}

/// How an iteration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IterationOutcome {
    /// Ran to the end (an exception inside the iteration still counts as completed, as in k6).
    Completed,
    /// Stopped by [`Iteration::interrupt`].
    Interrupted,
    /// The script asked to abort the whole test (`exec.test.abort`).
    AbortTest,
}

/// A virtual user: lives on one worker thread for its whole life (it need not be `Send`).
pub trait Vu: 'static {
    /// Runs one iteration.
    fn run_iteration(
        &mut self,
        iteration: Iteration,
    ) -> impl Future<Output = IterationOutcome> + '_;
}

/// What a factory's VUs need from the worker threads that hold them. The scheduler knows
/// nothing of the engine inside a VU, so the factory says how many VUs a thread can carry
/// and how deep their native stack goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerProfile {
    /// The most VUs one worker thread holds.
    pub max_vus_per_worker: u64,
    /// The native stack of each worker thread, in bytes (VUs are created on it).
    pub stack_size: usize,
}

impl WorkerProfile {
    /// How many worker threads hold `vus` VUs on a machine with `cores` cores: enough that
    /// none holds more than `max_vus_per_worker`, and no fewer than `min(vus, cores)`, so a
    /// test with few VUs still uses every core (k6 runs each VU on its own goroutine).
    pub fn workers_for(&self, vus: u64, cores: usize) -> usize {
        let by_share = vus.div_ceil(self.max_vus_per_worker.max(1));
        by_share.max(vus.min(cores as u64)).max(1) as usize
    }
}

/// Creates VUs on worker threads; shared by all workers.
pub trait VuFactory: Send + Sync + 'static {
    /// The VU type, which stays on the thread that created it.
    type Vu: Vu;
    /// Builds VU number `id` (1-based) on the calling worker thread.
    fn create(&self, id: u64) -> Result<Self::Vu, String>;
    /// How the worker threads for these VUs are sized.
    fn worker_profile(&self) -> WorkerProfile;
}

#[cfg(test)]
mod tests {
    use super::WorkerProfile;

    #[test]
    fn workers_hold_at_most_their_share() {
        let p = WorkerProfile {
            max_vus_per_worker: 48,
            stack_size: 1 << 20,
        };
        let one_core: Vec<usize> = [0, 1, 48, 49, 96, 97].map(|v| p.workers_for(v, 1)).into();
        assert_eq!(one_core, [1, 1, 1, 2, 2, 3]);
        let sixteen: Vec<usize> = [0, 1, 10, 40, 48, 1000]
            .map(|v| p.workers_for(v, 16))
            .into();
        assert_eq!(
            sixteen,
            [1, 1, 10, 16, 16, 21],
            "few VUs still spread over the cores"
        );
        let zero = WorkerProfile {
            max_vus_per_worker: 0,
            ..p
        };
        assert_eq!(
            zero.workers_for(3, 1),
            3,
            "a zero share is read as one VU per worker"
        );
    }
}
