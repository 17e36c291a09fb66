//! k6's `rps`: one limiter shared by every VU of the test, lock-free.
//!
//! A token bucket holding one token (what k6's limiter does): each request takes the next
//! free slot, `1/rps` after the previous one, and sleeps until it comes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A global requests-per-second limit.
#[derive(Debug)]
pub struct RateLimiter {
    origin: Instant,
    interval_ns: u64,
    /// Nanoseconds after `origin` of the next free slot.
    next_ns: AtomicU64,
}

impl RateLimiter {
    /// A limiter letting `rps` requests per second through (`rps` > 0).
    pub fn new(rps: u64) -> Self {
        Self {
            origin: Instant::now(),
            interval_ns: 1_000_000_000 / rps.max(1),
            next_ns: AtomicU64::new(0),
        }
    }

    /// Reserves the next slot and returns how long to wait for it.
    fn reserve(&self) -> Duration {
        let now = self.origin.elapsed().as_nanos() as u64;
        let mut cur = self.next_ns.load(Ordering::Relaxed);
        loop {
            let slot = cur.max(now);
            match self.next_ns.compare_exchange_weak(
                cur,
                slot + self.interval_ns,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Duration::from_nanos(slot - now),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Waits until this request may go.
    pub async fn wait(&self) {
        let d = self.reserve();
        if !d.is_zero() {
            tokio::time::sleep(d).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_spaced_by_the_interval() {
        let l = RateLimiter::new(10);
        // The first request goes at once; the next ones queue 100 ms apart.
        let waits: Vec<_> = (0..4).map(|_| l.reserve()).collect();
        assert!(waits[0] < Duration::from_millis(5), "{waits:?}");
        for (i, w) in waits.iter().enumerate().skip(1) {
            let expect = Duration::from_millis(100 * i as u64);
            assert!(
                *w <= expect && *w + Duration::from_millis(50) > expect,
                "{waits:?}"
            );
        }
    }

    #[test]
    fn shared_between_threads_no_slot_is_given_twice() {
        let l = std::sync::Arc::new(RateLimiter::new(1000));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || (0..250).map(|_| l.reserve()).max().unwrap())
            })
            .collect();
        let longest = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .max()
            .unwrap();
        // 1000 reservations at 1 ms each: the last waits about a second.
        assert!(longest > Duration::from_millis(900), "{longest:?}");
    }
}
