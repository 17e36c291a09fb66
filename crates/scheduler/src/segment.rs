//! Execution segments: how several rk6 instances split one test between them.
//!
//! A sequence such as `0,1/3,2/3,1` partitions the test into segments; each instance runs one
//! (`--execution-segment 1/3:2/3`). Every countable quantity (VUs, iterations, the indices of
//! arrival-rate iterations) is dealt out along a repeating [`Stripe`]: among each run of
//! `len` consecutive values, a segment owns fixed positions. The segments' shares of any
//! number `n` then add up to exactly `n`, so nothing is lost or run twice.
//!
//! The dealing order reproduces what k6 1.1 does (checked against the real binary): segments
//! are visited from the largest share to the smallest, and position `i` goes to the first
//! one whose next element is due, i.e. whose `count / share` is at most `i`.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use crate::fields::ConfigError;

/// The largest stripe rk6 builds; finer partitions are refused rather than allocated.
const MAX_STRIPE: u64 = 1_000_000;

/// A non-negative rational number in lowest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fraction {
    num: u64,
    den: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / gcd(a, b)).checked_mul(b)
}

impl Fraction {
    const ZERO: Fraction = Fraction { num: 0, den: 1 };
    const ONE: Fraction = Fraction { num: 1, den: 1 };

    fn new(num: u64, den: u64) -> Fraction {
        let g = gcd(num, den).max(1);
        Fraction {
            num: num / g,
            den: den / g,
        }
    }

    /// Parses `1/3`, `0.25`, `25%` or an integer, as k6 accepts them.
    pub fn parse(s: &str) -> Result<Fraction, ConfigError> {
        let invalid = || {
            ConfigError(format!(
                "'{s}' is not a valid percentage, decimal, fraction or interval value"
            ))
        };
        let t = s.trim();
        if let Some(p) = t.strip_suffix('%') {
            let f = Fraction::parse_decimal(p).ok_or_else(invalid)?;
            return Ok(Fraction::new(
                f.num,
                f.den.checked_mul(100).ok_or_else(invalid)?,
            ));
        }
        if let Some((n, d)) = t.split_once('/') {
            let n: u64 = n.trim().parse().map_err(|_| invalid())?;
            let d: u64 = d.trim().parse().map_err(|_| invalid())?;
            if d == 0 {
                return Err(invalid());
            }
            return Ok(Fraction::new(n, d));
        }
        Fraction::parse_decimal(t).ok_or_else(invalid)
    }

    fn parse_decimal(s: &str) -> Option<Fraction> {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() && frac.is_empty()
            || !int.chars().all(|c| c.is_ascii_digit())
            || !frac.chars().all(|c| c.is_ascii_digit())
            || frac.len() > 12
        {
            return None;
        }
        let den = 10u64.pow(frac.len() as u32);
        let int: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let frac: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().ok()?
        };
        Some(Fraction::new(int.checked_mul(den)?.checked_add(frac)?, den))
    }

    fn as_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl Ord for Fraction {
    fn cmp(&self, other: &Self) -> Ordering {
        (u128::from(self.num) * u128::from(other.den))
            .cmp(&(u128::from(other.num) * u128::from(self.den)))
    }
}

impl PartialOrd for Fraction {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

/// The part `from:to` of the whole test (`0:1`) one instance runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Where the segment starts, in `[0, 1)`.
    pub from: Fraction,
    /// Where it ends, in `(0, 1]`.
    pub to: Fraction,
}

impl Segment {
    /// The whole test.
    pub const FULL: Segment = Segment {
        from: Fraction::ZERO,
        to: Fraction::ONE,
    };

    /// Parses `from:to`, or `to` alone meaning `0:to`.
    pub fn parse(s: &str) -> Result<Segment, ConfigError> {
        let (from, to) = match s.split_once(':') {
            Some((a, b)) => (Fraction::parse(a)?, Fraction::parse(b)?),
            None => (Fraction::ZERO, Fraction::parse(s)?),
        };
        if from >= to {
            return Err(ConfigError(format!(
                "segment start({:.2}) must be less than its end({:.2})",
                from.as_f64(),
                to.as_f64()
            )));
        }
        if to > Fraction::ONE {
            return Err(ConfigError(format!(
                "segment end({:.2}) can't be more than 1",
                to.as_f64()
            )));
        }
        Ok(Segment { from, to })
    }

    /// The fraction of the test this segment runs.
    pub fn share(&self) -> f64 {
        self.to.as_f64() - self.from.as_f64()
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.from, self.to)
    }
}

