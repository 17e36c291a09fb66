//! VU pools: where VUs live and how a scenario asks one of them to run a [`Job`].
//!
//! [`ThreadPool`] is production: worker OS threads, each with a current-thread tokio runtime
//! and a `LocalSet`, owning a fixed share of the VUs (VUs are `!Send`: a JS context never
//! leaves its thread). [`LocalPool`] keeps all VUs on the caller's `LocalSet`, so executors can
//! be tested with fake VUs and paused time.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use crate::job::{run_vu_loop, Job};
use crate::lag::LagMonitor;
use crate::vu::VuFactory;

/// Runs jobs on VUs.
pub trait Pool: Send + Sync {
    /// Asks VU `vu_id` to run `job`; the receiver completes when its loop ends.
    fn run(&self, vu_id: u64, job: Arc<Job>) -> oneshot::Receiver<()>;
}

enum Command {
    Create {
        id: u64,
        reply: oneshot::Sender<Result<(), String>>,
    },
    Run {
        id: u64,
        job: Arc<Job>,
        done: oneshot::Sender<()>,
    },
}

/// VUs spread over worker threads.
pub struct ThreadPool {
    workers: Vec<mpsc::UnboundedSender<Command>>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    lag: Arc<LagMonitor>,
}

impl ThreadPool {
    /// Starts the workers `vus` VUs need on this machine (the factory's
    /// [`WorkerProfile`](crate::vu::WorkerProfile) sizes them) and creates the VUs `initial` on them in parallel; any other VU id is
    /// created on its worker the first time it is asked to run.
    pub async fn start<F: VuFactory>(
        factory: Arc<F>,
        vus: u64,
        initial: &[u64],
    ) -> Result<ThreadPool, String> {
        let profile = factory.worker_profile();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let count = profile.workers_for(vus, cores);
        let mut workers = Vec::with_capacity(count);
        let mut threads = Vec::with_capacity(count);
        let lag = Arc::new(LagMonitor::default());
        let probe_every = crate::lag::period_for(count, cores);
        for w in 0..count {
            let (tx, rx) = mpsc::unbounded_channel();
            let factory = factory.clone();
            let lag = lag.clone();
            // Built here, so a process out of file descriptors gets a reason, not a thread
            // that quietly ends.
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    format!(
                        "cannot start a worker thread: cannot create its event loop: {e}{}",
                        crate::fd_hint(&e)
                    )
                })?;
            let handle = std::thread::Builder::new()
                .name(format!("rk6-worker-{w}"))
                .stack_size(profile.stack_size)
                .spawn(move || worker_main(factory, rx, lag, probe_every, rt))
                .map_err(|e| format!("cannot start a worker thread: {e}"))?;
            workers.push(tx);
            threads.push(handle);
        }
        let pool = ThreadPool {
            workers,
            threads: Mutex::new(threads),
            lag,
        };
        let mut replies = Vec::with_capacity(initial.len());
        for &id in initial {
            let (reply, rx) = oneshot::channel();
            pool.worker(id)
                .send(Command::Create { id, reply })
                .map_err(|_| "a worker thread died".to_string())?;
            replies.push(rx);
        }
        for rx in replies {
            rx.await
                .map_err(|_| "a worker thread died while creating VUs".to_string())??;
        }
        Ok(pool)
    }

    /// How many worker threads hold the VUs.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// How late the workers' event loops ran so far.
    pub fn lag(&self) -> Arc<LagMonitor> {
        self.lag.clone()
    }

    fn worker(&self, vu_id: u64) -> &mpsc::UnboundedSender<Command> {
        &self.workers[(vu_id as usize - 1) % self.workers.len()]
    }

    /// Drops all VUs on their own threads and joins the workers.
    pub fn shutdown(self) {
        drop(self.workers);
        for t in self.threads.into_inner().unwrap_or_default() {
            let _ = t.join();
        }
    }
}

impl Pool for ThreadPool {
    fn run(&self, vu_id: u64, job: Arc<Job>) -> oneshot::Receiver<()> {
        let (done, rx) = oneshot::channel();
        let _ = self.worker(vu_id).send(Command::Run {
            id: vu_id,
            job,
            done,
        });
        rx
    }
}

