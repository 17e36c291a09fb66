//! The phases of a running test: the REST API and signals, the start (or the wait for it),
//! `setup()`, the scenarios, `teardown()`.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rk6_js::log::{Level, Logger};
use rk6_js::{JsVuFactory, Lifecycle, Shared};
use rk6_scheduler::{total_vus, CancellationToken, ExecutionState, RunEnd, Scenario, ThreadPool};

use crate::args::RunArgs;
use crate::collector::LiveMetrics;
use crate::control::{self, Control, Hooks, Phase};
use crate::exit::ExitCode;
use crate::lifecycle_timeouts::LifecycleTimeouts;
use crate::plan::ApiPlan;
use crate::progress;
use crate::run_error::RunError;

use super::display::{run_tags, tick, vus_samples, Display, Drops, VusClock};

/// What the run phase leaves for the summary phase.
pub(super) struct Outcome {
    pub(super) end: RunEnd,
    /// `exec.test.fail()` was called.
    pub(super) marked_failed: bool,
    pub(super) elapsed: Duration,
    /// What handleSummary's VU is built from; `None` once a setup or teardown timed out.
    pub(super) summary_vu: Option<Arc<Shared>>,
    pub(super) setup_data: Option<String>,
    /// How late the worker threads' event loops ran (generator saturation).
    pub(super) lag: Arc<rk6_scheduler::LagMonitor>,
    /// The garbage-collection pauses of the threads VUs ran on.
    pub(super) gc_pauses: Arc<rk6_scheduler::LagMonitor>,
    /// Ends the test with its own exit code once the summary is out.
    pub(super) failure: Option<RunError>,
    /// The signal that stopped the test (Go's name: `interrupt`, `terminated`).
    pub(super) signal: Option<&'static str>,
    /// `PATCH /v1/status` with `stopped: true` stopped it (exit 103).
    pub(super) api_stopped: bool,
}

/// What the thresholds and `--compare-to` made of a run, in the order k6's exit codes
/// rank them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Judgement {
    Held,
    /// A threshold (or a `--max-regression` limit) failed: exit 99.
    Failed,
    /// `--compare-to` could not be judged: exit 104.
    Unusable,
}

impl Outcome {
    /// The exit code of a run that reached its summary, as k6 ranks the causes.
    pub(super) fn exit_code(&self, judgement: Judgement) -> ExitCode {
        if let Some(failure) = &self.failure {
            return failure.code;
        }
        match self.end {
            RunEnd::Stopped if self.api_stopped => ExitCode::StoppedFromRestApi,
            _ if judgement == Judgement::Failed => ExitCode::ThresholdsFailed,
            _ if judgement == Judgement::Unusable => ExitCode::InvalidConfig,
            RunEnd::Aborted => ExitCode::ScriptAborted,
            RunEnd::Stopped => ExitCode::ExternalAbort,
            _ if self.marked_failed => ExitCode::MarkedAsFailed,
            RunEnd::Finished => ExitCode::Success,
        }
    }
}

/// k6's error for a test stopped through the REST API.
pub(super) const STOPPED_FROM_API: &str = "test run stopped from REST API";

/// What the options decide about the order of the run.
pub(super) struct Flow {
    pub(super) paused: bool,
    pub(super) no_setup: bool,
    pub(super) no_teardown: bool,
    pub(super) timeouts: LifecycleTimeouts,
    /// `--linger`: keep the API up after the test until a signal.
    pub(super) linger: bool,
    /// This run's thresholds decide its exit code (not with `-o aggregate`, where the
    /// aggregator judges the whole test).
    pub(super) judges_thresholds: bool,
    /// Where the REST API listens.
    pub(super) api: ApiPlan,
}

