//! `constant-arrival-rate`: `rate` iterations start every `timeUnit` for `duration`,
//! whether or not earlier ones finished (an open model; the schedule is `arrival_rate`'s).

use std::time::Duration;

use rk6_options::format_duration;

use super::arrival_rate::{pool_vus, time_unit, vus_range};
use super::contract::{ExecutorConfig, Sizes};
use crate::fields::{ConfigError, Fields};
use crate::segment::Stripe;

/// `constant-arrival-rate`'s own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantArrivalRateConfig {
    /// Iterations started per `time_unit`.
    pub rate: u64,
    /// The period `rate` is counted over.
    pub time_unit: Duration,
    /// How long iterations are started.
    pub duration: Duration,
    /// VUs initialised before the test.
    pub pre_allocated_vus: u64,
    /// VUs there may be in all (more are initialised mid-test when needed).
    pub max_vus: u64,
}

impl ExecutorConfig for ConstantArrivalRateConfig {
    const NAME: &'static str = "constant-arrival-rate";
    const KEYS: &'static [&'static str] =
        &["rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"];

    fn parse(f: &Fields) -> Result<Self, ConfigError> {
        let rate = if f.has("rate") {
            let rate = f.int("rate", Some(0))?;
            if rate <= 0 {
                f.invalid("the iteration rate must be more than 0");
            }
            rate
        } else {
            f.invalid("the iteration rate isn't specified");
            0
        };
        let time_unit = time_unit(f)?;
        let duration = super::constant_vus::at_least_a_second(f, "duration")?;
        let (pre_allocated_vus, max_vus) = pool_vus(f)?;
        Ok(ConstantArrivalRateConfig {
            rate: rate.max(0) as u64,
            time_unit,
            duration,
            pre_allocated_vus,
            max_vus,
        })
    }

    fn total_max_vus(&self) -> u64 {
        self.max_vus
    }

    fn pre_allocated_vus(&self) -> Option<u64> {
        Some(self.pre_allocated_vus)
    }

    /// k6 deals arrival-rate slots along how `maxVUs` were dealt.
    fn iteration_stripe(&self, vus: &Stripe) -> Stripe {
        vus.derive(self.max_vus)
    }

    fn run_time(&self) -> Duration {
        self.duration
    }

    fn describe(&self, sc: &Sizes, tail: &str) -> String {
        format!(
            "{:.2} iterations/s for {} ({}{tail})",
            self.rate as f64 * sc.iteration_share / self.time_unit.as_secs_f64(),
            format_duration(self.duration),
            vus_range(sc.initial_vus, sc.max_vus)
        )
    }
}
