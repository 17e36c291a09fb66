//! The schedule of `constant-arrival-rate` and `ramping-arrival-rate`: iterations start on
//! a planned schedule (an open model); an iteration whose start time passes with no free VU
//! is dropped. The fields both executors share are read here too.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use super::contract::{IterationSource, Next};
use crate::fields::{ConfigError, Fields, Stage};
use crate::segment::Stripe;
use rk6_options::GoDuration;

/// `timeUnit` of both arrival-rate executors (1 s when absent), noted unless positive.
pub(super) fn time_unit(f: &Fields) -> Result<Duration, ConfigError> {
    let unit = f.signed_duration("timeUnit", GoDuration::from_secs(1))?;
    Ok(match unit.to_std().filter(|d| !d.is_zero()) {
        Some(d) => d,
        None => {
            f.invalid("the timeUnit must be more than 0");
            Duration::from_secs(1)
        }
    })
}

/// `preAllocatedVUs` and `maxVUs` (`preAllocatedVUs` when absent) of both arrival-rate
/// executors, problems noted in k6's order.
pub(super) fn pool_vus(f: &Fields) -> Result<(u64, u64), ConfigError> {
    let pre = if f.has("preAllocatedVUs") {
        let pre = f.int("preAllocatedVUs", Some(0))?;
        if pre < 0 {
            f.invalid("the number of preAllocatedVUs can't be negative");
        }
        pre
    } else {
        f.invalid("the number of preAllocatedVUs isn't specified");
        0
    };
    let max = f.int("maxVUs", Some(pre))?;
    if max < pre {
        f.invalid("maxVUs can't be less than preAllocatedVUs");
    } else if max == 0 {
        f.invalid("the number of maxVUs must be more than 0");
    }
    Ok((pre.max(0) as u64, max.max(0) as u64))
}

/// The banner's `maxVUs: pre-max` (one number when they are equal).
pub(super) fn vus_range(pre: u64, max: u64) -> String {
    if pre == max {
        format!("maxVUs: {max}")
    } else {
        format!("maxVUs: {pre}-{max}")
    }
}

/// How late a free VU may pick up a planned iteration before it counts as dropped: a VU that
/// frees up a hair after the planned instant is the same VU a timer would have woken.
const SLACK: Duration = Duration::from_millis(1);

pub(super) struct ArrivalRate {
    /// The schedule's time zero: when the first VU first asks for work. Starting the clock at
    /// the scenario's start instead would drop the first iterations whenever handing the
    /// job to the worker threads takes longer than `SLACK`.
    start: OnceLock<Instant>,
    /// Rate at the start of each stage and at its end, in iterations per second.
    stages: Vec<(Duration, f64, f64)>,
    total: Duration,
    /// k6's constant-arrival-rate also starts an iteration at the very end of the duration;
    /// its ramping sibling does not.
    include_end: bool,
    planned: u64,
    /// Which indices of the whole test's schedule this instance runs (execution segments).
    stripe: Stripe,
    /// How many of the `planned` iterations are this instance's.
    own_planned: u64,
    state: Mutex<Claims>,
}

#[derive(Default)]
struct Claims {
    next: u64,
    dropped: u64,
}

impl ArrivalRate {
    pub(super) fn new(
        start_rate: u64,
        time_unit: Duration,
        stages: Vec<Stage>,
        include_end: bool,
        stripe: Stripe,
    ) -> Self {
        let per_sec = |r: u64| r as f64 / time_unit.as_secs_f64();
        let mut from = per_sec(start_rate);
        let mut out = Vec::with_capacity(stages.len());
        for s in &stages {
            let to = per_sec(s.target);
            out.push((s.duration, from, to));
            from = to;
        }
        let total = stages.iter().map(|s| s.duration).sum();
        let mut me = ArrivalRate {
            start: OnceLock::new(),
            stages: out,
            total,
            include_end,
            planned: 0,
            stripe,
            own_planned: 0,
            state: Mutex::default(),
        };
        let n = me.count_before(total);
        // Guard against float noise: 10/s over 1 s must be exactly 10, not 10.000000001.
        let n = if (n - n.round()).abs() < 1e-9 {
            n.round()
        } else {
            n
        };
        me.planned = if include_end {
            n.floor() as u64 + 1
        } else {
            n.ceil() as u64
        };
        me.own_planned = me.stripe.scale(me.planned);
        me
    }

    /// The first index of the schedule at or after `i` that this instance runs, and how
    /// many of its own come before it.
    fn own_from(&self, i: u64) -> (u64, u64) {
        let k = self.stripe.scale(i);
        (self.stripe.global(k), k)
    }

    /// Iterations planned strictly before `t` (fractional).
    fn count_before(&self, t: Duration) -> f64 {
        let mut n = 0.0;
        let mut at = Duration::ZERO;
        for &(d, r0, r1) in &self.stages {
            let tau = t.saturating_sub(at).min(d).as_secs_f64();
            let len = d.as_secs_f64();
            n += r0 * tau + (r1 - r0) * tau * tau / (2.0 * len);
            at += d;
            if t <= at {
                break;
            }
        }
        n
    }

