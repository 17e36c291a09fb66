//! `constant-vus`: a fixed number of VUs loop until the duration is over.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::contract::{ExecutorConfig, IterationSource, Next, Sizes};
use crate::fields::{ConfigError, Fields};
use rk6_options::format_duration;

/// `constant-vus`' own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantVusConfig {
    /// VUs looping.
    pub vus: u64,
    /// How long they loop.
    pub duration: Duration,
}

impl ExecutorConfig for ConstantVusConfig {
    const NAME: &'static str = "constant-vus";
    const KEYS: &'static [&'static str] = &["vus", "duration"];

    fn parse(f: &Fields) -> Result<Self, ConfigError> {
        let vus = f.int("vus", Some(1))?;
        if vus <= 0 {
            f.invalid("the number of VUs must be more than 0");
        }
        Ok(ConstantVusConfig {
            vus: vus.max(0) as u64,
            duration: at_least_a_second(f, "duration")?,
        })
    }

    fn total_max_vus(&self) -> u64 {
        self.vus
    }

    fn run_time(&self) -> Duration {
        self.duration
    }

    fn describe(&self, sc: &Sizes, tail: &str) -> String {
        format!(
            "{} looping VUs for {} ({})",
            sc.max_vus,
            format_duration(self.duration),
            &tail[2..]
        )
    }
}

/// A required duration of at least 1 s (`duration` of the constant executors).
pub(super) fn at_least_a_second(f: &Fields, key: &str) -> Result<Duration, ConfigError> {
    if !f.has(key) {
        f.invalid(format!("the {key} is unspecified"));
        return Ok(Duration::ZERO);
    }
    let d = f.signed_duration(key, rk6_options::GoDuration::ZERO)?;
    Ok(match d.to_std() {
        Some(std) if std >= Duration::from_secs(1) => std,
        _ => {
            f.invalid(format!("the {key} must be at least 1s, but is {d}"));
            Duration::ZERO
        }
    })
}

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
