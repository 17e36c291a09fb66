//! What a running test shows and emits once a second: the progress lines, the `vus` and
//! `vus_max` gauges, `dropped_iterations`.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rk6_js::Shared;
use rk6_metrics::{builtin, Sample, TagSet};
use rk6_scheduler::ExecutionState;

use crate::progress;

/// Where progress goes: nowhere (`-q`), plain lines once a second, or bars redrawn in place
/// on a terminal.
#[derive(Clone)]
pub(super) struct Display {
    pub(super) quiet: bool,
    pub(super) terminal: bool,
    /// Lines of the last frame drawn on the terminal (to redraw over them).
    pub(super) drawn: Arc<std::sync::atomic::AtomicUsize>,
}

impl Display {
    pub(super) fn new(quiet: bool) -> Self {
        Display {
            quiet,
            terminal: std::io::stdout().is_terminal(),
            drawn: Arc::default(),
        }
    }

    pub(super) fn show(&self, state: &ExecutionState, elapsed: Duration) {
        if self.quiet {
            return;
        }
        let mut out = std::io::stdout().lock();
        if self.terminal {
            let (frame, lines) =
                progress::frame(state, elapsed, self.drawn.load(Ordering::Relaxed));
            self.drawn.store(lines, Ordering::Relaxed);
            let _ = out.write_all(frame.as_bytes());
        } else {
            let _ = out.write_all(progress::snapshot(state, elapsed).as_bytes());
        }
        let _ = out.flush();
    }
}

/// When the `vus` and `vus_max` gauges are sampled: once for each whole second since the
/// test started, as k6 samples them on a ticker started before its VUs are built (so a
/// test of one second has them, sampled while its VUs run). The ticker runs with the
/// scenarios: seconds that passed before them (a long `setup()`) are sampled once as they
/// begin, and a second that came as they ended, which the stopped ticker would lose, is
/// sampled at the end. A test shorter than a second has none, as in k6.
pub(super) struct VusClock {
    /// The test's start: the seconds count from it.
    started: Instant,
    /// The last whole second sampled.
    sampled: AtomicU64,
}

impl VusClock {
    /// The clock of a test that started at `started`.
    pub(super) fn new(started: Instant) -> Self {
        VusClock {
            started,
            sampled: AtomicU64::new(0),
        }
    }

    /// Whether a whole second unsampled has passed at `at`; it is then taken (each second is
    /// sampled once, by the ticker or by the end of the scenarios).
    pub(super) fn due(&self, at: Instant) -> bool {
        let second = at.saturating_duration_since(self.started).as_secs();
        self.sampled.fetch_max(second, Ordering::Relaxed) < second
    }
}

/// The progress display (redrawn more often on a terminal), the iterations dropped since
/// the last tick, and the gauges `vus`/`vus_max` once per second as `clock` says. Ticks
/// come at whole periods since the test's start (`started`).
pub(super) async fn tick(
    state: Arc<ExecutionState>,
    shared: Arc<Shared>,
    display: Display,
    started: Instant,
    drops: Arc<Drops>,
    clock: Arc<VusClock>,
) {
    let period = if display.terminal {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(1)
    };
    let tags = run_tags(&shared);
    let first = tokio::time::Instant::from_std(started) + period;
    let mut interval = tokio::time::interval_at(first, period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        // The tick's own time, a whole number of periods since the start.
        let at = interval.tick().await.into_std();
        display.show(&state, started.elapsed());
        drops.emit(&state, &shared);
        if clock.due(at) {
            let _ = shared.samples.send(vus_samples(&state, &tags));
        }
    }
}