/// The banner, setup, the scenarios and teardown; an error stops the run before the
/// summary, a [`Outcome::failure`] after it (as k6 reports a failed setup).
#[allow(clippy::too_many_arguments)]
pub(super) async fn execute(
    args: &RunArgs,
    flow: &Flow,
    output_names: &[String],
    logger: &Logger,
    shared: Arc<Shared>,
    scenarios: &[Arc<Scenario>],
    abort: CancellationToken,
    started: Instant,
    live: LiveMetrics,
) -> Result<Outcome, RunError> {
    let timeouts = flow.timeouts;
    let state = ExecutionState::new(scenarios);
    let stop = CancellationToken::new();
    // Watched from here to the end of teardown, as k6 does: a signal during setup ends the
    // run at once (no summary), during the run it stops the scenarios, during teardown it
    // lets teardown finish; every case ends with exit 105.
    let signal: Arc<std::sync::OnceLock<&'static str>> = Arc::default();
    let signalled = CancellationToken::new();
    let lingering = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let signals = tokio::spawn(watch_signals(
        stop.clone(),
        signalled.clone(),
        signal.clone(),
        logger.to_owned(),
        lingering.clone(),
    ));
    let _stop_watching = AbortOnDrop(signals);
    let control = Control::new(state.clone(), stop.clone(), flow.paused);
    control.attach(Hooks {
        shared: shared.clone(),
        metrics: live.clone(),
        timeouts,
    });
    let mut serving = false;
    if let Some(address) = &flow.api.address {
        match control::bind(address).await {
            Ok(listener) => {
                control::serve(listener, control.clone());
                serving = true;
            }
            // k6 1.x only warned when its default address was taken, and stops for one given.
            Err(e) if flow.api.defaulted => logger.log(
                Level::Warning,
                "Error from API server",
                &[("error", &format!("listen tcp {address}: {e}"))],
            ),
            Err(e) => {
                return Err(RunError::new(
                    ExitCode::CannotStartRestApi,
                    format!("cannot start the API server on {address}: {e}"),
                ))
            }
        }
    } else if flow.paused {
        return Err(RunError::invalid(
            "a paused test needs the API to be resumed: don't disable --address with --paused",
        ));
    }
    let test = Test {
        args,
        flow,
        logger,
        shared,
        scenarios,
        state,
        stop,
        control,
        signal: signal.clone(),
        signalled: signalled.clone(),
        live,
    };
    let result = test.run(output_names, abort, started).await;
    // `--linger`: the API stays up (at status 9, or 10 when stopped before the start) until
    // a signal; the summary comes after, so a teardown run through the API counts in it.
    // Meanwhile `GET /v1/status` reports the exit code the run will end with (k6 2.3).
    // The API already says the run ended, so from now on a signal ends the wait silently,
    // even one that comes while the verdict below is worked out.
    if flow.linger && serving {
        lingering.store(true, Ordering::Relaxed);
    }
    if flow.linger && serving && !signalled.is_cancelled() {
        let code = match &result {
            Err(e) => e.code,
            Ok(outcome) => {
                let failed = flow.judges_thresholds
                    && tokio::task::block_in_place(|| test.live.verdict()).unwrap_or(false);
                outcome.exit_code(if failed {
                    Judgement::Failed
                } else {
                    Judgement::Held
                })
            }
        };
        test.control.set_exit_code(code as i32);
        signalled.cancelled().await;
    }
    result
}

/// What the phases of a running test share.
struct Test<'a> {
    args: &'a RunArgs,
    flow: &'a Flow,
    logger: &'a Logger,
    shared: Arc<Shared>,
    scenarios: &'a [Arc<Scenario>],
    state: Arc<ExecutionState>,
    stop: CancellationToken,
    control: Arc<Control>,
    /// The signal that stopped the test, once one did.
    signal: Arc<OnceLock<&'static str>>,
    signalled: CancellationToken,
    live: LiveMetrics,
}

/// How `setup()` ended when the test cannot go on to its scenarios.
enum SetupEnd {
    /// The summary (of an empty test) comes, then this outcome's failure.
    Report(Outcome),
    /// No summary: the error ends the run.
    Abort(RunError),
}

