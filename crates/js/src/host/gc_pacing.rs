//! Paces Boa's collector by the native memory that JS garbage keeps alive.
//!
//! Boa collects a thread's heap when the bytes of its GC boxes pass a threshold that grows
//! with the live heap. A dead response object is a small GC box holding much more native
//! memory (its body, header maps, request echo), which the collector does not see: with
//! every VU's realm alive on a worker, it let ~150 KiB of such garbage per VU pile up before
//! collecting, and memory per VU grew for the first minute of a test (design 004).
//!
//! So each worker also counts the native bytes its responses hold and collects once they
//! pass a budget: 32 KiB per VU on the worker, at least 2 MiB. A collection marks every
//! realm on the worker (~0.1 ms per VU), so the floor keeps a busy worker with few VUs on
//! Boa's own pace, and the count starts at a different point on each worker, so workers
//! under the same load do not all stop at the same moment.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Native bytes allowed per VU of a worker between collections.
const PER_VU: u64 = 32 * 1024;
/// The least budget of a worker, whatever its VU count.
const FLOOR: u64 = 2 * 1024 * 1024;
/// How full a worker's heap may stay after one of Boa's own collections before the next
/// threshold is raised (Boa's default 70). At 50 a JS-heavy worker collects half as often:
/// the 50-VU journey 41–44 collections in 10 s instead of 82–87, −3.3 % instructions, ~35 KiB
/// more RSS a VU; tests of `sleep(1)` at 1000 and 5000 VUs, collected by the budget above,
/// do not change (vendor/README.md, patch 17).
const USED_SPACE_PERCENT: usize = 50;

thread_local! {
    /// Native bytes held by responses made since this worker's last collection.
    static HELD: Cell<u64> = const { Cell::new(u64::MAX) };
    /// VUs living on this thread.
    static VUS: Cell<u64> = const { Cell::new(0) };
}

/// Workers that have started counting, to spread their starting points.
static WORKERS: AtomicU64 = AtomicU64::new(0);

fn budget() -> u64 {
    (VUS.with(Cell::get) * PER_VU).max(FLOOR)
}

/// A VU was created on this thread.
pub(crate) fn vu_added() {
    VUS.with(|v| {
        if v.get() == 0 {
            boa_gc::set_used_space_percentage(USED_SPACE_PERCENT);
        }
        v.set(v.get() + 1)
    });
}

/// A VU on this thread was dropped.
pub(crate) fn vu_removed() {
    VUS.with(|v| v.set(v.get().saturating_sub(1)));
}

/// A response object now holds `bytes` of native memory.
pub(crate) fn held(bytes: usize) {
    HELD.with(|h| {
        let now = match h.get() {
            // First use on this worker: start part-way, at a golden-ratio step per worker.
            u64::MAX => {
                let n = WORKERS.fetch_add(1, Ordering::Relaxed);
                (budget() as f64 * ((n as f64 * 0.618_034) % 1.0)) as u64
            }
            held => held,
        };
        h.set(now.saturating_add(bytes as u64));
    });
}

/// Collects this worker's heap if its responses hold more than the budget; call between
/// iterations, where no VU of the worker is inside a native call. Returns whether it did.
pub(crate) fn collect_if_due() -> bool {
    let due = HELD.with(|h| h.get() != u64::MAX && h.get() > budget());
    if due {
        boa_gc::force_collect();
        HELD.with(|h| h.set(0));
    }
    due
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_once_the_budget_is_passed_and_starts_over() {
        // Run on a fresh thread: the counters are per thread.
        std::thread::spawn(|| {
            for _ in 0..100 {
                vu_added();
            }
            assert_eq!(budget(), 100 * PER_VU);
            assert!(!collect_if_due(), "nothing held yet");
            held(0);
            let start = HELD.with(Cell::get);
            assert!(start < budget(), "a worker starts part-way into its budget");
            held((budget() - start) as usize);
            assert!(!collect_if_due(), "at the budget, not past it");
            held(1);
            assert!(collect_if_due());
            assert_eq!(HELD.with(Cell::get), 0);
            assert!(!collect_if_due());
            for _ in 0..100 {
                vu_removed();
            }
            assert_eq!(budget(), FLOOR, "few VUs: the floor");
        })
        .join()
        .unwrap();
    }
}
