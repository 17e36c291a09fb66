//! `rk6 run`: the whole test, from script to summary and exit code.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use rk6_js::log::{Level, Logger};
use rk6_js::{read_init, JsVuFactory, Lifecycle, Program, Shared};
use rk6_metrics::{builtin, Aggregator, Pass, Registry, Sample, SummaryData, TagSet, ThresholdSet};
use rk6_options::Options;
use rk6_output::{
    handle_summary_data, k6_summary, render_text, summary_export, K6MetricsOnly, Output,
    OutputError, OutputKind, OutputSpec, RunInfo, SummaryMode, TextOptions,
};
use rk6_scheduler::{
    scenarios_from_options, total_vus, CancellationToken, ExecutionState, RunEnd, Scenario,
    Segment, Stripe, ThreadPool,
};
use serde_json::Value;

use crate::args::RunArgs;
use crate::collector::{finish_outputs, Collected, Collector, LiveMetrics};
use crate::compare::Gate;
use crate::control::{self, Control, Hooks, Phase};
use crate::exit::ExitCode;
use crate::lifecycle_timeouts::LifecycleTimeouts;
use crate::progress;
use crate::run_error::RunError;
use crate::test_file::TestFile;

/// Worker event-loop lag at p(99) from which the end of the test says the generator was
/// saturated.
const SATURATED_LAG: Duration = Duration::from_millis(10);

/// Says so when the load generator itself ran late: every VU on a late worker sends late and
/// reads late, and the latency figures then include the generator's own delay. With `-v`,
/// the lag and the collector's pauses are logged whatever they were.
fn warn_if_saturated(
    logger: &Logger,
    lag: &rk6_scheduler::LagMonitor,
    gc: &rk6_scheduler::LagMonitor,
) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    // "<what> up to Xms<tail> (p(99) <= Yms over N <samples>)", or `None` before any sample.
    let figures = |m: &rk6_scheduler::LagMonitor, what: &str, tail: &str, samples: &str| {
        m.percentile_bound(99.0).map(|p99| {
            format!(
                "{what} up to {:.1}ms{tail} (p(99) <= {:.0}ms over {} {samples})",
                ms(m.max()),
                ms(p99),
                m.count()
            )
        })
    };
    // A collection stops every VU of its worker; its longest pause bounds what one worker's
    // VUs can be delayed by the engine itself.
    let pauses = figures(gc, "garbage-collection pauses", "", "collections")
        .unwrap_or_else(|| "no garbage collection".to_owned());
    let woke = figures(lag, "worker threads woke", " late", "probes")
        .unwrap_or_else(|| "no event-loop probes".to_owned());
    logger.log(Level::Debug, &format!("{woke}; {pauses}"), &[]);
    // Only a p(99) known to be at least the limit counts (the probes have bucket
    // resolution): one in a hundred wake-ups came 10 ms or more late.
    let Some(p99) = lag.percentile_floor(99.0) else {
        return;
    };
    if p99 >= SATURATED_LAG {
        logger.log(
            Level::Warning,
            &format!(
                "the load generator was saturated: its worker threads woke up to {:.1}ms late (p(99) >= {:.0}ms over {} probes; {pauses}), so requests went out and responses were read late by as much and the latency figures include rk6's own delay; give rk6 more CPU (fewer VUs or lighter iterations per machine, or a less busy machine) to measure the target alone",
                ms(lag.max()),
                ms(p99),
                lag.count()
            ),
            &[],
        );
    }
}

/// k6's default API address: when it is taken, the test runs without the API.
const DEFAULT_ADDRESS: &str = "localhost:6565";

/// `iteration_start_delay` p(95) above which the end of the test warns about the generator.
const LATE_START_WARNING_MS: f64 = 10.0;

const DEFAULT_TREND_STATS: &[&str] = &["avg", "min", "med", "max", "p(90)", "p(95)"];

/// Runs a test and returns its exit code: load → plan → execute → report; the one place a
/// failure is logged.
pub fn run(args: RunArgs) -> ExitCode {
    let mut logger = Logger::new(args.options.verbose);
    // A bad limit or BASE file is refused before the test costs anything.
    let gate = match Gate::from_flags(args.compare_to.as_deref(), &args.max_regression) {
        Ok(gate) => gate,
        Err(e) => return RunError::invalid(e).log(&logger),
    };
    let result = open_console(&args, &mut logger)
        .and_then(|()| open_secrets(&args, &mut logger))
        .and_then(|()| load(&args, logger))
        .and_then(|loaded| plan(&args, loaded, logger))
        .and_then(|plan| execute_and_report(&args, plan, gate, logger));
    match result {
        Ok(code) => code,
        Err(e) => e.log(&logger),
    }
}

/// `--console-output` / `K6_CONSOLE_OUTPUT`: where `console.*` goes from the init context on.
fn open_console(args: &RunArgs, logger: &mut Logger) -> Result<(), RunError> {
    let console_output = args.console_output.clone().or_else(|| {
        std::env::var_os("K6_CONSOLE_OUTPUT")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
    });
    if let Some(path) = &console_output {
        let file = rk6_js::log::ConsoleFile::open(path).map_err(|e| {
            RunError::new(
                ExitCode::Failure,
                format!("--console-output {}: {e}", path.display()),
            )
        })?;
        logger.console = Some(file);
    }
    Ok(())
}