    /// When iteration `i` is planned, measured from the start.
    fn time_of(&self, i: u64) -> Option<Duration> {
        let mut remaining = i as f64;
        let mut at = Duration::ZERO;
        for &(d, r0, r1) in &self.stages {
            let len = d.as_secs_f64();
            let in_stage = (r0 + r1) / 2.0 * len;
            if remaining < in_stage {
                let tau = if (r1 - r0).abs() < 1e-12 {
                    remaining / r0
                } else {
                    let a = (r1 - r0) / (2.0 * len);
                    (-r0 + (r0 * r0 + 4.0 * a * remaining).sqrt()) / (2.0 * a)
                };
                let t = at + Duration::from_secs_f64(tau.clamp(0.0, len));
                return (t < self.total).then_some(t);
            }
            remaining -= in_stage;
            at += d;
        }
        // The planned start exactly at the end (constant-arrival-rate only).
        (self.include_end && i < self.planned).then_some(self.total)
    }
}

impl IterationSource for ArrivalRate {
    fn next(&self, _vu_index: u64, _vu_iterations: u64) -> Next {
        let mut claims = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let start = *self.start.get_or_init(|| now);
        let elapsed = now.saturating_duration_since(start);
        let late = elapsed.saturating_sub(SLACK);
        // `next` and `due` index the whole test's schedule; only this instance's own
        // indices are run or counted as dropped.
        let due = if late > self.total {
            self.planned
        } else {
            (self.count_before(late).ceil() as u64).min(self.planned)
        };
        if claims.next < due {
            claims.dropped += self.stripe.scale(due) - self.stripe.scale(claims.next);
            claims.next = due;
        }
        let (i, k) = self.own_from(claims.next);
        if k >= self.own_planned {
            return Next::Done;
        }
        let Some(t) = self.time_of(i) else {
            return Next::Done;
        };
        claims.next = i + 1;
        Next::At(start + t, k)
    }

    fn behind(&self) -> bool {
        let claims = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (i, k) = self.own_from(claims.next);
        if k >= self.own_planned {
            return false;
        }
        match (self.start.get(), self.time_of(i)) {
            (None, _) => true,
            (Some(start), Some(t)) => Instant::now() > *start + t + SLACK,
            (Some(_), None) => false,
        }
    }

    fn dropped(&self) -> u64 {
        let claims = self.state.lock().unwrap_or_else(|e| e.into_inner());
        claims.dropped
            + self
                .own_planned
                .saturating_sub(self.stripe.scale(claims.next))
    }

    fn dropped_so_far(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).dropped
    }

    fn run_time(&self) -> Duration {
        self.total
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
    async fn constant_rate_schedule() {
        // As k6: 20/s over 2 s starts 41 iterations, the last one at 2 s.
        let r = ArrivalRate::new(
            20,
            Duration::from_secs(1),
            vec![stage(2, 20)],
            true,
            Stripe::full(),
        );
        assert_eq!(r.planned, 41);
        assert_eq!(r.time_of(0), Some(Duration::ZERO));
        assert_eq!(r.time_of(1), Some(Duration::from_millis(50)));
        assert_eq!(r.time_of(39), Some(Duration::from_millis(1950)));
        assert_eq!(r.time_of(40), Some(Duration::from_secs(2)));
        assert_eq!(r.time_of(41), None);
    }

    #[tokio::test(start_paused = true)]
    async fn ramping_rate_schedule() {
        // 0 → 10/s over 10 s: 50 iterations, the i-th at sqrt(2 i) seconds.
        let r = ArrivalRate::new(
            0,
            Duration::from_secs(1),
            vec![stage(10, 10)],
            false,
            Stripe::full(),
        );
        assert_eq!(r.planned, 50);
        let t = r.time_of(8).unwrap().as_secs_f64();
        assert!((t - 4.0).abs() < 1e-9, "{t}");
        // per-minute time unit
        let r = ArrivalRate::new(
            60,
            Duration::from_secs(60),
            vec![stage(3, 60)],
            false,
            Stripe::full(),
        );
        assert_eq!(r.planned, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn late_claims_drop_missed_iterations() {
        let start = Instant::now();
        let r = ArrivalRate::new(
            10,
            Duration::from_secs(1),
            vec![stage(1, 10)],
            true,
            Stripe::full(),
        );
        assert_eq!(r.next(0, 0), Next::At(start, 0));
        tokio::time::advance(Duration::from_millis(350)).await;
        // Iterations 1..3 (100, 200, 300 ms) passed with no free VU.
        assert_eq!(
            r.next(0, 1),
            Next::At(start + Duration::from_millis(400), 4)
        );
        // 3 dropped, 6 (500 ms … 1 s) not claimed yet.
        assert_eq!(r.dropped(), 3 + 6);
    }
}
