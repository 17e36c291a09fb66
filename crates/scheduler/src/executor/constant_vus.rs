//! `constant-vus`: a fixed number of VUs loop until the duration is over.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::{IterationSource, Next};

pub(super) struct ConstantVus {
    next: AtomicU64,
    end: Instant,
    duration: Duration,
}

impl ConstantVus {
    pub(super) fn new(end: Instant, duration: Duration) -> Self {
        ConstantVus {
            next: AtomicU64::new(0),
            end,
            duration,
        }
    }
}

impl IterationSource for ConstantVus {
    fn next(&self, _vu_index: u64, _vu_iterations: u64) -> Next {
        if Instant::now() < self.end {
            Next::Now(self.next.fetch_add(1, Ordering::Relaxed))
        } else {
            Next::Done
        }
    }

    fn run_time(&self) -> Duration {
        self.duration
    }
}
