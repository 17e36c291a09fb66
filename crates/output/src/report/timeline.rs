//! Per-interval aggregates of a run for the report's charts, in bounded memory.
//!
//! Samples fall into buckets of `width` measured from the origin (the test start). When
//! a sample lands past [`MAX_BUCKETS`], the width doubles and neighbouring buckets merge,
//! so a run of any length holds at most `MAX_BUCKETS` buckets of one small latency
//! histogram each.

use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use serde::Serialize;

/// The most buckets kept; a long run ends with between half this and this many.
pub(crate) const MAX_BUCKETS: usize = 240;

/// Two significant figures (1 % error) are plenty for a chart and keep each bucket's
/// histogram to a few kilobytes.
const BUCKET_SIGFIG: u8 = 2;

/// Latencies are recorded in whole microseconds.
pub(crate) fn micros(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        (ms * 1000.0).round() as u64
    } else {
        0
    }
}

/// One interval's tallies.
#[derive(Default, Clone)]
struct Bucket {
    reqs: f64,
    failed: u64,
    iterations: f64,
    /// Highest `vus` gauge value seen in the interval.
    vus: Option<f64>,
    /// `http_req_duration` in µs; created on the first request.
    latency: Option<Histogram<u64>>,
}

impl Bucket {
    fn merge(&mut self, other: Bucket) {
        self.reqs += other.reqs;
        self.failed += other.failed;
        self.iterations += other.iterations;
        self.vus = match (self.vus, other.vus) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        match (&mut self.latency, other.latency) {
            (Some(a), Some(b)) => {
                // Both auto-resize, so adding cannot run out of range.
                let _ = a.add(&b);
            }
            (a @ None, b) => *a = b,
            (Some(_), None) => {}
        }
    }
}

/// What a sample adds to its bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Event {
    /// An `http_reqs` sample (its value is the count).
    Request(f64),
    /// An `http_req_failed` sample that is true.
    Failed,
    /// An `iterations` sample.
    Iteration(f64),
    /// A `vus` gauge value.
    Vus(f64),
    /// An `http_req_duration` value in ms.
    Latency(f64),
}

/// Buckets of a run from its origin on.
pub(crate) struct Timeline {
    origin: SystemTime,
    width: Duration,
    buckets: Vec<Bucket>,
}

/// The chart data: one entry per bucket in every series.
#[derive(Debug, Serialize, PartialEq)]
pub(crate) struct Series {
    /// Bucket width in seconds.
    pub width: f64,
    /// Start of each bucket in seconds from the origin.
    pub t: Vec<f64>,
    /// Seconds each bucket covers (the last may be cut short by the end of the run).
    pub span: Vec<f64>,
    /// `http_reqs` per bucket.
    pub reqs: Vec<f64>,
    /// Failed requests per bucket.
    pub failed: Vec<u64>,
    /// Completed iterations per bucket.
    pub iterations: Vec<f64>,
    /// Highest VU count per bucket; `None` where no gauge value fell in it.
    pub vus: Vec<Option<f64>>,
    /// `http_req_duration` percentiles in ms per bucket (`None` without requests).
    pub p50: Vec<Option<f64>>,
    /// 90th percentile.
    pub p90: Vec<Option<f64>>,
    /// 95th percentile.
    pub p95: Vec<Option<f64>>,
    /// 99th percentile.
    pub p99: Vec<Option<f64>>,
}

impl Timeline {
    /// A timeline starting at `origin` with buckets of `width` (at least 1 ms).
    pub(crate) fn new(origin: SystemTime, width: Duration) -> Timeline {
        Timeline {
            origin,
            width: width.max(Duration::from_millis(1)),
            buckets: Vec::new(),
        }
    }

    /// Current bucket width.
    #[cfg(test)]
    pub(crate) fn width(&self) -> Duration {
        self.width
    }

    /// Number of buckets held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Adds `event` at `time`; times before the origin count in the first bucket.
    pub(crate) fn add(&mut self, time: SystemTime, event: Event) {
        let offset = time.duration_since(self.origin).unwrap_or_default();
        let mut index = self.index(offset);
        while index >= MAX_BUCKETS {
            self.coarsen();
            index = self.index(offset);
        }
        if index >= self.buckets.len() {
            self.buckets.resize_with(index + 1, Bucket::default);
        }
        let b = &mut self.buckets[index];
        match event {
            Event::Request(n) => b.reqs += n,
            Event::Failed => b.failed += 1,
            Event::Iteration(n) => b.iterations += n,
            Event::Vus(v) => b.vus = Some(b.vus.map_or(v, |old| old.max(v))),
            Event::Latency(ms) => {
                let h = b.latency.get_or_insert_with(|| {
                    Histogram::new(BUCKET_SIGFIG).expect("2 significant figures are valid")
                });
                // Auto-resizing histograms accept any u64.
                let _ = h.record(micros(ms));
            }
        }
    }

