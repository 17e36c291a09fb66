//! `externally-controlled`: the number of looping VUs is whatever the control API last set
//! (`rk6 scale`, `PATCH /v1/status`), until the duration is over or the test is stopped.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::{IterationSource, Next};
use crate::state::ExecutionState;

/// How often a VU beyond the current target looks again whether it is needed.
const POLL: Duration = Duration::from_millis(20);

pub(super) struct ExternallyControlled {
    next: AtomicU64,
    end: Instant,
    duration: Duration,
    state: Arc<ExecutionState>,
    index: usize,
}

impl ExternallyControlled {
    pub(super) fn new(
        end: Instant,
        duration: Duration,
        state: Arc<ExecutionState>,
        index: usize,
    ) -> Self {
        ExternallyControlled {
            next: AtomicU64::new(0),
            end,
            duration,
            state,
            index,
        }
    }

    fn paused(&self) -> &AtomicBool {
        &self.state.paused
    }
}

impl IterationSource for ExternallyControlled {
    fn next(&self, vu_index: u64, _vu_iterations: u64) -> Next {
        let now = Instant::now();
        if now >= self.end {
            return Next::Done;
        }
        let target = self.state.scenarios[self.index]
            .target_vus
            .load(Ordering::Relaxed);
        if vu_index < target && !self.paused().load(Ordering::Relaxed) {
            Next::Now(self.next.fetch_add(1, Ordering::Relaxed))
        } else {
            Next::Wait((now + POLL).min(self.end))
        }
    }

    fn run_time(&self) -> Duration {
        self.duration
    }
}
