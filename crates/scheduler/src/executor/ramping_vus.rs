//! `ramping-vus`: the number of looping VUs follows linear stages.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::contract::{ExecutorConfig, IterationSource, Next, Sizes};
use crate::fields::{ConfigError, Fields, Stage};
use crate::segment::Stripe;
use rk6_options::{format_duration, GoDuration};

/// k6's limit on `startVUs` and every stage's `target` (`maxConcurrentVUs`).
pub const MAX_CONCURRENT_VUS: u64 = 100_000_000;

/// `ramping-vus`' own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct RampingVusConfig {
    /// VUs at the start.
    pub start_vus: u64,
    /// The ramps.
    pub stages: Vec<Stage>,
    /// Time a ramped-down VU's iteration gets before it is interrupted; kept signed because
    /// k6 accepts a negative value (printed as given, run as zero).
    pub graceful_ramp_down: GoDuration,
}

impl ExecutorConfig for RampingVusConfig {
    const NAME: &'static str = "ramping-vus";
    const KEYS: &'static [&'static str] = &["startVUs", "stages", "gracefulRampDown"];

    fn parse(f: &Fields) -> Result<Self, ConfigError> {
        let start_vus = f.int("startVUs", Some(1))?;
        if start_vus < 0 {
            f.invalid("the number of start VUs can't be negative");
        }
        // k6's order: startVUs, the peak, each stage, then the sanity limits.
        let before = f.issues.borrow().len();
        let stages = f.stages("stages")?;
        let stage_issues: Vec<String> = f.issues.borrow_mut().drain(before..).collect();
        if start_vus <= 0 && stages.iter().all(|s| s.target == 0) {
            f.invalid("either startVUs or one of the stages' target values must be greater than 0");
        }
        f.issues.borrow_mut().extend(stage_issues);
        // k6's sanity limit on concurrent VUs, so an absurd target is refused, not allocated.
        if start_vus > MAX_CONCURRENT_VUS as i64 {
            f.invalid(format!(
                "the startVUs exceed max limit of {MAX_CONCURRENT_VUS}"
            ));
        }
        for (i, s) in stages.iter().enumerate() {
            if s.target > MAX_CONCURRENT_VUS {
                f.invalid(format!(
                    "target for stage {} exceeds max limit of {MAX_CONCURRENT_VUS}",
                    i + 1
                ));
            }
        }
        // k6 accepts a negative gracefulRampDown: ramped-down VUs are interrupted at once.
        let graceful_ramp_down =
            f.signed_duration("gracefulRampDown", GoDuration::from_secs(30))?;
        Ok(RampingVusConfig {
            start_vus: start_vus.max(0) as u64,
            stages,
            graceful_ramp_down,
        })
    }

    fn total_max_vus(&self) -> u64 {
        self.stages
            .iter()
            .map(|s| s.target)
            .max()
            .unwrap_or(0)
            .max(self.start_vus)
    }

    fn run_time(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    fn describe(&self, sc: &Sizes, tail: &str) -> String {
        format!(
            "Up to {} looping VUs for {} over {} stages (gracefulRampDown: {}{tail})",
            sc.max_vus,
            format_duration(self.run_time()),
            self.stages.len(),
            self.graceful_ramp_down
        )
    }
}

pub(super) struct RampingVus {
    start: Instant,
    start_vus: u64,
    stages: Vec<Stage>,
    total: Duration,
    graceful_ramp_down: Duration,
    next: AtomicU64,
    /// Maps this instance's VU number to its number in the whole test (execution segments).
    vus: Stripe,
}

impl RampingVus {
    pub(super) fn new(
        start: Instant,
        start_vus: u64,
        stages: Vec<Stage>,
        graceful_ramp_down: Duration,
        vus: Stripe,
    ) -> Self {
        let total = stages.iter().map(|s| s.duration).sum();
        RampingVus {
            start,
            start_vus,
            stages,
            total,
            graceful_ramp_down,
            next: AtomicU64::new(0),
            vus,
        }
    }