impl Test<'_> {
    /// The banner, the wait for the start, setup, the scenarios, teardown.
    async fn run(
        &self,
        output_names: &[String],
        abort: CancellationToken,
        started: Instant,
    ) -> Result<Outcome, RunError> {
        let max_vus = total_vus(self.scenarios);
        self.banner(output_names, max_vus);
        let initial = rk6_scheduler::initial_vu_ids(self.scenarios);
        // As k6, the API shows the VUs the test starts with from the start (`vus-max`).
        self.state
            .vus_max
            .store(initial.len() as u64, Ordering::Relaxed);
        let started = match self.wait_for_start(started).await? {
            Ok(started) => started,
            Err(stopped) => return Ok(stopped),
        };
        self.control.set_phase(Phase::Setup);
        let setup_data = match self.setup(started).await {
            Ok(data) => data,
            Err(SetupEnd::Report(outcome)) => return Ok(outcome),
            Err(SetupEnd::Abort(e)) => return Err(e),
        };
        self.state
            .vus_max
            .store(initial.len() as u64, Ordering::Relaxed);
        let _ = self.shared.execution.set(self.state.clone());
        let pool = self.start_pool(max_vus, &initial).await?;
        let end = self.scenarios_run(&pool, &abort, started).await;
        let lag = pool.lag();
        pool.shutdown();
        let (summary_vu, failure) = self.teardown().await;
        let end = if abort.is_cancelled() && end == RunEnd::Stopped {
            RunEnd::Finished
        } else {
            end
        };
        // A signal during teardown still ends the test as stopped.
        let signal = self.signal.get().copied();
        let end = if signal.is_some() && end == RunEnd::Finished {
            RunEnd::Stopped
        } else {
            end
        };
        self.control.set_phase(Phase::Ended);
        Ok(Outcome {
            end,
            marked_failed: self.shared.marked_failed.load(Ordering::Relaxed),
            elapsed: started.elapsed(),
            summary_vu,
            setup_data,
            lag,
            gc_pauses: self.shared.gc_pauses.clone(),
            failure,
            signal,
            api_stopped: signal.is_none() && self.control.stopped_by_api(),
        })
    }

    fn banner(&self, output_names: &[String], max_vus: u64) {
        if self.args.options.quiet {
            return;
        }
        let script = self.args.script.display().to_string();
        let share = self.shared.vu_stripe.share();
        print!(
            "{}",
            progress::banner(&script, output_names, self.scenarios, max_vus, share)
        );
        let _ = std::io::stdout().flush();
    }

    /// With `--paused`, waits for the resume; the test's time starts then, as k6's (the
    /// progress clock, the summary's duration, counters' rates). `Err` holds the outcome
    /// of a test stopped through the API before it started.
    async fn wait_for_start(&self, started: Instant) -> Result<Result<Instant, Outcome>, RunError> {
        if !self.flow.paused {
            return Ok(Ok(started));
        }
        // A paused test already has the `vus`/`vus_max` gauges in /v1/metrics.
        let _ = self
            .shared
            .samples
            .send(vus_samples(&self.state, &run_tags(&self.shared)));
        self.control.set_phase(Phase::PausedBeforeRun);
        self.control.wait_resumed().await;
        if self.stop.is_cancelled() {
            self.control.set_phase(Phase::Interrupted);
            if let Some(name) = self.signal.get() {
                return Err(RunError::new(ExitCode::ExternalAbort, aborted_by(name)));
            }
            // Stopped through the API: k6 still prints the (empty) summary, then exits 103.
            return Ok(Err(Outcome {
                end: RunEnd::Stopped,
                marked_failed: false,
                elapsed: Duration::ZERO,
                summary_vu: Some(self.shared.clone()),
                setup_data: None,
                lag: Arc::default(),
                gc_pauses: Arc::default(),
                failure: None,
                signal: None,
                api_stopped: true,
            }));
        }
        let now = Instant::now();
        self.live.set_started(now);
        Ok(Ok(now))
    }

    /// `setup()` on a VU of its own (as k6), or the data set through the API with
    /// `--no-setup` (`PUT /v1/setup`, k6-operator's setup-once flow).
    async fn setup(&self, started: Instant) -> Result<Option<String>, SetupEnd> {
        let timeouts = self.flow.timeouts;
        if self.flow.no_setup {
            let data = self.control.setup_data();
            let _ = self.shared.setup_data.set(data.clone());
            return Ok(data);
        }
        let lifecycle =
            Lifecycle::start(self.shared.clone()).map_err(|e| SetupEnd::Abort(e.into()))?;
        let interrupt = CancellationToken::new();
        // k6 still prints the summary (of an empty test) when setup fails, then the error.
        let failed = |failure, summary_vu| {
            SetupEnd::Report(Outcome {
                end: RunEnd::Finished,
                marked_failed: false,
                elapsed: started.elapsed(),
                summary_vu,
                setup_data: None,
                lag: Arc::default(),
                gc_pauses: Arc::default(),
                failure: Some(failure),
                signal: None,
                api_stopped: false,
            })
        };
        let setup = tokio::select! {
            r = tokio::time::timeout(timeouts.setup, lifecycle.setup(interrupt.clone())) => Some(r),
            _ = self.signalled.cancelled() => None,
        };
        let Some(setup) = setup else {
            interrupt.cancel();
            lifecycle.detach();
            self.control.set_phase(Phase::Ended);
            return Err(SetupEnd::Abort(RunError::new(
                ExitCode::ExternalAbort,
                aborted_by(self.signal.get().copied().unwrap_or("terminated")),
            )));
        };
        let data = match setup {
            // As k6's, the data comes out of setup() with its objects' keys sorted (it goes
            // through a Go map there): what iterations, teardown and the API see.
            Ok(Ok(d)) => d.as_deref().map(crate::api_documents::sorted_json),
            Ok(Err(e)) => {
                self.control.set_phase(Phase::Ended);
                return Err(failed(RunError::of_script(&e), Some(self.shared.clone())));
            }
            Err(_) => {
                // A setup waiting on a sleep or a request stops now; one spinning in JS
                // cannot be stopped, so the VU is left behind either way.
                interrupt.cancel();
                lifecycle.detach();
                self.control.set_phase(Phase::Ended);
                let failure = RunError::timeout(
                    ExitCode::SetupTimeout,
                    "setup",
                    "setupTimeout",
                    timeouts.setup,
                );
                return Err(failed(failure, None));
            }
        };
        self.control.set_setup_data(data.clone());
        let _ = self.shared.setup_data.set(data.clone());
        Ok(data)
    }

    /// The worker threads and the VUs the test starts with.
    async fn start_pool(&self, max_vus: u64, initial: &[u64]) -> Result<ThreadPool, RunError> {
        match ThreadPool::start(
            Arc::new(JsVuFactory::new(self.shared.clone())),
            max_vus,
            initial,
        )
        .await
        {
            Ok(p) => Ok(p),
            // Not the script's fault (out of threads, file descriptors or stack mappings):
            // k6's generic failure.
            Err(e)
                if e.starts_with("cannot start a worker thread")
                    || e.starts_with(rk6_js::STACK_FAILURE) =>
            {
                Err(RunError::new(ExitCode::Failure, e))
            }
            Err(e) => Err(RunError {
                code: ExitCode::ScriptException,
                message: e,
                hint: Some("script exception".into()),
            }),
        }
    }

    /// The scenarios, with the progress display and the once-a-second samples beside them.
    async fn scenarios_run(
        &self,
        pool: &ThreadPool,
        abort: &CancellationToken,
        started: Instant,
    ) -> RunEnd {
        let stop_on_abort = {
            let (stop, abort) = (self.stop.clone(), abort.clone());
            tokio::spawn(async move {
                abort.cancelled().await;
                stop.cancel();
            })
        };
        let display = Display::new(self.args.options.quiet);
        let drops = Arc::new(Drops::default());
        let vus_clock = Arc::new(VusClock::new(started));
        let ticker = tokio::spawn(tick(
            self.state.clone(),
            self.shared.clone(),
            display.clone(),
            started,
            drops.clone(),
            vus_clock.clone(),
        ));
        let run_start = Instant::now();
        pool.lag().reset();
        self.shared.gc_pauses.reset();
        self.control.set_phase(Phase::Running);
        let end =
            rk6_scheduler::run(self.scenarios, pool, self.state.clone(), self.stop.clone()).await;
        self.control.set_phase(Phase::Teardown);
        ticker.abort();
        stop_on_abort.abort();
        display.show(&self.state, run_start.elapsed());
        drops.emit(&self.state, &self.shared);
        // A second that came as the scenarios ended, which the stopped ticker did not sample:
        // a one-second test still has its `vus` and `vus_max`.
        if vus_clock.due(Instant::now()) {
            let _ = self
                .shared
                .samples
                .send(vus_samples(&self.state, &run_tags(&self.shared)));
        }
        end
    }

    /// `teardown()` on a VU of its own, as k6: what handleSummary's VU is built from (none
    /// after a teardown timeout), and the failure that ends the test after the summary.
    async fn teardown(&self) -> (Option<Arc<Shared>>, Option<RunError>) {
        if self.flow.no_teardown {
            return (Some(self.shared.clone()), None);
        }
        let lc = match Lifecycle::start(self.shared.clone()) {
            Ok(lc) => lc,
            Err(e) => {
                self.logger
                    .log(Level::Error, &e.message, &[("hint", "script exception")]);
                return (Some(self.shared.clone()), None);
            }
        };
        let limit = self.flow.timeouts.teardown;
        let interrupt = CancellationToken::new();
        match tokio::time::timeout(limit, lc.teardown(interrupt.clone())).await {
            Ok(Ok(())) => (Some(self.shared.clone()), None),
            Ok(Err(e)) => {
                self.logger
                    .log(Level::Error, &e.message, &[("hint", "script exception")]);
                (Some(self.shared.clone()), None)
            }
            Err(_) => {
                interrupt.cancel();
                lc.detach();
                let failure = RunError::timeout(
                    ExitCode::TeardownTimeout,
                    "teardown",
                    "teardownTimeout",
                    limit,
                );
                (None, Some(failure))
            }
        }
    }
}