    fn index(&self, offset: Duration) -> usize {
        (offset.as_nanos() / self.width.as_nanos()) as usize
    }

    /// Doubles the width, merging buckets 2k and 2k+1 into k.
    fn coarsen(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        let mut merged: Vec<Bucket> = Vec::with_capacity(old.len().div_ceil(2));
        for (i, b) in old.into_iter().enumerate() {
            if i % 2 == 0 {
                merged.push(b);
            } else if let Some(last) = merged.last_mut() {
                last.merge(b);
            }
        }
        self.buckets = merged;
        self.width *= 2;
    }

    /// The chart series for a run that lasted `total` from the origin.
    pub(crate) fn series(&self, total: Duration) -> Series {
        let width = self.width.as_secs_f64();
        let total = total.as_secs_f64();
        let n = self.buckets.len();
        let mut s = Series {
            width,
            t: Vec::with_capacity(n),
            span: Vec::with_capacity(n),
            reqs: Vec::with_capacity(n),
            failed: Vec::with_capacity(n),
            iterations: Vec::with_capacity(n),
            vus: Vec::with_capacity(n),
            p50: Vec::with_capacity(n),
            p90: Vec::with_capacity(n),
            p95: Vec::with_capacity(n),
            p99: Vec::with_capacity(n),
        };
        // A last bucket cut to less than half a width by the end of the run would show a
        // rate from a few samples over a sliver of time; it joins the bucket before it.
        let tail_start = n.saturating_sub(1) as f64 * width;
        let fold = n >= 2 && total - tail_start < width / 2.0;
        let folded = fold.then(|| {
            let mut b = self.buckets[n - 2].clone();
            b.merge(self.buckets[n - 1].clone());
            b
        });
        let kept = if fold { n - 1 } else { n };
        for i in 0..kept {
            let b = match &folded {
                Some(f) if i == kept - 1 => f,
                _ => &self.buckets[i],
            };
            let start = i as f64 * width;
            let end = if i == kept - 1 { total } else { start + width };
            // A bucket past the end (a late sample) still spans something, so rates stay finite.
            let span =
                (end - start).clamp(width.min(0.001), if fold { 2.0 * width } else { width });
            s.t.push(round3(start));
            s.span.push(round3(span));
            s.reqs.push(b.reqs);
            s.failed.push(b.failed);
            s.iterations.push(b.iterations);
            s.vus.push(b.vus);
            let q = |q: f64| {
                b.latency
                    .as_ref()
                    .filter(|h| !h.is_empty())
                    .map(|h| h.median_equivalent(h.value_at_quantile(q)) as f64 / 1000.0)
            };
            s.p50.push(q(0.50));
            s.p90.push(q(0.90));
            s.p95.push(q(0.95));
            s.p99.push(q(0.99));
        }
        s
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(origin: SystemTime, ms: u64) -> SystemTime {
        origin + Duration::from_millis(ms)
    }

    #[test]
    fn samples_fall_into_one_second_buckets() {
        let o = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut t = Timeline::new(o, Duration::from_secs(1));
        t.add(at(o, 10), Event::Request(1.0));
        t.add(at(o, 999), Event::Request(1.0));
        t.add(at(o, 1000), Event::Request(1.0));
        t.add(at(o, 2500), Event::Failed);
        t.add(at(o, 2500), Event::Iteration(1.0));
        t.add(at(o, 2600), Event::Vus(3.0));
        t.add(at(o, 2700), Event::Vus(5.0));
        t.add(at(o, 2800), Event::Vus(4.0));
        // A sample stamped before the origin (sent late by a VU that started early).
        t.add(o - Duration::from_millis(5), Event::Request(1.0));
        let s = t.series(Duration::from_millis(2900));
        assert_eq!(s.t, vec![0.0, 1.0, 2.0]);
        assert_eq!(s.reqs, vec![3.0, 1.0, 0.0]);
        assert_eq!(s.failed, vec![0, 0, 1]);
        assert_eq!(s.iterations, vec![0.0, 0.0, 1.0]);
        assert_eq!(s.vus, vec![None, None, Some(5.0)]);
        assert_eq!(
            s.span,
            vec![1.0, 1.0, 0.9],
            "the last bucket ends with the run"
        );
        assert_eq!(s.p50, vec![None, None, None]);
    }

    #[test]
    fn a_short_last_bucket_joins_the_one_before() {
        let o = SystemTime::UNIX_EPOCH;
        let mut t = Timeline::new(o, Duration::from_secs(1));
        t.add(at(o, 500), Event::Request(1.0));
        t.add(at(o, 1500), Event::Request(1.0));
        t.add(at(o, 1500), Event::Latency(10.0));
        t.add(at(o, 2010), Event::Iteration(2.0));
        t.add(at(o, 2020), Event::Latency(30.0));
        let s = t.series(Duration::from_millis(2040));
        assert_eq!(s.t, vec![0.0, 1.0]);
        assert_eq!(s.span, vec![1.0, 1.04]);
        assert_eq!(s.reqs, vec![1.0, 1.0]);
        assert_eq!(s.iterations, vec![0.0, 2.0]);
        assert!((s.p99[1].unwrap() - 30.0).abs() < 0.5, "{:?}", s.p99);
        // Half a width or more stays its own bucket.
        let s = t.series(Duration::from_millis(2500));
        assert_eq!(s.span, vec![1.0, 1.0, 0.5]);
    }

    #[test]
    fn percentiles_per_bucket() {
        let o = SystemTime::UNIX_EPOCH;
        let mut t = Timeline::new(o, Duration::from_secs(1));
        for i in 1..=100 {
            t.add(at(o, 100), Event::Latency(i as f64));
            t.add(at(o, 1100), Event::Latency(1000.0 + i as f64));
        }
        let s = t.series(Duration::from_secs(2));
        let close = |got: Option<f64>, want: f64| {
            let got = got.unwrap();
            assert!((got - want).abs() <= want * 0.01, "{got} vs {want}");
        };
        close(s.p50[0], 50.0);
        close(s.p90[0], 90.0);
        close(s.p95[0], 95.0);
        close(s.p99[0], 99.0);
        close(s.p50[1], 1050.0);
        close(s.p99[1], 1099.0);
        assert!(s.p50[0] < s.p90[0] && s.p90[0] < s.p99[0]);
    }

    #[test]
    fn long_runs_merge_buckets_and_keep_totals() {
        let o = SystemTime::UNIX_EPOCH;
        let mut t = Timeline::new(o, Duration::from_secs(1));
        // One request, one latency and one VU value per second for an hour.
        let secs = 3600u64;
        for s in 0..secs {
            t.add(at(o, s * 1000 + 500), Event::Request(1.0));
            t.add(at(o, s * 1000 + 500), Event::Latency(s as f64 + 1.0));
            t.add(at(o, s * 1000 + 500), Event::Vus((s % 7) as f64));
            assert!(t.len() <= MAX_BUCKETS);
        }
        assert!(t.len() > MAX_BUCKETS / 2, "{}", t.len());
        // 3600 s / 240 = 15 s → the next power of two from 1 s is 16 s.
        assert_eq!(t.width(), Duration::from_secs(16));
        let s = t.series(Duration::from_secs(secs));
        assert_eq!(s.reqs.iter().sum::<f64>(), secs as f64, "no request lost");
        assert_eq!(s.t.len(), t.len());
        assert_eq!(s.reqs[0], 16.0);
        // The first 16 s hold latencies 1..=16 and VU values up to 6.
        assert_eq!(s.vus[0], Some(6.0));
        assert!((s.p99[0].unwrap() - 16.0).abs() < 0.2, "{:?}", s.p99[0]);
        assert_eq!(*s.span.last().unwrap(), 16.0, "3600 s is 225 whole buckets");
        let spans: f64 = s.span.iter().sum();
        assert!((spans - secs as f64).abs() < 1e-6, "{spans}");
    }

    #[test]
    fn a_far_sample_coarsens_at_once() {
        let o = SystemTime::UNIX_EPOCH;
        let mut t = Timeline::new(o, Duration::from_millis(500));
        t.add(at(o, 0), Event::Request(1.0));
        t.add(at(o, 10_000_000), Event::Request(1.0));
        assert!(t.len() <= MAX_BUCKETS);
        let s = t.series(Duration::from_secs(10_000));
        assert_eq!(s.reqs.iter().sum::<f64>(), 2.0);
        assert_eq!(s.reqs[0], 1.0);
        assert_eq!(*s.reqs.last().unwrap(), 1.0);
    }
}
