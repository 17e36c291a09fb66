//! Trend sink: bounded-memory distribution of samples.
//!
//! The first [`EXACT_LIMIT`] samples are kept verbatim, so small tests get exactly k6's
//! percentiles (sort, then interpolate linearly at index `p·(n−1)`). Past that the values
//! move into HDR histograms with 3 significant figures over integers of `value ×
//! 1_000_000` (a millisecond value keeps nanosecond units): values below 0.002048 are
//! exact to 1e-6, larger ones to within 0.1 % relative. Negative values go to a second
//! histogram of their magnitudes. Count, sum, min and max stay exact in both modes.
//!
//! Thresholds must not flip because of that 0.1 %: for every percentile threshold the sink
//! also counts exactly how many values fell below and on its boundary (a [`Pivot`]), which
//! decides `p(95) < 200` exactly whenever the ranks around the percentile lie on one side of
//! the boundary — which is every case except a percentile interpolated across it.
//!
//! A sink also counts *unserved* values: arrivals that were never served (rk6's corrected
//! open-model Trends). They rank above every value, so a percentile that reaches them, the
//! mean and the maximum are +∞ ("unserved" in the summary) and fail any `<` threshold.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Samples kept verbatim before switching to histograms.
pub const EXACT_LIMIT: usize = 10_000;

/// Multiplier from a sample value to its histogram integer.
const SCALE: f64 = 1_000_000.0;

/// The largest integer an auto-resizing `Histogram` accepts.
const MAX_SCALED: u64 = (i64::MAX / 2) as u64;

/// Distribution of a Trend metric's values.
#[derive(Debug, Clone)]
pub struct TrendSink {
    /// Values added (the unserved ones aside).
    count: u64,
    /// Unserved arrivals: values of +∞ kept out of the store.
    unserved: u64,
    sum: f64,
    min: f64,
    max: f64,
    store: Store,
    pivots: Vec<Pivot>,
}

/// Exact counts around one threshold boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pivot {
    boundary: f64,
    below: u64,
    equal: u64,
}

#[derive(Debug, Clone)]
enum Store {
    Exact(Vec<f64>),
    Histograms {
        positive: Histogram<u64>,
        negative: Histogram<u64>,
    },
}

impl Default for TrendSink {
    fn default() -> Self {
        TrendSink {
            count: 0,
            unserved: 0,
            sum: 0.0,
            min: 0.0,
            max: 0.0,
            store: Store::Exact(Vec::new()),
            pivots: Vec::new(),
        }
    }
}

