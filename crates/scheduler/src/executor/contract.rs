//! What every executor answers: its configuration ([`ExecutorConfig`]) and the
//! [`IterationSource`] VU loops pull its iterations from.

use std::time::Duration;

use tokio::time::Instant;

use crate::fields::{ConfigError, Fields};
use crate::segment::Stripe;

/// This instance's numbers of a scenario that its banner line shows beside the executor's
/// own fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizes {
    /// The most VUs at once.
    pub max_vus: u64,
    /// VUs from the start (arrival-rate executors: `preAllocatedVUs`).
    pub initial_vus: u64,
    /// VUs looping when an externally-controlled scenario starts.
    pub starting_vus: u64,
    /// Iterations: in all (shared-iterations) or per VU (per-vu-iterations).
    pub iterations: Option<u64>,
    /// This instance's share of the iterations (1 without a segment).
    pub iteration_share: f64,
}

/// What every executor's configuration answers.
pub trait ExecutorConfig: Sized {
    /// The executor's name as k6 spells it (`constant-vus`).
    const NAME: &'static str;
    /// Its own configuration keys, in k6's order.
    const KEYS: &'static [&'static str];

    /// Reads and checks its fields of a scenario's configuration.
    fn parse(f: &Fields) -> Result<Self, ConfigError>;

    /// [`ExecutorConfig::NAME`].
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// The most VUs it uses at once in the whole test (every segment together).
    fn total_max_vus(&self) -> u64;

    /// VUs initialised before the test when fewer than the most (arrival-rate executors).
    fn pre_allocated_vus(&self) -> Option<u64> {
        None
    }

    /// How this instance's iterations are dealt, given how its VUs are (`vus`).
    fn iteration_stripe(&self, vus: &Stripe) -> Stripe {
        vus.clone()
    }

    /// How long it hands out iterations.
    fn run_time(&self) -> Duration;

    /// k6's banner line for the scenario; `tail` is the common `, exec: …, gracefulStop: …`.
    fn describe(&self, sizes: &Sizes, tail: &str) -> String;
}

/// What a VU does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run iteration `n` (numbered within the scenario) now.
    Now(u64),
    /// Run iteration `n` at the planned instant (open-model executors).
    At(Instant, u64),
    /// Nothing to do before this instant; ask again then.
    Wait(Instant),
    /// This VU is done with the scenario.
    Done,
}

/// Hands out iterations to the VUs of one scenario.
pub trait IterationSource: Send + Sync {
    /// What VU number `vu_index` (0-based within the scenario), which has already run
    /// `vu_iterations` iterations of this scenario, does next.
    fn next(&self, vu_index: u64, vu_iterations: u64) -> Next;
    /// Iterations that were planned but never started, known once the scenario ended.
    fn dropped(&self) -> u64 {
        0
    }

    /// Planned starts that have passed with no free VU so far (while it runs).
    fn dropped_so_far(&self) -> u64 {
        0
    }
    /// How long the scenario hands out new iterations (its `duration`/`maxDuration`).
    fn run_time(&self) -> Duration;

    /// Whether a planned iteration start has passed with no VU to take it: the scenario then
    /// starts another VU if it may (arrival-rate executors up to `maxVUs`).
    fn behind(&self) -> bool {
        false
    }

    /// For an iteration VU `vu_index` starts now: the instant after which it must be
    /// interrupted because the VU was ramped down (ramping-vus' `gracefulRampDown`).
    fn ramp_down_deadline(&self, _vu_index: u64) -> Option<Instant> {
        None
    }
}