/// Parses `--execution-segment-sequence` (`0,1/3,2/3,1`): increasing boundaries.
pub fn parse_sequence(s: &str) -> Result<Vec<Fraction>, ConfigError> {
    let points = s
        .split(',')
        .map(Fraction::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if points.len() < 2 {
        return Err(ConfigError(format!(
            "the execution segment sequence '{s}' needs at least two values"
        )));
    }
    for w in points.windows(2) {
        if w[0] >= w[1] {
            return Err(ConfigError(format!(
                "the execution segment sequence '{s}' must be strictly increasing"
            )));
        }
    }
    if *points.last().expect("two points") > Fraction::ONE {
        return Err(ConfigError(format!(
            "the execution segment sequence '{s}' can't go past 1"
        )));
    }
    Ok(points)
}

/// Which positions of a repeating pattern one segment owns; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripe {
    /// Every segment's weight (its share times `len`), in sequence order.
    weights: Arc<[u64]>,
    /// The segment this instance runs.
    index: usize,
    /// The pattern's length.
    len: u64,
    /// The positions in `0..len` this segment owns, ascending.
    owned: Arc<[u64]>,
}

impl Stripe {
    /// The whole test in one instance: every position is owned.
    pub fn full() -> Stripe {
        Stripe::from_weights(&[1], 0).expect("a single weight is valid")
    }

