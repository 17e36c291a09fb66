//! `rk6 aggregate`: one verdict for a distributed test. Runners started with `-o
//! aggregate=http://HOST:PORT` push their deltas here (see `hub.rs`); this command loads
//! the script's thresholds and summary options as `rk6 inspect` reads them, merges the
//! pushes, judges the thresholds on the whole test every 2 s (an `abortOnFail` crossing
//! stops every runner through its REST API), and when every runner is done — or none has
//! been heard from for `--timeout` — prints the end-of-test summary of the whole test,
//! writes `--summary-export` and exits as k6 would (99 on crossed thresholds). With
//! `--setup-once` it also starts the test: `setup()` once, its data to every paused runner,
//! then `teardown()` once at the end (see `setup_once.rs`). With `RK6_AGGREGATE_SECRET`
//! set, only pushes carrying the same secret count; the summary says how many were refused.

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::Method;
use rk6_js::log::{Level, Logger};
use rk6_metrics::{Aggregator, Pass, Registry, ThresholdSet};
use rk6_output::aggregate::protocol::{self, SECRET_ENV};
use rk6_output::{k6_summary, render_text, summary_export, SummaryMode, TextOptions};
use rk6_scheduler::segment::Segment;
use serde_json::{json, Value};

use crate::args::AggregateArgs;
use crate::exit::ExitCode;
use crate::hub::{self, Hub, SharedHub};
use crate::inspect::script_options;
use crate::run_error::RunError;
use crate::setup_once::{SetupOnce, Target};

/// How often thresholds are judged on the merged whole (as `rk6 run` does).
const THRESHOLD_PERIOD: Duration = Duration::from_secs(2);

/// How often the command looks at the hub.
const TICK: Duration = Duration::from_millis(200);

/// How long stopped runners get to say done once the test cannot start.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// How long the lifecycle VU's last samples may take to be merged.
const SAMPLES_GRACE: Duration = Duration::from_secs(2);

/// What the script says about judging and showing the test.
struct Judging {
    /// The script, for its `handleSummary()`.
    program: Arc<rk6_js::Program>,
    /// Whether it exports `handleSummary`.
    handle_summary: bool,
    registry: Arc<Registry>,
    thresholds: ThresholdSet,
    trend_stats: Vec<String>,
    summary_mode: SummaryMode,
    time_unit: Option<String>,
    /// Whether the summary is shown (not with `summaryMode: disabled` or `--no-summary`).
    shown: bool,
    /// `--setup-once`: the aggregator's own setup/teardown VU.
    setup_once: Option<SetupOnce>,
}

/// Runs `rk6 aggregate`.
pub fn run(args: AggregateArgs) -> ExitCode {
    let logger = Logger::new(false);
    let judging = match load(&args, logger) {
        Ok(j) => j,
        Err((code, msg)) => {
            logger.log(Level::Error, &msg, &[]);
            return code;
        }
    };
    if args.instances == 0 {
        logger.log(Level::Error, "--instances must be at least 1", &[]);
        return ExitCode::InvalidConfig;
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            logger.log(Level::Error, &e.to_string(), &[]);
            return ExitCode::Failure;
        }
    };
    rt.block_on(aggregate(&args, judging, logger))
}

/// The script's thresholds and summary options (script options only, as `rk6 inspect`).
fn load(args: &AggregateArgs, logger: Logger) -> Result<Judging, (ExitCode, String)> {
    let registry = Arc::new(Registry::new());
    let (program, init, layer) = script_options(
        &args.script,
        args.include_system_env_vars,
        &args.env,
        registry.clone(),
        logger,
    )?;
    let options = layer.options;
    let thresholds =
        crate::plan::thresholds(&options, &registry, false).map_err(|e| (e.code, e.message))?;
    let summary =
        crate::plan::SummaryPlan::from_options(&options, false).map_err(|e| (e.code, e.message))?;
    summary.warn(&logger);
    let trend_stats = summary.trend_stats;
    let summary_mode = match summary.mode {
        SummaryMode::Legacy => SummaryMode::Legacy,
        // Deltas carry no per-scenario or per-group sinks: full is shown as compact.
        _ => SummaryMode::Compact,
    };
    let setup_once = if args.setup_once {
        let s = SetupOnce::new(
            program.clone(),
            registry.clone(),
            &options,
            &init.functions,
            logger,
        )
        .map_err(|f| (f.code, f.message))?;
        Some(s)
    } else {
        None
    };
    Ok(Judging {
        setup_once,
        program,
        handle_summary: init.functions.iter().any(|f| f == "handleSummary"),
        registry,
        thresholds,
        trend_stats,
        summary_mode,
        time_unit: summary.time_unit,
        shown: summary.shown && !args.no_summary,
    })
}

