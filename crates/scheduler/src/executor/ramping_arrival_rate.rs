//! `ramping-arrival-rate`: the arrival rate follows linear stages (an open model; the
//! schedule is `arrival_rate`'s).

use std::time::Duration;

use rk6_options::format_duration;

use super::arrival_rate::{pool_vus, time_unit, vus_range};
use super::contract::{ExecutorConfig, Sizes};
use crate::fields::{ConfigError, Fields, Stage};
use crate::segment::Stripe;

/// `ramping-arrival-rate`'s own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct RampingArrivalRateConfig {
    /// Iterations per `time_unit` at the start.
    pub start_rate: u64,
    /// The period rates are counted over.
    pub time_unit: Duration,
    /// The ramps (targets are rates).
    pub stages: Vec<Stage>,
    /// VUs initialised before the test.
    pub pre_allocated_vus: u64,
    /// VUs there may be in all.
    pub max_vus: u64,
}

impl ExecutorConfig for RampingArrivalRateConfig {
    const NAME: &'static str = "ramping-arrival-rate";
    const KEYS: &'static [&'static str] = &[
        "startRate",
        "timeUnit",
        "stages",
        "preAllocatedVUs",
        "maxVUs",
    ];

    fn parse(f: &Fields) -> Result<Self, ConfigError> {
        let start_rate = f.int("startRate", Some(0))?;
        if start_rate < 0 {
            f.invalid("the startRate value can't be negative");
        }
        let time_unit = time_unit(f)?;
        let stages = f.stages("stages")?;
        let (pre_allocated_vus, max_vus) = pool_vus(f)?;
        Ok(RampingArrivalRateConfig {
            start_rate: start_rate.max(0) as u64,
            time_unit,
            stages,
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
        self.stages.iter().map(|s| s.duration).sum()
    }

    fn describe(&self, sc: &Sizes, tail: &str) -> String {
        let peak = self
            .stages
            .iter()
            .map(|s| s.target)
            .max()
            .unwrap_or(0)
            .max(self.start_rate);
        format!(
            "Up to {:.2} iterations/s for {} over {} stages ({}{tail})",
            peak as f64 * sc.iteration_share / self.time_unit.as_secs_f64(),
            format_duration(self.run_time()),
            self.stages.len(),
            vus_range(sc.initial_vus, sc.max_vus)
        )
    }
}
