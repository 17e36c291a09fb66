//! What one connection (or, merged, the whole test) observed.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::engine::Outcome;

/// Percentiles of the distribution table, as (label, quantile).
pub(crate) const DISTRIBUTION: [(&str, f64); 6] = [
    ("p50", 0.50),
    ("p75", 0.75),
    ("p90", 0.90),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

/// Latencies, statuses, errors and bytes of the requests sent.
pub(crate) struct Stats {
    /// Latency in µs: from the planned send instant with `--rate`, else the request duration.
    pub(crate) latency: Histogram<u64>,
    /// Service time in µs (request duration); only filled with `--rate`.
    pub(crate) service: Histogram<u64>,
    /// Requests that got an HTTP response.
    pub(crate) responses: u64,
    /// (status, count); a short list, usually of one entry.
    pub(crate) statuses: Vec<(u16, u64)>,
    /// k6 error code → (count, first message).
    pub(crate) errors: BTreeMap<u32, (u64, String)>,
    pub(crate) bytes_received: u64,
    pub(crate) bytes_sent: u64,
}

impl Stats {
    pub(crate) fn new() -> Stats {
        Stats {
            latency: new_histogram(),
            service: new_histogram(),
            responses: 0,
            statuses: Vec::new(),
            errors: BTreeMap::new(),
            bytes_received: 0,
            bytes_sent: 0,
        }
    }

    /// Records one finished request; `corrected_us` is the latency from the planned start.
    pub(crate) fn record(&mut self, outcome: &Outcome, corrected_us: Option<u64>) {
        self.bytes_received += outcome.bytes_received;
        self.bytes_sent += outcome.bytes_sent;
        let status = match &outcome.result {
            Ok(status) => *status,
            Err(err) => {
                let entry = self
                    .errors
                    .entry(err.code)
                    .or_insert_with(|| (0, err.message.clone()));
                entry.0 += 1;
                return;
            }
        };
        self.responses += 1;
        match self.statuses.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => self.statuses.push((status, 1)),
        }
        let service_us = outcome.duration.as_micros() as u64;
        match corrected_us {
            Some(us) => {
                self.latency.saturating_record(us);
                self.service.saturating_record(service_us);
            }
            None => self.latency.saturating_record(service_us),
        }
    }

    pub(crate) fn merge(&mut self, other: Stats) {
        // Auto-resizing histograms of the same precision always add.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        self.responses += other.responses;
        for (status, n) in other.statuses {
            match self.statuses.iter_mut().find(|(s, _)| *s == status) {
                Some((_, m)) => *m += n,
                None => self.statuses.push((status, n)),
            }
        }
        for (code, (n, message)) in other.errors {
            self.errors.entry(code).or_insert((0, message)).0 += n;
        }
        self.bytes_received += other.bytes_received;
        self.bytes_sent += other.bytes_sent;
    }

    pub(crate) fn error_count(&self) -> u64 {
        self.errors.values().map(|(n, _)| n).sum()
    }
}

fn new_histogram() -> Histogram<u64> {
    // Auto-resizing, 3 significant digits (≤ 0.1 % error), as rk6's trends.
    Histogram::new(3).expect("3 significant digits is a valid HDR precision")
}