/// How the wait for the runners ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// Every runner said done.
    AllDone,
    /// No push for `--timeout` while some runner was not done.
    Silent,
    /// No runner joined within `--join-timeout`.
    NobodyJoined,
    /// The test could not start (`--setup-once`): the runners were stopped.
    NotStarted,
    /// SIGINT or SIGTERM.
    Signal,
}

/// Listens, waits for the runners (starting them with `--setup-once`), closes the test,
/// and reports the whole of it.
async fn aggregate(args: &AggregateArgs, judging: Judging, logger: Logger) -> ExitCode {
    let Judging {
        program,
        handle_summary,
        registry,
        thresholds,
        trend_stats,
        summary_mode,
        time_unit,
        shown,
        setup_once,
    } = judging;
    let session = match Session::open(args, Aggregator::new(registry, thresholds), logger).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut wait = Wait::new(args, &session, setup_once.map(Arc::new), logger);
    let end = wait.until_the_end().await;
    let closed = wait.close(&end).await;
    let report = Report {
        program,
        handle_summary,
        trend_stats,
        summary_mode,
        time_unit,
        shown,
    };
    report.print(args, &session, end, closed, logger)
}

/// The aggregator's endpoint and what reaches it.
struct Session {
    hub: SharedHub,
    /// Whether pushes must carry `RK6_AGGREGATE_SECRET`.
    secured: bool,
}

impl Session {
    /// Binds `--address` and serves the runners' pushes; warns when anyone beyond this
    /// machine may push, and says how to start the runners.
    async fn open(
        args: &AggregateArgs,
        aggregator: Aggregator,
        logger: Logger,
    ) -> Result<Session, ExitCode> {
        let listener = crate::control::bind(&args.address).await.map_err(|e| {
            logger.log(
                Level::Error,
                &format!("cannot listen on {}: {e}", args.address),
                &[],
            );
            ExitCode::Failure
        })?;
        let local = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| args.address.clone());
        let secret = protocol::secret(&|k| std::env::var(k).ok());
        let secured = secret.is_some();
        if open_to_others(listener.local_addr().ok(), secured) {
            logger.log(Level::Warning, &open_to_all(&local), &[]);
        }
        let hub: SharedHub = Arc::new(Mutex::new(Hub::new(aggregator)));
        hub::serve(listener, hub.clone(), secret);
        if !args.quiet {
            let paused = if args.setup_once {
                "--paused --no-setup --no-teardown "
            } else {
                ""
            };
            let with_secret = if secured {
                format!(" and {SECRET_ENV}")
            } else {
                String::new()
            };
            println!(
                "rk6 aggregate: waiting for {} runners on http://{local} (runners: {paused}-o aggregate=http://{local}{with_secret})",
                args.instances
            );
        }
        Ok(Session { hub, secured })
    }
}

