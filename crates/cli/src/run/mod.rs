//! `rk6 run`: the whole test, from script to summary and exit code.

use std::sync::Arc;
use std::time::Instant;

use rk6_js::log::{Level, Logger};
use rk6_js::{read_init, Program, Shared};
use rk6_metrics::{Aggregator, Registry, ThresholdSet};
use rk6_options::Options;
use rk6_output::{
    K6MetricsOnly, Output, OutputError, OutputKind, OutputSpec, RunInfo, SummaryMode,
};
use rk6_scheduler::{decode_scenarios, total_vus, CancellationToken, Scenario, Segment, Stripe};
use serde_json::Value;

use crate::args::RunArgs;
use crate::collector::{finish_outputs, Collector};
use crate::compare::Gate;
use crate::exit::ExitCode;
use crate::lifecycle_timeouts::LifecycleTimeouts;
use crate::plan::{ApiPlan, SummaryPlan};
use crate::run_error::RunError;
use crate::test_file::TestFile;

mod display;
mod phases;
mod report;

use phases::{execute, Flow};
pub(crate) use report::write_outputs;
use report::{log_errors, Report, Share};

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
    // `K6_SECRET_SOURCE` (k6 1.7) is one source, used when no flag names any.
    let env_source: Vec<String> = std::env::var("K6_SECRET_SOURCE")
        .ok()
        .filter(|v| !v.is_empty())
        .into_iter()
        .collect();
    let flags = if args.options.secret_source.is_empty() {
        &env_source
    } else {
        &args.options.secret_source
    };
    if flags.is_empty() {
        return Ok(());
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let secrets = rk6_js::secrets::Secrets::from_flags(flags, &cwd, &|k| std::env::var(k).ok())
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
    /// `--new-machine-readable-summary` / `K6_NEW_MACHINE_READABLE_SUMMARY`.
    machine_readable_summary: bool,
    /// The `native-histograms` feature flag.
    native_histograms: bool,
}

fn load(args: &RunArgs, logger: Logger) -> Result<Loaded, RunError> {
    let test = TestFile::open(&args.script, None)?;
    // As k6 reads its runtime options: after the script, before running it.
    let machine_readable_summary =
        crate::plan::machine_readable_summary(args.new_machine_readable_summary, |k| {
            std::env::var(k).ok()
        })?;
    // The feature flags never come from the script, so its `__ENV` can carry them.
    let (features, source, feature_warnings) =
        crate::options::features(&args.options, |k| std::env::var(k).ok())?;
    for w in &feature_warnings {
        logger.log(Level::Warning, w, &[]);
    }
    for line in rk6_options::features::log_lines(&features, source) {
        let fields: Vec<(&str, &str)> = line
            .fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let level = if line.error {
            Level::Error
        } else {
            Level::Info
        };
        logger.log(level, &line.message, &fields);
    }
    let mut env = test
        .env(args.include_system_env_vars, &args.options.env)
        .map_err(RunError::invalid)?;
    match features.env_value() {
        Some(v) => env.insert("K6_FEATURES".into(), v),
        None => env.remove("K6_FEATURES"),
    };
    let program = test.program(env)?;
    let registry = Arc::new(Registry::new());
    let init = read_init(program.clone(), registry.clone(), logger)?;
    let mut loaded =
        crate::options::load(test.script_options(&init.options), &args.options, |k| {
            std::env::var(k).ok()
        })?;
    crate::plan::warn_unknown_keys(&logger, &loaded.unknown);
    for w in &loaded.warnings {
        logger.log(Level::Warning, w, &[]);
    }
    // Each flag on is a run tag, as in k6 2.1.
    let run_tags = features.run_tags();
    if !run_tags.is_empty() {
        let tags = loaded.options.tags.get_or_insert_with(Default::default);
        tags.retain(|k, _| !k.starts_with("k6_feature_"));
        tags.extend(run_tags);
    }
    Ok(Loaded {
        program,
        registry,
        functions: init.functions,
        options: loaded.options,
        machine_readable_summary,
        native_histograms: features.native_histograms(),
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
    summary: SummaryPlan,
    api: ApiPlan,
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
    // In k6's order when several are wrong: what decoding the options refuses (the DNS
    // choices, then the scenarios' types), the DNS TTL, the summary's trend stats, then
    // what validating the scenarios finds.
    crate::net_options::check_dns(options, false).map_err(RunError::from)?;
    let decoded = decode_scenarios(options).map_err(|e| RunError::invalid(e.0))?;
    crate::net_options::check_dns(options, true).map_err(RunError::from)?;
    let no_summary = crate::plan::no_summary_flag(args.no_summary, |k| std::env::var(k).ok());
    let summary = SummaryPlan::from_options(options, no_summary)?
        .machine_readable(loaded.machine_readable_summary);
    if let Some(problems) = decoded.problems {
        return Err(RunError::invalid(problems.0));
    }
    let scenarios: Vec<Arc<Scenario>> = decoded
        .scenarios
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
    let thresholds = crate::plan::thresholds(options, &loaded.registry, args.no_thresholds)?;
    summary.warn(&logger);
    let externally_controlled = scenarios.iter().any(|s| {
        matches!(
            s.executor,
            rk6_scheduler::config::Executor::ExternallyControlled(_)
        )
    });
    if externally_controlled {
        logger.log(
            Level::Warning,
            "the externally-controlled executor is deprecated and k6 2.0 removed it: use another executor",
            &[],
        );
    }
    let api = ApiPlan::new(
        args.address.as_deref(),
        |k| std::env::var(k).ok(),
        options.paused.unwrap_or(false),
        externally_controlled,
    );
    if let Some(note) = &api.note {
        logger.log(Level::Warning, note, &[]);
    }
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
        summary,
        api,
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
        summary,
        api,
        test_options,
    } = plan;
    let options = &loaded.options;
    let mut aggregator = Aggregator::new(loaded.registry.clone(), thresholds);
    if summary.mode == SummaryMode::Full {
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
        api_address: api.address.clone(),
    };
    // With `-o aggregate` the aggregator judges the whole test: this runner's thresholds
    // neither abort it nor set its exit code.
    let aggregator_url = output_specs
        .iter()
        .find(|s| s.kind == OutputKind::Aggregate)
        .map(|s| s.arg.clone());
    // The outputs read their settings from the environment; `native-histograms` (k6 2.1)
    // is the remote-write output's trend setting, as k6's flag forces it.
    let native_histograms = loaded.native_histograms;
    let output_env = |k: &str| {
        if native_histograms && k == "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM" {
            return Some("true".to_string());
        }
        std::env::var(k).ok()
    };
    let mut outputs: Vec<Box<dyn Output>> = Vec::new();
    for spec in &output_specs {
        let output = spec
            .open(aggregator.thresholds(), &output_env, &run_info)
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
        judges_thresholds: aggregator_url.is_none(),
        api,
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
    // The machine-readable summary carries the main script's text, as k6's does.
    let script = summary.machine_readable.then(|| {
        let program = &loaded.program;
        program
            .read(&program.main)
            .map(|text| String::from_utf8_lossy(&text).into_owned())
            .unwrap_or_default()
    });
    let report = Report {
        summary,
        gate,
        share,
        script,
    };
    Ok(report.print(args, &logger, &rt, collected, outcome))
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
