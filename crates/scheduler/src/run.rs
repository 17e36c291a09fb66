//! Runs all scenarios of a test concurrently, each with its own VUs, start time and
//! graceful stop.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::oneshot;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

use crate::config::Scenario;
use crate::executor::source_for;
use crate::job::Job;
use crate::pool::Pool;
use crate::state::ExecutionState;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// Every scenario finished.
    Finished,
    /// `stop` was cancelled from outside (signal, threshold abort).
    Stopped,
    /// A VU asked to abort the test.
    Aborted,
}

/// The number of VUs the scenarios need in all; VU ids `1..=total` are handed out to the
/// scenarios in order.
pub fn total_vus(scenarios: &[Arc<Scenario>]) -> u64 {
    scenarios.iter().map(|s| s.max_vus()).sum()
}

/// The VU ids to create before the test starts: each scenario's initial VUs (the rest of
/// its id range is created on demand).
pub fn initial_vu_ids(scenarios: &[Arc<Scenario>]) -> Vec<u64> {
    let mut ids = Vec::new();
    let mut first = 1;
    for s in scenarios {
        ids.extend(first..first + s.initial_vus());
        first += s.max_vus();
    }
    ids
}

/// Runs `scenarios` (sorted by name, as in [`ExecutionState::scenarios`]) on `pool`.
/// Cancelling `stop` interrupts every running iteration at once.
pub async fn run(
    scenarios: &[Arc<Scenario>],
    pool: &dyn Pool,
    state: Arc<ExecutionState>,
    stop: CancellationToken,
) -> RunEnd {
    let test_start = Instant::now();
    let _ = state.started.set(std::time::Instant::now());
    let abort = CancellationToken::new();
    let mut next_vu = 1u64;
    let mut running = Vec::with_capacity(scenarios.len());
    for (index, scenario) in scenarios.iter().enumerate() {
        let first_vu = next_vu;
        next_vu += scenario.max_vus();
        running.push(run_scenario(
            scenario.clone(),
            index,
            first_vu,
            test_start,
            pool,
            state.clone(),
            stop.clone(),
            abort.clone(),
        ));
    }
    join_all(running).await;
    if abort.is_cancelled() {
        RunEnd::Aborted
    } else if stop.is_cancelled() {
        RunEnd::Stopped
    } else {
        RunEnd::Finished
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_scenario(
    scenario: Arc<Scenario>,
    index: usize,
    first_vu: u64,
    test_start: Instant,
    pool: &dyn Pool,
    state: Arc<ExecutionState>,
    stop: CancellationToken,
    abort: CancellationToken,
) {
    let counters = &state.scenarios[index];
    tokio::select! {
        _ = sleep_until(test_start + scenario.start_time) => {}
        _ = stop.cancelled() => { counters.done.store(true, Ordering::Relaxed); return; }
        _ = abort.cancelled() => { counters.done.store(true, Ordering::Relaxed); return; }
    }
    let start = Instant::now();
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    counters
        .started_at_unix_ms
        .store(unix_ms, Ordering::Relaxed);
    let source: Arc<dyn crate::executor::IterationSource> =
        source_for(&scenario, start, &state, index).into();
    let interrupt = CancellationToken::new();
    let job = Arc::new(Job {
        scenario: scenario.clone(),
        index,
        first_vu,
        source: source.clone(),
        interrupt: interrupt.clone(),
        abort: abort.clone(),
        state: state.clone(),
    });
    let mut loops: VuLoops = (0..scenario.initial_vus())
        .map(|i| pool.run(first_vu + i, job.clone()))
        .collect();
    let mut started = loops.len() as u64;
    let hard_deadline = start + source.run_time() + scenario.graceful_stop;
    loop {
        // A scenario may start without VUs (`preAllocatedVUs: 0`, or a segment that gets
        // none yet): it is only over when it can add no more VUs.
        let can_grow = started < scenario.max_vus();
        tokio::select! {
            _ = all_done(&mut loops), if !loops.is_empty() || !can_grow => break,
            _ = sleep_until(hard_deadline) => { interrupt.cancel(); all_done(&mut loops).await; break }
            _ = stop.cancelled() => { interrupt.cancel(); all_done(&mut loops).await; break }
            _ = abort.cancelled() => { interrupt.cancel(); all_done(&mut loops).await; break }
            _ = tokio::time::sleep(if can_grow { TICK } else { PROGRESS_TICK }) => {
                counters
                    .schedule_dropped
                    .store(source.dropped_so_far(), Ordering::Relaxed);
                counters.elapsed_us.store(
                    start.elapsed().min(source.run_time()).as_micros() as u64,
                    Ordering::Relaxed,
                );
                // A planned start passed with every VU busy: bring in one more VU (k6
                // initialises VUs beyond preAllocatedVUs mid-test, up to maxVUs).
                if can_grow && source.behind() {
                    loops.push(pool.run(first_vu + started, job.clone()));
                    started += 1;
                    state.vus_max.fetch_add(1, Ordering::Relaxed);
                } else if loops.is_empty() && start.elapsed() >= source.run_time() {
                    break;
                }
            }
        }
    }
    counters.elapsed_us.store(
        start.elapsed().min(source.run_time()).as_micros() as u64,
        Ordering::Relaxed,
    );
    // The schedule's drops move into `dropped`: cleared first, so that `dropped_so_far` may
    // lag for a moment but never counts one twice.
    counters.schedule_dropped.store(0, Ordering::Relaxed);
    counters
        .dropped
        .fetch_add(source.dropped(), Ordering::Relaxed);
    counters.done.store(true, Ordering::Relaxed);
}

/// How often a scenario that can still add VUs checks whether it needs another one (and
/// refreshes its progress).
const TICK: std::time::Duration = std::time::Duration::from_millis(10);

/// How often a scenario with all of its VUs refreshes its progress (elapsed time, planned
/// starts dropped so far) for the display, `dropped_iterations` and the REST API, which read
/// it every 250 ms at most. Every tick wakes the control runtime's threads: ticking every
/// 10 ms, a 1-VU test of `sleep(30)` used 16 ms of CPU a second, 7.5 with this.
const PROGRESS_TICK: std::time::Duration = std::time::Duration::from_millis(100);

/// The scenario's running VU loops, each signalling when it ends. Only the loops that ended
/// since the last look are polled: the scenario's loop looks every tick, and polling all of
/// 18,000 VUs' signals 100 times a second cost ~18 µs per iteration (bench/scale.py
/// `--equal-rate`).
type VuLoops = FuturesUnordered<oneshot::Receiver<()>>;

/// Completes when every VU loop in `loops` has ended (finished ones are removed).
async fn all_done(loops: &mut VuLoops) {
    while loops.next().await.is_some() {}
}

/// Awaits all futures concurrently on the current task (no `Send` needed).
async fn join_all<F: std::future::Future<Output = ()>>(futures: impl IntoIterator<Item = F>) {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    std::future::poll_fn(|cx| {
        futures.retain_mut(|f| f.as_mut().poll(cx).is_pending());
        if futures.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::config::scenarios_from_options;
    use crate::config::tests::opts;
    use crate::pool::LocalPool;
    use crate::vu::{Iteration, IterationOutcome, Vu, VuFactory, WorkerProfile};

    /// A VU whose iteration is a sleep that honours interruption.
    struct FakeVu {
        work: Duration,
        starts: Arc<std::sync::Mutex<Vec<(u64, Duration)>>>,
        origin: Instant,
        id: u64,
    }

    impl Vu for FakeVu {
        async fn run_iteration(&mut self, it: Iteration) -> IterationOutcome {
            self.starts
                .lock()
                .unwrap()
                .push((self.id, self.origin.elapsed()));
            tokio::select! {
                _ = tokio::time::sleep(self.work) => IterationOutcome::Completed,
                _ = it.interrupt.cancelled() => IterationOutcome::Interrupted,
            }
        }
    }

    struct FakeFactory {
        work: Duration,
        created: AtomicU64,
        starts: Arc<std::sync::Mutex<Vec<(u64, Duration)>>>,
        origin: Instant,
    }

    impl VuFactory for FakeFactory {
        type Vu = FakeVu;
        fn create(&self, id: u64) -> Result<FakeVu, String> {
            self.created.fetch_add(1, Ordering::Relaxed);
            Ok(FakeVu {
                work: self.work,
                starts: self.starts.clone(),
                origin: self.origin,
                id,
            })
        }
        fn worker_profile(&self) -> WorkerProfile {
            // LocalPool ignores it: every fake VU lives on the test's thread.
            WorkerProfile {
                max_vus_per_worker: 1,
                stack_size: 1 << 20,
            }
        }
    }

    struct Outcome {
        end: RunEnd,
        state: Arc<ExecutionState>,
        took: Duration,
        starts: Vec<(u64, Duration)>,
    }

    async fn run_fake(options: serde_json::Value, work_ms: u64) -> Outcome {
        run_fake_segment(options, work_ms, &crate::Stripe::full()).await
    }

    async fn run_fake_segment(
        options: serde_json::Value,
        work_ms: u64,
        stripe: &crate::Stripe,
    ) -> Outcome {
        let scenarios: Vec<Arc<Scenario>> = scenarios_from_options(&opts(options))
            .unwrap()
            .into_iter()
            .map(|mut s| {
                s.apply_segment(stripe);
                Arc::new(s)
            })
            .collect();
        let factory = Arc::new(FakeFactory {
            work: Duration::from_millis(work_ms),
            created: AtomicU64::new(0),
            starts: Arc::default(),
            origin: Instant::now(),
        });
        let pool = LocalPool::new(factory.clone());
        let state = ExecutionState::new(&scenarios);
        let local = tokio::task::LocalSet::new();
        let t0 = Instant::now();
        let end = local
            .run_until(run(
                &scenarios,
                &pool,
                state.clone(),
                CancellationToken::new(),
            ))
            .await;
        let starts = factory.starts.lock().unwrap().clone();
        Outcome {
            end,
            state,
            took: t0.elapsed(),
            starts,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn per_vu_iterations_runs_each_vu_n_times() {
        let o = run_fake(json!({"scenarios": {"p": {"executor": "per-vu-iterations", "vus": 3, "iterations": 4}}}), 10).await;
        assert_eq!(o.end, RunEnd::Finished);
        assert_eq!(o.state.completed(), 12);
        for vu in 1..=3 {
            assert_eq!(
                o.starts.iter().filter(|(id, _)| *id == vu).count(),
                4,
                "vu {vu}"
            );
        }
        assert_eq!(o.took, Duration::from_millis(40));
    }

    #[tokio::test(start_paused = true)]
    async fn shared_iterations_are_shared() {
        let o = run_fake(json!({"vus": 2, "iterations": 10}), 10).await;
        assert_eq!(o.state.completed(), 10);
        assert_eq!(o.took, Duration::from_millis(50));
    }

    #[tokio::test(start_paused = true)]
    async fn constant_vus_loop_for_the_duration() {
        let o = run_fake(json!({"vus": 2, "duration": "1s"}), 100).await;
        assert_eq!(o.state.completed(), 20);
        assert_eq!(o.state.interrupted(), 0);
        assert_eq!(o.took, Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn graceful_stop_interrupts_long_iterations() {
        let o = run_fake(
            json!({"scenarios": {"c": {"executor": "constant-vus", "vus": 1, "duration": "1s", "gracefulStop": "1s"}}}),
            5000,
        )
        .await;
        assert_eq!(o.state.completed(), 0);
        assert_eq!(o.state.interrupted(), 1);
        assert_eq!(o.took, Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn iterations_left_at_max_duration_are_dropped() {
        // 95 ms iterations: 10 complete by 950 ms, the 11th is cut at the 1 s maxDuration
        // (gracefulStop 0), and the 89 never started are dropped.
        let o = run_fake(
            json!({"scenarios": {"s": {"executor": "shared-iterations", "vus": 1, "iterations": 100, "maxDuration": "1s", "gracefulStop": "0s"}}}),
            95,
        )
        .await;
        assert_eq!(o.state.completed(), 10);
        assert_eq!(o.state.interrupted(), 1);
        assert_eq!(o.state.scenarios[0].dropped.load(Ordering::Relaxed), 89);
    }

    #[tokio::test(start_paused = true)]
    async fn scenarios_run_concurrently_from_their_start_time() {
        let o = run_fake(
            json!({"scenarios": {
                "a": {"executor": "per-vu-iterations", "vus": 1, "iterations": 1},
                "b": {"executor": "per-vu-iterations", "vus": 2, "iterations": 1, "startTime": "2s"}
            }}),
            10,
        )
        .await;
        assert_eq!(o.state.completed(), 3);
        let mut starts = o.starts.clone();
        starts.sort();
        assert_eq!(
            starts,
            vec![
                (1, Duration::ZERO),
                (2, Duration::from_secs(2)),
                (3, Duration::from_secs(2))
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn constant_arrival_rate_starts_on_schedule() {
        let o = run_fake(
            json!({"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": 10, "duration": "1s", "preAllocatedVUs": 2}}}),
            50,
        )
        .await;
        // k6 also starts one at the very end: 0, 100, …, 1000 ms.
        assert_eq!(o.state.completed(), 11);
        assert_eq!(o.state.scenarios[0].dropped.load(Ordering::Relaxed), 0);
        let mut starts: Vec<Duration> = o.starts.iter().map(|(_, t)| *t).collect();
        starts.sort();
        let planned: Vec<Duration> = (0..=10).map(|i| Duration::from_millis(100 * i)).collect();
        assert_eq!(starts, planned);
    }

    #[tokio::test(start_paused = true)]
    async fn arrival_rate_drops_iterations_without_a_free_vu() {
        // One VU busy 250 ms per iteration at 10/s: it starts at 0, 300, 600, 900 ms and the
        // seven other planned starts (up to 1 s included) are dropped.
        let o = run_fake(
            json!({"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": 10, "duration": "1s", "preAllocatedVUs": 1}}}),
            250,
        )
        .await;
        assert_eq!(o.state.completed(), 4);
        assert_eq!(o.state.scenarios[0].dropped.load(Ordering::Relaxed), 7);
        let starts: Vec<Duration> = o.starts.iter().map(|(_, t)| *t).collect();
        assert_eq!(
            starts,
            [0, 300, 600, 900].map(Duration::from_millis).to_vec()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn arrival_rate_adds_vus_up_to_max_vus() {
        // 250 ms iterations at 10/s need 3 VUs; starting from 1, the scenario adds two more
        // (each after one missed start) and then keeps up.
        let o = run_fake(
            json!({"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": 10, "duration": "1s",
                "preAllocatedVUs": 1, "maxVUs": 3}}}),
            250,
        )
        .await;
        assert_eq!(
            o.state.vus_max.load(Ordering::Relaxed),
            2,
            "two VUs added mid-test"
        );
        assert_eq!(o.state.completed(), 9);
        assert_eq!(o.state.scenarios[0].dropped.load(Ordering::Relaxed), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn ramping_arrival_rate_follows_the_ramp() {
        // 0 → 10/s over 10 s plans 50 iterations; iteration i starts at sqrt(2i) s.
        let o = run_fake(
            json!({"scenarios": {"a": {"executor": "ramping-arrival-rate", "startRate": 0, "preAllocatedVUs": 3,
                "stages": [{"duration": "10s", "target": 10}]}}}),
            10,
        )
        .await;
        assert_eq!(o.state.completed(), 50);
        let mut starts: Vec<Duration> = o.starts.iter().map(|(_, t)| *t).collect();
        starts.sort();
        let eighth = starts[8].as_secs_f64();
        assert!((eighth - 4.0).abs() < 0.002, "{eighth}");
    }

    #[tokio::test(start_paused = true)]
    async fn ramping_vus_add_and_remove_vus() {
        // 0 → 4 VUs over 2 s, then 4 → 0 over 2 s; 100 ms iterations.
        let o = run_fake(
            json!({"scenarios": {"r": {"executor": "ramping-vus", "startVUs": 0,
                "stages": [{"duration": "2s", "target": 4}, {"duration": "2s", "target": 0}]}}}),
            100,
        )
        .await;
        let first_start = |vu: u64| {
            o.starts
                .iter()
                .filter(|(id, _)| *id == vu)
                .map(|(_, t)| *t)
                .min()
                .unwrap()
        };
        assert_eq!(first_start(1), Duration::from_millis(500));
        assert_eq!(first_start(4), Duration::from_millis(2000));
        let last_start = |vu: u64| {
            o.starts
                .iter()
                .filter(|(id, _)| *id == vu)
                .map(|(_, t)| *t)
                .max()
                .unwrap()
        };
        assert!(last_start(4) < Duration::from_millis(2000) + Duration::from_millis(100));
        assert!(last_start(1) >= Duration::from_millis(3400));
        // The last VU leaves when the target drops below 1 (3.5 s) after its running iteration.
        assert_eq!(o.took, Duration::from_millis(3600));
    }

    #[tokio::test(start_paused = true)]
    async fn graceful_ramp_down_interrupts_ramped_down_vus() {
        // Two VUs in 5 s iterations; the ramp down starts at 1 s. VU 2 leaves the target at
        // once and VU 1 at 1.5 s; each is interrupted gracefulRampDown (200 ms) later.
        let o = run_fake(
            json!({"scenarios": {"r": {"executor": "ramping-vus", "startVUs": 2, "gracefulRampDown": "200ms",
                "stages": [{"duration": "1s", "target": 2}, {"duration": "1s", "target": 0}]}}}),
            5000,
        )
        .await;
        assert_eq!(o.state.completed(), 0);
        assert_eq!(o.state.interrupted(), 2);
        assert_eq!(o.took, Duration::from_millis(1700));
    }

    fn thirds() -> Vec<crate::Stripe> {
        let seq = crate::segment::parse_sequence("0,1/3,2/3,1").unwrap();
        seq.windows(2)
            .map(|w| {
                crate::Stripe::new(
                    crate::Segment {
                        from: w[0],
                        to: w[1],
                    },
                    Some(&seq),
                )
                .unwrap()
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn segments_split_arrival_rate_starts_without_overlap() {
        // 10/s for 1 s with 4 VUs: the thirds get 2, 1 and 1 VUs, so the schedule's slots
        // are dealt 0,1,0,2 — each segment starts its own slots on the whole test's clock.
        let options = json!({"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": 10, "duration": "1s", "preAllocatedVUs": 4}}});
        let mut all = Vec::new();
        let expected: [&[u64]; 3] = [
            &[0, 200, 400, 600, 800, 1000],
            &[100, 500, 900],
            &[300, 700],
        ];
        for (stripe, want) in thirds().iter().zip(expected) {
            let o = run_fake_segment(options.clone(), 10, stripe).await;
            let mut starts: Vec<u64> = o.starts.iter().map(|(_, t)| t.as_millis() as u64).collect();
            starts.sort_unstable();
            assert_eq!(starts, want);
            assert_eq!(o.state.scenarios[0].dropped.load(Ordering::Relaxed), 0);
            all.extend(starts);
        }
        all.sort_unstable();
        assert_eq!(all, (0..=10).map(|i| i * 100).collect::<Vec<u64>>());
    }

    #[tokio::test(start_paused = true)]
    async fn segments_split_ramping_vus() {
        // 0 → 6 VUs over 6 s: VU k (0-based, whole test) joins at k+1 s; the thirds own
        // VUs 0,3 / 1,4 / 2,5.
        let options = json!({"scenarios": {"r": {"executor": "ramping-vus", "startVUs": 0, "gracefulRampDown": "0s",
            "stages": [{"duration": "6s", "target": 6}]}}});
        let expected: [&[u64]; 3] = [&[1000, 4000], &[2000, 5000], &[3000, 6000]];
        for (stripe, want) in thirds().iter().zip(expected) {
            let o = run_fake_segment(options.clone(), 100, stripe).await;
            let mut firsts: Vec<u64> = Vec::new();
            for vu in 1..=2 {
                if let Some(t) = o
                    .starts
                    .iter()
                    .filter(|(id, _)| *id == vu)
                    .map(|(_, t)| *t)
                    .min()
                {
                    firsts.push(t.as_millis() as u64);
                }
            }
            // The last VU of each third would join at the very end, when the ramp is over.
            assert_eq!(firsts, &want[..firsts.len()]);
            assert!(!firsts.is_empty());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn externally_controlled_follows_its_target() {
        let scenarios = vec![Arc::new(
            scenarios_from_options(&opts(
                json!({"scenarios": {"e": {"executor": "externally-controlled", "vus": 1, "maxVUs": 4, "duration": "3s"}}}),
            ))
            .unwrap()
            .remove(0),
        )];
        let factory = Arc::new(FakeFactory {
            work: Duration::from_millis(100),
            created: AtomicU64::new(0),
            starts: Arc::default(),
            origin: Instant::now(),
        });
        let pool = LocalPool::new(factory.clone());
        let state = ExecutionState::new(&scenarios);
        let local = tokio::task::LocalSet::new();
        let control = state.clone();
        local.spawn_local(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            control.scenarios[0].target_vus.store(3, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_secs(1)).await;
            control.paused.store(true, Ordering::Relaxed);
        });
        let end = local
            .run_until(run(
                &scenarios,
                &pool,
                state.clone(),
                CancellationToken::new(),
            ))
            .await;
        assert_eq!(end, RunEnd::Finished);
        assert_eq!(
            factory.created.load(Ordering::Relaxed),
            4,
            "maxVUs are initialised"
        );
        let starts = factory.starts.lock().unwrap().clone();
        let in_window = |from: u64, to: u64| {
            starts
                .iter()
                .filter(|(_, t)| (from..to).contains(&(t.as_millis() as u64)))
                .count()
        };
        // 1 VU for the first second, 3 for the second, none while paused.
        assert_eq!(in_window(0, 1000), 10);
        assert!(
            (28..=30).contains(&in_window(1000, 2000)),
            "{}",
            in_window(1000, 2000)
        );
        assert_eq!(in_window(2100, 3000), 0);
        assert!(starts.iter().all(|(id, _)| *id <= 3));
    }

    #[tokio::test(start_paused = true)]
    async fn stop_interrupts_everything() {
        let scenarios = vec![Arc::new(
            scenarios_from_options(&opts(json!({"vus": 3, "duration": "1m"})))
                .unwrap()
                .remove(0),
        )];
        let factory = Arc::new(FakeFactory {
            work: Duration::from_secs(10),
            created: AtomicU64::new(0),
            starts: Arc::default(),
            origin: Instant::now(),
        });
        let pool = LocalPool::new(factory);
        let state = ExecutionState::new(&scenarios);
        let stop = CancellationToken::new();
        let local = tokio::task::LocalSet::new();
        let stopper = stop.clone();
        local.spawn_local(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            stopper.cancel();
        });
        let end = local
            .run_until(run(&scenarios, &pool, state.clone(), stop))
            .await;
        assert_eq!(end, RunEnd::Stopped);
        assert_eq!(state.interrupted(), 3);
    }
}