/// The wait for the runners: what has happened so far, looked at every [`TICK`].
struct Wait<'a> {
    args: &'a AggregateArgs,
    hub: SharedHub,
    logger: Logger,
    /// `--setup-once`: the aggregator's own setup/teardown VU.
    setup_once: Option<Arc<SetupOnce>>,
    /// The thread that merges setup()'s and teardown()'s samples.
    samples_thread: Option<std::thread::JoinHandle<()>>,
    /// Set by SIGINT/SIGTERM: the wait ends, the summary of what arrived is still printed.
    signalled: Arc<std::sync::atomic::AtomicBool>,
    /// Cancelled by the same signal: interrupts a running setup().
    interrupt: rk6_scheduler::CancellationToken,
    started: Instant,
    next_eval: Instant,
    /// An abortOnFail threshold crossed on the whole test.
    aborted: bool,
    /// Runners already told to stop.
    stopped: Vec<String>,
    /// `--setup-once`: the start in progress, the runners it starts, whether it
    /// succeeded, and what kept the test from starting (every runner is then stopped).
    starting: Option<tokio::task::JoinHandle<Result<(), RunError>>>,
    targets: Vec<String>,
    test_started: bool,
    failure: Option<(RunError, Instant)>,
    said_cannot_start: bool,
    said_refused: bool,
}

/// What closing the test left for the report.
struct Closed {
    /// `teardown()` failed (`--setup-once`).
    teardown_failure: Option<RunError>,
    /// `setup()`'s data, for `handleSummary()`.
    setup_data: Option<Value>,
    /// What kept the test from starting (`--setup-once`).
    failure: Option<RunError>,
}

impl<'a> Wait<'a> {
    fn new(
        args: &'a AggregateArgs,
        session: &Session,
        setup_once: Option<Arc<SetupOnce>>,
        logger: Logger,
    ) -> Self {
        // setup()'s and teardown()'s own requests count in the whole test, as in k6.
        let samples_thread = setup_once
            .as_ref()
            .and_then(|s| s.merge_samples_into(session.hub.clone()));
        let signalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let interrupt = rk6_scheduler::CancellationToken::new();
        {
            let (signalled, interrupt) = (signalled.clone(), interrupt.clone());
            tokio::spawn(async move {
                signal().await;
                signalled.store(true, std::sync::atomic::Ordering::Relaxed);
                interrupt.cancel();
            });
        }
        let started = Instant::now();
        Wait {
            args,
            hub: session.hub.clone(),
            logger,
            setup_once,
            samples_thread,
            signalled,
            interrupt,
            started,
            next_eval: started + THRESHOLD_PERIOD,
            aborted: false,
            stopped: Vec::new(),
            starting: None,
            targets: Vec::new(),
            test_started: false,
            failure: None,
            said_cannot_start: false,
            said_refused: false,
        }
    }

    /// Looks at the hub every [`TICK`] until the wait ends.
    async fn until_the_end(&mut self) -> End {
        loop {
            tokio::time::sleep(TICK).await;
            self.collect_start().await;
            let (to_stop, end) = {
                let shared = self.hub.clone();
                let mut h = hub::lock(&shared);
                self.announce(&mut h);
                self.judge(&mut h);
                self.start_when_all_joined(&h);
                (self.runners_to_stop(&h), self.end(&h))
            };
            if self.failure.is_some() && !self.said_cannot_start {
                self.said_cannot_start = true;
                if !self.args.quiet {
                    println!("rk6 aggregate: the test cannot start; stopping every runner");
                }
            }
            for (label, api) in to_stop {
                tokio::spawn(stop_runner(label, api, self.logger));
            }
            if let Some(end) = end {
                return end;
            }
        }
    }

    /// `--setup-once`: how the start went, once it has finished.
    async fn collect_start(&mut self) {
        let Some(handle) = self.starting.take_if(|h| h.is_finished()) else {
            return;
        };
        let result = handle
            .await
            .unwrap_or_else(|e| Err(RunError::generic(e.to_string())));
        match result {
            Ok(()) => {
                self.test_started = true;
                if !self.args.quiet {
                    let ran = if self.setup_once.as_ref().is_some_and(|s| s.has_setup()) {
                        "setup() ran once; "
                    } else {
                        ""
                    };
                    println!("rk6 aggregate: {ran}started {} runners", self.targets.len());
                }
            }
            Err(f) => self.failure = Some((f, Instant::now())),
        }
    }

