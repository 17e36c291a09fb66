//! `per-vu-iterations`: every VU runs the same number of iterations.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::contract::{ExecutorConfig, IterationSource, Next, Sizes};
use crate::fields::{ConfigError, Fields};
use rk6_options::format_duration;

/// `per-vu-iterations`' own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct PerVuIterationsConfig {
    /// VUs, each running `iterations`.
    pub vus: u64,
    /// Iterations of each VU.
    pub iterations: u64,
    /// The longest the scenario runs.
    pub max_duration: Duration,
}

impl ExecutorConfig for PerVuIterationsConfig {
    const NAME: &'static str = "per-vu-iterations";
    const KEYS: &'static [&'static str] = &["vus", "iterations", "maxDuration"];

    fn parse(f: &Fields) -> Result<Self, ConfigError> {
        let vus = f.int("vus", Some(1))?;
        let iterations = f.int("iterations", Some(1))?;
        let max_duration = super::shared_iterations::max_duration(f)?;
        if vus <= 0 {
            f.invalid("the number of VUs must be more than 0");
        }
        if iterations <= 0 {
            f.invalid("the number of iterations must be more than 0");
        }
        super::shared_iterations::check_max_duration(f, max_duration);
        Ok(PerVuIterationsConfig {
            vus: vus.max(0) as u64,
            iterations: iterations.max(0) as u64,
            max_duration: max_duration.to_std().unwrap_or_default(),
        })
    }

    fn total_max_vus(&self) -> u64 {
        self.vus
    }

    fn run_time(&self) -> Duration {
        self.max_duration
    }

    fn describe(&self, sc: &Sizes, tail: &str) -> String {
        format!(
            "{} iterations for each of {} VUs (maxDuration: {}{tail})",
            self.iterations,
            sc.max_vus,
            format_duration(self.max_duration)
        )
    }
}

pub(super) struct PerVuIterations {
    per_vu: u64,
    total: u64,
    started: AtomicU64,
    deadline: Instant,
    max_duration: Duration,
}

impl PerVuIterations {
    pub(super) fn new(vus: u64, per_vu: u64, deadline: Instant, max_duration: Duration) -> Self {
        PerVuIterations {
            per_vu,
            total: vus * per_vu,
            started: AtomicU64::new(0),
            deadline,
            max_duration,
        }
    }
}

impl IterationSource for PerVuIterations {
    fn next(&self, _vu_index: u64, vu_iterations: u64) -> Next {
        if vu_iterations >= self.per_vu || Instant::now() >= self.deadline {
            return Next::Done;
        }
        Next::Now(self.started.fetch_add(1, Ordering::Relaxed))
    }

    fn dropped(&self) -> u64 {
        self.total
            .saturating_sub(self.started.load(Ordering::Relaxed))
    }

    fn run_time(&self) -> Duration {
        self.max_duration
    }
}
