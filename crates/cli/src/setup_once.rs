//! `rk6 aggregate --setup-once`: the aggregator starts the distributed test itself. Its
//! runners wait paused (`--paused --no-setup --no-teardown`); once all have joined, it runs
//! the script's `setup()` once on a VU of its own, hands the data to every runner
//! (`PUT /v1/setup`), starts them (`PATCH /v1/status` with `paused: false`) and, when every
//! runner is done or missing, runs `teardown(data)` once. The lifecycle VU's samples (the
//! requests setup and teardown make) are merged into the whole test, as k6 counts them.

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::Method;
use rk6_js::log::{Level, Logger};
use rk6_js::{Lifecycle, Program, Shared};
use rk6_metrics::{Registry, Sample};
use rk6_options::Options;
use rk6_scheduler::CancellationToken;
use serde_json::{json, Value};
use tokio::task::JoinSet;

use crate::exit::ExitCode;
use crate::hub::{self, SharedHub};
use crate::lifecycle_timeouts::LifecycleTimeouts;
use crate::run_error::RunError;

/// k6's status number of a test waiting paused for its start.
const PAUSED_BEFORE_RUN: u64 = 4;

/// How often a runner's status is asked while it is not yet waiting paused.
const POLL: Duration = Duration::from_millis(100);

/// Batches of samples the lifecycle VU may send ahead of the thread merging them.
const SAMPLE_BATCHES: usize = 256;

/// A runner to start: how it is named in messages and where its REST API is.
#[derive(Debug, Clone)]
pub struct Target {
    /// `instance 2 (segment 1/3:2/3)`.
    pub label: String,
    /// `HOST:PORT`.
    pub api: String,
}

/// The aggregator's own lifecycle: what its setup/teardown VU is built from.
pub struct SetupOnce {
    shared: Arc<Shared>,
    /// Taken by [`SetupOnce::merge_samples_into`].
    samples: Mutex<Option<Receiver<Vec<Sample>>>>,
    timeouts: LifecycleTimeouts,
    has_setup: bool,
    has_teardown: bool,
    /// What `setup()` returned (JSON text), once it ran.
    data: OnceLock<Option<String>>,
}

impl SetupOnce {
    /// The lifecycle of the script whose options are `options` (the script's own, as the
    /// aggregator reads them) and whose exports are `functions`.
    pub fn new(
        program: Arc<Program>,
        registry: Arc<Registry>,
        options: &Options,
        functions: &[String],
        logger: Logger,
    ) -> Result<SetupOnce, RunError> {
        let invalid = |e: String| RunError::invalid(e);
        let run = rk6_js::RunOptions::from_options(options).map_err(invalid)?;
        let http = crate::http_config::build(options, &run, &logger, |k| std::env::var(k).ok())
            .map_err(RunError::from)?;
        let test_options = crate::options_json::test_options(options).map_err(|e| invalid(e.0))?;
        let (samples, rx): (SyncSender<Vec<Sample>>, _) =
            std::sync::mpsc::sync_channel(SAMPLE_BATCHES);
        let shared = Shared::new(
            program,
            registry,
            samples,
            http,
            options,
            logger,
            test_options,
            rk6_scheduler::Stripe::full(),
            run,
        );
        let exports = |name: &str| functions.iter().any(|f| f == name);
        Ok(SetupOnce {
            shared,
            samples: Mutex::new(Some(rx)),
            timeouts: LifecycleTimeouts::from_options(options),
            has_setup: exports("setup"),
            has_teardown: exports("teardown"),
            data: OnceLock::new(),
        })
    }

    /// Merges the lifecycle VU's samples into `hub` as they come, on a thread of its own
    /// (the VU blocks on a full channel, so something must read it while setup runs).
    pub fn merge_samples_into(&self, hub: SharedHub) -> Option<std::thread::JoinHandle<()>> {
        let rx = self
            .samples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        std::thread::Builder::new()
            .name("rk6-setup-samples".into())
            .spawn(move || {
                for batch in rx {
                    hub::lock(&hub).aggregator.add(&batch);
                }
            })
            .ok()
    }