    /// Says once that pushes were refused, and names each runner as it joins.
    fn announce(&mut self, h: &mut Hub) {
        if h.refused > 0 && !self.said_refused {
            self.said_refused = true;
            self.logger.log(
                Level::Warning,
                &format!(
                    "refused a push without the aggregator's secret ({SECRET_ENV}); it changes nothing, and the summary counts every such push"
                ),
                &[],
            );
        }
        for r in h.runners.iter_mut().filter(|r| !r.announced) {
            r.announced = true;
            if !self.args.quiet {
                println!("rk6 aggregate: {} joined", r.runner.label());
            }
        }
    }

    /// Judges the thresholds on the whole test every [`THRESHOLD_PERIOD`]; an abortOnFail
    /// crossing stops every runner.
    fn judge(&mut self, h: &mut Hub) {
        if Instant::now() < self.next_eval {
            return;
        }
        self.next_eval += THRESHOLD_PERIOD;
        let elapsed = h.elapsed;
        let verdict = h.aggregator.evaluate(elapsed, Pass::During);
        if verdict.abort && !self.aborted {
            self.aborted = true;
            self.logger.log(
                Level::Error,
                &format!(
                    "thresholds on metrics '{}' were crossed on the whole test; at least one has abortOnFail enabled, stopping every runner",
                    verdict.crossed.join(", ")
                ),
                &[],
            );
        }
    }

    /// `--setup-once`: once `--instances` runners joined, the first of them are the test's
    /// and it starts; too few by `--join-timeout`, it cannot.
    fn start_when_all_joined(&mut self, h: &Hub) {
        let Some(s) = self.setup_once.as_ref().filter(|_| {
            self.starting.is_none() && self.targets.is_empty() && self.failure.is_none()
        }) else {
            return;
        };
        let (args, joined) = (self.args, h.runners.len());
        if joined >= args.instances {
            let runners = &h.runners[..args.instances];
            if let Some(r) = runners.iter().find(|r| r.runner.api.is_none()) {
                let f = RunError::generic(format!(
                    "cannot start {}: it runs without a REST API (--address), which --setup-once needs",
                    r.runner.label()
                ));
                self.failure = Some((f, Instant::now()));
                return;
            }
            self.targets = runners.iter().map(|r| r.runner.id.clone()).collect();
            let list: Vec<Target> = runners
                .iter()
                .map(|r| Target {
                    label: r.runner.label(),
                    api: r.runner.api.clone().unwrap_or_default(),
                })
                .collect();
            let (s, interrupt, logger) = (s.clone(), self.interrupt.clone(), self.logger);
            let wait = args.join_timeout.saturating_sub(self.started.elapsed());
            self.starting = Some(tokio::spawn(async move {
                s.start(&list, wait, interrupt, logger).await
            }));
        } else if self.started.elapsed() >= args.join_timeout && joined > 0 {
            let f = RunError::generic(format!(
                "only {joined} of {} runners joined within {}s; the test cannot start",
                args.instances,
                args.join_timeout.as_secs_f64()
            ));
            self.failure = Some((f, Instant::now()));
        }
    }

    /// The runners to stop now: all after an abort or a failed start, and with
    /// `--setup-once` one that joins after the test's runners were chosen (it would wait
    /// paused for ever); each once.
    fn runners_to_stop(&mut self, h: &Hub) -> Vec<(String, String)> {
        let stop_all = self.aborted || self.failure.is_some();
        let mut to_stop = Vec::new();
        for r in h.runners.iter().filter(|r| !r.done) {
            if self.stopped.contains(&r.runner.id) {
                continue;
            }
            let late = self.setup_once.is_some()
                && !self.targets.is_empty()
                && !self.targets.contains(&r.runner.id);
            if !stop_all && !late {
                continue;
            }
            if late && !stop_all {
                self.logger.log(
                    Level::Warning,
                    &format!(
                        "{} joined after the test's {} runners; stopping it",
                        r.runner.label(),
                        self.args.instances
                    ),
                    &[],
                );
            }
            self.stopped.push(r.runner.id.clone());
            match &r.runner.api {
                Some(api) => to_stop.push((r.runner.label(), api.clone())),
                None => self.logger.log(
                    Level::Error,
                    &format!(
                        "cannot stop {}: it runs without a REST API (--address)",
                        r.runner.label()
                    ),
                    &[],
                ),
            }
        }
        to_stop
    }

