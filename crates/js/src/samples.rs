//! A VU's sample buffer: samples collect here during an iteration and leave as one batch.
//! Tag sets are interned per VU, so a repeated request reuses its `TagSet` instead of
//! allocating a new one.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::mpsc::Sender;
use std::time::SystemTime;

use rk6_metrics::{MetricId, Sample, TagSet};

/// Bound on interned tag sets per VU: scripts with unique URLs must not grow memory forever.
const MAX_INTERNED: usize = 4096;

/// Samples of the current iteration plus the VU's tag-set cache.
#[derive(Default)]
pub(crate) struct SampleBuffer {
    samples: Vec<Sample>,
    interned: HashMap<u64, TagSet>,
    hasher: RandomState,
    scratch: Vec<(usize, usize)>,
}

impl SampleBuffer {
    /// The interned tag set for `pairs`; later pairs win over earlier ones with the same key.
    pub(crate) fn tags(&mut self, pairs: &[(&str, &str)]) -> TagSet {
        // Dedupe by key keeping the last occurrence, without allocating: sort indexes.
        self.scratch.clear();
        self.scratch.extend((0..pairs.len()).map(|i| (i, 0)));
        self.scratch
            .sort_by(|a, b| pairs[a.0].0.cmp(pairs[b.0].0).then(a.0.cmp(&b.0)));
        let mut h = self.hasher.build_hasher();
        let mut unique = 0usize;
        for (n, &(i, _)) in self.scratch.iter().enumerate() {
            let last = self
                .scratch
                .get(n + 1)
                .is_none_or(|&(j, _)| pairs[j].0 != pairs[i].0);
            if last {
                pairs[i].hash(&mut h);
                unique += 1;
            }
        }
        let key = h.finish();
        if let Some(ts) = self.interned.get(&key) {
            // Guard against a hash collision: the cached set must hold exactly these pairs.
            if ts.len() == unique && self.matches(ts, pairs) {
                return ts.clone();
            }
        }
        let ts = TagSet::from_pairs(pairs.iter().map(|&(k, v)| (k, v)));
        if self.interned.len() >= MAX_INTERNED {
            self.interned.clear();
        }
        self.interned.insert(key, ts.clone());
        ts
    }

    fn matches(&self, ts: &TagSet, pairs: &[(&str, &str)]) -> bool {
        self.scratch.iter().enumerate().all(|(n, &(i, _))| {
            let last = self
                .scratch
                .get(n + 1)
                .is_none_or(|&(j, _)| pairs[j].0 != pairs[i].0);
            !last || ts.get(pairs[i].0) == Some(pairs[i].1)
        })
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

    /// Sends the iteration's samples as one batch.
    pub(crate) fn flush(&mut self, to: &Sender<Vec<Sample>>) {
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