/// k6's error for a test ended by a signal (`interrupt`, `terminated`).
pub(super) fn aborted_by(signal: &str) -> String {
    format!("test run was aborted because k6 received a '{signal}' signal")
}

/// Aborts a task when dropped, so every return path of [`execute`] stops watching.
pub(super) struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// First SIGINT/SIGTERM: stop gracefully (recording Go's name of the signal and cancelling
/// `signalled`). Second: exit at once.
pub(super) async fn watch_signals(
    stop: CancellationToken,
    signalled: CancellationToken,
    received: Arc<std::sync::OnceLock<&'static str>>,
    logger: Logger,
    // After the test (`--linger`) a signal only ends the wait, silently as in k6.
    lingering: Arc<std::sync::atomic::AtomicBool>,
) {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let next = async {
        #[cfg(unix)]
        {
            if let Some(t) = term.as_mut() {
                return tokio::select! {
                    _ = tokio::signal::ctrl_c() => "interrupt",
                    _ = t.recv() => "terminated",
                };
            }
        }
        let _ = tokio::signal::ctrl_c().await;
        "interrupt"
    };
    let name = next.await;
    let _ = received.set(name);
    if !lingering.load(Ordering::Relaxed) {
        logger.log(
            Level::Warning,
            "Stopping the test (press Ctrl+C again to stop at once)",
            &[],
        );
    }
    signalled.cancel();
    stop.cancel();
    #[cfg(unix)]
    if let Some(t) = term.as_mut() {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = t.recv() => {}
        }
        std::process::exit(ExitCode::ExternalAbort as i32);
    }
    let _ = tokio::signal::ctrl_c().await;
    std::process::exit(ExitCode::ExternalAbort as i32);
}