fn worker_main<F: VuFactory>(
    factory: Arc<F>,
    mut rx: mpsc::UnboundedReceiver<Command>,
    lag: Arc<LagMonitor>,
    probe_every: std::time::Duration,
    rt: tokio::runtime::Runtime,
) {
    let local = tokio::task::LocalSet::new();
    local.spawn_local(crate::lag::probe(lag, probe_every));
    local.block_on(&rt, async move {
        let vus: Rc<RefCell<HashMap<u64, F::Vu>>> = Rc::default();
        while let Some(cmd) = rx.recv().await {
            match cmd {
                Command::Create { id, reply } => {
                    // VU init (parse, compile) runs here, on the worker's big stack.
                    let result = factory.create(id).map(|vu| {
                        vus.borrow_mut().insert(id, vu);
                    });
                    let _ = reply.send(result);
                }
                Command::Run { id, job, done } => {
                    let existing = vus.borrow_mut().remove(&id);
                    // A VU started mid-test (arrival-rate beyond preAllocatedVUs) is created
                    // here; its script already initialised fine once, so an error is unlikely
                    // and ends just this VU's loop.
                    let Some(mut vu) = existing.or_else(|| factory.create(id).ok()) else {
                        let _ = done.send(());
                        continue;
                    };
                    let vus = vus.clone();
                    tokio::task::spawn_local(async move {
                        run_vu_loop(&mut vu, &job, id).await;
                        vus.borrow_mut().insert(id, vu);
                        let _ = done.send(());
                    });
                }
            }
        }
        // Let running loops finish before the VUs are dropped with the LocalSet.
    });
}

/// All VUs on the current thread's `LocalSet`; for tests.
pub struct LocalPool<F: VuFactory> {
    factory: Arc<F>,
    // A VU is created lazily on its first job; `Send` is required by [`Pool`], and the
    // pool is only ever used from the thread that created it.
    _not_send: std::marker::PhantomData<F>,
}

impl<F: VuFactory> LocalPool<F> {
    /// A pool that creates VUs with `factory` on demand.
    pub fn new(factory: Arc<F>) -> Self {
        LocalPool {
            factory,
            _not_send: std::marker::PhantomData,
        }
    }
}

impl<F: VuFactory> Pool for LocalPool<F> {
    fn run(&self, vu_id: u64, job: Arc<Job>) -> oneshot::Receiver<()> {
        let (done, rx) = oneshot::channel();
        let factory = self.factory.clone();
        tokio::task::spawn_local(async move {
            if let Ok(mut vu) = factory.create(vu_id) {
                run_vu_loop(&mut vu, &job, vu_id).await;
            }
            let _ = done.send(());
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::vu::{Iteration, IterationOutcome, Vu, WorkerProfile};

    struct NoVu;

    impl Vu for NoVu {
        async fn run_iteration(&mut self, _: Iteration) -> IterationOutcome {
            IterationOutcome::Completed
        }
    }

    /// Records the thread each VU was created on.
    struct Factory {
        profile: WorkerProfile,
        threads: Mutex<BTreeMap<u64, String>>,
    }

    impl VuFactory for Factory {
        type Vu = NoVu;
        fn create(&self, id: u64) -> Result<NoVu, String> {
            let name = std::thread::current()
                .name()
                .unwrap_or_default()
                .to_string();
            self.threads.lock().unwrap().insert(id, name);
            Ok(NoVu)
        }
        fn worker_profile(&self) -> WorkerProfile {
            self.profile
        }
    }

    #[tokio::test]
    async fn the_factory_sizes_the_workers() {
        let factory = Arc::new(Factory {
            profile: WorkerProfile {
                max_vus_per_worker: 2,
                stack_size: 256 << 10,
            },
            threads: Mutex::default(),
        });
        let pool = ThreadPool::start(factory.clone(), 5, &[1, 2, 3, 4, 5])
            .await
            .unwrap();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = pool.workers();
        assert_eq!(
            n,
            3.max(cores.min(5)),
            "5 VUs, at most 2 per worker, all cores"
        );
        pool.shutdown();
        let threads = factory.threads.lock().unwrap().clone();
        let expected: BTreeMap<u64, String> = (1..=5u64)
            .map(|vu| (vu, format!("rk6-worker-{}", (vu as usize - 1) % n)))
            .collect();
        assert_eq!(threads, expected, "VUs dealt round-robin over the workers");
    }
}
