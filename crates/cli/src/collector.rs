//! The metrics thread: the single owner of the aggregator and the `-o` outputs. VUs send
//! one batch per iteration; every batch goes to the aggregator and then to each output, so
//! the outputs see exactly the samples the summary counts. Thresholds are evaluated every
//! 2 s, and an `abortOnFail` threshold stops the test. The outputs come back unfinished, so
//! [`finish_outputs`] can hand them the end-of-test summary (the HTML report shows its
//! checks and threshold verdicts) before closing them.

use std::sync::mpsc::{channel, sync_channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rk6_metrics::{Aggregator, Pass, Sample, SummaryData};
use rk6_output::Output;
use rk6_scheduler::CancellationToken;

/// How often thresholds are evaluated during the run (as k6).
const THRESHOLD_PERIOD: Duration = Duration::from_secs(2);

/// How often outputs push their buffers to their files.
const FLUSH_PERIOD: Duration = Duration::from_secs(1);

/// What the metrics thread leaves when the test ends.
pub struct Collected {
    /// The aggregator with every sample of the run.
    pub aggregator: Aggregator,
    /// Whether an abortOnFail threshold stopped the test.
    pub threshold_abort: bool,
    /// The outputs, flushed but not finished: see [`finish_outputs`].
    pub outputs: Vec<Box<dyn Output>>,
}

/// Gives each output the summary (when the run made one) and closes it; returns one
/// message per output that failed to write. The outputs stay alive for the caller to drop:
/// the live dashboard keeps serving until then.
pub fn finish_outputs(
    outputs: &mut [Box<dyn Output>],
    summary: Option<&SummaryData>,
) -> Vec<String> {
    outputs
        .iter_mut()
        .filter_map(|o| {
            if let Some(s) = summary {
                o.end_of_test(s);
            }
            o.finish()
                .err()
                .map(|e| format!("output {}: {e}", o.description()))
        })
        .collect()
}

/// Sample batches that may wait for the metrics thread (each VU sends one per ~100 ms or
/// 1024 samples): enough to ride out a slow write, bounded so memory stays flat.
const BATCH_BACKLOG: usize = 512;

/// The aggregator while the metrics thread feeds it, readable by the REST API's
/// `/v1/metrics` and `/v1/groups` (as k6's metrics lock); empty once the test has ended and
/// the summary took it. Locked once per batch, not per sample.
#[derive(Clone)]
pub struct LiveMetrics {
    aggregator: Arc<Mutex<Option<Aggregator>>>,
    /// The start of the test run, the divisor of counters' rates in threshold passes.
    started: Arc<Mutex<Instant>>,
    /// Requests for a verdict on every sample sent so far (see [`LiveMetrics::verdict`]).
    verdicts: Sender<Sender<bool>>,
}

impl LiveMetrics {
    /// Locks the aggregator (`None` after the end of the test).
    pub fn lock(&self) -> MutexGuard<'_, Option<Aggregator>> {
        self.aggregator.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a threshold fails once every batch sent before this call is counted, judged
    /// as at the end of the test: what the REST API's `execution_result` (k6 2.3) reports
    /// while `--linger` keeps the process up before the summary. `None` after the end.
    pub fn verdict(&self) -> Option<bool> {
        let (tx, rx) = channel();
        self.verdicts.send(tx).ok()?;
        rx.recv().ok()
    }

    /// Moves the start of the test run (a `--paused` test starts when it is resumed).
    pub fn set_started(&self, at: Instant) {
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }

    fn elapsed(&self) -> Duration {
        self.started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }
}

/// Handle to the running metrics thread.
pub struct Collector {
    tx: SyncSender<Vec<Sample>>,
    thread: JoinHandle<Collected>,
    live: LiveMetrics,
}

impl Collector {
    /// Starts the thread. `abort` is cancelled when an abortOnFail threshold fails.
    pub fn start(
        aggregator: Aggregator,
        outputs: Vec<Box<dyn Output>>,
        started: Instant,
        abort: CancellationToken,
    ) -> Collector {
        // Bounded: when the outputs cannot keep up, VUs wait to hand over samples (the
        // workers' lag probe then reports the generator as saturated) instead of memory
        // growing for as long as the test runs.
        let (tx, rx) = sync_channel(BATCH_BACKLOG);
        let (verdicts, verdict_rx) = channel();
        let live = LiveMetrics {
            aggregator: Arc::new(Mutex::new(Some(aggregator))),
            started: Arc::new(Mutex::new(started)),
            verdicts,
        };
        let thread = {
            let live = live.clone();
            std::thread::Builder::new()
                .name("rk6-metrics".into())
                .spawn(move || collect(live, outputs, rx, verdict_rx, abort))
                .expect("spawn metrics thread")
        };
        Collector { tx, thread, live }
    }

    /// The aggregator as the REST API reads it during the run.
    pub fn live(&self) -> LiveMetrics {
        self.live.clone()
    }

    /// A sender for VUs.
    pub fn sender(&self) -> SyncSender<Vec<Sample>> {
        self.tx.clone()
    }

    /// Waits for every batch sent so far and returns the aggregator and the outputs.
    pub fn finish(self) -> Collected {
        // An empty batch is the end marker: VUs never send empty batches, and every VU has
        // stopped by now, so all their batches are ahead of it in the channel.
        let _ = self.tx.send(Vec::new());
        self.thread.join().expect("metrics thread")
    }
}

/// How long the metrics thread waits for a batch before it looks at verdict requests.
const VERDICT_POLL: Duration = Duration::from_millis(50);

/// What one batch did to the metrics thread's loop.
enum Received {
    Batch,
    Idle,
    End,
}

fn collect(
    live: LiveMetrics,
    mut outputs: Vec<Box<dyn Output>>,
    rx: Receiver<Vec<Sample>>,
    verdicts: Receiver<Sender<bool>>,
    abort: CancellationToken,
) -> Collected {
    let mut next_eval = Instant::now() + THRESHOLD_PERIOD;
    let mut next_flush = Instant::now() + FLUSH_PERIOD;
    let mut aborted = false;
    // Adds one batch to the aggregator, then hands it to the outputs.
    let receive = |outputs: &mut Vec<Box<dyn Output>>, got| match got {
        Ok(batch) if Vec::is_empty(&batch) => Received::End,
        Ok(batch) => {
            // Unlocked before the outputs write, so an API call never waits on a file.
            let registry = match live.lock().as_mut() {
                Some(agg) => {
                    agg.add(&batch);
                    agg.registry().clone()
                }
                None => return Received::End,
            };
            for o in outputs.iter_mut() {
                o.add(&registry, &batch);
            }
            Received::Batch
        }
        Err(RecvTimeoutError::Timeout) => Received::Idle,
        Err(RecvTimeoutError::Disconnected) => Received::End,
    };
    'run: loop {
        let wait = next_eval
            .min(next_flush)
            .saturating_duration_since(Instant::now())
            .min(VERDICT_POLL);
        if let Received::End = receive(&mut outputs, rx.recv_timeout(wait)) {
            break;
        }
        // A verdict counts every batch sent before it was asked for: those are queued now.
        while let Ok(reply) = verdicts.try_recv() {
            loop {
                let got = rx.try_recv().map_err(|e| match e {
                    std::sync::mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                    std::sync::mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                });
                match receive(&mut outputs, got) {
                    Received::Batch => {}
                    Received::Idle => break,
                    Received::End => break 'run,
                }
            }
            let elapsed = live.elapsed();
            if let Some(agg) = live.lock().as_mut() {
                let _ = reply.send(agg.evaluate(elapsed, Pass::Final).failed);
            }
        }
        let now = Instant::now();
        if now >= next_flush {
            next_flush = now + FLUSH_PERIOD;
            for o in &mut outputs {
                o.flush();
            }
        }
        if now >= next_eval {
            next_eval += THRESHOLD_PERIOD;
            let elapsed = live.elapsed();
            let verdict = match live.lock().as_mut() {
                Some(agg) => agg.evaluate(elapsed, Pass::During),
                None => break,
            };
            if verdict.abort && !aborted {
                aborted = true;
                abort.cancel();
            }
        }
    }
    for o in &mut outputs {
        o.flush();
    }
    Collected {
        aggregator: live
            .lock()
            .take()
            .expect("only the metrics thread takes the aggregator"),
        threshold_abort: aborted,
        outputs,
    }
}
