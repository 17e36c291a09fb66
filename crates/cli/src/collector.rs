//! The metrics thread: the single owner of the aggregator. VUs send one batch per
//! iteration; thresholds are evaluated every 2 s, and an `abortOnFail` threshold stops the test.

use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rk6_metrics::{Aggregator, Sample};
use rk6_scheduler::CancellationToken;

/// How often thresholds are evaluated during the run (as k6).
const THRESHOLD_PERIOD: Duration = Duration::from_secs(2);

/// Handle to the running metrics thread.
pub struct Collector {
    tx: Sender<Vec<Sample>>,
    thread: JoinHandle<(Aggregator, bool)>,
}

impl Collector {
    /// Starts the thread. `abort` is cancelled when an abortOnFail threshold fails.
    pub fn start(aggregator: Aggregator, started: Instant, abort: CancellationToken) -> Collector {
        let (tx, rx) = channel();
        let thread = std::thread::Builder::new()
            .name("rk6-metrics".into())
            .spawn(move || collect(aggregator, rx, started, abort))
            .expect("spawn metrics thread");
        Collector { tx, thread }
    }

    /// A sender for VUs.
    pub fn sender(&self) -> Sender<Vec<Sample>> {
        self.tx.clone()
    }

    /// Waits for every batch sent so far and returns the aggregator, and whether an
    /// abortOnFail threshold stopped the test.
    pub fn finish(self) -> (Aggregator, bool) {
        // An empty batch is the end marker: VUs never send empty batches, and every VU has
        // stopped by now, so all their batches are ahead of it in the channel.
        let _ = self.tx.send(Vec::new());
        self.thread.join().expect("metrics thread")
    }
}

fn collect(
    mut agg: Aggregator,
    rx: Receiver<Vec<Sample>>,
    started: Instant,
    abort: CancellationToken,
) -> (Aggregator, bool) {
    let mut next_eval = Instant::now() + THRESHOLD_PERIOD;
    let mut aborted = false;
    loop {
        let wait = next_eval.saturating_duration_since(Instant::now());
        match rx.recv_timeout(wait) {
            Ok(batch) if batch.is_empty() => break,
            Ok(batch) => agg.add(&batch),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if Instant::now() >= next_eval {
            next_eval += THRESHOLD_PERIOD;
            let verdict = agg.evaluate(started.elapsed());
            if verdict.abort && !aborted {
                aborted = true;
                abort.cancel();
            }
        }
    }
    (agg, aborted)
}