    /// Whether the script exports `setup()`.
    pub fn has_setup(&self) -> bool {
        self.has_setup
    }

    /// The data `setup()` returned, as the script's `handleSummary` gets it.
    pub fn data(&self) -> Option<Value> {
        self.data
            .get()
            .cloned()
            .flatten()
            .and_then(|d| serde_json::from_str(&d).ok())
    }

    /// Starts the test: waits until every runner waits paused (within `wait`), runs
    /// `setup()` once, gives every runner its data and un-pauses them all. `interrupt`
    /// (a signal) stops a running setup.
    pub async fn start(
        &self,
        targets: &[Target],
        wait: Duration,
        interrupt: CancellationToken,
        logger: Logger,
    ) -> Result<(), RunError> {
        let deadline = Instant::now() + wait;
        on_every(targets, |t| async move { wait_paused(&t, deadline).await }).await?;
        let data = if self.has_setup {
            self.setup(interrupt).await?
        } else {
            None
        };
        let _ = self.shared.setup_data.set(data.clone());
        let _ = self.data.set(data.clone());
        if let Some(data) = data {
            let body = Bytes::from(data);
            on_every(targets, |t| {
                let body = body.clone();
                async move {
                    crate::control_client::request(&t.api, Method::PUT, "/v1/setup", Some(body))
                        .await
                        .map(drop)
                        .map_err(|e| {
                            RunError::new(
                                ExitCode::Failure,
                                format!("cannot give {} the setup data through its REST API at {}: {e:#}", t.label, t.api),
                            )
                        })
                }
            })
            .await?;
        }
        let resume =
            json!({"data": {"type": "status", "id": "default", "attributes": {"paused": false}}});
        on_every(targets, |t| {
            let resume = resume.clone();
            async move {
                crate::control_client::call(&t.api, Method::PATCH, Some(resume))
                    .await
                    .map(drop)
                    .map_err(|e| {
                        RunError::new(
                            ExitCode::Failure,
                            format!(
                                "cannot start {} through its REST API at {}: {e:#}",
                                t.label, t.api
                            ),
                        )
                    })
            }
        })
        .await?;
        logger.log(
            Level::Debug,
            &format!("started {} runners", targets.len()),
            &[],
        );
        Ok(())
    }

    /// Runs `setup()` on a VU of its own within `setupTimeout`; its data as JSON text, with
    /// its objects' keys sorted as `rk6 run` gives it.
    async fn setup(&self, interrupt: CancellationToken) -> Result<Option<String>, RunError> {
        let lc = self.vu().await?;
        let run = tokio::time::timeout(self.timeouts.setup, lc.setup(interrupt.clone()));
        let outcome = tokio::select! {
            r = run => r,
            _ = interrupt.cancelled() => {
                lc.detach();
                return Err(RunError::new(ExitCode::ExternalAbort, "setup() was interrupted by a signal"));
            }
        };
        match outcome {
            Ok(r) => {
                // Dropping joins the VU's thread, which ends now its channel closes.
                let _ = tokio::task::spawn_blocking(move || drop(lc)).await;
                r.map(|d| d.as_deref().map(crate::api_documents::sorted_json))
                    .map_err(|e| RunError::of_script(&e))
            }
            Err(_) => {
                interrupt.cancel();
                lc.detach();
                Err(RunError::timeout(
                    ExitCode::SetupTimeout,
                    "setup",
                    "setupTimeout",
                    self.timeouts.setup,
                ))
            }
        }
    }

    /// Runs `teardown(data)` once (when the script exports it) within `teardownTimeout`. A
    /// throwing teardown is logged and the test's verdict stands, as in `rk6 run`; a
    /// timeout is the test's failure.
    pub async fn teardown(&self, logger: &Logger) -> Result<(), RunError> {
        if !self.has_teardown {
            return Ok(());
        }
        let lc = match self.vu().await {
            Ok(lc) => lc,
            Err(f) => {
                f.log(logger);
                return Ok(());
            }
        };
        let interrupt = CancellationToken::new();
        match tokio::time::timeout(self.timeouts.teardown, lc.teardown(interrupt.clone())).await {
            Ok(r) => {
                let _ = tokio::task::spawn_blocking(move || drop(lc)).await;
                if let Err(e) = r {
                    RunError::of_script(&e).log(logger);
                }
                Ok(())
            }
            Err(_) => {
                interrupt.cancel();
                lc.detach();
                Err(RunError::timeout(
                    ExitCode::TeardownTimeout,
                    "teardown",
                    "teardownTimeout",
                    self.timeouts.teardown,
                ))
            }
        }
    }

