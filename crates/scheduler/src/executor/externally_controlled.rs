//! `externally-controlled`: the number of looping VUs is whatever the control API last set
//! (`rk6 scale`, `PATCH /v1/status`), until the duration is over or the test is stopped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::contract::{ExecutorConfig, IterationSource, Next, Sizes};
use crate::fields::{ConfigError, Fields};
use rk6_options::format_duration;

/// `externally-controlled`' own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternallyControlledConfig {
    /// VUs looping at the start.
    pub vus: u64,
    /// The most VUs the control API may ask for.
    pub max_vus: u64,
    /// `None` runs until stopped (k6's `duration: 0`).
    pub duration: Option<Duration>,
}

/// Stands in for "until stopped" (externally-controlled `duration: 0`).
const FOREVER: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

impl ExecutorConfig for ExternallyControlledConfig {
    const NAME: &'static str = "externally-controlled";
    const KEYS: &'static [&'static str] = &["vus", "duration", "maxVUs"];

    fn parse(f: &Fields) -> Result<Self, ConfigError> {
        let vus = f.int("vus", Some(0))?;
        let max = f.int("maxVUs", Some(vus))?;
        if vus < 0 {
            f.invalid("the number of VUs can't be negative");
        }
        if max < vus {
            f.invalid(format!(
                "the number of active VUs ({vus}) must be less than or equal to the number of maxVUs ({max})"
            ));
        } else if max == 0 {
            f.invalid("the number of maxVUs must be more than 0");
        }
        let duration = if f.has("duration") {
            f.duration(
                "duration",
                Duration::ZERO,
                "the duration can't be negative, for infinite duration use 0",
            )?
        } else {
            f.invalid("the duration is unspecified");
            Duration::ZERO
        };
        Ok(ExternallyControlledConfig {
            vus: vus.max(0) as u64,
            max_vus: max.max(0) as u64,
            duration: (!duration.is_zero()).then_some(duration),
        })
    }

    fn total_max_vus(&self) -> u64 {
        self.max_vus
    }

    fn run_time(&self) -> Duration {
        self.duration.unwrap_or(FOREVER)
    }

    fn describe(&self, sc: &Sizes, _tail: &str) -> String {
        format!(
            "Externally controlled execution with {} VUs, {} max VUs, {} duration",
            sc.starting_vus,
            sc.max_vus,
            format_duration(self.duration.unwrap_or(Duration::ZERO))
        )
    }
}

/// What the control API sets while the scenario runs.
pub(super) trait Controls: Send + Sync {
    /// The VUs that should loop now.
    fn target_vus(&self) -> u64;
    /// Whether the test is paused (no VU starts an iteration).
    fn paused(&self) -> bool;
}

/// How often a VU beyond the current target looks again whether it is needed.
const POLL: Duration = Duration::from_millis(20);

pub(super) struct ExternallyControlled {
    next: AtomicU64,
    end: Instant,
    duration: Duration,
    controls: Arc<dyn Controls>,
}

impl ExternallyControlled {
    pub(super) fn new(end: Instant, duration: Duration, controls: Arc<dyn Controls>) -> Self {
        ExternallyControlled {
            next: AtomicU64::new(0),
            end,
            duration,
            controls,
        }
    }
}

impl IterationSource for ExternallyControlled {
    fn next(&self, vu_index: u64, _vu_iterations: u64) -> Next {
        let now = Instant::now();
        if now >= self.end {
            return Next::Done;
        }
        if vu_index < self.controls.target_vus() && !self.controls.paused() {
            Next::Now(self.next.fetch_add(1, Ordering::Relaxed))
        } else {
            Next::Wait((now + POLL).min(self.end))
        }
    }

    fn run_time(&self) -> Duration {
        self.duration
    }
}
