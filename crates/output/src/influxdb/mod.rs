//! The `influxdb` output: k6's InfluxDB v1 output.
//!
//! Each sample becomes one line-protocol point on the metrics thread ([`line`]): the
//! measurement is the metric, the tags are the sample's, `value` is the value. Every push
//! interval (or every [`MAX_POINTS_PER_WRITE`] points) the lines are handed as one batch to
//! the writer thread ([`writer`]), which POSTs them to `/write`. A slow or dead server never
//! holds the test up: failures are logged once per kind, and when more than
//! [`MAX_PENDING_BYTES`] wait to be written new batches are dropped and counted. `finish`
//! writes the rest, waits a bounded time, and sums up in a warning what did not arrive.

pub mod config;
mod line;
mod log;
mod writer;

use std::io;
use std::time::{Duration, Instant};

use rk6_metrics::{Registry, Sample};

use crate::outputs::{Output, OutputError};
use config::InfluxConfig;
use line::LineEncoder;
use log::log;
use writer::{Batch, Writer};

/// Points in one write, so a busy test sends several moderate requests rather than one
/// that InfluxDB's body limit (25 MB by default) refuses.
pub const MAX_POINTS_PER_WRITE: u64 = 10_000;

/// Line protocol that may wait for the server (queued or in flight) before new batches are
/// dropped: about 120 000 points.
pub const MAX_PENDING_BYTES: usize = 32 << 20;

/// How long `finish` waits for the last writes.
const FINISH_TIMEOUT: Duration = Duration::from_secs(15);

/// Writes k6 samples to an InfluxDB v1 server.
pub struct InfluxDbOutput {
    config: InfluxConfig,
    encoder: LineEncoder,
    writer: Writer,
    lines: Vec<u8>,
    points: u64,
    next_push: Instant,
    /// Points dropped because too much waited for the server.
    dropped: u64,
    /// Points that cannot be written: NaN or infinite values, or all of them when k6
    /// could not build a batch with the configured precision.
    unwritable: u64,
    unwritable_logged: bool,
}

impl InfluxDbOutput {
    /// Starts the writer thread (which creates the database) for `config`.
    pub fn new(config: InfluxConfig) -> Result<InfluxDbOutput, OutputError> {
        let writer = Writer::start(&config).map_err(|source| OutputError::Create {
            kind: "influxdb",
            source,
        })?;
        Ok(InfluxDbOutput {
            encoder: LineEncoder::new(
                config.tags_as_fields.clone(),
                config.precision.nanos.unwrap_or(1),
            ),
            next_push: Instant::now() + config.push_interval,
            config,
            writer,
            lines: Vec::new(),
            points: 0,
            dropped: 0,
            unwritable: 0,
            unwritable_logged: false,
        })
    }

    fn unwritable(&mut self, n: u64, why: &str) {
        self.unwritable += n;
        if !self.unwritable_logged {
            self.unwritable_logged = true;
            log("error", "Couldn't create batch from samples", Some(why));
        }
    }

    /// Hands the buffered lines to the writer, or drops them when too much waits already.
    fn seal(&mut self) {
        if self.points == 0 {
            return;
        }
        let points = std::mem::take(&mut self.points);
        let capacity = self.lines.len();
        let body = std::mem::replace(&mut self.lines, Vec::with_capacity(capacity));
        if self.writer.pending_bytes() + body.len() > MAX_PENDING_BYTES {
            if self.dropped == 0 {
                log(
                    "warning",
                    &format!(
                        "InfluxDB is not keeping up: {} MiB of points wait to be written, so new points are dropped until it catches up",
                        MAX_PENDING_BYTES >> 20
                    ),
                    None,
                );
            }
            self.dropped += points;
            return;
        }
        if let Err(b) = self.writer.send(Batch { body, points }) {
            self.dropped += b.points;
        }
    }

    fn maybe_push(&mut self) {
        let now = Instant::now();
        if now >= self.next_push {
            self.next_push = now + self.config.push_interval;
            self.seal();
        }
    }
}

impl Output for InfluxDbOutput {
    fn description(&self) -> String {
        format!(
            "InfluxDBv1 ({})",
            self.config.addr.as_str().trim_end_matches('/')
        )
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        if self.config.precision.nanos.is_none() {
            let p = &self.config.precision.name;
            let why =
                format!("couldn't make a batch: time: unknown unit \"{p}\" in duration \"1{p}\"");
            return self.unwritable(batch.len() as u64, &why);
        }
        let mut invalid = 0;
        for s in batch {
            if self.encoder.encode(&mut self.lines, registry, s) {
                self.points += 1;
                if self.points >= MAX_POINTS_PER_WRITE {
                    self.seal();
                }
            } else {
                invalid += 1;
            }
        }
        if invalid > 0 {
            self.unwritable(
                invalid,
                "NaN and infinite values cannot be written to InfluxDB",
            );
        }
        self.maybe_push();
    }

    fn flush(&mut self) {
        self.maybe_push();
    }

    fn finish(&mut self) -> io::Result<()> {
        self.seal();
        let stats = self.writer.close(Instant::now() + FINISH_TIMEOUT);
        let Some(stats) = stats else {
            return Err(io::Error::other(format!(
                "the last writes did not complete within {}s",
                FINISH_TIMEOUT.as_secs()
            )));
        };
        let lost = stats.points_failed + self.dropped + self.unwritable;
        if lost > 0 {
            log(
                "warning",
                &format!(
                    "{lost} points did not reach InfluxDB: {} of {} writes failed ({} points), {} points were dropped while InfluxDB was not keeping up, {} could not be written",
                    stats.failed,
                    stats.failed + stats.ok,
                    stats.points_failed,
                    self.dropped,
                    self.unwritable
                ),
                None,
            );
        }
        Ok(())
    }
}
