//! How late the worker threads' event loops ran: the load generator's own saturation.
//!
//! Each worker runs a probe that asks to wake every [`PERIOD`] and records how much later it
//! actually woke. A worker busy with JavaScript, a garbage-collection pause or too many VUs
//! wakes late, and so does every VU on it: requests are sent late and responses read late,
//! which a latency figure alone does not tell apart from a slow target.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often each worker probes its own loop.
pub const PERIOD: Duration = Duration::from_millis(20);

/// Upper bounds (ms) of the lag buckets; the last bucket is everything above.
const BOUNDS_MS: [u64; 9] = [1, 2, 5, 10, 20, 50, 100, 200, 500];

/// Delays observed on all workers, in buckets: event-loop lag here, and the engine's collection
/// pauses where a VU factory records them.
#[derive(Debug, Default)]
pub struct LagMonitor {
    buckets: [AtomicU64; BOUNDS_MS.len() + 1],
    max_us: AtomicU64,
}

impl LagMonitor {
    /// Records one probe's lateness.
    pub fn record(&self, lag: Duration) {
        let ms = lag.as_micros() as u64 / 1000;
        let i = BOUNDS_MS
            .iter()
            .position(|b| ms < *b)
            .unwrap_or(BOUNDS_MS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.max_us
            .fetch_max(lag.as_micros() as u64, Ordering::Relaxed);
    }

    /// Probes recorded.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }

    /// The largest lag seen.
    pub fn max(&self) -> Duration {
        Duration::from_micros(self.max_us.load(Ordering::Relaxed))
    }

    /// Forgets what was recorded: the run starts now. Creating the initial VUs holds each
    /// worker for a while before any VU runs, which is not lag any VU suffers.
    pub fn reset(&self) {
        for b in &self.buckets {
            b.store(0, Ordering::Relaxed);
        }
        self.max_us.store(0, Ordering::Relaxed);
    }

    /// A lower bound for the `pct` percentile of the lag (the lower edge of its bucket), or
    /// `None` before any probe: the percentile is known to be at least this.
    pub fn percentile_floor(&self, pct: f64) -> Option<Duration> {
        let i = self.bucket_of(pct)?;
        Some(match i {
            0 => Duration::ZERO,
            _ => Duration::from_millis(BOUNDS_MS[i - 1]),
        })
    }

    /// An upper bound for the `pct` percentile of the lag (bucket resolution), or `None`
    /// before any probe.
    pub fn percentile_bound(&self, pct: f64) -> Option<Duration> {
        let i = self.bucket_of(pct)?;
        Some(match BOUNDS_MS.get(i) {
            Some(ms) => Duration::from_millis(*ms).min(self.max()),
            None => self.max(),
        })
    }

    /// The bucket holding the `pct` percentile, or `None` before any probe.
    fn bucket_of(&self, pct: f64) -> Option<usize> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = ((pct / 100.0) * n as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b.load(Ordering::Relaxed);
            if seen >= rank {
                return Some(i);
            }
        }
        // Probes recorded while counting: the last bucket.
        Some(self.buckets.len() - 1)
    }
}

/// Probes the current thread's event loop until the runtime ends.
pub async fn probe(monitor: std::sync::Arc<LagMonitor>) {
    loop {
        let planned = tokio::time::Instant::now() + PERIOD;
        tokio::time::sleep_until(planned).await;
        // tokio's timer rounds up to its 1 ms tick; that much is not the worker's fault.
        let late = tokio::time::Instant::now().saturating_duration_since(planned);
        monitor.record(late.saturating_sub(Duration::from_millis(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_bucket_bounds() {
        let m = LagMonitor::default();
        assert_eq!(m.percentile_bound(99.0), None);
        for _ in 0..98 {
            m.record(Duration::from_micros(300));
        }
        m.record(Duration::from_millis(30));
        m.record(Duration::from_millis(120));
        assert_eq!(m.percentile_bound(50.0), Some(Duration::from_millis(1)));
        assert_eq!(m.percentile_bound(99.0), Some(Duration::from_millis(50)));
        assert_eq!(m.percentile_bound(100.0), Some(Duration::from_millis(120)));
        assert_eq!(m.max(), Duration::from_millis(120));
        assert_eq!(m.percentile_floor(50.0), Some(Duration::ZERO));
        assert_eq!(m.percentile_floor(99.0), Some(Duration::from_millis(20)));
        assert_eq!(m.percentile_floor(100.0), Some(Duration::from_millis(100)));
        m.reset();
        assert_eq!((m.count(), m.max()), (0, Duration::ZERO));
    }

    #[test]
    fn a_p99_below_ten_ms_has_a_floor_below_ten_ms() {
        // 2 % of the probes 7 ms late: p(99) is in [5, 10) ms, so it is not known to be 10.
        let m = LagMonitor::default();
        for i in 0..100 {
            m.record(Duration::from_millis(if i < 98 { 0 } else { 7 }));
        }
        assert_eq!(m.percentile_bound(99.0), Some(Duration::from_millis(7)));
        assert_eq!(m.percentile_floor(99.0), Some(Duration::from_millis(5)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_blocked_loop_shows_as_lag() {
        let m = std::sync::Arc::new(LagMonitor::default());
        let local = tokio::task::LocalSet::new();
        local.spawn_local(probe(m.clone()));
        local
            .run_until(async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                // Block the thread as a long-running script would.
                std::thread::sleep(Duration::from_millis(60));
                tokio::time::advance(Duration::from_millis(60)).await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            })
            .await;
        assert!(m.count() >= 5);
        assert!(m.max() >= Duration::from_millis(30), "{:?}", m.max());
    }
}
