//! The `experimental-prometheus-rw` output: k6's Prometheus remote-write output.
//!
//! Samples are aggregated per series on the metrics thread ([`series`]); every push
//! interval the changed series are encoded ([`wire`]) and handed to a background thread
//! ([`pusher`]) that POSTs them. `finish` pushes the final state (so Prometheus ends with
//! the values of the end-of-test summary), then stale markers when asked for, and waits
//! a bounded time for the queue to drain. Push failures are logged once per kind and
//! never stop the test.

pub mod config;
pub mod histogram;
mod log;
pub mod pusher;
pub mod series;
pub mod wire;

use std::io;
use std::time::{Duration, Instant, SystemTime};

use rk6_metrics::{Registry, Sample};

use crate::outputs::{Output, OutputError};
use config::RwConfig;
use log::log_error;
use pusher::Pusher;
use series::SeriesStore;

/// How long `finish` waits for the final pushes.
const FINISH_TIMEOUT: Duration = Duration::from_secs(15);

/// Pushes k6 metrics to a Prometheus remote-write endpoint.
pub struct PrometheusRwOutput {
    config: RwConfig,
    store: SeriesStore,
    pusher: Pusher,
    next_push: Instant,
    full_logged: bool,
    /// Pushes skipped because the queue was full (their series went out later, merged).
    skipped: u64,
}

impl PrometheusRwOutput {
    /// Validates `config` and starts the pusher thread.
    pub fn new(config: RwConfig) -> Result<PrometheusRwOutput, OutputError> {
        let pusher = Pusher::start(
            config.url.clone(),
            config.headers.clone(),
            config.insecure_skip_tls_verify,
            config.tls_minimum,
        )
        .map_err(|source| OutputError::Create {
            kind: "experimental-prometheus-rw",
            source,
        })?;
        Ok(PrometheusRwOutput {
            store: SeriesStore::new(
                config.trend_stats.clone(),
                config.native_histograms,
                config.static_labels.clone(),
            ),
            next_push: Instant::now() + config.push_interval,
            config,
            pusher,
            full_logged: false,
            skipped: 0,
        })
    }

    /// Queues the changed series if the push interval has passed.
    fn maybe_push(&mut self) {
        let now = Instant::now();
        if now < self.next_push {
            return;
        }
        self.next_push = now + self.config.push_interval;
        let Some((req, taken)) = self.store.take_changed() else {
            return;
        };
        if self.pusher.try_push(wire::encode(&req)).is_err() {
            self.store.mark_dirty(&taken);
            self.skipped += 1;
            if !self.full_logged {
                self.full_logged = true;
                log_error(
                    "The remote write endpoint is slower than the push interval; pushes are being skipped",
                    "push queue full",
                );
            }
        }
    }
}

impl Output for PrometheusRwOutput {
    fn description(&self) -> String {
        format!("Prometheus remote write ({})", self.config.url)
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        for s in batch {
            self.store.add(registry, s);
        }
        self.maybe_push();
    }

    fn flush(&mut self) {
        self.maybe_push();
    }

    fn finish(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + FINISH_TIMEOUT;
        let mut queued = true;
        if let Some((req, _)) = self.store.take_changed() {
            queued &= self.pusher.push_until(wire::encode(&req), deadline);
        }
        if self.config.stale_markers {
            if let Some(req) = self.store.stale_markers(SystemTime::now()) {
                queued &= self.pusher.push_until(wire::encode(&req), deadline);
            }
        }
        let drained = self.pusher.close(deadline);
        let skipped = match self.skipped {
            0 => String::new(),
            n => format!("; {n} pushes were skipped while the endpoint was slow"),
        };
        match drained {
            Some(stats) if queued => {
                if stats.failed > 0 || self.skipped > 0 {
                    log_error(
                        "Some time series data did not reach the remote write endpoint",
                        &format!(
                            "{} of {} pushes failed{skipped}",
                            stats.failed,
                            stats.failed + stats.ok
                        ),
                    );
                }
                Ok(())
            }
            _ => Err(io::Error::other(format!(
                "the final push to {} did not complete within {}s{skipped}",
                self.config.url,
                FINISH_TIMEOUT.as_secs()
            ))),
        }
    }
}
