//! The background thread that sends exports, so a slow or dead collector never stalls the
//! metrics thread. Every export is cumulative, so a newer one holds everything an older
//! one did: a single slot keeps the newest export not yet sent, and a new one replaces it.
//! Memory stays at one pending request however long the collector is away, and no sample
//! is lost by the replacement.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

use super::log::log_warning;
use super::transport::Transport;
use crate::worker::Worker;

/// How the pusher thread ended.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PushStats {
    /// Exports the collector accepted.
    pub ok: u64,
    /// Exports that failed (transport error, HTTP or gRPC error status).
    pub failed: u64,
}

#[derive(Default)]
struct Slot {
    pending: Option<Vec<u8>>,
    closed: bool,
}

struct Shared {
    slot: Mutex<Slot>,
    wake: Notify,
}

impl Shared {
    fn with_slot<T>(&self, f: impl FnOnce(&mut Slot) -> T) -> T {
        f(&mut self.slot.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Handle to the pusher thread.
pub struct Pusher {
    shared: Arc<Shared>,
    worker: Worker<PushStats>,
}

impl Pusher {
    /// Starts the thread sending through `transport`.
    pub(crate) fn start(transport: Transport) -> std::io::Result<Pusher> {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot::default()),
            wake: Notify::new(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let theirs = shared.clone();
        let worker = Worker::spawn("rk6-opentelemetry", move || {
            runtime.block_on(run(theirs, transport))
        })?;
        Ok(Pusher { shared, worker })
    }

    /// Hands over `body` to be sent next, in place of any export still waiting.
    pub fn offer(&self, body: Vec<u8>) {
        self.shared.with_slot(|s| s.pending = Some(body));
        self.shared.wake.notify_one();
    }

    /// Lets the thread send what is waiting, then waits for it to end until `deadline`.
    pub fn close(&mut self, deadline: Instant) -> Option<PushStats> {
        self.shared.with_slot(|s| s.closed = true);
        self.shared.wake.notify_one();
        self.worker.wait(deadline)
    }
}

async fn run(shared: Arc<Shared>, transport: Transport) -> PushStats {
    let mut stats = PushStats::default();
    let mut logged: HashSet<String> = HashSet::new();
    loop {
        let (next, closed) = shared.with_slot(|s| (s.pending.take(), s.closed));
        let Some(body) = next else {
            if closed {
                break;
            }
            // A wake-up sent before this await is kept by `Notify`, so none is missed.
            shared.wake.notified().await;
            continue;
        };
        match transport.export(body).await {
            Ok(()) => stats.ok += 1,
            Err(e) => {
                stats.failed += 1;
                // One line per kind of failure: a dead collector must not flood the log.
                if logged.insert(e.clone()) {
                    log_warning(
                        "Failed to export metrics to the OpenTelemetry collector",
                        &e,
                    );
                }
            }
        }
    }
    stats
}