/// `--secret-source`: the secrets `k6/secrets` reads and the logs redact. They live for the
/// rest of the process, as the `Copy` logger every VU holds points at them.
fn open_secrets(args: &RunArgs, logger: &mut Logger) -> Result<(), RunError> {
    if args.options.secret_source.is_empty() {
        return Ok(());
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let secrets = rk6_js::secrets::Secrets::from_flags(&args.options.secret_source, &cwd)
        .map_err(|e| RunError::new(ExitCode::Failure, e.to_string()))?;
    logger.secrets = Some(Box::leak(Box::new(secrets)));
    Ok(())
}

/// The script, loaded and initialised once, and the options of the run.
struct Loaded {
    program: Arc<Program>,
    registry: Arc<Registry>,
    /// The script's exported functions.
    functions: Vec<String>,
    options: Options,
}

fn load(args: &RunArgs, logger: Logger) -> Result<Loaded, RunError> {
    let test = TestFile::open(&args.script, None)?;
    let env = test
        .env(args.include_system_env_vars, &args.options.env)
        .map_err(RunError::invalid)?;
    let program = test.program(env)?;
    let registry = Arc::new(Registry::new());
    let init = read_init(program.clone(), registry.clone(), logger)?;
    let loaded = crate::options::load(test.script_options(&init.options), &args.options, |k| {
        std::env::var(k).ok()
    })?;
    for key in &loaded.unknown {
        logger.log(
            Level::Warning,
            "There were unknown fields in the options exported in the script",
            &[("error", &format!("json: unknown field \"{key}\""))],
        );
    }
    for w in &loaded.warnings {
        logger.log(Level::Warning, w, &[]);
    }
    Ok(Loaded {
        program,
        registry,
        functions: init.functions,
        options: loaded.options,
    })
}

/// Everything the run needs, checked before anything starts.
struct Plan {
    loaded: Loaded,
    output_specs: Vec<OutputSpec>,
    vu_stripe: Stripe,
    scenarios: Vec<Arc<Scenario>>,
    http: rk6_http::ClientConfig,
    run_options: rk6_js::RunOptions,
    timeouts: LifecycleTimeouts,
    thresholds: ThresholdSet,
    trend_stats: Vec<String>,
    summary_mode: SummaryMode,
    time_unit: Option<String>,
    /// `exec.test.options`.
    test_options: Value,
}

fn plan(args: &RunArgs, loaded: Loaded, logger: Logger) -> Result<Plan, RunError> {
    let options = &loaded.options;
    // k6 ends with its generic failure (255) on an output it cannot create, an unknown one
    // included.
    let output_specs = output_specs(args, |k| std::env::var(k).ok())
        .map_err(|e| RunError::new(ExitCode::Failure, e))?;
    // k6 refuses a bad segment flag with its generic failure, a bad option with 104.
    let flagged = args.options.execution_segment.is_some()
        || args.options.execution_segment_sequence.is_some();
    let vu_stripe = segment_stripe(options, flagged)?;
    let scenarios: Vec<Arc<Scenario>> = scenarios_from_options(options)
        .map_err(|e| RunError::invalid(e.0))?
        .into_iter()
        .map(|mut s| {
            s.apply_segment(&vu_stripe);
            Arc::new(s)
        })
        .collect();
    crate::capacity::check(
        total_vus(&scenarios),
        &crate::capacity::Limits::of_this_process(),
    )
    .map_err(RunError::invalid)?;
    let run_options = rk6_js::RunOptions::from_options(options).map_err(RunError::invalid)?;
    let http =
        crate::http_config::build(options, &run_options, &logger, |k| std::env::var(k).ok())?;
    let timeouts = LifecycleTimeouts::from_options(options);
    check_exec(&scenarios, &loaded.functions).map_err(RunError::invalid)?;
    let no_thresholds = Value::Null;
    let thresholds = match (&options.thresholds, args.no_thresholds) {
        (Some(t), false) => ThresholdSet::parse(&Value::Object(t.clone()), &loaded.registry),
        _ => ThresholdSet::parse(&no_thresholds, &loaded.registry),
    }
    .map_err(|e| RunError::invalid(e.to_string()))?;
    let trend_stats: Vec<String> = match &options.summary_trend_stats {
        Some(stats) => stats.clone(),
        None => DEFAULT_TREND_STATS.iter().map(|s| s.to_string()).collect(),
    };
    if let Some(s) = trend_stats
        .iter()
        .find(|s| rk6_metrics::Stat::parse_trend_stat(s).is_none())
    {
        // k6 refuses it only when it builds the summary: a generic failure.
        return Err(RunError::new(
            ExitCode::Failure,
            format!("invalid summaryTrendStats value \"{s}\""),
        ));
    }
    let summary_mode = match options.summary_mode.as_deref() {
        Some("full") => SummaryMode::Full,
        Some("legacy") => SummaryMode::Legacy,
        _ => SummaryMode::Compact,
    };
    let time_unit = options.summary_time_unit.clone().filter(|s| !s.is_empty());
    let test_options =
        crate::options_json::test_options(options).map_err(|e| RunError::invalid(e.0))?;
    Ok(Plan {
        output_specs,
        vu_stripe,
        scenarios,
        http,
        run_options,
        timeouts,
        thresholds,
        trend_stats,
        summary_mode,
        time_unit,
        test_options,
        loaded,
    })
}

/// Every scenario's `exec` function is one the script exports.
pub(crate) fn check_exec<S: std::borrow::Borrow<Scenario>>(
    scenarios: &[S],
    functions: &[String],
) -> Result<(), String> {
    for s in scenarios.iter().map(S::borrow) {
        if !functions.iter().any(|f| f == &s.exec) {
            return Err(if s.exec == "default" {
                "no exported default function found; export a default function or set `exec` on each scenario".to_string()
            } else {
                format!(
                    "executor {}: function '{}' not found in exports",
                    s.name, s.exec
                )
            });
        }
    }
    Ok(())
}

/// The stripe of this instance's execution segment (full without one).
fn segment_stripe(options: &Options, flagged: bool) -> Result<Stripe, RunError> {
    let text = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    let code = if flagged {
        ExitCode::Failure
    } else {
        ExitCode::InvalidConfig
    };
    let segment = match text(&options.execution_segment) {
        Some(s) => Segment::parse(&s).map_err(|e| RunError::new(code, e.0))?,
        None => Segment::FULL,
    };
    let sequence = match text(&options.execution_segment_sequence) {
        Some(s) => {
            Some(rk6_scheduler::segment::parse_sequence(&s).map_err(|e| RunError::new(code, e.0))?)
        }
        None => None,
    };
    Stripe::new(segment, sequence.as_deref()).map_err(|e| RunError::invalid(e.0))
}

/// Starts the metrics thread and the outputs, runs the test, and reports it.
fn execute_and_report(
    args: &RunArgs,
    plan: Plan,
    gate: Option<Gate>,
    logger: Logger,
) -> Result<ExitCode, RunError> {
    let Plan {
        loaded,
        output_specs,
        vu_stripe,
        scenarios,
        http,
        run_options,
        timeouts,
        thresholds,
        trend_stats,
        summary_mode,
        time_unit,
        test_options,
    } = plan;
    let options = &loaded.options;
    let mut aggregator = Aggregator::new(loaded.registry.clone(), thresholds);
    if summary_mode == SummaryMode::Full {
        aggregator.keep_sections(scenarios.iter().map(|s| s.name.as_str()));
    }
    let run_info = RunInfo {
        script_url: script_url(&args.script),
        scenarios: scenarios.iter().map(|s| s.name.clone()).collect(),
        end_offset: scenarios
            .iter()
            .map(|s| s.max_duration())
            .max()
            .unwrap_or_default(),
        segment: options.execution_segment.clone().filter(|s| !s.is_empty()),
        instance_id: options
            .tags
            .as_ref()
            .and_then(|t| t.get("instance_id"))
            .cloned(),
        api_address: (!args.address.is_empty()).then(|| args.address.clone()),
    };
    // With `-o aggregate` the aggregator judges the whole test: this runner's thresholds
    // neither abort it nor set its exit code.
    let aggregator_url = output_specs
        .iter()
        .find(|s| s.kind == OutputKind::Aggregate)
        .map(|s| s.arg.clone());
    let mut outputs: Vec<Box<dyn Output>> = Vec::new();
    for spec in &output_specs {
        let output = spec
            .open(
                aggregator.thresholds(),
                &|k| std::env::var(k).ok(),
                &run_info,
            )
            // k6 ends with its generic failure (255) when it cannot create an output: a bad
            // argument, or a file that cannot be opened (a read-only or missing directory);
            // with 104 when an output's own validation refuses its settings.
            .map_err(|e| {
                let code = match e {
                    OutputError::InvalidConfig(_) => ExitCode::InvalidConfig,
                    _ => ExitCode::Failure,
                };
                RunError::new(code, e.to_string())
            })?;
        // The aggregator's summary shows what a run's text summary shows, rk6's metrics
        // included.
        outputs.push(if args.rk6_metrics || spec.kind == OutputKind::Aggregate {
            output
        } else {
            Box::new(K6MetricsOnly::new(output))
        });
    }
    let output_names: Vec<String> = outputs.iter().map(|o| o.description()).collect();
    let abort = CancellationToken::new();
    let started = Instant::now();
    let threshold_abort = if aggregator_url.is_some() {
        CancellationToken::new()
    } else {
        abort.clone()
    };
    let collector = Collector::start(aggregator, outputs, started, threshold_abort);
    let shared = Shared::new(
        loaded.program.clone(),
        loaded.registry.clone(),
        collector.sender(),
        http,
        options,
        logger,
        test_options,
        vu_stripe.clone(),
        run_options,
    );
    let flow = Flow {
        paused: options.paused.unwrap_or(false),
        // Nor does it run (or initialize a VU for) a setup the script does not export.
        no_setup: options.no_setup.unwrap_or(false)
            || !loaded.functions.iter().any(|f| f == "setup"),
        // k6 skips a teardown the script does not export, so its timeout cannot fire.
        no_teardown: options.no_teardown.unwrap_or(false)
            || !loaded.functions.iter().any(|f| f == "teardown"),
        timeouts,
        linger: crate::options::linger(args, |k| std::env::var(k).ok()),
    };

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let outcome = rt.block_on(execute(
        args,
        &flow,
        &output_names,
        &logger,
        shared.clone(),
        &scenarios,
        abort.clone(),
        started,
        collector.live(),
    ));
    let collected = {
        drop(shared);
        collector.finish()
    };
    let outcome = match outcome {
        Ok(end) => end,
        Err(e) => {
            // The error first, then whatever the outputs had to say while closing.
            let code = e.log(&logger);
            let mut outputs = collected.outputs;
            log_errors(&logger, finish_outputs(&mut outputs, None));
            return Ok(code);
        }
    };
    let share = aggregator_url.map(|url| Share {
        url,
        segment: run_info.segment.clone(),
    });
    let report = Report {
        trend_stats,
        summary_mode,
        time_unit,
        gate,
        share,
    };
    Ok(report.print(args, &logger, &rt, collected, outcome))
}

fn log_errors(logger: &Logger, errors: Vec<String>) {
    for e in &errors {
        logger.log(Level::Error, e, &[]);
    }
}

/// How the end of the test is shown.
struct Report {
    trend_stats: Vec<String>,
    summary_mode: SummaryMode,
    time_unit: Option<String>,
    /// `--compare-to`: the earlier run and the limits on the change.
    gate: Option<Gate>,
    /// `-o aggregate`: this run is a share of a distributed test.
    share: Option<Share>,
}

/// A runner's part in a distributed test judged by `rk6 aggregate`.
struct Share {
    /// The aggregator's URL.
    url: String,
    /// `--execution-segment`.
    segment: Option<String>,
}

impl Share {
    /// The line under the summary.
    fn note(&self) -> String {
        let part = match &self.segment {
            Some(s) => format!("execution segment {s}"),
            None => "a part".to_owned(),
        };
        format!(
            "\n  This summary covers this runner's share of a distributed test ({part}); the aggregator at {} gives the verdict for the whole test.\n\n",
            self.url
        )
    }
}

impl Report {
    /// Thresholds, handleSummary or the text summary, the export, the end-of-test warnings,
    /// then the exit code.
    fn print(
        self,
        args: &RunArgs,
        logger: &Logger,
        rt: &tokio::runtime::Runtime,
        collected: Collected,
        outcome: Outcome,
    ) -> ExitCode {
        // The outputs live to the end of this function: the live dashboard serves the
        // final figures while the summary is printed, and stops when they are dropped.
        let Collected {
            mut aggregator,
            threshold_abort,
            mut outputs,
        } = collected;
        let Report {
            trend_stats,
            summary_mode,
            time_unit,
            gate,
            share,
        } = self;
        let logger = *logger;
        let elapsed = outcome.elapsed;
        let verdict = aggregator.evaluate(elapsed, Pass::Final);
        let data = aggregator.summary(elapsed, &trend_stats);
        log_errors(&logger, finish_outputs(&mut outputs, Some(&data)));

        if !args.no_summary {
            let mut printed = false;
            // As k6, handleSummary gets a VU of its own, initialized for it.
            let summary_vu = outcome
                .summary_vu
                .as_ref()
                .map(|s| Lifecycle::start(s.clone()));
            if let Some(Err(e)) = &summary_vu {
                logger.log(
                    Level::Error,
                    &format!("handleSummary() failed: {}", e.message),
                    &[],
                );
            }
            if let Some(Ok(lifecycle)) = &summary_vu {
                // handleSummary gets k6's metrics only, as the machine outputs do.
                let k6_data;
                let summary_data = if args.rk6_metrics {
                    &data
                } else {
                    k6_data = k6_summary(&data);
                    &k6_data
                };
                let json = handle_summary_data(
                    summary_data,
                    &trend_stats,
                    time_unit.as_deref(),
                    args.options.no_color,
                    std::io::stdout().is_terminal(),
                    std::io::stderr().is_terminal(),
                    shared_setup_json(&outcome.setup_data),
                );
                match rt.block_on(lifecycle.handle_summary(json)) {
                    Ok(Some(outputs)) => {
                        printed = true;
                        write_outputs(&logger, outputs);
                    }
                    Ok(None) => {}
                    Err(e) => logger.log(
                        Level::Error,
                        &format!("handleSummary() failed: {}", e.message),
                        &[],
                    ),
                }
            }
            if !printed {
                let color = crate::compare::color(args.options.no_color);
                let text = render_text(
                    &data,
                    &TextOptions {
                        mode: summary_mode,
                        color,
                        time_unit: time_unit.clone(),
                    },
                );
                let _ = std::io::stdout().write_all(text.as_bytes());
            }
            if let Some(share) = &share {
                let _ = std::io::stdout().write_all(share.note().as_bytes());
            }
            if let Some(path) = &args.summary_export {
                let export = if args.rk6_metrics {
                    summary_export(&data)
                } else {
                    summary_export(&k6_summary(&data))
                };
                let json = serde_json::to_string_pretty(&export).unwrap_or_default();
                if let Err(e) = std::fs::write(path, json) {
                    logger.log(
                        Level::Error,
                        &format!("cannot write the summary export {}: {e}", path.display()),
                        &[],
                    );
                }
            }
        }

        let regression = gate.map(|gate| compare_runs(args, &logger, &gate, &data));

        // Latency is measured from the actual send; when open-model iterations start late, the
        // queueing happened in the generator and the latency figures do not show it.
        if let Some(delay) = data.metric("iteration_start_delay") {
            let p95 = delay
                .value("p(95)")
                .or_else(|| delay.value("max"))
                .unwrap_or(0.0);
            if p95 > LATE_START_WARNING_MS {
                logger.log(
                    Level::Warning,
                    &format!(
                        "iterations started late (iteration_start_delay p(95)={p95:.2}ms): the load generator, not the target, was the bottleneck for part of the run, so the latency figures understate queueing"
                    ),
                    &[],
                );
            }
        }
        warn_if_saturated(&logger, &outcome.lag, &outcome.gc_pauses);
        if let Some(failure) = &outcome.failure {
            return failure.log(&logger);
        }
        // A share's verdict is the aggregator's: crossing on a part says nothing of the whole.
        let threshold_abort = threshold_abort && share.is_none();
        let verdict = match &share {
            Some(_) if verdict.failed => {
                logger.log(
                    Level::Info,
                    &format!(
                        "thresholds on metrics '{}' crossed on this runner's share; the aggregator judges the whole test",
                        verdict.crossed.join(", ")
                    ),
                    &[],
                );
                rk6_metrics::Verdict::default()
            }
            _ => verdict,
        };
        // Stopped through the API, k6 ends with 103 and does not report crossed thresholds.
        if verdict.failed && !outcome.api_stopped {
            // k6 names each crossed metric once, sorted.
            let mut crossed = verdict.crossed.clone();
            crossed.sort();
            crossed.dedup();
            let names = crossed.join(", ");
            if threshold_abort {
                logger.log(Level::Error, &format!("thresholds on metrics '{names}' were crossed; at least one has abortOnFail enabled, stopping test prematurely"), &[]);
            } else {
                logger.log(
                    Level::Error,
                    &format!("thresholds on metrics '{names}' have been crossed"),
                    &[],
                );
            }
        }
        if let Some(signal) = outcome.signal {
            logger.log(Level::Error, &aborted_by(signal), &[]);
        } else if outcome.api_stopped {
            logger.log(Level::Error, STOPPED_FROM_API, &[]);
        }
        match outcome.end {
            RunEnd::Stopped if outcome.api_stopped => ExitCode::StoppedFromRestApi,
            _ if verdict.failed || threshold_abort => ExitCode::ThresholdsFailed,
            _ if regression == Some(Gated::Exceeded) => ExitCode::ThresholdsFailed,
            _ if regression == Some(Gated::Unusable) => ExitCode::InvalidConfig,
            RunEnd::Aborted => ExitCode::ScriptAborted,
            RunEnd::Stopped => ExitCode::ExternalAbort,
            _ if outcome.marked_failed => ExitCode::MarkedAsFailed,
            RunEnd::Finished => ExitCode::Success,
        }
    }
}

/// What `--compare-to` made of the run.
#[derive(Debug, PartialEq, Eq)]
enum Gated {
    Held,
    /// A `--max-regression` limit is exceeded: the run fails as on a threshold.
    Exceeded,
    /// A limit names what this run lacks.
    Unusable,
}

/// Prints the comparison with BASE under the summary (unless `--no-summary`) and judges
/// its limits on the stats `--summary-export` would write.
fn compare_runs(args: &RunArgs, logger: &Logger, gate: &Gate, data: &SummaryData) -> Gated {
    let export = if args.rk6_metrics {
        summary_export(data)
    } else {
        summary_export(&k6_summary(data))
    };
    let comparison = match gate.judge(&export) {
        Ok(c) => c,
        Err(e) => {
            logger.log(Level::Error, &e, &[]);
            return Gated::Unusable;
        }
    };
    if !args.no_summary {
        let text = gate.render(&comparison, crate::compare::color(args.options.no_color));
        let _ = std::io::stdout().write_all(text.as_bytes());
    }
    let exceeded: Vec<&str> = comparison
        .verdicts
        .iter()
        .filter(|v| v.exceeded)
        .map(|v| v.limit.source.as_str())
        .collect();
    if exceeded.is_empty() {
        return Gated::Held;
    }
    logger.log(
        Level::Error,
        &format!(
            "run comparison: --max-regression limits exceeded: {}",
            exceeded.join(", ")
        ),
        &[],
    );
    Gated::Exceeded
}

/// The `-o` values, or `K6_OUT` (comma-separated) when no `-o` is given, plus the HTML
/// report when `K6_WEB_DASHBOARD*` asks for it and no `-o web-dashboard` did.
fn output_specs(
    args: &RunArgs,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<OutputSpec>, String> {
    let values: Vec<String> = if args.out.is_empty() {
        env("K6_OUT")
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    } else {
        args.out.clone()
    };
    let mut specs = values
        .iter()
        .map(|v| OutputSpec::parse(v).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let dashboard = OutputSpec::from_env(&env).map_err(|e| e.to_string())?;
    if let Some(d) = dashboard.filter(|d| specs.iter().all(|s| s.kind != d.kind)) {
        specs.push(d);
    }
    Ok(specs)
}

/// The script as a `file://` URL (k6's `scriptPath`), or empty when it has no file.
fn script_url(script: &std::path::Path) -> String {
    match std::fs::canonicalize(script) {
        Ok(p) => format!("file://{}", p.display()),
        Err(_) => String::new(),
    }
}

fn shared_setup_json(text: &Option<String>) -> Option<Value> {
    text.as_deref().and_then(|t| serde_json::from_str(t).ok())
}

/// Writes what `handleSummary()` returned: `stdout`, `stderr` or a file path each.
pub(crate) fn write_outputs(logger: &Logger, outputs: Vec<(String, Vec<u8>)>) {
    for (target, bytes) in outputs {
        let result = match target.as_str() {
            "stdout" => std::io::stdout().write_all(&bytes),
            "stderr" => std::io::stderr().write_all(&bytes),
            path => std::fs::write(path, &bytes),
        };
        if let Err(e) = result {
            logger.log(
                Level::Error,
                &format!("handleSummary() output {target}: {e}"),
                &[],
            );
        }
    }
}

/// What the run phase leaves for the summary phase.
struct Outcome {
    end: RunEnd,
    /// `exec.test.fail()` was called.
    marked_failed: bool,
    elapsed: Duration,
    /// What handleSummary's VU is built from; `None` once a setup or teardown timed out.
    summary_vu: Option<Arc<Shared>>,
    setup_data: Option<String>,
    /// How late the worker threads' event loops ran (generator saturation).
    lag: Arc<rk6_scheduler::LagMonitor>,
    /// The garbage-collection pauses of the threads VUs ran on.
    gc_pauses: Arc<rk6_scheduler::LagMonitor>,
    /// Ends the test with its own exit code once the summary is out.
    failure: Option<RunError>,
    /// The signal that stopped the test (Go's name: `interrupt`, `terminated`).
    signal: Option<&'static str>,
    /// `PATCH /v1/status` with `stopped: true` stopped it (exit 103).
    api_stopped: bool,
}

/// k6's error for a test stopped through the REST API.
const STOPPED_FROM_API: &str = "test run stopped from REST API";

/// What the options decide about the order of the run.
struct Flow {
    paused: bool,
    no_setup: bool,
    no_teardown: bool,
    timeouts: LifecycleTimeouts,
    /// `--linger`: keep the API up after the test until a signal.
    linger: bool,
}

/// The banner, setup, the scenarios and teardown; an error stops the run before the
/// summary, a [`Outcome::failure`] after it (as k6 reports a failed setup).
#[allow(clippy::too_many_arguments)]
async fn execute(
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
    if !args.address.is_empty() {
        match control::bind(&args.address).await {
            Ok(listener) => {
                control::serve(listener, control.clone());
                serving = true;
            }
            // k6 only warns when the default address is taken, and stops for one given.
            Err(e) if args.address == DEFAULT_ADDRESS => logger.log(
                Level::Warning,
                "Error from API server",
                &[("error", &format!("listen tcp {}: {e}", args.address))],
            ),
            Err(e) => {
                return Err(RunError::new(
                    ExitCode::CannotStartRestApi,
                    format!("cannot start the API server on {}: {e}", args.address),
                ))
            }
        }
    } else if flow.paused {
        return Err(RunError::invalid(
            "a paused test needs the API to be resumed: don't disable --address with --paused",
        ));
    }
    let result = execute_test(
        args,
        flow,
        output_names,
        logger,
        shared,
        scenarios,
        abort,
        started,
        (&state, &stop, &control),
        (&signal, &signalled),
        &live,
    )
    .await;
    // `--linger`: the API stays up (at status 9, or 10 when stopped before the start) until
    // a signal; the summary comes after, so a teardown run through the API counts in it.
    if flow.linger && serving && !signalled.is_cancelled() {
        lingering.store(true, Ordering::Relaxed);
        signalled.cancelled().await;
    }
    result
}

/// [`execute`] up to the end of the test.
#[allow(clippy::too_many_arguments)]
async fn execute_test(
    args: &RunArgs,
    flow: &Flow,
    output_names: &[String],
    logger: &Logger,
    shared: Arc<Shared>,
    scenarios: &[Arc<Scenario>],
    abort: CancellationToken,
    started: Instant,
    (state, stop, control): (&Arc<ExecutionState>, &CancellationToken, &Arc<Control>),
    (signal, signalled): (&Arc<OnceLock<&'static str>>, &CancellationToken),
    live: &LiveMetrics,
) -> Result<Outcome, RunError> {
    let timeouts = flow.timeouts;
    let share = shared.vu_stripe.share();
    let max_vus = total_vus(scenarios);
    let (state, stop) = (state.clone(), stop.clone());
    if !args.options.quiet {
        let script = args.script.display().to_string();
        print!(
            "{}",
            progress::banner(&script, output_names, scenarios, max_vus, share)
        );
        let _ = std::io::stdout().flush();
    }
    let initial = rk6_scheduler::initial_vu_ids(scenarios);
    // As k6, the API shows the VUs the test starts with from the start (`vus-max`).
    state.vus_max.store(initial.len() as u64, Ordering::Relaxed);
    if flow.paused {
        // And a paused test already has the `vus`/`vus_max` gauges in /v1/metrics.
        let _ = shared.samples.send(vus_samples(&state, &run_tags(&shared)));
        control.set_phase(Phase::PausedBeforeRun);
        control.wait_resumed().await;
        if stop.is_cancelled() {
            control.set_phase(Phase::Interrupted);
            if let Some(name) = signal.get() {
                return Err(RunError::new(ExitCode::ExternalAbort, aborted_by(name)));
            }
            // Stopped through the API: k6 still prints the (empty) summary, then exits 103.
            return Ok(Outcome {
                end: RunEnd::Stopped,
                marked_failed: false,
                elapsed: Duration::ZERO,
                summary_vu: Some(shared.clone()),
                setup_data: None,
                lag: Arc::default(),
                gc_pauses: Arc::default(),
                failure: None,
                signal: None,
                api_stopped: true,
            });
        }
    }
    // The test run's time starts now, as k6's: a wait for the start is not part of it
    // (the progress clock, the summary's duration, counters' rates in thresholds).
    let started = if flow.paused {
        let now = Instant::now();
        live.set_started(now);
        now
    } else {
        started
    };
    control.set_phase(Phase::Setup);
    let setup_data = if flow.no_setup {
        // The data set through the API (`PUT /v1/setup`, k6-operator's setup-once flow).
        control.setup_data()
    } else {
        // As k6, setup() runs on a VU of its own, initialized for it.
        let lifecycle = Lifecycle::start(shared.clone())?;
        let interrupt = CancellationToken::new();
        // k6 still prints the summary (of an empty test) when setup fails, then the error.
        let failed = |failure, summary_vu| Outcome {
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
        };
        let setup = tokio::select! {
            r = tokio::time::timeout(timeouts.setup, lifecycle.setup(interrupt.clone())) => Some(r),
            _ = signalled.cancelled() => None,
        };
        let Some(setup) = setup else {
            interrupt.cancel();
            lifecycle.detach();
            control.set_phase(Phase::Ended);
            return Err(RunError::new(
                ExitCode::ExternalAbort,
                aborted_by(signal.get().copied().unwrap_or("terminated")),
            ));
        };
        match setup {
            // As k6's, the data comes out of setup() with its objects' keys sorted (it goes
            // through a Go map there): what iterations, teardown and the API see.
            Ok(Ok(d)) => d.as_deref().map(crate::api_documents::sorted_json),
            Ok(Err(e)) => {
                control.set_phase(Phase::Ended);
                return Ok(failed(RunError::of_script(&e), Some(shared.clone())));
            }
            Err(_) => {
                // A setup waiting on a sleep or a request stops now; one spinning in JS
                // cannot be stopped, so the VU is left behind either way.
                interrupt.cancel();
                lifecycle.detach();
                control.set_phase(Phase::Ended);
                let failure = RunError::timeout(
                    ExitCode::SetupTimeout,
                    "setup",
                    "setupTimeout",
                    timeouts.setup,
                );
                return Ok(failed(failure, None));
            }
        }
    };
    if !flow.no_setup {
        control.set_setup_data(setup_data.clone());
    }
    let _ = shared.setup_data.set(setup_data.clone());
    state.vus_max.store(initial.len() as u64, Ordering::Relaxed);
    let _ = shared.execution.set(state.clone());
    let pool = match ThreadPool::start(
        Arc::new(JsVuFactory::new(shared.clone())),
        max_vus,
        &initial,
    )
    .await
    {
        Ok(p) => p,
        // Not the script's fault (out of threads, file descriptors or stack mappings): k6's
        // generic failure.
        Err(e)
            if e.starts_with("cannot start a worker thread")
                || e.starts_with(rk6_js::STACK_FAILURE) =>
        {
            return Err(RunError::new(ExitCode::Failure, e))
        }
        Err(e) => {
            return Err(RunError {
                code: ExitCode::ScriptException,
                message: e,
                hint: Some("script exception".into()),
            })
        }
    };

    let stop_on_abort = {
        let (stop, abort) = (stop.clone(), abort.clone());
        tokio::spawn(async move {
            abort.cancelled().await;
            stop.cancel();
        })
    };
    let display = Display::new(args.options.quiet);
    let drops = Arc::new(Drops::default());
    let ticker = tokio::spawn(tick(
        state.clone(),
        shared.clone(),
        display.clone(),
        started,
        drops.clone(),
    ));
    let run_start = Instant::now();
    pool.lag().reset();
    shared.gc_pauses.reset();
    control.set_phase(Phase::Running);
    let end = rk6_scheduler::run(scenarios, &pool, state.clone(), stop.clone()).await;
    control.set_phase(Phase::Teardown);
    ticker.abort();
    stop_on_abort.abort();
    display.show(&state, run_start.elapsed());
    drops.emit(&state, &shared);
    let lag = pool.lag();
    pool.shutdown();
    let mut summary_vu = Some(shared.clone());
    let mut failure = None;
    // As k6, teardown() runs on a VU of its own, initialized for it.
    let teardown_vu = (!flow.no_teardown).then(|| Lifecycle::start(shared.clone()));
    if let Some(Err(e)) = &teardown_vu {
        logger.log(Level::Error, &e.message, &[("hint", "script exception")]);
    }
    if let Some(Ok(lc)) = teardown_vu {
        let interrupt = CancellationToken::new();
        match tokio::time::timeout(timeouts.teardown, lc.teardown(interrupt.clone())).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => logger.log(Level::Error, &e.message, &[("hint", "script exception")]),
            Err(_) => {
                interrupt.cancel();
                lc.detach();
                summary_vu = None;
                failure = Some(RunError::timeout(
                    ExitCode::TeardownTimeout,
                    "teardown",
                    "teardownTimeout",
                    timeouts.teardown,
                ));
            }
        }
    }
    let end = if abort.is_cancelled() && end == RunEnd::Stopped {
        RunEnd::Finished
    } else {
        end
    };
    // A signal during teardown still ends the test as stopped.
    let signal = signal.get().copied();
    let end = if signal.is_some() && end == RunEnd::Finished {
        RunEnd::Stopped
    } else {
        end
    };
    Ok(Outcome {
        end,
        marked_failed: shared.marked_failed.load(Ordering::Relaxed),
        elapsed: started.elapsed(),
        summary_vu,
        setup_data,
        lag,
        gc_pauses: shared.gc_pauses.clone(),
        failure,
        signal,
        api_stopped: signal.is_none() && control.stopped_by_api(),
    })
    .inspect(|_| control.set_phase(Phase::Ended))
}

/// Where progress goes: nowhere (`-q`), plain lines once a second, or bars redrawn in place
/// on a terminal.
#[derive(Clone)]
struct Display {
    quiet: bool,
    terminal: bool,
    /// Lines of the last frame drawn on the terminal (to redraw over them).
    drawn: Arc<std::sync::atomic::AtomicUsize>,
}

impl Display {
    fn new(quiet: bool) -> Self {
        Display {
            quiet,
            terminal: std::io::stdout().is_terminal(),
            drawn: Arc::default(),
        }
    }

    fn show(&self, state: &ExecutionState, elapsed: Duration) {
        if self.quiet {
            return;
        }
        let mut out = std::io::stdout().lock();
        if self.terminal {
            let (frame, lines) =
                progress::frame(state, elapsed, self.drawn.load(Ordering::Relaxed));
            self.drawn.store(lines, Ordering::Relaxed);
            let _ = out.write_all(frame.as_bytes());
        } else {
            let _ = out.write_all(progress::snapshot(state, elapsed).as_bytes());
        }
        let _ = out.flush();
    }
}

/// Gauges `vus`/`vus_max` once per second, the progress display (redrawn more often on a
/// terminal), and the iterations dropped since the last tick.
async fn tick(
    state: Arc<ExecutionState>,
    shared: Arc<Shared>,
    display: Display,
    started: Instant,
    drops: Arc<Drops>,
) {
    let period = if display.terminal {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(1)
    };
    let per_second = (Duration::from_secs(1).as_millis() / period.as_millis()) as u64;
    let tags = run_tags(&shared);
    let mut interval = tokio::time::interval(period);
    interval.tick().await;
    let mut n = 0u64;
    loop {
        interval.tick().await;
        n += 1;
        display.show(&state, started.elapsed());
        drops.emit(&state, &shared);
        if !n.is_multiple_of(per_second) {
            continue;
        }
        let _ = shared.samples.send(vus_samples(&state, &tags));
    }
}

/// The run's `--tag`/`tags` as a tag set: every sample carries them, the engine's own
/// (`vus`, `vus_max`, `dropped_iterations`) as the VUs' (k6-operator's `instance_id` and
/// `testrun_name` tell its runners apart with them).
fn run_tags(shared: &Shared) -> TagSet {
    TagSet::from_pairs(shared.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The `vus` and `vus_max` gauges now.
fn vus_samples(state: &ExecutionState, tags: &TagSet) -> Vec<Sample> {
    let now = SystemTime::now();
    vec![
        Sample {
            metric: builtin::VUS,
            tags: tags.clone(),
            value: state.active_vus() as f64,
            time: now,
        },
        Sample {
            metric: builtin::VUS_MAX,
            tags: tags.clone(),
            value: state.vus_max.load(Ordering::Relaxed) as f64,
            time: now,
        },
    ]
}

/// Drops per scenario and call sent as samples of 1; more are summed into one sample.
const SINGLE_DROPS: u64 = 1000;

/// `dropped_iterations` as they happen: one sample (value 1, tagged with the scenario) per
/// iteration dropped since the last call, so thresholds and outputs see them during the run
/// as in k6; one batch per call, not a message per drop. Past [`SINGLE_DROPS`] in one call
/// the rest goes in one sample carrying their number (as k6 reports the iterations a
/// shared-iterations scenario left undone), so an absurd rate or iteration count costs a
/// sample, not memory per iteration.
#[derive(Default)]
struct Drops {
    /// Drops already sent, per scenario.
    sent: std::sync::Mutex<Vec<u64>>,
}

impl Drops {
    fn emit(&self, state: &ExecutionState, shared: &Shared) {
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        sent.resize(state.scenarios.len(), 0);
        let now = SystemTime::now();
        let mut batch = Vec::new();
        let mut run = None;
        for (s, sent) in state.scenarios.iter().zip(sent.iter_mut()) {
            let dropped = s.dropped_so_far();
            if dropped <= *sent {
                continue;
            }
            let tags = run
                .get_or_insert_with(|| run_tags(shared))
                .with("scenario", &s.scenario.name);
            let new = dropped - *sent;
            let singles = new.min(SINGLE_DROPS);
            let rest = new - singles;
            let values =
                std::iter::repeat_n(1.0, singles as usize).chain((rest > 0).then_some(rest as f64));
            for value in values {
                batch.push(Sample {
                    metric: builtin::DROPPED_ITERATIONS,
                    tags: tags.clone(),
                    value,
                    time: now,
                });
            }
            *sent = dropped;
        }
        if !batch.is_empty() {
            let _ = shared.samples.send(batch);
        }
    }
}

/// k6's error for a test ended by a signal (`interrupt`, `terminated`).
fn aborted_by(signal: &str) -> String {
    format!("test run was aborted because k6 received a '{signal}' signal")
}

/// Aborts a task when dropped, so every return path of [`execute`] stops watching.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// First SIGINT/SIGTERM: stop gracefully (recording Go's name of the signal and cancelling
/// `signalled`). Second: exit at once.
async fn watch_signals(
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