    /// The stripe of `segment` within `sequence` (boundaries; `None` = the segment alone).
    pub fn new(segment: Segment, sequence: Option<&[Fraction]>) -> Result<Stripe, ConfigError> {
        let mut points: Vec<Fraction> = match sequence {
            Some(seq) => seq.to_vec(),
            None => vec![segment.from, segment.to],
        };
        let seq_text = || {
            points
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        if let Some(seq) = sequence {
            let found = seq
                .windows(2)
                .any(|w| w[0] == segment.from && w[1] == segment.to);
            if !found {
                return Err(ConfigError(format!(
                    "There were problems with the specified script configuration:\n\t- provided segment {segment} can't be found in sequence {}",
                    seq_text()
                )));
            }
        }
        if points[0] != Fraction::ZERO {
            points.insert(0, Fraction::ZERO);
        }
        if *points.last().expect("non-empty") != Fraction::ONE {
            points.push(Fraction::ONE);
        }
        let mut den = 1u64;
        for p in &points {
            den = lcm(den, p.den)
                .filter(|d| *d <= MAX_STRIPE)
                .ok_or_else(|| ConfigError("the execution segments are too fine".into()))?;
        }
        let at = |p: &Fraction| p.num * (den / p.den);
        let weights: Vec<u64> = points.windows(2).map(|w| at(&w[1]) - at(&w[0])).collect();
        let index = points
            .iter()
            .position(|p| *p == segment.from)
            .expect("segment start is a boundary");
        Stripe::from_weights(&weights, index)
    }

    fn from_weights(weights: &[u64], index: usize) -> Result<Stripe, ConfigError> {
        let g = weights.iter().fold(0, |g, w| gcd(g, *w)).max(1);
        let weights: Vec<u64> = weights.iter().map(|w| w / g).collect();
        let len: u64 = weights.iter().sum();
        if len == 0 || len > MAX_STRIPE {
            return Err(ConfigError("the execution segments are too fine".into()));
        }
        let mut order: Vec<usize> = (0..weights.len()).filter(|j| weights[*j] > 0).collect();
        order.sort_by(|a, b| weights[*b].cmp(&weights[*a]));
        let mut counts = vec![0u64; weights.len()];
        let mut owned = Vec::with_capacity(weights[index] as usize);
        for i in 0..len {
            // The sum of the due counts exceeds `i`, so some segment is always due.
            let j = *order
                .iter()
                .find(|&&j| {
                    u128::from(counts[j]) * u128::from(len)
                        <= u128::from(i) * u128::from(weights[j])
                })
                .expect("some segment is due at every position");
            counts[j] += 1;
            if j == index {
                owned.push(i);
            }
        }
        Ok(Stripe {
            weights: weights.into(),
            index,
            len,
            owned: owned.into(),
        })
    }

    /// Whether this is the whole test (nothing to split).
    pub fn is_full(&self) -> bool {
        self.owned.len() as u64 == self.len
    }

    /// The fraction of every quantity this segment gets.
    pub fn share(&self) -> f64 {
        self.owned.len() as f64 / self.len as f64
    }

    /// This segment's part of `n`: how many of the values `0..n` it owns.
    pub fn scale(&self, n: u64) -> u64 {
        let rem = n % self.len;
        (n / self.len) * self.owned.len() as u64 + self.owned.partition_point(|p| *p < rem) as u64
    }

    /// The value (in the whole test) of this segment's `k`-th own value.
    pub fn global(&self, k: u64) -> u64 {
        let per = self.owned.len() as u64;
        if per == 0 {
            return k;
        }
        (k / per) * self.len + self.owned[(k % per) as usize]
    }

    /// The stripe used for a quantity dealt out in proportion to how `value` was split
    /// (k6 splits the iterations of a scenario along how its VUs were split).
    pub fn derive(&self, value: u64) -> Stripe {
        if value == 0 || self.is_full() {
            return self.clone();
        }
        let weights: Vec<u64> = (0..self.weights.len())
            .map(|j| self.count_of(j, value))
            .collect();
        if weights[self.index] == 0 {
            // This segment gets none of `value`, so none of what follows it either.
            return Stripe {
                weights: weights.into(),
                index: self.index,
                len: 1,
                owned: Arc::from([]),
            };
        }
        Stripe::from_weights(&weights, self.index).unwrap_or_else(|_| self.clone())
    }

    /// How many of `0..n` segment `j` owns (needs the pattern of every segment).
    fn count_of(&self, j: usize, n: u64) -> u64 {
        if j == self.index {
            return self.scale(n);
        }
        let other = Stripe::from_weights(&self.weights, j).expect("weights already valid");
        other.scale(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(s: &str) -> Vec<Fraction> {
        parse_sequence(s).unwrap()
    }

    fn stripe(seg: &str, sequence: Option<&str>) -> Stripe {
        let sequence = sequence.map(seq);
        Stripe::new(Segment::parse(seg).unwrap(), sequence.as_deref()).unwrap()
    }

    fn owned_of(s: &Stripe, n: u64) -> Vec<u64> {
        (0..s.scale(n)).map(|k| s.global(k)).collect()
    }

    #[test]
    fn parses_k6_forms() {
        assert_eq!(Fraction::parse("25%").unwrap(), Fraction::new(1, 4));
        assert_eq!(Fraction::parse("0.2").unwrap(), Fraction::new(1, 5));
        assert_eq!(Fraction::parse("2/3").unwrap(), Fraction::new(2, 3));
        assert_eq!(Fraction::parse("1").unwrap(), Fraction::ONE);
        let s = Segment::parse("0.2:2/3").unwrap();
        assert_eq!(s.to_string(), "1/5:2/3");
        assert_eq!(Segment::parse("1/3").unwrap().to_string(), "0:1/3");
        assert_eq!(
            Segment::parse("abc").unwrap_err().0,
            "'abc' is not a valid percentage, decimal, fraction or interval value"
        );
        assert_eq!(
            Segment::parse("1/2:1/4").unwrap_err().0,
            "segment start(0.50) must be less than its end(0.25)"
        );
        assert!(parse_sequence("0,1/2,1/3").is_err());
    }

    #[test]
    fn segment_must_be_in_the_sequence() {
        let e = Stripe::new(Segment::parse("1/4:1/2").unwrap(), Some(&seq("0,1/3,1"))).unwrap_err();
        assert!(
            e.0.ends_with("provided segment 1/4:1/2 can't be found in sequence 0,1/3,1"),
            "{e}"
        );
    }

    /// What the real k6 1.1 ran for `shared-iterations {vus: 4, iterations: 10}` with the
    /// sequence `0,1/3,2/3,1`: the iterations (iterationInTest) and VUs (idInTest - 1) of each.
    #[test]
    fn matches_k6_thirds() {
        let expected: [(&str, &[u64], &[u64]); 3] = [
            ("0:1/3", &[0, 2, 4, 6, 8], &[0, 3]),
            ("1/3:2/3", &[1, 5, 9], &[1]),
            ("2/3:1", &[3, 7], &[2]),
        ];
        for (seg, iterations, vus) in expected {
            let s = stripe(seg, Some("0,1/3,2/3,1"));
            assert_eq!(owned_of(&s, 4), vus, "{seg} VUs");
            assert_eq!(owned_of(&s.derive(4), 10), iterations, "{seg} iterations");
        }
    }

    /// Same with uneven segments `0,1/5,1/2,7/10,1`, `vus: 10, iterations: 37` (k6 1.1).
    #[test]
    fn matches_k6_uneven_sequence() {
        let expected: [(&str, &[u64]); 4] = [
            ("0:1/5", &[2, 6, 12, 16, 22, 26, 32, 36]),
            ("1/5:1/2", &[0, 4, 7, 10, 14, 17, 20, 24, 27, 30, 34]),
            ("1/2:7/10", &[3, 9, 13, 19, 23, 29, 33]),
            ("7/10:1", &[1, 5, 8, 11, 15, 18, 21, 25, 28, 31, 35]),
        ];
        for (seg, iterations) in expected {
            let s = stripe(seg, Some("0,1/5,1/2,7/10,1"));
            assert_eq!(owned_of(&s.derive(10), 37), iterations, "{seg}");
        }
    }

    /// Without a sequence each third of `vus: 4, iterations: 10` runs 3 (k6 1.1 too).
    #[test]
    fn lone_segments_follow_k6() {
        for seg in ["0:1/3", "1/3:2/3", "2/3:1"] {
            let s = stripe(seg, None);
            assert_eq!(s.scale(4), 1, "{seg}");
            assert_eq!(s.derive(4).scale(10), 3, "{seg}");
        }
    }

    #[test]
    fn segments_partition_every_count() {
        let sequence = "0,1/7,1/4,1/2,0.6,1";
        let points = seq(sequence);
        let stripes: Vec<Stripe> = points
            .windows(2)
            .map(|w| {
                Stripe::new(
                    Segment {
                        from: w[0],
                        to: w[1],
                    },
                    Some(&points),
                )
                .unwrap()
            })
            .collect();
        for n in 0..300 {
            let mut all: Vec<u64> = stripes.iter().flat_map(|s| owned_of(s, n)).collect();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "n = {n}");
            let derived: u64 = stripes.iter().map(|s| s.derive(13).scale(n)).sum();
            assert_eq!(derived, n, "derived n = {n}");
        }
    }

    #[test]
    fn full_stripe_is_identity() {
        let s = Stripe::full();
        assert!(s.is_full());
        assert_eq!(s.scale(17), 17);
        assert_eq!(s.global(5), 5);
        assert_eq!(s.derive(9), s);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Increasing boundaries from 0 to 1 with small denominators (a k6-valid sequence).
    fn sequence() -> impl Strategy<Value = Vec<Fraction>> {
        (1u64..13, prop::collection::btree_set(1u64..12, 0..5)).prop_map(|(den, cuts)| {
            let mut points = vec![Fraction::ZERO];
            points.extend(
                cuts.into_iter()
                    .filter(|c| *c < den)
                    .map(|c| Fraction::new(c, den)),
            );
            points.push(Fraction::ONE);
            points
        })
    }

    proptest! {
        #![proptest_config(crate::prop_config(3000))]

        /// Any text: a segment, a sequence, or a typed error, never a panic.
        #[test]
        fn any_text_is_decided(text in "[0-9./%:, ]{0,14}|\\PC{0,10}") {
            let _ = Segment::parse(&text);
            let _ = parse_sequence(&text);
        }

        /// A fraction's printed form reads back to it; `n/d`, `100n/d %` and the decimal
        /// form of a power-of-ten denominator are the same value.
        #[test]
        fn fractions_round_trip(n in 0u64..1_000, d in 1u64..1_000, k in 0u32..4) {
            let f = Fraction::new(n, d);
            prop_assert_eq!(Fraction::parse(&f.to_string()), Ok(f));
            prop_assert_eq!(Fraction::parse(&format!(" {n} / {d} ")), Ok(f));
            let ten = 10u64.pow(k);
            let dec = Fraction::new(n, ten);
            let text = format!("{}.{:0width$}", n / ten, n % ten, width = k as usize);
            prop_assert_eq!(Fraction::parse(&text), Ok(dec), "{}", text);
            prop_assert_eq!(Fraction::parse(&format!("{n}%")), Ok(Fraction::new(n, 100)));
        }

        /// A segment is accepted exactly when 0 <= from < to <= 1 (k6's rule).
        #[test]
        fn segment_bounds(a in 0u64..12, b in 0u64..12, d in 1u64..8) {
            let text = format!("{a}/{d}:{b}/{d}");
            let ok = a < b && b <= d;
            prop_assert_eq!(Segment::parse(&text).is_ok(), ok, "{}", text);
        }

        /// The segments of a sequence partition every quantity: their shares of `n` add
        /// up to `n`, each share grows with `n`, and their global values are disjoint and
        /// cover `0..total`.
        #[test]
        fn stripes_partition(points in sequence(), n in 0u64..500) {
            let stripes: Vec<Stripe> = points
                .windows(2)
                .map(|w| Stripe::new(Segment { from: w[0], to: w[1] }, Some(&points)).unwrap())
                .collect();
            let total: u64 = stripes.iter().map(|s| s.scale(n)).sum();
            prop_assert_eq!(total, n);
            let mut seen = vec![false; n as usize];
            for s in &stripes {
                prop_assert!(s.scale(n) <= s.scale(n + 1));
                for k in 0..s.scale(n) {
                    let g = s.global(k);
                    prop_assert!(g < n, "global {} of {}", g, n);
                    prop_assert!(!seen[g as usize], "value {} owned twice", g);
                    seen[g as usize] = true;
                }
                let derived = s.derive(n);
                prop_assert!(derived.scale(n) <= n);
            }
        }
    }
}
