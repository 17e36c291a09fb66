//! `shared-iterations`: a fixed total of iterations taken by whichever VU is free.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::{IterationSource, Next};

pub(super) struct SharedIterations {
    total: u64,
    next: AtomicU64,
    deadline: Instant,
    max_duration: Duration,
}

impl SharedIterations {
    pub(super) fn new(total: u64, deadline: Instant, max_duration: Duration) -> Self {
        SharedIterations {
            total,
            next: AtomicU64::new(0),
            deadline,
            max_duration,
        }
    }
}

impl IterationSource for SharedIterations {
    fn next(&self, _vu_index: u64, _vu_iterations: u64) -> Next {
        if Instant::now() >= self.deadline {
            return Next::Done;
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        if n < self.total {
            Next::Now(n)
        } else {
            Next::Done
        }
    }

    fn dropped(&self) -> u64 {
        self.total
            .saturating_sub(self.next.load(Ordering::Relaxed).min(self.total))
    }

    fn run_time(&self) -> Duration {
        self.max_duration
    }
}