/// The run's `--tag`/`tags` as a tag set: every sample carries them, the engine's own
/// (`vus`, `vus_max`, `dropped_iterations`) as the VUs' (k6-operator's `instance_id` and
/// `testrun_name` tell its runners apart with them).
pub(super) fn run_tags(shared: &Shared) -> TagSet {
    TagSet::from_pairs(shared.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The `vus` and `vus_max` gauges now.
pub(super) fn vus_samples(state: &ExecutionState, tags: &TagSet) -> Vec<Sample> {
    let now = SystemTime::now();
    vec![
        Sample {
            metric: builtin::VUS,
            tags: tags.clone(),
            value: state.active_vus() as f64,
            time: now,
        },
        Sample {
            metric: builtin::VUS_MAX,
            tags: tags.clone(),
            value: state.vus_max.load(Ordering::Relaxed) as f64,
            time: now,
        },
    ]
}

/// Drops per scenario and call sent as samples of 1; more are summed into one sample.
pub(super) const SINGLE_DROPS: u64 = 1000;

/// `dropped_iterations` as they happen: one sample (value 1, tagged with the scenario) per
/// iteration dropped since the last call, so thresholds and outputs see them during the run
/// as in k6; one batch per call, not a message per drop. Past [`SINGLE_DROPS`] in one call
/// the rest goes in one sample carrying their number (as k6 reports the iterations a
/// shared-iterations scenario left undone), so an absurd rate or iteration count costs a
/// sample, not memory per iteration.
#[derive(Default)]
pub(super) struct Drops {
    /// Drops already sent, per scenario.
    pub(super) sent: std::sync::Mutex<Vec<u64>>,
}

impl Drops {
    pub(super) fn emit(&self, state: &ExecutionState, shared: &Shared) {
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        sent.resize(state.scenarios.len(), 0);
        let now = SystemTime::now();
        let mut batch = Vec::new();
        let mut run = None;
        for (s, sent) in state.scenarios.iter().zip(sent.iter_mut()) {
            let dropped = s.dropped_so_far();
            if dropped <= *sent {
                continue;
            }
            let tags = run
                .get_or_insert_with(|| run_tags(shared))
                .with("scenario", &s.scenario.name);
            let new = dropped - *sent;
            let singles = new.min(SINGLE_DROPS);
            let rest = new - singles;
            let values =
                std::iter::repeat_n(1.0, singles as usize).chain((rest > 0).then_some(rest as f64));
            for value in values {
                batch.push(Sample {
                    metric: builtin::DROPPED_ITERATIONS,
                    tags: tags.clone(),
                    value,
                    time: now,
                });
            }
            // An open-model drop is an arrival nobody served: rk6's corrected Trends count
            // it (one sample carries them all; the aggregator spreads it over the Trends).
            if s.scenario.is_open_model() {
                batch.push(Sample {
                    metric: builtin::ITERATIONS_UNSERVED,
                    tags: tags.clone(),
                    value: new as f64,
                    time: now,
                });
            }
            *sent = dropped;
        }
        if !batch.is_empty() {
            let _ = shared.samples.send(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_test_ending_as_its_first_second_comes_still_samples_the_vus() {
        // The scenarios begin 20 ms after the start and end one second later: the ticker,
        // stopped then, never ran at 1 s; the end of the scenarios samples that second.
        let start = Instant::now();
        let clock = VusClock::new(start);
        assert!(clock.due(start + 1020 * MS));
        assert!(!clock.due(start + 1021 * MS), "each second once");
    }

    #[test]
    fn each_whole_second_is_sampled_once_by_the_ticker_or_the_end() {
        let start = Instant::now();
        let clock = VusClock::new(start);
        assert!(!clock.due(start + 250 * MS), "not before the first second");
        assert!(clock.due(start + 1000 * MS), "the ticker at 1 s");
        assert!(!clock.due(start + 1750 * MS));
        assert!(
            !clock.due(start + 1900 * MS),
            "the end within the same second"
        );
        assert!(clock.due(start + 2000 * MS));
    }

    #[test]
    fn a_test_shorter_than_a_second_has_no_vus_samples_as_in_k6() {
        let start = Instant::now();
        let clock = VusClock::new(start);
        assert!(!clock.due(start + 600 * MS));
    }

    #[test]
    fn seconds_spent_in_setup_are_sampled_once_as_the_scenarios_begin() {
        // setup() took 2.3 s: the scenarios' first tick samples (k6 samples during setup
        // too), then the next at 3 s.
        let start = Instant::now();
        let clock = VusClock::new(start);
        assert!(clock.due(start + 2300 * MS));
        assert!(!clock.due(start + 2500 * MS));
        assert!(clock.due(start + 3000 * MS));
    }
}