impl TrendSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one value; NaN is ignored (k6 rejects it before it becomes a sample).
    pub fn add(&mut self, value: f64) {
        if value.is_nan() {
            return;
        }
        if self.count == 0 {
            self.min = value;
            self.max = value;
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        self.count += 1;
        self.sum += value;
        for p in &mut self.pivots {
            if value < p.boundary {
                p.below += 1;
            } else if value == p.boundary {
                p.equal += 1;
            }
        }
        match &mut self.store {
            Store::Exact(values) if values.len() < EXACT_LIMIT => values.push(value),
            Store::Exact(values) => {
                let mut positive = new_histogram();
                let mut negative = new_histogram();
                for &v in values.iter().chain(std::iter::once(&value)) {
                    record(&mut positive, &mut negative, v);
                }
                self.store = Store::Histograms { positive, negative };
            }
            Store::Histograms { positive, negative } => record(positive, negative, value),
        }
    }

    /// Counts `n` unserved arrivals (values of +∞).
    pub fn add_unserved(&mut self, n: u64) {
        self.unserved += n;
    }

    /// Unserved arrivals counted.
    pub fn unserved(&self) -> u64 {
        self.unserved
    }

    /// Number of values added, unserved ones included.
    pub fn count(&self) -> u64 {
        self.count + self.unserved
    }

    /// Whether no value was served: unserved arrivals alone neither show a Trend in the
    /// summary nor get it judged during the run (a script without requests has no first
    /// response to miss); its final threshold pass still counts them.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Exact sum.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Exact minimum (0 when empty).
    pub fn min(&self) -> f64 {
        if self.count == 0 && self.unserved > 0 {
            return f64::INFINITY;
        }
        self.min
    }

    /// Exact maximum (0 when empty).
    pub fn max(&self) -> f64 {
        if self.unserved > 0 {
            return f64::INFINITY;
        }
        self.max
    }

    /// Mean (0 when empty).
    pub fn avg(&self) -> f64 {
        if self.unserved > 0 {
            f64::INFINITY
        } else if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Median, `p(50)`.
    pub fn med(&self) -> f64 {
        self.percentile(50.0)
    }

    /// The `pct` percentile (`0..=100`), interpolated linearly between the values at the
    /// ranks around `pct/100·(n−1)` like k6, and clamped to the exact min and max.
    pub fn percentile(&self, pct: f64) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let pos = (pct / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
        let lo = pos.floor() as u64;
        let hi = pos.ceil() as u64;
        let frac = pos - lo as f64;
        // Unserved arrivals rank last: a percentile that reaches one is unserved too.
        if hi >= self.count && (lo >= self.count || frac > 0.0) {
            return f64::INFINITY;
        }
        let hi = hi.min(self.count - 1);
        let v = match &self.store {
            Store::Exact(values) => {
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                let a = sorted[lo as usize];
                let b = sorted[hi as usize];
                a + (b - a) * frac
            }
            Store::Histograms { positive, negative } => {
                let a = self.value_at_rank(positive, negative, lo);
                let b = if hi == lo {
                    a
                } else {
                    self.value_at_rank(positive, negative, hi)
                };
                a + (b - a) * frac
            }
        };
        v.clamp(self.min, self.max)
    }

    /// Starts counting values exactly around `boundary` (a threshold's right-hand side).
    /// Must be called before values are added; repeated boundaries are counted once.
    pub fn add_pivot(&mut self, boundary: f64) {
        if !boundary.is_nan() && !self.pivots.iter().any(|p| p.boundary == boundary) {
            self.pivots.push(Pivot {
                boundary,
                below: 0,
                equal: 0,
            });
        }
    }

    /// How the `pct` percentile compares with `boundary`, decided from exact counts when
    /// the histograms could blur it: `None` when no pivot covers `boundary`, the sink is
    /// still exact, or the percentile interpolates between values on both sides of it.
    pub fn percentile_vs(&self, pct: f64, boundary: f64) -> Option<std::cmp::Ordering> {
        use std::cmp::Ordering;
        if matches!(self.store, Store::Exact(_)) || self.count == 0 {
            return None;
        }
        let p = self.pivots.iter().find(|p| p.boundary == boundary)?;
        // Unserved ranks lie above every boundary, past `below + equal`.
        let pos = (pct / 100.0).clamp(0.0, 1.0) * (self.count() - 1) as f64;
        let lo = pos.floor() as u64;
        let hi = pos.ceil() as u64;
        let exact_lo = lo as f64 == pos;
        // Ranks below `below` hold values < boundary; up to `below + equal`, equal ones.
        let (lt, le) = (p.below, p.below + p.equal);
        let side = |r: u64| {
            if r < lt {
                Ordering::Less
            } else if r < le {
                Ordering::Equal
            } else {
                Ordering::Greater
            }
        };
        match (side(lo), side(hi)) {
            (a, b) if a == b => Some(a),
            (a, _) if exact_lo => Some(a),
            // Interpolating from a value on the boundary towards one off it.
            (Ordering::Equal, b) => Some(b),
            (a, Ordering::Equal) => Some(a),
            _ => None,
        }
    }

    /// The value at 0-based `rank` in ascending order, from the histograms.
    fn value_at_rank(
        &self,
        positive: &Histogram<u64>,
        negative: &Histogram<u64>,
        rank: u64,
    ) -> f64 {
        // The ends are known exactly; buckets only approximate them.
        if rank == 0 {
            return self.min;
        }
        if rank + 1 >= self.count {
            return self.max;
        }
        let neg = negative.len();
        if rank < neg {
            // Ascending values are descending magnitudes.
            -bucket_at_rank(negative, neg - 1 - rank)
        } else {
            bucket_at_rank(positive, rank - neg)
        }
    }
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is a valid histogram precision")
}

fn record(positive: &mut Histogram<u64>, negative: &mut Histogram<u64>, value: f64) {
    let (h, magnitude) = if value < 0.0 {
        (negative, -value)
    } else {
        (positive, value)
    };
    // `as` saturates on overflow; extreme values are clamped to the histogram's range,
    // while min/max/sum still hold them exactly.
    // `+ 0.5` and truncation rather than `round()`, a libm call per value on the metrics
    // thread; they differ only where the sum itself rounds, far below the histograms'
    // three significant digits.
    let scaled = ((magnitude * SCALE + 0.5) as u64).min(MAX_SCALED);
    if h.record(scaled).is_err() {
        h.saturating_record(scaled);
    }
}

/// The representative value of the bucket holding 0-based `rank`.
fn bucket_at_rank(h: &Histogram<u64>, rank: u64) -> f64 {
    let mut seen = 0u64;
    for step in h.iter_recorded() {
        seen += step.count_at_value();
        if seen > rank {
            return h.median_equivalent(step.value_iterated_to()) as f64 / SCALE;
        }
    }
    h.max() as f64 / SCALE
}

/// A [`TrendSink`] as it travels between processes (`crate::delta`): the exact values
/// while the sink holds them (or `histograms` was asked for), else the recorded buckets
/// of its histograms, each as (a value in the bucket, count) over `value × 1_000_000`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrendState {
    /// Values added (unserved ones aside).
    pub count: u64,
    /// Unserved arrivals (rk6's corrected Trends), not among the values or buckets.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unserved: u64,
    /// Exact sum.
    pub sum: f64,
    /// Exact minimum.
    pub min: f64,
    /// Exact maximum.
    pub max: f64,
    /// Every value, when the sink is still exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<f64>>,
    /// Buckets of non-negative values: (scaled value, count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positive: Vec<(u64, u64)>,
    /// Buckets of negative values' magnitudes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub negative: Vec<(u64, u64)>,
    /// Threshold boundaries with their exact counts: (boundary, below, equal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pivots: Vec<(f64, u64, u64)>,
}

