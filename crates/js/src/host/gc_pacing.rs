//! Paces Boa's collector by the native memory that JS garbage keeps alive.
//!
//! Boa collects a thread's heap when the bytes of its GC boxes pass a threshold that grows
//! with the live heap. A dead response object is a small GC box holding much more native
//! memory (its body, header maps, request echo), which the collector does not see: with
//! every VU's realm alive on a worker, it let ~150 KiB of such garbage per VU pile up before
//! collecting, and memory per VU grew for the first minute of a test (design 004).
//!
//! So each GC domain (a worker's VUs in groups with a heap each, `gc_domains`) also counts
//! the native bytes its responses hold and collects once they pass a budget: 32 KiB per VU
//! of the domain, at least 2 MiB (what a worker had when it was one heap). A collection
//! marks every realm of the domain, so the floor keeps a busy domain with few VUs on Boa's
//! own pace, and the count starts at a different point in each domain, so domains under the
//! same load do not all stop at the same moment.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::host::gc_domains::{self, DomainId};

/// Native bytes allowed per VU of a domain between collections.
const PER_VU: u64 = 32 * 1024;
/// The least budget of a domain, whatever its VU count.
const FLOOR: u64 = 2 * 1024 * 1024;
/// How full a domain's heap may stay after one of Boa's own collections before the next
/// threshold is raised (Boa's default 70). At 50 a JS-heavy worker collects half as often:
/// the 50-VU journey 41–44 collections in 10 s instead of 82–87, −3.3 % instructions, ~35 KiB
/// more RSS a VU; tests of `sleep(1)` at 1000 and 5000 VUs, collected by the budget above,
/// do not change (vendor/README.md, patch 17).
const USED_SPACE_PERCENT: usize = 50;

/// A count not yet started: the domain's first response picks its starting point.
const UNSTARTED: u64 = u64::MAX;

thread_local! {
    /// Native bytes held by responses made since each domain's last collection, by index.
    static HELD: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Domains that have started counting, process-wide, to spread their starting points.
static STARTED: AtomicU64 = AtomicU64::new(0);

fn budget(domain: DomainId) -> u64 {
    (gc_domains::vus(domain) * PER_VU).max(FLOOR)
}

/// A VU was created in `domain`, whose heap is active.
pub(crate) fn vu_added(domain: DomainId) {
    if gc_domains::vus(domain) == 1 {
        boa_gc::set_used_space_percentage(USED_SPACE_PERCENT);
    }
}

/// A response object now holds `bytes` of native memory (in the active domain).
pub(crate) fn held(bytes: usize) {
    let Some(domain) = gc_domains::active() else {
        return;
    };
    HELD.with(|h| {
        let mut held = h.borrow_mut();
        let i = domain.index();
        if held.len() <= i {
            held.resize(i + 1, UNSTARTED);
        }
        let now = match held[i] {
            // First use in this domain: start part-way, at a golden-ratio step per domain.
            UNSTARTED => {
                let n = STARTED.fetch_add(1, Ordering::Relaxed);
                (budget(domain) as f64 * ((n as f64 * 0.618_034) % 1.0)) as u64
            }
            n => n,
        };
        held[i] = now.saturating_add(bytes as u64);
    });
}

/// Collects `domain`'s heap if its responses hold more than the budget; call between
/// iterations, where the VU is not inside a native call. Returns whether it did.
pub(crate) fn collect_if_due(domain: DomainId) -> bool {
    let due = HELD.with(|h| {
        let mut held = h.borrow_mut();
        match held.get_mut(domain.index()) {
            Some(n) if *n != UNSTARTED && *n > budget(domain) => {
                *n = 0;
                true
            }
            _ => false,
        }
    });
    if due {
        gc_domains::enter(domain);
        boa_gc::force_collect();
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
            let domain = gc_domains::place();
            for _ in 1..gc_domains::PER_DOMAIN {
                gc_domains::place();
            }
            let full = gc_domains::PER_DOMAIN * PER_VU;
            assert_eq!(budget(domain), full.max(FLOOR));
            let second = gc_domains::place();
            assert_eq!(budget(second), FLOOR, "few VUs: the floor");
            assert!(!collect_if_due(domain), "nothing held yet");
            gc_domains::enter(second);
            held(0);
            let start = HELD.with(|h| h.borrow()[second.index()]);
            assert!(
                start < budget(second),
                "a domain starts part-way into its budget"
            );
            held((budget(second) - start) as usize);
            assert!(!collect_if_due(second), "at the budget, not past it");
            held(1);
            assert!(!collect_if_due(domain), "another domain's count");
            assert!(collect_if_due(second));
            assert_eq!(HELD.with(|h| h.borrow()[second.index()]), 0);
            assert!(!collect_if_due(second));
        })
        .join()
        .unwrap();
    }
}
