//! The scheduler's view of a JS VU: a [`Runtime`] inside its coroutine.

pub(crate) mod builtins;
pub(crate) mod commonjs;
mod console;
mod es_additions;
pub(crate) mod globals;
pub(crate) mod lifecycle;
pub(crate) mod loader;
pub(crate) mod require;
pub(crate) mod runtime;

use std::sync::Arc;

use rk6_scheduler::{Iteration, IterationOutcome, Vu, VuFactory, WorkerProfile};
use tokio_util::sync::CancellationToken;

use crate::host::coroutine::CoCell;
use crate::host::stack::StackError;
use crate::shared::Shared;
use crate::vu::runtime::Runtime;

/// The native stack of every thread a [`Runtime`] is built on: Boa's parser is recursive.
pub(crate) const THREAD_STACK: usize = 64 << 20;

/// The worker threads JS VUs need. At most 48 VUs a thread: Boa's GC stops the whole thread,
/// so its pause grows with the VUs on it. Re-measured with shared built-ins (design 004, "How
/// many VUs a worker holds"): 128 a thread saved a quarter of the memory but paused workers
/// up to 185 ms at 20,000 VUs, where 48 a thread stays near 10 ms.
const WORKER_PROFILE: WorkerProfile = WorkerProfile {
    max_vus_per_worker: 48,
    stack_size: THREAD_STACK,
};

/// How the message of a VU that got no coroutine stack starts: the machine's limit, not the
/// script, so the binary ends with the generic failure as for a worker thread it cannot start.
pub const STACK_FAILURE: &str = "cannot allocate a VU stack";

/// Creates JS VUs on worker threads.
pub struct JsVuFactory {
    shared: Arc<Shared>,
}

impl JsVuFactory {
    /// A factory for VUs of the test described by `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        JsVuFactory { shared }
    }
}

impl VuFactory for JsVuFactory {
    type Vu = JsVu;

    fn create(&self, id: u64) -> Result<JsVu, String> {
        crate::host::gc_pauses::watch(&self.shared.gc_pauses);
        let runtime = Runtime::init(id, self.shared.clone()).map_err(|e| e.message)?;
        JsVu::new(runtime).map_err(|e| format!("{STACK_FAILURE} for VU {id}: {e}"))
    }

    fn worker_profile(&self) -> WorkerProfile {
        WORKER_PROFILE
    }
}

/// A VU running k6 JavaScript.
pub struct JsVu {
    cell: CoCell<Runtime>,
    iterations: u64,
}

impl JsVu {
    pub(crate) fn new(runtime: Runtime) -> Result<JsVu, StackError> {
        let cell = CoCell::new(runtime, |rt, suspender| {
            *rt.host.suspender.borrow_mut() = Some(suspender);
        })?;
        crate::host::gc_pacing::vu_added();
        Ok(JsVu {
            cell,
            iterations: 0,
        })
    }

    /// Runs `f` on the runtime inside the coroutine (blocking calls allowed).
    pub(crate) async fn with<R: 'static>(
        &mut self,
        interrupt: Option<CancellationToken>,
        f: impl FnOnce(&mut Runtime) -> R + 'static,
    ) -> R {
        self.cell.run(interrupt, f).await
    }
}

impl Vu for JsVu {
    fn run_iteration(
        &mut self,
        it: Iteration,
    ) -> impl std::future::Future<Output = IterationOutcome> + '_ {
        let n = self.iterations;
        self.iterations += 1;
        let interrupt = it.interrupt.clone();
        async move {
            let out = self
                .cell
                .run(Some(interrupt), move |rt| rt.run_iteration(&it, n))
                .await;
            crate::host::gc_pacing::collect_if_due();
            out
        }
    }
}

impl Drop for JsVu {
    fn drop(&mut self) {
        crate::host::gc_pacing::vu_removed();
    }
}

#[cfg(test)]
mod tests {
    use super::WORKER_PROFILE;

    #[test]
    fn js_workers_hold_48_vus_on_64_mib_stacks() {
        assert_eq!(WORKER_PROFILE.stack_size, 64 << 20);
        assert_eq!(WORKER_PROFILE.workers_for(48, 1), 1);
        assert_eq!(WORKER_PROFILE.workers_for(49, 1), 2);
        assert_eq!(WORKER_PROFILE.workers_for(1000, 2), 21);
    }
}