/// Why a [`TrendState`] cannot be a sink.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrendStateError {
    /// The buckets or values do not add up to `count`.
    #[error("trend state holds {held} values but says {count}")]
    Count {
        /// What the state's count says.
        count: u64,
        /// What its values or buckets hold.
        held: u64,
    },
}

impl TrendSink {
    /// An empty sink with this one's threshold boundaries, for the next delta.
    pub fn empty_like(&self) -> TrendSink {
        TrendSink {
            pivots: self
                .pivots
                .iter()
                .map(|p| Pivot {
                    boundary: p.boundary,
                    below: 0,
                    equal: 0,
                })
                .collect(),
            ..TrendSink::default()
        }
    }

    /// Adds everything `other` holds, as if its values had been added here: exact while
    /// both together hold at most [`EXACT_LIMIT`] values, else bucket by bucket (both
    /// histograms have the same precision, so the result is the histogram one sink fed
    /// every value would hold). A boundary counted here and not in `other` stays exact
    /// only when `other` still has its values; otherwise it is dropped, so a verdict never
    /// rests on a partial count.
    pub fn merge(&mut self, other: &TrendSink) {
        self.unserved += other.unserved;
        if other.count == 0 {
            return;
        }
        // Boundaries only `other` counts: exact here too while this sink has its values.
        let mut adopted = Vec::new();
        if let Store::Exact(mine) = &self.store {
            for o in &other.pivots {
                if !self.pivots.iter().any(|p| p.boundary == o.boundary) {
                    let mut p = *o;
                    for &v in mine {
                        if v < p.boundary {
                            p.below += 1;
                        } else if v == p.boundary {
                            p.equal += 1;
                        }
                    }
                    adopted.push(p);
                }
            }
        }
        self.pivots.retain_mut(|p| {
            if let Some(o) = other.pivots.iter().find(|o| o.boundary == p.boundary) {
                p.below += o.below;
                p.equal += o.equal;
                return true;
            }
            match &other.store {
                Store::Exact(values) => {
                    for &v in values {
                        if v < p.boundary {
                            p.below += 1;
                        } else if v == p.boundary {
                            p.equal += 1;
                        }
                    }
                    true
                }
                Store::Histograms { .. } => false,
            }
        });
        self.pivots.extend(adopted);
        if self.count == 0 {
            self.min = other.min;
            self.max = other.max;
        } else {
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
        }
        self.count += other.count;
        self.sum += other.sum;
        if let (Store::Exact(mine), Store::Exact(theirs)) = (&mut self.store, &other.store) {
            if mine.len() + theirs.len() <= EXACT_LIMIT {
                mine.extend_from_slice(theirs);
                return;
            }
        }
        let (positive, negative) = self.histograms_mut();
        match &other.store {
            Store::Exact(values) => {
                for &v in values {
                    record(positive, negative, v);
                }
            }
            Store::Histograms {
                positive: p,
                negative: n,
            } => {
                add_histogram(positive, p);
                add_histogram(negative, n);
            }
        }
    }

