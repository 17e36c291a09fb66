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

/// Creates VUs on worker threads; shared by all workers.
pub trait VuFactory: Send + Sync + 'static {
    /// The VU type, which stays on the thread that created it.
    type Vu: Vu;
    /// Builds VU number `id` (1-based) on the calling worker thread.
    fn create(&self, id: u64) -> Result<Self::Vu, String>;
}
