//! GC domains: the VUs of a worker thread in groups with a Boa heap each.
//!
//! Boa collects a thread's heap all at once, stopping the thread, so the pause grows with
//! the VUs whose objects live in it. A worker thread used to hold at most 48 VUs for that
//! reason, which made the thread count grow with the VU count (250,000 VUs: ~5,200 threads
//! and event loops, past the process's open-file limit). Now a worker holds any number of
//! VUs, in domains of at most [`PER_DOMAIN`], each with its own [`boa_gc::Heap`] (vendor
//! patch 19): the domain of the VU about to run is made the thread's active heap, so what the
//! VU allocates lands there and a collection walks only its domain.
//!
//! Values shared by the VUs of a thread (the frozen built-ins, shared module exports) live
//! in whichever heap was active when they were made; a collection neither marks nor traces
//! into another heap, and a value referenced from another heap counts as a root, so the
//! sharing stays safe (design 004, "GC domains").

use std::cell::{Cell, RefCell};

/// The most VUs one domain holds: the heap one collection walks. 48 kept pauses near 10 ms
/// at 20,000 VUs when it was the VUs per thread; 128 paused up to 185 ms (design 004).
pub(crate) const PER_DOMAIN: u64 = 48;

/// No domain is active: the thread's own heap is.
const NONE: usize = usize::MAX;

struct Domain {
    /// The domain's heap while another is active; the displaced heap while it is active.
    heap: boa_gc::Heap,
    /// VUs living in the domain.
    vus: u64,
}

thread_local! {
    static DOMAINS: RefCell<Vec<Domain>> = const { RefCell::new(Vec::new()) };
    static ACTIVE: Cell<usize> = const { Cell::new(NONE) };
    /// VUs placed on this thread so far, which fills the domains in order.
    static PLACED: Cell<u64> = const { Cell::new(0) };
}

/// The domain of a VU; made active while the VU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DomainId(usize);

impl DomainId {
    /// Its index among the thread's domains.
    pub(crate) fn index(self) -> usize {
        self.0
    }
}

/// Places a new VU of this thread in a domain: the current one until it holds
/// [`PER_DOMAIN`], then a new one.
pub(crate) fn place() -> DomainId {
    let n = PLACED.with(|p| p.replace(p.get() + 1));
    let index = (n / PER_DOMAIN) as usize;
    DOMAINS.with(|d| {
        let mut domains = d.borrow_mut();
        while domains.len() <= index {
            domains.push(Domain {
                heap: boa_gc::Heap::new(),
                vus: 0,
            });
        }
        domains[index].vus += 1;
    });
    DomainId(index)
}

/// A VU of the domain was dropped.
pub(crate) fn leave(id: DomainId) {
    let _ = DOMAINS.try_with(|d| {
        if let Some(domain) = d.borrow_mut().get_mut(id.0) {
            domain.vus = domain.vus.saturating_sub(1);
        }
    });
}

/// VUs living in the domain.
pub(crate) fn vus(id: DomainId) -> u64 {
    DOMAINS.with(|d| d.borrow().get(id.0).map_or(0, |domain| domain.vus))
}

/// The domain whose heap is active, if any.
pub(crate) fn active() -> Option<DomainId> {
    let a = ACTIVE.with(Cell::get);
    (a != NONE).then_some(DomainId(a))
}

/// Makes `id`'s heap the thread's active one. It stays active after the VU's poll, until
/// another domain's VU runs: a worker whose VUs share one domain never switches heaps, and
/// what the thread allocates between polls (nothing of a VU's) is as safe in one heap as in
/// another.
pub(crate) fn enter(id: DomainId) {
    // `try_with`: a VU dropped while the thread's locals are being destroyed allocates
    // nothing, and has no heap left to enter.
    let Ok(active) = ACTIVE.try_with(Cell::get) else {
        return;
    };
    if active != id.0 {
        switch(active, id.0);
    }
}

/// Takes `from`'s heap out of the active slot (putting the thread's own heap back), then
/// puts `to`'s in; either may be [`NONE`].
fn switch(from: usize, to: usize) {
    let _ = DOMAINS.try_with(|d| {
        let mut domains = d.borrow_mut();
        if let Some(domain) = domains.get_mut(from) {
            boa_gc::swap_heap(&mut domain.heap);
        }
        if let Some(domain) = domains.get_mut(to) {
            boa_gc::swap_heap(&mut domain.heap);
        }
    });
    let _ = ACTIVE.try_with(|a| a.set(to));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_a_fresh_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(f).join().unwrap();
    }

    #[test]
    fn domains_fill_in_order() {
        on_a_fresh_thread(|| {
            let ids: Vec<_> = (0..PER_DOMAIN * 2 + 1).map(|_| place()).collect();
            assert_eq!(ids[0].index(), 0);
            assert_eq!(ids[PER_DOMAIN as usize - 1].index(), 0);
            assert_eq!(ids[PER_DOMAIN as usize].index(), 1);
            assert_eq!(ids[PER_DOMAIN as usize * 2].index(), 2);
            assert_eq!(vus(ids[0]), PER_DOMAIN);
            leave(ids[0]);
            assert_eq!(vus(ids[0]), PER_DOMAIN - 1);
        });
    }

    #[test]
    fn what_a_vu_allocates_lands_in_its_domain_and_is_collected_there() {
        on_a_fresh_thread(|| {
            let a = place();
            for _ in 1..PER_DOMAIN {
                place();
            }
            let b = place();
            assert_eq!(b, DomainId(1));
            assert_eq!(active(), None);
            enter(b);
            assert_eq!(active(), Some(b));
            drop(boa_gc::Gc::new([0u8; 4096]));
            enter(a);
            assert_eq!(active(), Some(a));
            let kept = boa_gc::Gc::new(1u32);
            enter(b);
            let bytes = |id: DomainId| DOMAINS.with(|d| d.borrow()[id.0].heap.bytes_allocated());
            assert!(bytes(a) > 0 && bytes(a) < 4096, "a: {}", bytes(a));
            boa_gc::force_collect();
            enter(a);
            assert_eq!(bytes(b), 0, "b's garbage is collected in b");
            boa_gc::force_collect();
            enter(b);
            assert!(bytes(a) > 0, "a's value is still referenced");
            assert_eq!(*kept, 1);
        });
    }
}
