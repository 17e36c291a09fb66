//! Several heaps on one thread ([`crate::Heap`]): a collection walks only the active one.

use super::run_test;
use crate::{force_collect, swap_heap, Gc, GcRefCell, Heap, WeakGc, BOA_GC};

fn nodes() -> usize {
    BOA_GC.with(|gc| gc.borrow().strongs.len())
}

#[test]
fn a_collection_frees_only_the_active_heap_garbage() {
    run_test(|| {
        let mut other = Heap::new();
        swap_heap(&mut other);
        drop(Gc::new(1u64));
        drop(Gc::new(2u64));
        assert_eq!(nodes(), 2);
        swap_heap(&mut other);

        drop(Gc::new(3u64));
        force_collect();
        assert_eq!(nodes(), 0, "the active heap's garbage is gone");
        assert!(other.bytes_allocated() > 0, "the other heap was not touched");

        swap_heap(&mut other);
        force_collect();
        assert_eq!(nodes(), 0);
        swap_heap(&mut other);
    });
}

#[test]
fn a_value_referenced_from_another_heap_stays_alive() {
    run_test(|| {
        // `shared` lives in the thread's heap; `holder` in another one references it and
        // is referenced by nothing but a Rust handle.
        let shared = Gc::new(GcRefCell::new(7u64));
        let mut other = Heap::new();
        swap_heap(&mut other);
        let holder = Gc::new(GcRefCell::new(Some(shared.clone())));
        swap_heap(&mut other);
        drop(shared);

        // Collected from the thread's heap: `shared` is referenced from the other heap.
        force_collect();
        assert_eq!(nodes(), 1);
        {
            let inner = holder.borrow();
            assert_eq!(*inner.as_ref().unwrap().borrow(), 7);
        }

        // Collected from the other heap, more than once: the shared value is neither
        // counted nor marked, so nothing of the thread's heap is left flagged.
        swap_heap(&mut other);
        force_collect();
        force_collect();
        assert_eq!(nodes(), 1, "`holder` is rooted");
        swap_heap(&mut other);
        force_collect();
        assert_eq!(nodes(), 1);
        assert_eq!(*holder.borrow().as_ref().unwrap().borrow(), 7);

        // Once the holder goes, the other heap frees it, and then the thread's heap its value.
        drop(holder);
        swap_heap(&mut other);
        force_collect();
        assert_eq!(nodes(), 0);
        swap_heap(&mut other);
        force_collect();
        assert_eq!(nodes(), 0);
    });
}

#[test]
fn a_value_of_another_heap_reachable_only_from_a_collected_heap_is_kept() {
    run_test(|| {
        let mut other = Heap::new();
        swap_heap(&mut other);
        let in_other = Gc::new(GcRefCell::new(5u64));
        swap_heap(&mut other);
        let holder = Gc::new(GcRefCell::new(Some(in_other.clone())));
        drop(in_other);
        drop(holder);
        force_collect();
        assert_eq!(nodes(), 0, "the holder in the thread's heap is freed");
        // Its reference went with it, so the other heap can free its value now.
        swap_heap(&mut other);
        assert_eq!(nodes(), 1);
        force_collect();
        assert_eq!(nodes(), 0);
        swap_heap(&mut other);
    });
}

#[test]
fn a_weak_key_in_another_heap_is_live() {
    run_test(|| {
        let key = Gc::new(GcRefCell::new(1u64));
        let mut other = Heap::new();
        swap_heap(&mut other);
        let weak = WeakGc::new(&key);
        force_collect();
        assert!(weak.upgrade().is_some());
        swap_heap(&mut other);
        force_collect();
        assert!(weak.upgrade().is_some());
        drop(weak);
    });
}

#[test]
fn a_dropped_heap_joins_the_active_one() {
    run_test(|| {
        let mut other = Heap::new();
        swap_heap(&mut other);
        let kept = Gc::new(GcRefCell::new(9u64));
        drop(Gc::new(0u64));
        swap_heap(&mut other);
        drop(other);
        assert_eq!(nodes(), 2);
        force_collect();
        assert_eq!(nodes(), 1);
        assert_eq!(*kept.borrow(), 9);
    });
}
