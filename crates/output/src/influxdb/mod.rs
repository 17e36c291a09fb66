//! The `influxdb` output: k6's InfluxDB v1 output.
//!
//! Each sample becomes one line-protocol point on the metrics thread ([`line`]): the
//! measurement is the metric, the tags are the sample's, `value` is the value. Every push
//! interval (or every [`MAX_POINTS_PER_WRITE`] points) the lines are handed as one batch to
//! the writer thread ([`writer`]), which POSTs them to `/write` (or sends them in UDP
//! datagrams for a `udp://` address). A slow or dead server never
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
    /// Bytes that may wait for the server ([`MAX_PENDING_BYTES`]; smaller in tests).
    pending_cap: usize,
    /// How long `finish` waits ([`FINISH_TIMEOUT`]; shorter in tests).
    finish_timeout: Duration,
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
            encoder: if config.addr.scheme() == "udp" {
                LineEncoder::new(
                    config.tags_as_fields.clone(),
                    config.precision.round_nanos,
                    true,
                )
            } else {
                LineEncoder::new(
                    config.tags_as_fields.clone(),
                    config.precision.nanos.clone().unwrap_or(1),
                    false,
                )
            },
            next_push: Instant::now() + config.push_interval,
            config,
            writer,
            lines: Vec::new(),
            points: 0,
            pending_cap: MAX_PENDING_BYTES,
            finish_timeout: FINISH_TIMEOUT,
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
        if self.writer.pending_bytes() + body.len() > self.pending_cap {
            if self.dropped == 0 {
                log(
                    "warning",
                    &format!(
                        "InfluxDB is not keeping up: {} MiB of points wait to be written, so new points are dropped until it catches up",
                        self.pending_cap >> 20
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
            writer::redacted(&self.config.addr).trim_end_matches('/')
        )
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        if let Err(why) = &self.config.precision.nanos {
            let why = why.clone();
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
        let stats = self.writer.close(Instant::now() + self.finish_timeout);
        let Some(stats) = stats else {
            return Err(io::Error::other(format!(
                "the last writes did not complete within {}{}",
                rk6_options::GoDuration::from_std(self.finish_timeout),
                match self.dropped {
                    0 => String::new(),
                    n => format!(" ({n} points were dropped while InfluxDB was not keeping up)"),
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::{builtin, TagSet};
    use std::time::SystemTime;

    fn samples(n: usize) -> Vec<Sample> {
        let tags = TagSet::from_pairs([("scenario", "default"), ("url", "http://x/")]);
        (0..n)
            .map(|i| Sample {
                metric: builtin::HTTP_REQ_DURATION,
                tags: tags.clone(),
                value: i as f64,
                time: SystemTime::now(),
            })
            .collect()
    }

    #[test]
    fn a_server_that_never_answers_bounds_the_backlog_and_the_end() {
        // Accepts connections and never answers them.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            let end = Instant::now() + Duration::from_secs(5);
            listener.set_nonblocking(true).unwrap();
            while Instant::now() < end {
                if let Ok((c, _)) = listener.accept() {
                    held.push(c);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let config = InfluxConfig::parse(
            &format!("http://127.0.0.1:{port}/db?concurrentWrites=1"),
            &|_| None,
        )
        .unwrap();
        let mut out = InfluxDbOutput::new(config).unwrap();
        out.pending_cap = 16 * 1024;
        out.finish_timeout = Duration::from_millis(300);
        let registry = Registry::new();
        let mut line_bytes = 0;
        for _ in 0..50 {
            out.add(&registry, &samples(100));
            line_bytes = line_bytes.max(out.lines.len());
            out.seal();
            assert!(
                out.writer.pending_bytes() <= out.pending_cap,
                "backlog over its cap"
            );
        }
        assert!(line_bytes > 0);
        // 5000 points of ~90 bytes do not fit in 16 KiB: most were dropped and counted.
        assert!(out.dropped >= 4000, "dropped {}", out.dropped);
        assert_eq!(out.dropped % 100, 0);
        let started = Instant::now();
        let err = out.finish().unwrap_err().to_string();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert!(err.contains("did not complete within 300ms"), "{err}");
        assert!(
            err.contains(&format!("{} points were dropped", out.dropped)),
            "{err}"
        );
    }

    #[test]
    fn batches_split_at_the_write_size_and_the_push_interval() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let config = InfluxConfig::parse(
            &format!("http://127.0.0.1:{port}/db?pushInterval=1h"),
            &|_| None,
        )
        .unwrap();
        let mut out = InfluxDbOutput::new(config).unwrap();
        let registry = Registry::new();
        out.add(&registry, &samples(MAX_POINTS_PER_WRITE as usize + 5));
        // One full write went to the writer; the rest waits for the (1 h) push interval.
        assert_eq!(out.points, 5);
        assert_eq!(out.lines.iter().filter(|&&b| b == b'\n').count(), 5);
        out.add(
            &registry,
            &[Sample {
                value: f64::NAN,
                ..samples(1).remove(0)
            }],
        );
        assert_eq!((out.points, out.unwritable), (5, 1));
        // Nothing listens: the writes fail fast and finish says how many points were lost.
        out.finish().unwrap();
    }
}
