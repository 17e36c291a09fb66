//! `-o aggregate=http://HOST:PORT`: this runner's share of a distributed test, pushed to
//! the `rk6 aggregate` that judges the whole test.
//!
//! The metrics thread feeds a [`Recorder`] (the same routing as the summary's
//! aggregator); about once a second [`Output::flush`] takes its [`Delta`] and hands it to
//! the pusher thread ([`pusher`]), which POSTs it gzip-compressed with a sequence number.
//! A push that fails is retried as it was (same number, same delta) while newer deltas
//! wait merged into one, so nothing is lost or counted twice; a runner that cannot reach
//! the aggregator keeps running and says so once. `finish` pushes the last delta with the
//! `done` marker and waits a bounded time for it to arrive. With `RK6_AGGREGATE_SECRET` set
//! ([`protocol::SECRET_ENV`]), every push carries it for the aggregator to check.

pub mod protocol;
mod pusher;

use std::io;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rk6_metrics::delta::{Delta, Recorder};
use rk6_metrics::{Registry, Sample, SummaryData, ThresholdSet};
use url::Url;

use crate::outputs::{Output, OutputError, RunInfo};
use crate::worker::Worker;
use protocol::Runner;
use pusher::{Message, Pusher};

/// How long `finish` keeps trying to deliver the last push.
const FINISH_TIMEOUT: Duration = Duration::from_secs(10);

/// Deltas that may wait for the pusher thread; each is a second of data, and the pusher
/// merges what waits, so this only bounds a stalled thread's queue.
const QUEUE: usize = 64;

/// Pushes this runner's deltas to an aggregator.
pub struct AggregateOutput {
    url: String,
    thresholds: ThresholdSet,
    /// Built on the first batch, when the registry is known.
    recorder: Option<Recorder>,
    tx: Option<SyncSender<Message>>,
    worker: Worker<Result<(), String>>,
    started: Instant,
    /// The run time the summary reports, given at the end of the test.
    duration: Option<Duration>,
}

impl AggregateOutput {
    /// Starts the pusher for `arg` (`http://HOST:PORT`), naming this runner as `run` says;
    /// its pushes carry the secret `RK6_AGGREGATE_SECRET` holds, if any.
    pub fn new(
        arg: &str,
        thresholds: &ThresholdSet,
        run: &RunInfo,
    ) -> Result<AggregateOutput, OutputError> {
        let secret = protocol::secret(&|k| std::env::var(k).ok());
        if secret
            .as_deref()
            .is_some_and(|s| http::HeaderValue::from_str(&protocol::authorization(s)).is_err())
        {
            return Err(OutputError::InvalidArgument(format!(
                "aggregate: {} holds characters an HTTP header cannot carry",
                protocol::SECRET_ENV
            )));
        }
        let url = Url::parse(arg)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| {
                OutputError::InvalidArgument(format!(
                    "the aggregate output needs the aggregator's URL, as -o aggregate=http://HOST:PORT (got \"{arg}\")"
                ))
            })?;
        let push_url = url
            .join(protocol::PUSH_PATH)
            .map_err(|e| OutputError::InvalidArgument(format!("aggregate: {e}")))?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let runner = Runner {
            id: format!("{}-{nanos:x}", std::process::id()),
            instance_id: run.instance_id.clone(),
            segment: run.segment.clone(),
            api: run.api_address.clone(),
        };
        let (tx, rx) = sync_channel(QUEUE);
        let pusher = Pusher::new(&push_url, runner, secret);
        let worker = Worker::spawn("rk6-aggregate", move || pusher.run(rx)).map_err(|source| {
            OutputError::Create {
                kind: "aggregate",
                source,
            }
        })?;
        Ok(AggregateOutput {
            url: url.to_string(),
            thresholds: thresholds.clone(),
            recorder: None,
            tx: Some(tx),
            worker,
            started: Instant::now(),
            duration: None,
        })
    }

    fn take(&mut self) -> Delta {
        self.recorder
            .as_mut()
            .map(Recorder::take)
            .unwrap_or_default()
    }

    fn elapsed(&self) -> Duration {
        self.duration.unwrap_or_else(|| self.started.elapsed())
    }
}

impl Output for AggregateOutput {
    fn description(&self) -> String {
        format!("aggregate ({})", self.url)
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        let thresholds = &self.thresholds;
        self.recorder
            .get_or_insert_with(|| Recorder::new(thresholds, registry))
            .add(registry, batch);
    }

    fn flush(&mut self) {
        let delta = self.take();
        let elapsed = self.elapsed();
        if let Some(tx) = &self.tx {
            // The pusher drains the queue between pushes (each bounded by its timeout), so
            // a send waits at most that long, and only once a minute of deltas is queued.
            let _ = tx.send(Message::Delta(delta, elapsed));
        }
    }

    fn end_of_test(&mut self, summary: &SummaryData) {
        self.duration = Some(summary.duration);
    }

    fn finish(&mut self) -> io::Result<()> {
        let delta = self.take();
        let elapsed = self.elapsed();
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Message::Done(delta, elapsed));
        }
        match self.worker.wait(Instant::now() + FINISH_TIMEOUT) {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(io::Error::other(e)),
            None => Err(io::Error::other(format!(
                "the aggregator at {} did not take the last figures within {}s; it reports this runner as missing",
                self.url,
                FINISH_TIMEOUT.as_secs()
            ))),
        }
    }
}
