//! How late the worker threads' event loops ran: the load generator's own saturation.
//!
//! Each worker runs a probe that asks to wake every [`PERIOD`] and records how much later it
//! actually woke. A worker busy with JavaScript, a garbage-collection pause or too many VUs
//! wakes late, and so does every VU on it: requests are sent late and responses read late,
//! which a latency figure alone does not tell apart from a slow target.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often each worker probes its own loop while the workers are few.
pub const PERIOD: Duration = Duration::from_millis(20);

/// Workers per core that probe every [`PERIOD`]. A probe is a wake-up of its thread (a
/// timer, an `epoll_wait` return, a context switch): 2,084 workers (100,000 VUs) probing
/// every 20 ms woke the machine 100,000 times a second.
const PROBING_PER_CORE: usize = 4;

/// How often each of `workers` workers on `cores` cores probes: every [`PERIOD`] up to
/// [`PROBING_PER_CORE`] workers a core, less often past that, so that all probes together
/// wake the machine no more often than that many workers would. Each worker still probes
/// at random moments of its own, so the p(99) over all probes keeps its meaning.
pub fn period_for(workers: usize, cores: usize) -> Duration {
    let share = workers.div_ceil(PROBING_PER_CORE * cores.max(1)).max(1);
    PERIOD * u32::try_from(share).unwrap_or(u32::MAX)
}

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

/// Probes the current thread's event loop every `period` until the runtime ends.
///
/// The wake-ups are planned on a fixed grid, and every grid point that passed while the
/// loop was busy is recorded with its own lateness: a stall of `B` counts `B / period`
/// samples, as it would delay that share of the events that fell into it. Planning each
/// wake-up from the last one instead counted one sample per stall whatever its length, so
/// the share of late samples, and the p(99), shrank as the period grew.
pub async fn probe(monitor: std::sync::Arc<LagMonitor>, period: Duration) {
    let mut planned = tokio::time::Instant::now() + period;
    loop {
        tokio::time::sleep_until(planned).await;
        let now = tokio::time::Instant::now();
        while planned <= now {
            // tokio's timer rounds up to its 1 ms tick; that much is not the worker's fault.
            let late = now.saturating_duration_since(planned);
            monitor.record(late.saturating_sub(Duration::from_millis(1)));
            planned += period;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_stall_counts_every_probe_it_delayed() {
        let m = std::sync::Arc::new(LagMonitor::default());
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                tokio::task::spawn_local(probe(m.clone(), PERIOD));
                // Two probes on time (at 20 and 40 ms), then the loop is stuck for 100 ms.
                tokio::time::sleep(PERIOD * 2 + Duration::from_millis(5)).await;
                assert_eq!(m.count(), 2);
                tokio::time::advance(Duration::from_millis(100)).await;
                tokio::time::sleep(Duration::from_millis(1)).await;
            })
            .await;
        // The probes planned at 60, 80, 100, 120 and 140 ms all fired at 145 ms.
        assert_eq!(m.count(), 7);
        assert_eq!(m.max(), Duration::from_millis(84));
    }

    #[test]
    fn many_workers_probe_less_often_together() {
        assert_eq!(period_for(1, 2), PERIOD);
        assert_eq!(period_for(8, 2), PERIOD);
        assert_eq!(period_for(9, 2), PERIOD * 2);
        // 5000 VUs on 2 cores: 105 workers.
        assert_eq!(period_for(105, 2), PERIOD * 14);
        // 100,000 VUs on 16 cores: 2,084 workers wake ~3,200 times a second in all.
        assert_eq!(period_for(2084, 16), PERIOD * 33);
        assert_eq!(period_for(3, 0), PERIOD);
    }

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
        local.spawn_local(probe(m.clone(), PERIOD));
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