    /// Whether (and how) the wait is over.
    fn end(&self, h: &Hub) -> Option<End> {
        let args = self.args;
        let joined = h.runners.len();
        let all_done = joined > 0 && h.done() == joined;
        if self.signalled.load(std::sync::atomic::Ordering::Relaxed) {
            Some(End::Signal)
        } else if let Some((_, at)) = &self.failure {
            // Stopped while paused, every runner says done at once.
            (all_done || at.elapsed() >= STOP_GRACE).then_some(End::NotStarted)
        } else if joined >= args.instances && all_done {
            Some(End::AllDone)
        } else if h.last_push.is_some_and(|t| t.elapsed() >= args.timeout) {
            Some(End::Silent)
        } else if joined == 0 && self.started.elapsed() >= args.join_timeout {
            Some(End::NobodyJoined)
        } else {
            None
        }
    }

    /// `--setup-once`: a test that never started has its waiting runners stopped; one that
    /// ran gets its `teardown()` once every runner is done or missing (a signal leaves
    /// runners running, so no teardown then).
    async fn close(mut self, end: &End) -> Closed {
        let mut closed = Closed {
            teardown_failure: None,
            setup_data: None,
            failure: self.failure.take().map(|(f, _)| f),
        };
        let Some(s) = self.setup_once.take() else {
            return closed;
        };
        if let Some(handle) = self.starting.take() {
            // A signal came while the test was starting: a running setup() is interrupted
            // (and its VU left behind if it does not stop), which ends the start.
            let _ = tokio::time::timeout(Duration::from_secs(1), handle).await;
        }
        if !self.test_started {
            let waiting: Vec<(String, String)> = {
                let h = hub::lock(&self.hub);
                h.runners
                    .iter()
                    .filter(|r| !r.done && !self.stopped.contains(&r.runner.id))
                    .filter_map(|r| r.runner.api.clone().map(|a| (r.runner.label(), a)))
                    .collect()
            };
            let mut set = tokio::task::JoinSet::new();
            for (label, api) in waiting {
                set.spawn(stop_runner(label, api, self.logger));
            }
            while set.join_next().await.is_some() {}
        } else if *end != End::Signal {
            closed.teardown_failure = s.teardown(&self.logger).await.err();
        }
        closed.setup_data = s.data();
        drop(s);
        if let Some(t) = self.samples_thread.take() {
            // The thread ends once the lifecycle VUs are gone; one left behind by a
            // timeout may never let it.
            let deadline = Instant::now() + SAMPLES_GRACE;
            while !t.is_finished() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        closed
    }
}

/// How the whole test is shown and exported.
struct Report {
    program: Arc<rk6_js::Program>,
    handle_summary: bool,
    trend_stats: Vec<String>,
    summary_mode: SummaryMode,
    time_unit: Option<String>,
    shown: bool,
}

impl Report {
    /// The final threshold pass, `handleSummary()` or the text summary, the export, then
    /// the exit code as k6 ranks the causes.
    fn print(
        self,
        args: &AggregateArgs,
        session: &Session,
        end: End,
        closed: Closed,
        logger: Logger,
    ) -> ExitCode {
        let mut h = hub::lock(&session.hub);
        let elapsed = h.elapsed;
        let verdict = h.aggregator.evaluate(elapsed, Pass::Final);
        let data = h.aggregator.summary(elapsed, &self.trend_stats);
        // As `rk6 run`: the script's handleSummary() (on a VU of its own), else the text
        // summary.
        let printed = self.shown
            && self.handle_summary
            && summarise(
                self.program,
                data.clone(),
                &self.trend_stats,
                self.time_unit.as_deref(),
                args.no_color,
                closed.setup_data,
                &logger,
            );
        let refused = h.refused;
        if self.shown && !printed {
            let color = crate::compare::color(args.no_color);
            let mut text = render_text(
                &data,
                &TextOptions {
                    mode: self.summary_mode,
                    color,
                    time_unit: self.time_unit,
                },
            );
            if refused > 0 {
                text.push_str(&refused_note(refused));
            }
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
        if refused > 0 {
            logger.log(Level::Warning, &refused_line(refused), &[]);
        }
        if let Some(path) = &args.summary_export {
            let mut export = summary_export(&k6_summary(&data));
            // rk6's own: what the aggregator refused, beside k6's keys.
            if let Some(doc) = export.as_object_mut() {
                doc.insert(
                    "aggregate".into(),
                    json!({"secret": session.secured, "refused_pushes": refused}),
                );
            }
            let json = serde_json::to_string_pretty(&export).unwrap_or_default();
            if let Err(e) = std::fs::write(path, json) {
                logger.log(
                    Level::Error,
                    &format!("cannot write the summary export {}: {e}", path.display()),
                    &[],
                );
            }
        }
        if let Some(f) = closed.failure {
            // As k6 reports a failed setup: after the summary, with its own exit code.
            h.runners.clear();
            return f.log(&logger);
        }
        let missing = report_coverage(&h.runners, args.instances, &end, args, &logger);
        h.runners.clear();
        if let Some(f) = closed.teardown_failure {
            return f.log(&logger);
        }
        if verdict.failed {
            logger.log(
                Level::Error,
                &format!(
                    "thresholds on metrics '{}' have been crossed on the whole test",
                    verdict.crossed.join(", ")
                ),
                &[],
            );
            return ExitCode::ThresholdsFailed;
        }
        if end == End::Signal {
            logger.log(
                Level::Error,
                "the aggregator was stopped by a signal before every runner was done",
                &[],
            );
            return ExitCode::ExternalAbort;
        }
        if missing {
            return ExitCode::Failure;
        }
        ExitCode::Success
    }
}

/// Whether anyone beyond this machine may push: the aggregator listens beyond loopback
/// (`0.0.0.0`, a pod's address) without a secret.
fn open_to_others(local: Option<std::net::SocketAddr>, secured: bool) -> bool {
    !secured && !local.is_some_and(|a| a.ip().is_loopback())
}

/// The warning of an aggregator that takes pushes from anyone beyond this machine.
fn open_to_all(local: &str) -> String {
    format!(
        "rk6 aggregate listens on {local} without a secret: anyone who can connect to it can push figures into the whole test and change its verdict; set {SECRET_ENV} to the same secret on the aggregator and its runners"
    )
}

/// The line under the text summary when pushes were refused.
fn refused_note(refused: u64) -> String {
    format!("\n  {}\n\n", refused_line(refused))
}

/// How many pushes were refused for want of the secret, and what that means for the figures.
fn refused_line(refused: u64) -> String {
    let (pushes, they) = if refused == 1 {
        ("push", "it")
    } else {
        ("pushes", "they")
    };
    format!(
        "The aggregator refused {refused} {pushes} without its secret ({SECRET_ENV}); what {they} carried is not in these figures."
    )
}

/// Runs the script's `handleSummary(data)` over the whole test's summary (k6's metrics
/// only, as `rk6 run` gives it) and writes what it returns; whether it returned outputs.
fn summarise(
    program: Arc<rk6_js::Program>,
    data: rk6_metrics::SummaryData,
    trend_stats: &[String],
    time_unit: Option<&str>,
    no_color: bool,
    setup_data: Option<Value>,
    logger: &Logger,
) -> bool {
    use std::io::IsTerminal as _;
    let registry = Arc::new(Registry::new());
    let lifecycle =
        match rk6_js::Lifecycle::start(rk6_js::Shared::for_init(program, registry, *logger)) {
            Ok(l) => l,
            Err(e) => {
                logger.log(
                    Level::Error,
                    &format!("handleSummary() failed: {}", e.message),
                    &[],
                );
                return false;
            }
        };
    let json = rk6_output::handle_summary_data(
        &k6_summary(&data),
        trend_stats,
        time_unit,
        no_color,
        std::io::stdout().is_terminal(),
        std::io::stderr().is_terminal(),
        setup_data,
    );
    let result = tokio::task::block_in_place(|| {
        tokio::runtime::Handle::current().block_on(lifecycle.handle_summary(json))
    });
    match result {
        Ok(Some(outputs)) => {
            crate::run::write_outputs(logger, outputs);
            true
        }
        Ok(None) => false,
        Err(e) => {
            logger.log(
                Level::Error,
                &format!("handleSummary() failed: {}", e.message),
                &[],
            );
            false
        }
    }
}

/// Says which runners are missing and what share of the test the figures cover; returns
/// whether one is missing.
fn report_coverage(
    runners: &[hub::RunnerState],
    instances: usize,
    end: &End,
    args: &AggregateArgs,
    logger: &Logger,
) -> bool {
    let share = |r: &hub::RunnerState| {
        r.runner
            .segment
            .as_deref()
            .and_then(|s| Segment::parse(s).ok())
            .unwrap_or(Segment::FULL)
            .share()
    };
    let full = runners
        .iter()
        .filter(|r| r.done)
        .fold(0.0, |sum, r| sum + share(r))
        .min(1.0);
    let done = runners.iter().filter(|r| r.done).count();
    let mut missing = false;
    for r in runners.iter().filter(|r| !r.done) {
        missing = true;
        logger.log(
            Level::Error,
            &format!(
                "{} is missing: its last push arrived {:.1}s before the end and it never said done; its figures up to then are included",
                r.runner.label(),
                r.last_seen.elapsed().as_secs_f64()
            ),
            &[],
        );
    }
    if runners.len() < instances {
        missing = true;
        let msg = match end {
            End::NobodyJoined => format!(
                "no runner joined within {}s",
                args.join_timeout.as_secs_f64()
            ),
            _ => format!(
                "{} of {instances} runners never joined",
                instances - runners.len()
            ),
        };
        logger.log(Level::Error, &msg, &[]);
    }
    if missing || !args.quiet {
        let level = if missing { Level::Warning } else { Level::Info };
        logger.log(
            level,
            &format!(
                "the figures cover {done} of {instances} runners in full: {:.2}% of the test's execution segments",
                full * 100.0
            ),
            &[],
        );
    }
    missing
}

/// Stops one runner through its REST API (`PATCH /v1/status` with `stopped: true`).
async fn stop_runner(label: String, api: String, logger: Logger) {
    let doc = json!({"data": {"type": "status", "id": "default", "attributes": {"stopped": true}}});
    if let Err(e) = crate::control_client::call(&api, Method::PATCH, Some(doc)).await {
        logger.log(
            Level::Error,
            &format!("cannot stop {label} through its REST API at {api}: {e:#}"),
            &[],
        );
    }
}

/// The first SIGINT (or, on Unix, SIGTERM).
async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_beyond_loopback_without_a_secret_is_warned_of() {
        let at = |a: &str| Some(a.parse().unwrap());
        assert!(open_to_others(at("0.0.0.0:6566"), false));
        assert!(open_to_others(at("[::]:6566"), false));
        assert!(open_to_others(at("10.0.0.9:6566"), false));
        assert!(!open_to_others(at("127.0.0.1:6566"), false));
        assert!(!open_to_others(at("[::1]:6566"), false));
        assert!(
            !open_to_others(at("0.0.0.0:6566"), true),
            "a secret guards it"
        );
    }

    #[test]
    fn the_summary_counts_refused_pushes() {
        assert_eq!(
            refused_line(1),
            "The aggregator refused 1 push without its secret (RK6_AGGREGATE_SECRET); what it carried is not in these figures."
        );
        assert!(refused_note(3).contains("refused 3 pushes"));
    }
}
