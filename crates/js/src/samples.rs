//! A VU's sample buffer: samples collect here during an iteration and leave as one batch.
//! Tag sets are interned per VU, so a repeated request reuses its `TagSet` instead of
//! allocating a new one.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant, SystemTime};

use rk6_metrics::{MetricId, Sample, TagSet};

use crate::run_options::SystemTags;

/// Bound on interned tag sets per VU: scripts with unique URLs must not grow memory forever.
const MAX_INTERNED: usize = 4096;

/// A VU hands its samples over when it has this many...
const FLUSH_SAMPLES: usize = 1024;
/// ...or when this much time passed since the last hand-over, whichever comes first. Tight
/// loops run thousands of iterations a second: one channel message per iteration cost more
/// CPU (lock, wake-up of the metrics thread) than the samples themselves.
const FLUSH_AGE: Duration = Duration::from_millis(100);

/// Samples of recent iterations plus the VU's tag-set cache.
pub(crate) struct SampleBuffer {
    samples: Vec<Sample>,
    last_flush: Instant,
    interned: FxHashMap<u64, TagSet>,
    scratch: Vec<(usize, usize)>,
    /// `systemTags`, when the script changed k6's default set.
    system: Option<SystemTags>,
    /// The `vu` and `iter` tag values, kept only when `systemTags` enables them.
    vu: String,
    iter: String,
}

impl Default for SampleBuffer {
    fn default() -> Self {
        SampleBuffer {
            samples: Vec::new(),
            last_flush: Instant::now(),
            interned: FxHashMap::default(),
            scratch: Vec::new(),
            system: None,
            vu: String::new(),
            iter: String::new(),
        }
    }
}

impl SampleBuffer {
    /// A buffer whose tag sets follow `systemTags`.
    pub(crate) fn with_system_tags(system: Option<SystemTags>) -> Self {
        SampleBuffer {
            system,
            ..SampleBuffer::default()
        }
    }

    /// Records the VU and iteration for the `vu`/`iter` tags (only when enabled).
    pub(crate) fn set_iteration(&mut self, vu: u64, iter: u64) {
        if self.system.as_ref().is_some_and(|s| s.vu || s.iter) {
            self.vu = vu.to_string();
            self.iter = iter.to_string();
        }
    }

    /// The interned tag set for `pairs` (after `systemTags` left some out or added `vu` and
    /// `iter`); later pairs win over earlier ones with the same key.
    pub(crate) fn tags(&mut self, pairs: &[(&str, &str)]) -> TagSet {
        let Some(system) = self.system.take() else {
            return self.interned_tags(pairs);
        };
        let (vu, iter) = (std::mem::take(&mut self.vu), std::mem::take(&mut self.iter));
        let mut kept: Vec<(&str, &str)> = pairs
            .iter()
            .filter(|(k, _)| !system.disabled.contains(k))
            .copied()
            .collect();
        if system.vu {
            kept.push(("vu", &vu));
        }
        if system.iter {
            kept.push(("iter", &iter));
        }
        let tags = self.interned_tags(&kept);
        self.system = Some(system);
        self.vu = vu;
        self.iter = iter;
        tags
    }

    fn interned_tags(&mut self, pairs: &[(&str, &str)]) -> TagSet {
        // Dedupe by key keeping the last occurrence, without allocating: sort indexes.
        self.scratch.clear();
        self.scratch.extend((0..pairs.len()).map(|i| (i, 0)));
        self.scratch
            .sort_by(|a, b| pairs[a.0].0.cmp(pairs[b.0].0).then(a.0.cmp(&b.0)));
        // A fast, unkeyed hash is fine: a hit is verified against the cached set below.
        let mut h = FxHasher::default();
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

    #[test]
    fn system_tags_filter_and_add_vu_iter() {
        let opts = crate::RunOptions::from_options(
            serde_json::json!({"systemTags": ["method", "vu", "iter"]})
                .as_object()
                .unwrap(),
        )
        .unwrap();
        let mut b = SampleBuffer::with_system_tags(opts.system_tags);
        b.set_iteration(7, 3);
        let t = b.tags(&[("url", "u"), ("method", "GET"), ("custom", "c")]);
        assert_eq!(t.get("url"), None);
        assert_eq!(t.get("method"), Some("GET"));
        assert_eq!(t.get("custom"), Some("c"), "user tags stay");
        assert_eq!(t.get("vu"), Some("7"));
        assert_eq!(t.get("iter"), Some("3"));
    }
}
