//! `shared-iterations`: a fixed total of iterations taken by whichever VU is free.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::contract::{ExecutorConfig, IterationSource, Next, Sizes};
use crate::fields::{ConfigError, Fields};
use crate::segment::Stripe;
use rk6_options::{format_duration, GoDuration};

/// `shared-iterations`' own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedIterationsConfig {
    /// VUs sharing the iterations.
    pub vus: u64,
    /// Iterations in all (the whole test's).
    pub iterations: u64,
    /// The longest the scenario runs.
    pub max_duration: Duration,
}

impl ExecutorConfig for SharedIterationsConfig {
    const NAME: &'static str = "shared-iterations";
    const KEYS: &'static [&'static str] = &["vus", "iterations", "maxDuration"];

    fn parse(f: &Fields) -> Result<Self, ConfigError> {
        let vus = f.int("vus", Some(1))?;
        let iterations = f.int("iterations", Some(1))?;
        let max_duration = max_duration(f)?;
        if vus <= 0 {
            f.invalid("the number of VUs must be more than 0");
        }
        if iterations < vus {
            f.invalid(format!(
                "the number of iterations ({iterations}) can't be less than the number of VUs ({vus})"
            ));
        }
        check_max_duration(f, max_duration);
        Ok(SharedIterationsConfig {
            vus: vus.max(0) as u64,
            iterations: iterations.max(0) as u64,
            max_duration: max_duration.to_std().unwrap_or_default(),
        })
    }

    fn total_max_vus(&self) -> u64 {
        self.vus
    }

    /// k6 deals shared iterations along how the VUs were dealt.
    fn iteration_stripe(&self, vus: &Stripe) -> Stripe {
        vus.derive(self.vus)
    }

    fn run_time(&self) -> Duration {
        self.max_duration
    }

    fn describe(&self, sc: &Sizes, tail: &str) -> String {
        format!(
            "{} iterations shared among {} VUs (maxDuration: {}{tail})",
            sc.iterations.unwrap_or(0),
            sc.max_vus,
            format_duration(self.max_duration)
        )
    }
}

/// `maxDuration` of the iteration executors (10 minutes when absent).
pub(super) fn max_duration(f: &Fields) -> Result<GoDuration, ConfigError> {
    f.signed_duration("maxDuration", GoDuration::from_secs(600))
}

/// Notes a `maxDuration` under k6's 1 s minimum.
pub(super) fn check_max_duration(f: &Fields, max_duration: GoDuration) {
    if max_duration
        .to_std()
        .is_none_or(|d| d < Duration::from_secs(1))
    {
        f.invalid(format!(
            "the maxDuration must be at least 1s, but is {max_duration}"
        ));
    }
}

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
