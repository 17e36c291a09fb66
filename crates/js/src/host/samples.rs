//! A VU's sample buffer: samples collect here during an iteration and leave as one batch.
//! Tag sets are interned per VU, so a repeated request reuses its `TagSet` instead of
//! allocating a new one.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant, SystemTime};

use rk6_metrics::{MetricId, Sample, TagSet};

/// Bound on interned tag sets per VU: scripts with unique URLs must not grow memory forever.
const MAX_INTERNED: usize = 4096;

/// A VU hands its samples over when it has this many...
const FLUSH_SAMPLES: usize = 1024;
/// ...or when this much time passed since the last hand-over, whichever comes first. Tight
/// loops run thousands of iterations a second: one channel message per iteration cost more
/// CPU (lock, wake-up of the metrics thread) than the samples themselves.
const FLUSH_AGE: Duration = Duration::from_millis(100);

/// A cached tag set and the exact input it was made from.
struct Interned {
    input: FlatPairs,
    tags: TagSet,
}

/// A sequence of string pairs in two allocations (every VU keeps a few of these).
struct FlatPairs {
    text: Box<str>,
    /// Length of each key and value in turn.
    lens: Box<[u32]>,
}

impl FlatPairs {
    fn new(pairs: &[(&str, &str)]) -> Self {
        let mut text = String::new();
        let mut lens = Vec::with_capacity(pairs.len() * 2);
        for (k, v) in pairs {
            for part in [k, v] {
                text.push_str(part);
                lens.push(part.len() as u32);
            }
        }
        FlatPairs {
            text: text.into(),
            lens: lens.into(),
        }
    }

    /// Whether this is exactly `pairs`. Every tagged sample asks, so it compares bytes
    /// directly: the iterator chain with `str` slicing (two char-boundary checks a part)
    /// cost ~100 instructions a part, ~2.5 k an http request's three tag sets.
    fn is(&self, pairs: &[(&str, &str)]) -> bool {
        if self.lens.len() != pairs.len() * 2 {
            return false;
        }
        let text = self.text.as_bytes();
        let mut at = 0;
        for (part, &len) in pairs
            .iter()
            .flat_map(|&(k, v)| [k, v])
            .zip(self.lens.iter())
        {
            let part = part.as_bytes();
            let end = at + len as usize;
            if part.len() != len as usize || text.get(at..end) != Some(part) {
                return false;
            }
            at = end;
        }
        true
    }
}

/// Samples of recent iterations plus the VU's tag-set cache.
pub(crate) struct SampleBuffer {
    samples: Vec<Sample>,
    last_flush: Instant,
    interned: FxHashMap<u64, Interned>,
}

impl Default for SampleBuffer {
    fn default() -> Self {
        SampleBuffer {
            samples: Vec::new(),
            last_flush: Instant::now(),
            interned: FxHashMap::default(),
        }
    }
}

impl SampleBuffer {
    /// The interned tag set for `pairs` (see `host::tags` for how they are made); later
    /// pairs win over earlier ones with the same key.
    pub(crate) fn tags(&mut self, pairs: &[(&str, &str)]) -> TagSet {
        // Keyed by the pairs exactly as given (order and duplicates included): a call site
        // passes the same sequence every time, so a hit needs no sorting or deduping, only
        // a hash and one comparison against the stored input.
        let mut h = FxHasher::default();
        pairs.hash(&mut h);
        let key = h.finish();
        if let Some(entry) = self.interned.get(&key) {
            // Guard against a hash collision: the stored input must be exactly these pairs.
            if entry.input.is(pairs) {
                return entry.tags.clone();
            }
        }
        let tags = TagSet::from_pairs(pairs.iter().map(|&(k, v)| (k, v)));
        if self.interned.len() >= MAX_INTERNED {
            self.interned.clear();
        }
        let input = FlatPairs::new(pairs);
        self.interned.insert(
            key,
            Interned {
                input,
                tags: tags.clone(),
            },
        );
        tags
    }

    /// Adds one sample.
    pub(crate) fn push(&mut self, metric: MetricId, tags: TagSet, value: f64, time: SystemTime) {
        self.samples.push(Sample {
            metric,
            tags,
            value,
            time,
        });
    }

    /// Sends the buffered samples if enough of them, or old enough ones, are waiting.
    pub(crate) fn flush_due(&mut self, to: &SyncSender<Vec<Sample>>) {
        if self.samples.len() >= FLUSH_SAMPLES || self.last_flush.elapsed() >= FLUSH_AGE {
            self.flush(to);
        }
    }

    /// Sends the buffered samples as one batch now.
    pub(crate) fn flush(&mut self, to: &SyncSender<Vec<Sample>>) {
        self.last_flush = Instant::now();
        if !self.samples.is_empty() {
            let cap = self.samples.len();
            let batch = std::mem::replace(&mut self.samples, Vec::with_capacity(cap));
            let _ = to.send(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_pairs_tell_boundaries_apart() {
        let f = FlatPairs::new(&[("ab", "c"), ("d", "")]);
        assert!(f.is(&[("ab", "c"), ("d", "")]));
        assert!(!f.is(&[("a", "bc"), ("d", "")]));
        assert!(!f.is(&[("ab", "c")]));
        assert!(!f.is(&[("ab", "c"), ("d", "x")]));
    }

    #[test]
    fn interns_and_dedupes() {
        let mut b = SampleBuffer::default();
        let a = b.tags(&[
            ("url", "u"),
            ("method", "GET"),
            ("name", "x"),
            ("name", "y"),
        ]);
        assert_eq!(a.get("name"), Some("y"));
        assert_eq!(a.len(), 3);
        let again = b.tags(&[("method", "GET"), ("url", "u"), ("name", "y")]);
        assert_eq!(a, again);
        let other = b.tags(&[("method", "POST"), ("url", "u"), ("name", "y")]);
        assert_eq!(other.get("method"), Some("POST"));
    }
}