    /// Switches to histograms (if not yet) and returns them.
    fn histograms_mut(&mut self) -> (&mut Histogram<u64>, &mut Histogram<u64>) {
        if let Store::Exact(values) = &self.store {
            let mut positive = new_histogram();
            let mut negative = new_histogram();
            for &v in values {
                record(&mut positive, &mut negative, v);
            }
            self.store = Store::Histograms { positive, negative };
        }
        match &mut self.store {
            Store::Histograms { positive, negative } => (positive, negative),
            Store::Exact(_) => unreachable!("converted above"),
        }
    }

    /// The sink's state; with `histograms`, exact values are sent as buckets (for a sink
    /// whose merged whole already holds more than [`EXACT_LIMIT`] values, where exact
    /// values would only cost bytes).
    pub fn to_state(&self, histograms: bool) -> TrendState {
        let mut state = TrendState {
            count: self.count,
            unserved: self.unserved,
            sum: self.sum,
            min: self.min,
            max: self.max,
            pivots: self
                .pivots
                .iter()
                .map(|p| (p.boundary, p.below, p.equal))
                .collect(),
            ..TrendState::default()
        };
        let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|s| (s.value_iterated_to(), s.count_at_value()))
                .collect()
        };
        match &self.store {
            Store::Exact(values) if !histograms => state.values = Some(values.clone()),
            Store::Exact(values) => {
                let mut positive = new_histogram();
                let mut negative = new_histogram();
                for &v in values {
                    record(&mut positive, &mut negative, v);
                }
                state.positive = buckets(&positive);
                state.negative = buckets(&negative);
            }
            Store::Histograms { positive, negative } => {
                state.positive = buckets(positive);
                state.negative = buckets(negative);
            }
        }
        state
    }

    /// The sink a state describes; its values or buckets must add up to its count.
    pub fn from_state(state: &TrendState) -> Result<TrendSink, TrendStateError> {
        let held = match &state.values {
            Some(values) => values.len() as u64,
            None => state
                .positive
                .iter()
                .chain(&state.negative)
                .fold(0u64, |n, (_, c)| n.saturating_add(*c)),
        };
        if held != state.count {
            return Err(TrendStateError::Count {
                count: state.count,
                held,
            });
        }
        let store = match &state.values {
            Some(values) if values.len() <= EXACT_LIMIT => Store::Exact(values.clone()),
            Some(values) => {
                let mut positive = new_histogram();
                let mut negative = new_histogram();
                for &v in values {
                    record(&mut positive, &mut negative, v);
                }
                Store::Histograms { positive, negative }
            }
            None => {
                let fill = |buckets: &[(u64, u64)]| {
                    let mut h = new_histogram();
                    for &(v, n) in buckets {
                        let v = v.min(MAX_SCALED);
                        if h.record_n(v, n).is_err() {
                            h.saturating_record_n(v, n);
                        }
                    }
                    h
                };
                Store::Histograms {
                    positive: fill(&state.positive),
                    negative: fill(&state.negative),
                }
            }
        };
        Ok(TrendSink {
            count: state.count,
            unserved: state.unserved,
            sum: state.sum,
            min: state.min,
            max: state.max,
            store,
            pivots: state
                .pivots
                .iter()
                .filter(|(b, _, _)| !b.is_nan())
                .map(|&(boundary, below, equal)| Pivot {
                    boundary,
                    below,
                    equal,
                })
                .collect(),
        })
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Adds `from`'s counts to `into`, bucket by bucket (same precision, auto-resizing).
fn add_histogram(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    if into.add(from).is_err() {
        for s in from.iter_recorded() {
            into.saturating_record_n(s.value_iterated_to(), s.count_at_value());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unserved_arrivals_rank_above_every_value() {
        use std::cmp::Ordering;
        // 90 served arrivals of 1..=90 ms, 10 unserved: up to p(89) the values, from the
        // rank of the first unserved one on, unserved; the mean and the max too.
        for histograms in [false, true] {
            let mut t = TrendSink::new();
            t.add_pivot(95.0);
            let served = if histograms { 20_000 } else { 90 };
            for i in 0..served {
                t.add((i % 90 + 1) as f64);
            }
            t.add_unserved(served / 9);
            assert_eq!(t.count(), served + served / 9);
            assert_eq!(t.unserved(), served / 9);
            assert!(t.percentile(50.0).is_finite());
            assert!(t.percentile(89.0).is_finite(), "{histograms}");
            assert_eq!(t.percentile(95.0), f64::INFINITY);
            assert_eq!(t.percentile(100.0), f64::INFINITY);
            assert_eq!((t.avg(), t.max()), (f64::INFINITY, f64::INFINITY));
            assert_eq!(t.min(), 1.0);
            if histograms {
                assert_eq!(t.percentile_vs(95.0, 95.0), Some(Ordering::Greater));
            }
            // Through a state (a distributed runner's delta) and a merge, unchanged.
            let back = TrendSink::from_state(&t.to_state(histograms)).unwrap();
            assert_eq!(back.unserved(), served / 9);
            let mut merged = TrendSink::new();
            merged.merge(&back);
            merged.merge(&back);
            assert_eq!(merged.unserved(), 2 * (served / 9));
        }
        // Only unserved arrivals: nothing was served at all.
        let mut t = TrendSink::new();
        t.add_unserved(3);
        assert!(t.is_empty(), "nothing served: not shown");
        assert_eq!((t.min(), t.percentile(0.0)), (f64::INFINITY, f64::INFINITY));
        // None: the sink is the plain one it always was.
        let mut t = TrendSink::new();
        t.add(2.0);
        assert_eq!((t.avg(), t.max(), t.percentile(95.0)), (2.0, 2.0, 2.0));
    }

    #[test]
    fn pivots_decide_boundaries_the_histograms_blur() {
        use std::cmp::Ordering;
        // 20,000 values: p(95) is exactly 199.99, just under a 200 boundary that the
        // histogram (0.1 %) cannot tell apart from it.
        let mut t = TrendSink::new();
        t.add_pivot(200.0);
        for i in 0..20_000u32 {
            t.add(if i < 19_500 { 199.99 } else { 200.01 });
        }
        assert_eq!(t.percentile_vs(95.0, 200.0), Some(Ordering::Less));
        assert_eq!(t.percentile_vs(99.0, 200.0), Some(Ordering::Greater));
        assert_eq!(t.percentile_vs(95.0, 123.0), None, "no pivot there");
        let approx = t.percentile(95.0);
        assert!((approx - 199.99).abs() <= 0.2, "{approx}");
        // Values on the boundary itself.
        let mut t = TrendSink::new();
        t.add_pivot(5.0);
        for _ in 0..20_000 {
            t.add(5.0);
        }
        assert_eq!(t.percentile_vs(50.0, 5.0), Some(Ordering::Equal));
    }

    /// k6's algorithm on a sorted copy, for comparison.
    fn k6_percentile(values: &[f64], pct: f64) -> f64 {
        let mut s = values.to_vec();
        s.sort_by(f64::total_cmp);
        let i = pct / 100.0 * (s.len() - 1) as f64;
        let (a, b) = (s[i.floor() as usize], s[i.ceil() as usize]);
        a + (b - a) * (i - i.floor())
    }

    #[test]
    fn empty_sink_reports_zero() {
        let t = TrendSink::new();
        assert!(t.is_empty());
        assert_eq!(
            (t.avg(), t.min(), t.max(), t.med(), t.percentile(95.0)),
            (0.0, 0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn exact_mode_matches_k6_interpolation() {
        let mut t = TrendSink::new();
        for v in [5.0, 1.0, 4.0, 2.0, 3.0, 10.0] {
            t.add(v);
        }
        assert_eq!(t.count(), 6);
        assert_eq!(t.min(), 1.0);
        assert_eq!(t.max(), 10.0);
        assert!((t.avg() - 25.0 / 6.0).abs() < 1e-12);
        assert_eq!(t.med(), 3.5);
        // index 0.9·5 = 4.5 → between 5 and 10
        assert_eq!(t.percentile(90.0), 7.5);
        assert_eq!(t.percentile(0.0), 1.0);
        assert_eq!(t.percentile(100.0), 10.0);
        let mut one = TrendSink::new();
        one.add(7.25);
        assert_eq!(one.percentile(95.0), 7.25);
    }

    #[test]
    fn nan_is_ignored() {
        let mut t = TrendSink::new();
        t.add(f64::NAN);
        assert!(t.is_empty());
    }

    #[test]
    fn histogram_mode_stays_within_a_tenth_of_a_percent() {
        let mut t = TrendSink::new();
        // Latency-like values in ms, deterministic spread from 0.3 ms to ~300 ms.
        let values: Vec<f64> = (0..50_000u64)
            .map(|i| 0.3 + ((i * 7919) % 50_000) as f64 * 0.006)
            .collect();
        for &v in &values {
            t.add(v);
        }
        assert!(matches!(t.store, Store::Histograms { .. }));
        assert_eq!(t.count(), 50_000);
        assert_eq!(t.min(), 0.3);
        assert!((t.max() - (0.3 + 49_999.0 * 0.006)).abs() < 1e-9);
        for p in [1.0, 50.0, 90.0, 95.0, 99.0, 99.9] {
            let want = k6_percentile(&values, p);
            let got = t.percentile(p);
            assert!(
                ((got - want) / want).abs() < 1e-3,
                "p({p}): got {got}, want {want}"
            );
        }
        assert_eq!(t.percentile(0.0), t.min());
        assert_eq!(t.percentile(100.0), t.max());
    }

    #[test]
    fn negative_and_fractional_values_in_histogram_mode() {
        let mut t = TrendSink::new();
        let values: Vec<f64> = (0..(EXACT_LIMIT as i64 + 5_001))
            .map(|i| (i - 7_500) as f64 * 0.001)
            .collect();
        for &v in &values {
            t.add(v);
        }
        assert!(matches!(t.store, Store::Histograms { .. }));
        assert_eq!(t.min(), -7.5);
        assert!((t.max() - 7.5).abs() < 1e-9);
        for p in [5.0, 25.0, 50.0, 75.0, 95.0] {
            let want = k6_percentile(&values, p);
            let got = t.percentile(p);
            assert!((got - want).abs() < 0.01, "p({p}): got {got}, want {want}");
        }
        assert!(t.med().abs() < 0.002);
    }

    #[test]
    fn small_values_keep_microunit_resolution() {
        let mut t = TrendSink::new();
        for i in 0..(EXACT_LIMIT + 1) {
            t.add(if i % 2 == 0 { 0.0007 } else { 0.0009 });
        }
        assert!(matches!(t.store, Store::Histograms { .. }));
        assert!((t.percentile(25.0) - 0.0007).abs() < 1e-9);
        assert!((t.percentile(75.0) - 0.0009).abs() < 1e-9);
    }

    #[test]
    fn huge_values_are_clamped_in_buckets_but_exact_at_the_ends() {
        let mut t = TrendSink::new();
        for _ in 0..EXACT_LIMIT {
            t.add(1.0);
        }
        t.add(1e300);
        assert_eq!(t.max(), 1e300);
        assert_eq!(t.percentile(100.0), 1e300);
        assert!((t.med() - 1.0).abs() < 1e-3);
    }
}
