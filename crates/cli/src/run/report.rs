//! How the end of a test is shown and judged: thresholds, `handleSummary` or the text
//! summary, the export, `--compare-to`, the end-of-test warnings, the exit code.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use rk6_js::log::{Level, Logger};
use rk6_js::Lifecycle;
use rk6_metrics::{Pass, SummaryData};
use rk6_output::{
    handle_summary_data, k6_summary, machine_readable_summary, machine_readable_text, render_text,
    summary_export, MachineReadableMeta, TextOptions,
};
use serde_json::Value;

use crate::args::RunArgs;
use crate::collector::{finish_outputs, Collected};
use crate::compare::Gate;
use crate::exit::ExitCode;
use crate::plan::SummaryPlan;

use super::phases::{aborted_by, Judgement, Outcome, STOPPED_FROM_API};

/// Worker event-loop lag at p(99) from which the end of the test says the generator was
/// saturated.
pub(super) const SATURATED_LAG: Duration = Duration::from_millis(10);

/// Says so when the load generator itself ran late: every VU on a late worker sends late and
/// reads late, and the latency figures then include the generator's own delay. With `-v`,
/// the lag and the collector's pauses are logged whatever they were.
pub(super) fn warn_if_saturated(
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

/// `iteration_start_delay` p(95) above which the end of the test warns about the generator.
pub(super) const LATE_START_WARNING_MS: f64 = 10.0;

/// How the end of the test is shown.
pub(super) struct Report {
    pub(super) summary: SummaryPlan,
    /// `--compare-to`: the earlier run and the limits on the change.
    pub(super) gate: Option<Gate>,
    /// `-o aggregate`: this run is a share of a distributed test.
    pub(super) share: Option<Share>,
    /// The main script's text, which the machine-readable summary carries; `None` when
    /// that summary is off.
    pub(super) script: Option<String>,
}

/// A runner's part in a distributed test judged by `rk6 aggregate`.
pub(super) struct Share {
    /// The aggregator's URL.
    pub(super) url: String,
    /// `--execution-segment`.
    pub(super) segment: Option<String>,
}

impl Share {
    /// The line under the summary.
    pub(super) fn note(&self) -> String {
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
    pub(super) fn print(
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
            summary,
            gate,
            share,
            script,
        } = self;
        let (trend_stats, time_unit) = (&summary.trend_stats, &summary.time_unit);
        let logger = *logger;
        let elapsed = outcome.elapsed;
        let verdict = aggregator.evaluate(elapsed, Pass::Final);
        let data = aggregator.summary(elapsed, trend_stats);
        log_errors(&logger, finish_outputs(&mut outputs, Some(&data)));

        if summary.shown {
            let mut printed = false;
            // handleSummary and the export get k6's metrics only, as the machine outputs do.
            let k6_data;
            let summary_data = if args.rk6_metrics {
                &data
            } else {
                k6_data = k6_summary(&data);
                &k6_data
            };
            // k6 1.5's machine-readable summary, made once for both.
            let machine_readable = script.as_deref().map(|script| {
                machine_readable_summary(
                    summary_data,
                    &MachineReadableMeta {
                        script,
                        k6_version: rk6_js::archive::K6_VERSION,
                        generated_at: std::time::SystemTime::now(),
                        mode: summary.mode,
                    },
                )
            });
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
            if let Some(Ok(lifecycle)) = summary_vu {
                let json = match &machine_readable {
                    Some(summary) => summary.clone(),
                    None => handle_summary_data(
                        summary_data,
                        trend_stats,
                        time_unit.as_deref(),
                        args.options.no_color,
                        std::io::stdout().is_terminal(),
                        std::io::stderr().is_terminal(),
                        shared_setup_json(&outcome.setup_data),
                    ),
                };
                let limit = summary.handle_summary_timeout;
                let handled = rt.block_on(async {
                    tokio::time::timeout(limit, lifecycle.handle_summary(json)).await
                });
                match handled {
                    Ok(Ok(Some(outputs))) => {
                        printed = true;
                        write_outputs(&logger, outputs);
                    }
                    Ok(Ok(None)) => {}
                    Ok(Err(e)) => logger.log(
                        Level::Error,
                        &format!("handleSummary() failed: {}", e.message),
                        &[],
                    ),
                    Err(_) => {
                        // k6 2.2's error and hint; its JS may still run, so the VU is let go.
                        lifecycle.detach();
                        let (error, hint) = crate::lifecycle_timeouts::timed_out(
                            "handleSummary",
                            "handleSummaryTimeout option or the K6_HANDLE_SUMMARY_TIMEOUT environment variable",
                            limit,
                        );
                        logger.log(
                            Level::Error,
                            "failed to handle the end-of-test summary",
                            &[("error", &error), ("hint", &hint)],
                        );
                    }
                }
            }
            if !printed {
                let color = crate::compare::color(args.options.no_color);
                let text = render_text(
                    &data,
                    &TextOptions {
                        mode: summary.mode,
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
                let json = match &machine_readable {
                    Some(summary) => machine_readable_text(summary),
                    None => serde_json::to_string_pretty(&summary_export(summary_data))
                        .unwrap_or_default(),
                };
                if let Err(e) = std::fs::write(path, json) {
                    logger.log(
                        Level::Error,
                        &format!("cannot write the summary export {}: {e}", path.display()),
                        &[],
                    );
                }
            }
        }

        let regression = gate.map(|gate| compare_runs(args, &logger, &gate, &data, summary.shown));

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
        let judgement = if verdict.failed || threshold_abort || regression == Some(Gated::Exceeded)
        {
            Judgement::Failed
        } else if regression == Some(Gated::Unusable) {
            Judgement::Unusable
        } else {
            Judgement::Held
        };
        outcome.exit_code(judgement)
    }
}

/// What `--compare-to` made of the run.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Gated {
    Held,
    /// A `--max-regression` limit is exceeded: the run fails as on a threshold.
    Exceeded,
    /// A limit names what this run lacks.
    Unusable,
}

/// Prints the comparison with BASE under the summary (unless `--no-summary`) and judges
/// its limits on the stats `--summary-export` would write.
pub(super) fn compare_runs(
    args: &RunArgs,
    logger: &Logger,
    gate: &Gate,
    data: &SummaryData,
    shown: bool,
) -> Gated {
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
    if shown {
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

pub(super) fn shared_setup_json(text: &Option<String>) -> Option<Value> {
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

/// Logs each error of the outputs' closing.
pub(super) fn log_errors(logger: &Logger, errors: Vec<String>) {
    for e in &errors {
        logger.log(Level::Error, e, &[]);
    }
}
