mod miri {
    use boa_macros::{Finalize, Trace};

    use super::super::{Harness, run_test};
    use crate::{Gc, GcBox, GcRefCell, force_collect};

    #[test]
    fn gc_basic_cell_allocation() {
        run_test(|| {
            let gc_cell = Gc::new(GcRefCell::new(16_u16));

            force_collect();
            Harness::assert_collections(1);
            Harness::assert_bytes_allocated();
            assert_eq!(*gc_cell.borrow_mut(), 16);
        });
    }

    #[test]
    fn gc_basic_pointer_alloc() {
        run_test(|| {
            let gc = Gc::new(16_u8);

            force_collect();
            Harness::assert_collections(1);
            Harness::assert_bytes_allocated();
            assert_eq!(*gc, 16);

            drop(gc);
            force_collect();
            Harness::assert_collections(2);
            Harness::assert_empty_gc();
        });
    }

    #[test]
    // Takes too long to finish in miri
    #[cfg_attr(miri, ignore)]
    fn gc_recursion() {
        run_test(|| {
            #[derive(Debug, Finalize, Trace)]
            struct S {
                i: usize,
                next: Option<Gc<S>>,
            }

            const SIZE: usize = size_of::<GcBox<S>>();
            const COUNT: usize = 1_000_000;

            let mut root = Gc::new(S { i: 0, next: None });
            for i in 1..COUNT {
                root = Gc::new(S {
                    i,
                    next: Some(root),
                });
            }

            Harness::assert_bytes_allocated();
            Harness::assert_exact_bytes_allocated(SIZE * COUNT);

            drop(root);
            force_collect();
            Harness::assert_empty_gc();
        });
    }
}

mod collection_hook {
    use std::cell::Cell;

    use super::super::run_test;
    use crate::{Collection, Gc, force_collect, set_collection_hook};

    thread_local!(static SEEN: Cell<Option<(usize, usize)>> = const { Cell::new(None) });

    fn record(c: &Collection) {
        SEEN.with(|s| s.set(Some((c.bytes_before, c.bytes_after))));
    }

    #[test]
    fn the_hook_sees_each_collection_and_what_it_freed() {
        run_test(|| {
            set_collection_hook(Some(record));
            let kept = Gc::new(1_u64);
            drop(Gc::new([0_u8; 256]));
            force_collect();
            let (before, after) = SEEN.with(Cell::take).expect("the hook ran");
            assert!(before > after, "{before} -> {after}");
            assert!(after > 0, "the live box is still counted");

            set_collection_hook(None);
            drop(Gc::new([0_u8; 256]));
            force_collect();
            assert_eq!(SEEN.with(Cell::get), None, "a cleared hook is not called");
            assert_eq!(*kept, 1);
        });
    }
}

mod heap_headroom {
    use crate::{BOA_GC, Gc, set_used_space_percentage};

    /// The collection threshold after ~1.1 MiB of live boxes were allocated on a fresh
    /// thread: past the first threshold (1 MiB), so one collection ran and found them live.
    fn threshold_with(percent: Option<usize>) -> usize {
        std::thread::spawn(move || {
            if let Some(p) = percent {
                set_used_space_percentage(p);
            }
            let live: Vec<Gc<[u8; 1024]>> = (0..1100).map(|_| Gc::new([0; 1024])).collect();
            let (threshold, collections) = BOA_GC.with(|gc| {
                let gc = gc.borrow();
                (gc.config.threshold, gc.runtime.collections)
            });
            assert_eq!(collections, 1);
            drop(live);
            threshold
        })
        .join()
        .unwrap()
    }

    #[test]
    fn a_lower_used_space_percentage_leaves_more_headroom() {
        let default = threshold_with(None);
        let half = threshold_with(Some(50));
        assert!(default > 1_048_576, "the live heap raised it: {default}");
        assert!(half > default * 13 / 10, "70 %: {default}, 50 %: {half}");
    }

    #[test]
    #[should_panic(expected = "the used space percentage is 1 to 100")]
    fn zero_is_refused() {
        set_used_space_percentage(0);
    }
}