    /// The (fractional) VU target `t` after the start.
    pub(super) fn target(&self, t: Duration) -> f64 {
        let mut from = self.start_vus as f64;
        let mut at = Duration::ZERO;
        for s in &self.stages {
            let to = s.target as f64;
            if t < at + s.duration {
                let f = (t - at).as_secs_f64() / s.duration.as_secs_f64();
                return from + (to - from) * f;
            }
            at += s.duration;
            from = to;
        }
        from
    }

    /// The first moment after `t` when VU `k` (0-based) drops out of the target.
    fn first_inactive(&self, k: u64, t: Duration) -> Option<Duration> {
        let need = (k + 1) as f64;
        let mut from = self.start_vus as f64;
        let mut at = Duration::ZERO;
        for s in &self.stages {
            let to = s.target as f64;
            let end = at + s.duration;
            if end > t && to < need {
                // Linear ramp down: from + (to - from) * f drops below need.
                let f = if from < need {
                    0.0
                } else {
                    ((from - need) / (from - to)).clamp(0.0, 1.0)
                };
                let when = (at + s.duration.mul_f64(f)).max(t);
                return Some(when);
            }
            at = end;
            from = to;
        }
        None
    }

    /// The first moment at or after `t` when VU `k` (0-based) is part of the target.
    fn first_active(&self, k: u64, t: Duration) -> Option<Duration> {
        let need = (k + 1) as f64;
        if self.target(t).floor() >= need {
            return Some(t);
        }
        let mut from = self.start_vus as f64;
        let mut at = Duration::ZERO;
        for s in &self.stages {
            let to = s.target as f64;
            let end = at + s.duration;
            if end > t && to > from && to >= need {
                // Linear ramp: from + (to - from) * f == need.
                let f = ((need - from) / (to - from)).max(0.0);
                let when = at + s.duration.mul_f64(f);
                let when = when.max(t);
                if when <= end {
                    return Some(when);
                }
            }
            at = end;
            from = to;
        }
        None
    }
}

impl IterationSource for RampingVus {
    fn next(&self, vu_index: u64, _vu_iterations: u64) -> Next {
        let elapsed = Instant::now().saturating_duration_since(self.start);
        if elapsed >= self.total {
            return Next::Done;
        }
        // With a segment, this VU is active while the whole test's target includes its
        // number in the whole test.
        match self.first_active(self.vus.global(vu_index), elapsed) {
            Some(t) if t == elapsed => Next::Now(self.next.fetch_add(1, Ordering::Relaxed)),
            Some(t) => Next::Wait(self.start + t),
            None => Next::Done,
        }
    }

    fn run_time(&self) -> Duration {
        self.total
    }

    fn ramp_down_deadline(&self, vu_index: u64) -> Option<Instant> {
        let elapsed = Instant::now().saturating_duration_since(self.start);
        self.first_inactive(self.vus.global(vu_index), elapsed)
            .map(|t| self.start + t + self.graceful_ramp_down)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(secs: u64, target: u64) -> Stage {
        Stage {
            duration: Duration::from_secs(secs),
            target,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn vus_join_on_the_ramp() {
        let r = RampingVus::new(
            Instant::now(),
            0,
            vec![stage(10, 10), stage(10, 0)],
            Duration::ZERO,
            Stripe::full(),
        );
        assert_eq!(r.target(Duration::from_secs(5)), 5.0);
        assert_eq!(r.target(Duration::from_secs(15)), 5.0);
        assert_eq!(
            r.first_active(0, Duration::ZERO),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            r.first_active(4, Duration::ZERO),
            Some(Duration::from_secs(5))
        );
        assert_eq!(r.first_active(9, Duration::from_secs(11)), None);
        assert!(matches!(r.next(0, 0), Next::Wait(_)));
        // VU 9 (the 10th) leaves as soon as the ramp down starts; VU 0 only at the very end.
        assert_eq!(
            r.first_inactive(9, Duration::ZERO),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            r.first_inactive(0, Duration::ZERO),
            Some(Duration::from_secs(19))
        );
    }
}
