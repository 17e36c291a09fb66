//! The parts of a test that run outside iterations, on a VU of their own with `__VU == 0`:
//! reading options (init context), `setup()`, `teardown()` and `handleSummary()`.

use std::sync::Arc;

use rk6_metrics::Registry;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::log::Logger;
use crate::script::program::{Program, ScriptError, ScriptErrorKind};
use crate::shared::Shared;
use crate::vu::runtime::Runtime;
use crate::vu::{CreateError, JsVu, THREAD_STACK};

/// What the init context tells before a test starts.
#[derive(Debug, Clone)]
pub struct InitInfo {
    /// The exported `options`, as JSON.
    pub options: serde_json::Value,
    /// Names of all exported functions.
    pub functions: Vec<String>,
}

/// Evaluates the init context once to read the options and exports (k6 does the same).
pub fn read_init(
    program: Arc<Program>,
    registry: Arc<Registry>,
    logger: Logger,
) -> Result<InitInfo, ScriptError> {
    let shared = Shared::for_init(program, registry, logger);
    std::thread::Builder::new()
        .name("rk6-init".into())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let mut rt = Runtime::init(0, shared)?;
            Ok(InitInfo {
                options: rt.options()?,
                functions: rt.exported_functions(),
            })
        })
        .map_err(|e| ScriptError::new(ScriptErrorKind::Io, e.to_string()))?
        .join()
        .unwrap_or_else(|_| {
            Err(ScriptError::new(
                ScriptErrorKind::Exception,
                "the init context panicked",
            ))
        })
}

/// Output files a `handleSummary()` asked for: (`stdout` | `stderr` | path, contents).
pub type SummaryOutputs = Vec<(String, Vec<u8>)>;

enum Command {
    Setup(
        CancellationToken,
        oneshot::Sender<Result<Option<String>, ScriptError>>,
    ),
    Teardown(CancellationToken, oneshot::Sender<Result<(), ScriptError>>),
    HandleSummary(
        serde_json::Value,
        oneshot::Sender<Result<Option<SummaryOutputs>, ScriptError>>,
    ),
}

/// A VU of its own (id 0) on its own thread for setup, teardown or handleSummary; as in k6,
/// each of them gets a freshly initialized one, so none sees another's changes to globals.
pub struct Lifecycle {
    tx: mpsc::UnboundedSender<Command>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn gone() -> ScriptError {
    ScriptError::new(
        ScriptErrorKind::Exception,
        "the setup/teardown VU stopped unexpectedly",
    )
}

impl Lifecycle {
    /// Starts the lifecycle VU; fails if its init context fails.
    pub fn start(shared: Arc<Shared>) -> Result<Lifecycle, ScriptError> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Command>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("rk6-lifecycle".into())
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let mut vu = match JsVu::create(0, shared) {
                    Ok(vu) => vu,
                    Err(CreateError::Init(e)) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                    Err(CreateError::Stack(e)) => {
                        let _ = ready_tx.send(Err(ScriptError::new(
                            ScriptErrorKind::Io,
                            format!("{} for the setup/teardown VU: {e}", super::STACK_FAILURE),
                        )));
                        return;
                    }
                };
                let tokio_rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(ScriptError::new(
                            ScriptErrorKind::Load,
                            format!(
                                "cannot start the setup/teardown VU: cannot create its event loop: {e}{}",
                                rk6_scheduler::fd_hint(&e)
                            ),
                        )));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                tokio_rt.block_on(async move {
                    while let Some(cmd) = rx.recv().await {
                        match cmd {
                            Command::Setup(interrupt, reply) => {
                                let r = vu.with(Some(interrupt), |rt| rt.setup()).await;
                                let _ = reply.send(r);
                            }
                            Command::Teardown(interrupt, reply) => {
                                let r = vu.with(Some(interrupt), |rt| rt.teardown()).await;
                                let _ = reply.send(r);
                            }
                            Command::HandleSummary(data, reply) => {
                                let r = vu.with(None, move |rt| rt.handle_summary(&data)).await;
                                let _ = reply.send(r);
                            }
                        }
                    }
                });
            })
            .map_err(|e| ScriptError::new(ScriptErrorKind::Io, e.to_string()))?;
        ready_rx.recv().map_err(|_| gone())??;
        Ok(Lifecycle {
            tx,
            thread: Some(thread),
        })
    }

    /// Runs `setup()`; returns its data as JSON text. Cancelling `interrupt` stops it at its
    /// next wait (a sleep, a request), as an interrupted iteration stops.
    pub async fn setup(&self, interrupt: CancellationToken) -> Result<Option<String>, ScriptError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Command::Setup(interrupt, reply))
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// Runs `teardown(data)` with the data setup returned; `interrupt` as for [`Self::setup`].
    pub async fn teardown(&self, interrupt: CancellationToken) -> Result<(), ScriptError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Command::Teardown(interrupt, reply))
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// Lets the lifecycle VU go without waiting for it: after a timeout its JS may still be
    /// running (a loop that never waits cannot be interrupted), and the test must end anyway.
    /// The thread ends by itself once the call returns.
    pub fn detach(mut self) {
        self.thread = None;
    }

    /// Runs `handleSummary(data)`; `None` when the script does not export it.
    pub async fn handle_summary(
        &self,
        data: serde_json::Value,
    ) -> Result<Option<SummaryOutputs>, ScriptError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Command::HandleSummary(data, reply))
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }
}

impl Drop for Lifecycle {
    fn drop(&mut self) {
        let (tx, _) = mpsc::unbounded_channel();
        drop(std::mem::replace(&mut self.tx, tx));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