    /// A fresh lifecycle VU (starting one evaluates the init context: off the event loop).
    async fn vu(&self) -> Result<Lifecycle, RunError> {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || Lifecycle::start(shared))
            .await
            .map_err(|e| RunError::generic(e.to_string()))?
            .map_err(|e| RunError::of_script(&e))
    }
}

/// Runs `f` on every target at once; the first failure (in target order) if any.
async fn on_every<F, Fut>(targets: &[Target], f: F) -> Result<(), RunError>
where
    F: Fn(Target) -> Fut,
    Fut: std::future::Future<Output = Result<(), RunError>> + Send + 'static,
{
    let mut set = JoinSet::new();
    for (i, t) in targets.iter().enumerate() {
        let fut = f(t.clone());
        set.spawn(async move { (i, fut.await) });
    }
    let mut failures = Vec::new();
    while let Some(r) = set.join_next().await {
        match r {
            Ok((i, Err(e))) => failures.push((i, e)),
            Ok((_, Ok(()))) => {}
            Err(e) => failures.push((usize::MAX, RunError::generic(e.to_string()))),
        }
    }
    failures.sort_by_key(|(i, _)| *i);
    failures.into_iter().next().map_or(Ok(()), |(_, e)| Err(e))
}

/// Waits until the runner's API answers that it waits paused (k6's status 4). Its first
/// push can come before its API listens, so an unreachable API is asked again until
/// `deadline`; a runner already past its start was not started with `--paused`.
async fn wait_paused(t: &Target, deadline: Instant) -> Result<(), RunError> {
    loop {
        let last = match crate::control_client::call(&t.api, Method::GET, None).await {
            Ok(doc) => {
                let attrs = &doc["data"]["attributes"];
                let status = attrs["status"].as_u64().unwrap_or(0);
                let paused = attrs["paused"].as_bool().unwrap_or(false);
                if status == PAUSED_BEFORE_RUN && paused {
                    return Ok(());
                }
                if status > PAUSED_BEFORE_RUN || !paused {
                    return Err(RunError::new(
                        ExitCode::Failure,
                        format!(
                            "{} is not waiting paused (status {status}): with --setup-once, start the runners with --paused --no-setup --no-teardown",
                            t.label
                        ),
                    ));
                }
                format!("its status is {status}")
            }
            Err(e) => format!("{e:#}"),
        };
        if Instant::now() >= deadline {
            return Err(RunError::new(
                ExitCode::Failure,
                format!(
                    "{} did not get ready to start through its REST API at {}: {last}",
                    t.label, t.api
                ),
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn on_every_reports_the_first_targets_failure() {
        let targets: Vec<Target> = (1..=3)
            .map(|i| Target {
                label: format!("instance {i}"),
                api: String::new(),
            })
            .collect();
        let r = on_every(&targets, |t| async move {
            if t.label == "instance 1" {
                Ok(())
            } else {
                Err(RunError::new(ExitCode::Failure, t.label))
            }
        })
        .await;
        assert_eq!(r.unwrap_err().message, "instance 2");
        assert!(on_every(&targets, |_| async { Ok(()) }).await.is_ok());
    }

    #[tokio::test]
    async fn an_unreachable_runner_is_asked_until_the_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let api = listener.local_addr().unwrap().to_string();
        drop(listener);
        let t = Target {
            label: "instance 1".into(),
            api,
        };
        let started = Instant::now();
        let e = wait_paused(&t, Instant::now() + Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(
            e.message
                .starts_with("instance 1 did not get ready to start"),
            "{}",
            e.message
        );
    }
}
