//! The pauses of Boa's collector on the threads that run VUs.
//!
//! A collection marks the heap of every VU on its thread and stops all of them meanwhile, so
//! its pause is time in which no VU of that worker sends or reads. The collector reports each
//! collection to a hook (vendored boa_gc, patch 12); the thread records its pause in the
//! run's monitor, which the end of the test reads beside the event-loop lag.

use std::cell::RefCell;
use std::sync::Arc;

use rk6_scheduler::LagMonitor;

thread_local! {
    /// Where this thread's collections are recorded.
    static MONITOR: RefCell<Option<Arc<LagMonitor>>> = const { RefCell::new(None) };
}

/// Records the pauses of the current thread's collections in `monitor` from now on.
pub(crate) fn watch(monitor: &Arc<LagMonitor>) {
    MONITOR.with_borrow_mut(|m| {
        if !m.as_ref().is_some_and(|m| Arc::ptr_eq(m, monitor)) {
            *m = Some(monitor.clone());
        }
    });
    boa_gc::set_collection_hook(Some(record));
}

fn record(c: &boa_gc::Collection) {
    // `try_with`: a collection while the thread's locals are being destroyed has nowhere to go.
    let _ = MONITOR.try_with(|m| {
        if let Some(m) = m.borrow().as_ref() {
            m.record(c.pause);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watched_thread_records_each_collection() {
        std::thread::spawn(|| {
            let monitor = Arc::new(LagMonitor::default());
            boa_gc::force_collect();
            watch(&monitor);
            drop(boa_gc::Gc::new([0_u8; 64]));
            boa_gc::force_collect();
            assert_eq!(monitor.count(), 1);
            // Nothing left to collect: the collector does not run, so nothing is recorded.
            boa_gc::force_collect();
            assert_eq!(monitor.count(), 1);
        })
        .join()
        .unwrap();
    }
}
