//! State modules keep once per test run and share between all its VUs (on any thread):
//! `SharedArray` data, warnings given once per run. The run's `Program` holds it (the
//! options-reading init pass and the run's VUs share the program, not a `Shared`), instead
//! of process statics, so two runs in one process (tests, an embedding) start from nothing.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex};

/// The run-wide state of each module that has some, made on first use.
#[derive(Default)]
pub(crate) struct RunScoped(Mutex<Vec<Arc<dyn Any + Send + Sync>>>);

impl std::fmt::Debug for RunScoped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunScoped")
    }
}

impl RunScoped {
    /// The run's `T`, made with `T::default()` on first use.
    pub(crate) fn get<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut items = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let found = items
            .iter()
            .find(|i| (***i).type_id() == TypeId::of::<T>())
            .cloned();
        if let Some(item) = found.and_then(|i| i.downcast::<T>().ok()) {
            return item;
        }
        let made = Arc::new(T::default());
        items.push(made.clone());
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type_and_run() {
        #[derive(Default)]
        struct Flag(std::sync::atomic::AtomicBool);
        let (a, b) = (RunScoped::default(), RunScoped::default());
        a.get::<Flag>()
            .0
            .store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(a.get::<Flag>().0.load(std::sync::atomic::Ordering::Relaxed));
        assert!(!b.get::<Flag>().0.load(std::sync::atomic::Ordering::Relaxed));
    }
}
