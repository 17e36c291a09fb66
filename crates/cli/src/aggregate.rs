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
    let listener = match crate::control::bind(&args.address).await {
        Ok(l) => l,
        Err(e) => {
            logger.log(
                Level::Error,
                &format!("cannot listen on {}: {e}", args.address),
                &[],
            );
            return ExitCode::Failure;
        }
    };
    let local = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| args.address.clone());
    let secret = protocol::secret(&|k| std::env::var(k).ok());
    let secured = secret.is_some();
    if open_to_others(listener.local_addr().ok(), secured) {
        logger.log(Level::Warning, &open_to_all(&local), &[]);
    }
    let hub: SharedHub = Arc::new(Mutex::new(Hub::new(Aggregator::new(registry, thresholds))));
    hub::serve(listener, hub.clone(), secret);
    let setup_once = setup_once.map(Arc::new);
    // setup()'s and teardown()'s own requests count in the whole test, as in k6.
    let samples_thread = setup_once
        .as_ref()
        .and_then(|s| s.merge_samples_into(hub.clone()));
    if !args.quiet {
        let paused = if setup_once.is_some() {
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
    // A signal ends the wait; the summary of what arrived is still printed.
    let signalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // And interrupts a setup() that is running.
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
    let mut next_eval = Instant::now() + THRESHOLD_PERIOD;
    let mut aborted = false;
    let mut stopped: Vec<String> = Vec::new();
    // --setup-once: the start in progress, the runners it starts, whether it succeeded, and
    // what kept the test from starting (every runner is then stopped).
    let mut starting: Option<tokio::task::JoinHandle<Result<(), RunError>>> = None;
    let mut targets: Vec<String> = Vec::new();
    let mut test_started = false;
    let mut failure: Option<(RunError, Instant)> = None;
    let mut said_cannot_start = false;
    let mut said_refused = false;
    let end = loop {
        tokio::time::sleep(TICK).await;
        if let Some(handle) = starting.take_if(|h| h.is_finished()) {
            let result = handle
                .await
                .unwrap_or_else(|e| Err(RunError::generic(e.to_string())));
            match result {
                Ok(()) => {
                    test_started = true;
                    if !args.quiet {
                        let ran = if setup_once.as_ref().is_some_and(|s| s.has_setup()) {
                            "setup() ran once; "
                        } else {
                            ""
                        };
                        println!("rk6 aggregate: {ran}started {} runners", targets.len());
                    }
                }
                Err(f) => failure = Some((f, Instant::now())),
            }
        }
        let mut to_stop = Vec::new();
        let end = {
            let mut h = hub::lock(&hub);
            if h.refused > 0 && !said_refused {
                said_refused = true;
                logger.log(
                    Level::Warning,
                    &format!(
                        "refused a push without the aggregator's secret ({SECRET_ENV}); it changes nothing, and the summary counts every such push"
                    ),
                    &[],
                );
            }
            for r in h.runners.iter_mut().filter(|r| !r.announced) {
                r.announced = true;
                if !args.quiet {
                    println!("rk6 aggregate: {} joined", r.runner.label());
                }
            }
            if Instant::now() >= next_eval {
                next_eval += THRESHOLD_PERIOD;
                let elapsed = h.elapsed;
                let verdict = h.aggregator.evaluate(elapsed, Pass::During);
                if verdict.abort && !aborted {
                    aborted = true;
                    logger.log(
                        Level::Error,
                        &format!(
                            "thresholds on metrics '{}' were crossed on the whole test; at least one has abortOnFail enabled, stopping every runner",
                            verdict.crossed.join(", ")
                        ),
                        &[],
                    );
                }
            }
            let joined = h.runners.len();
            if let Some(s) = setup_once
                .as_ref()
                .filter(|_| starting.is_none() && targets.is_empty() && failure.is_none())
            {
                if joined >= args.instances {
                    // The first N to join are the test's runners.
                    let runners = &h.runners[..args.instances];
                    match runners.iter().find(|r| r.runner.api.is_none()) {
                        Some(r) => {
                            let f = RunError::generic(format!(
                                "cannot start {}: it runs without a REST API (--address), which --setup-once needs",
                                r.runner.label()
                            ));
                            failure = Some((f, Instant::now()));
                        }
                        None => {
                            targets = runners.iter().map(|r| r.runner.id.clone()).collect();
                            let list: Vec<Target> = runners
                                .iter()
                                .map(|r| Target {
                                    label: r.runner.label(),
                                    api: r.runner.api.clone().unwrap_or_default(),
                                })
                                .collect();
                            let (s, interrupt) = (s.clone(), interrupt.clone());
                            let wait = args.join_timeout.saturating_sub(started.elapsed());
                            starting = Some(tokio::spawn(async move {
                                s.start(&list, wait, interrupt, logger).await
                            }));
                        }
                    }
                } else if started.elapsed() >= args.join_timeout && joined > 0 {
                    let f = RunError::generic(format!(
                        "only {joined} of {} runners joined within {}s; the test cannot start",
                        args.instances,
                        args.join_timeout.as_secs_f64()
                    ));
                    failure = Some((f, Instant::now()));
                }
            }
            let stop_all = aborted || failure.is_some();
            for r in h.runners.iter().filter(|r| !r.done) {
                if stopped.contains(&r.runner.id) {
                    continue;
                }
                // Runners that join after the abort are stopped too; with --setup-once, so
                // is one that joins once the test's N runners are chosen (it would wait
                // paused for ever).
                let late =
                    setup_once.is_some() && !targets.is_empty() && !targets.contains(&r.runner.id);
                if !stop_all && !late {
                    continue;
                }
                if late && !stop_all {
                    logger.log(
                        Level::Warning,
                        &format!(
                            "{} joined after the test's {} runners; stopping it",
                            r.runner.label(),
                            args.instances
                        ),
                        &[],
                    );
                }
                stopped.push(r.runner.id.clone());
                match &r.runner.api {
                    Some(api) => to_stop.push((r.runner.label(), api.clone())),
                    None => logger.log(
                        Level::Error,
                        &format!(
                            "cannot stop {}: it runs without a REST API (--address)",
                            r.runner.label()
                        ),
                        &[],
                    ),
                }
            }
            let all_done = joined > 0 && h.done() == joined;
            if signalled.load(std::sync::atomic::Ordering::Relaxed) {
                Some(End::Signal)
            } else if let Some((_, at)) = &failure {
                // Stopped while paused, every runner says done at once.
                (all_done || at.elapsed() >= STOP_GRACE).then_some(End::NotStarted)
            } else if joined >= args.instances && all_done {
                Some(End::AllDone)
            } else if h.last_push.is_some_and(|t| t.elapsed() >= args.timeout) {
                Some(End::Silent)
            } else if joined == 0 && started.elapsed() >= args.join_timeout {
                Some(End::NobodyJoined)
            } else {
                None
            }
        };
        if failure.is_some() && !said_cannot_start {
            said_cannot_start = true;
            if !args.quiet {
                println!("rk6 aggregate: the test cannot start; stopping every runner");
            }
        }
        for (label, api) in to_stop {
            tokio::spawn(stop_runner(label, api, logger));
        }
        if let Some(end) = end {
            break end;
        }
    };
    let mut teardown_failure = None;
    let mut setup_data = None;
    if let Some(s) = setup_once {
        if let Some(handle) = starting.take() {
            // A signal came while the test was starting: a running setup() is interrupted
            // (and its VU left behind if it does not stop), which ends the start.
            let _ = tokio::time::timeout(Duration::from_secs(1), handle).await;
        }
        if !test_started {
            // Runners still waiting paused would wait for ever.
            let waiting: Vec<(String, String)> = {
                let h = hub::lock(&hub);
                h.runners
                    .iter()
                    .filter(|r| !r.done && !stopped.contains(&r.runner.id))
                    .filter_map(|r| r.runner.api.clone().map(|a| (r.runner.label(), a)))
                    .collect()
            };
            let mut set = tokio::task::JoinSet::new();
            for (label, api) in waiting {
                set.spawn(stop_runner(label, api, logger));
            }
            while set.join_next().await.is_some() {}
        } else if end != End::Signal {
            // Once every runner is done or missing (a signal leaves runners running).
            teardown_failure = s.teardown(&logger).await.err();
        }
        setup_data = s.data();
        drop(s);
        if let Some(t) = samples_thread {
            // The thread ends once the lifecycle VUs are gone; one left behind by a
            // timeout may never let it.
            let deadline = Instant::now() + SAMPLES_GRACE;
            while !t.is_finished() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    let mut h = hub::lock(&hub);
    let elapsed = h.elapsed;
    let verdict = h.aggregator.evaluate(elapsed, Pass::Final);
    let data = h.aggregator.summary(elapsed, &trend_stats);
    // As `rk6 run`: the script's handleSummary() (on a VU of its own), else the text summary.
    let printed = shown
        && handle_summary
        && summarise(
            program,
            data.clone(),
            &trend_stats,
            time_unit.as_deref(),
            args.no_color,
            setup_data,
            &logger,
        );
    let refused = h.refused;
    if shown && !printed {
        let color = crate::compare::color(args.no_color);
        let mut text = render_text(
            &data,
            &TextOptions {
                mode: summary_mode,
                color,
                time_unit,
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
                json!({"secret": secured, "refused_pushes": refused}),
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
    if let Some((f, _)) = failure {
        // As k6 reports a failed setup: after the summary, with its own exit code.
        h.runners.clear();
        return f.log(&logger);
    }
    let missing = report_coverage(&h.runners, args.instances, &end, args, &logger);
    h.runners.clear();
    if let Some(f) = teardown_failure {
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
