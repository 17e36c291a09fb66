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
use crate::host::gc_domains::{self, DomainId};
use crate::host::stack::StackError;
use crate::shared::Shared;
use crate::vu::runtime::Runtime;

/// The native stack of every thread a [`Runtime`] is built on: Boa's parser is recursive.
pub(crate) const THREAD_STACK: usize = 64 << 20;

/// The worker threads JS VUs need: one a core, whatever the VU count. A worker's VUs are
/// split into GC domains of a heap each (`host::gc_domains`), which bound the pauses that
/// once bounded the VUs a thread held (48, design 004).
const WORKER_PROFILE: WorkerProfile = WorkerProfile {
    max_vus_per_worker: u64::MAX,
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
        JsVu::create(id, self.shared.clone()).map_err(|e| match e {
            CreateError::Init(e) => e.message,
            CreateError::Stack(e) => format!("{STACK_FAILURE} for VU {id}: {e}"),
        })
    }

    fn worker_profile(&self) -> WorkerProfile {
        WORKER_PROFILE
    }
}

/// Why a VU could not be created.
pub(crate) enum CreateError {
    /// Its init context failed.
    Init(crate::script::program::ScriptError),
    /// It got no coroutine stack.
    Stack(StackError),
}

/// A VU running k6 JavaScript.
pub struct JsVu {
    /// Dropped inside the VU's GC domain (see `Drop`).
    cell: std::mem::ManuallyDrop<CoCell<Runtime>>,
    domain: DomainId,
    iterations: u64,
}

impl JsVu {
    /// Builds VU `id` in a GC domain of the calling thread.
    pub(crate) fn create(id: u64, shared: Arc<Shared>) -> Result<JsVu, CreateError> {
        let domain = gc_domains::place();
        gc_domains::enter(domain);
        crate::host::gc_pacing::vu_added(domain);
        let built = Runtime::init(id, shared)
            .map_err(CreateError::Init)
            .and_then(|runtime| {
                CoCell::new(runtime, |rt, suspender| {
                    *rt.host.suspender.borrow_mut() = Some(suspender);
                })
                .map_err(CreateError::Stack)
            });
        match built {
            Ok(cell) => Ok(JsVu {
                cell: std::mem::ManuallyDrop::new(cell),
                domain,
                iterations: 0,
            }),
            Err(e) => {
                gc_domains::leave(domain);
                Err(e)
            }
        }
    }

    /// Runs `f` on the runtime inside the coroutine (blocking calls allowed).
    pub(crate) async fn with<R: 'static>(
        &mut self,
        interrupt: Option<CancellationToken>,
        f: impl FnOnce(&mut Runtime) -> R + 'static,
    ) -> R {
        // A VU's coroutine allocates only while it is resumed, which only happens inside
        // these polls: its domain's heap is active for each of them.
        let domain = self.domain;
        let mut inner = std::pin::pin!(self.cell.run(interrupt, f));
        std::future::poll_fn(|cx| {
            gc_domains::enter(domain);
            std::future::Future::poll(inner.as_mut(), cx)
        })
        .await
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
            let domain = self.domain;
            let out = self
                .with(Some(interrupt), move |rt| rt.run_iteration(&it, n))
                .await;
            crate::host::gc_pacing::collect_if_due(domain);
            out
        }
    }
}

impl Drop for JsVu {
    fn drop(&mut self) {
        gc_domains::enter(self.domain);
        // SAFETY: dropped once, here; the field is not used again.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.cell) };
        gc_domains::leave(self.domain);
    }
}

#[cfg(test)]
mod tests {
    use super::WORKER_PROFILE;

    #[test]
    fn js_workers_hold_48_vus_on_64_mib_stacks() {
        assert_eq!(WORKER_PROFILE.stack_size, 64 << 20);
        assert_eq!(WORKER_PROFILE.workers_for(1, 2), 1);
        assert_eq!(WORKER_PROFILE.workers_for(1000, 2), 2);
        assert_eq!(WORKER_PROFILE.workers_for(250_000, 2), 2, "a thread a core");
    }
}
