//! rk6-bench: `rk6 bench`, the scriptless, wrk-style mode.
//!
//! `connections` tokio tasks on a multi-thread runtime (`threads` workers) each keep one
//! connection and send one request at a time until the deadline. Each task keeps its own HDR
//! histogram and counters and hands them back when it ends; they are merged once, so the hot
//! path takes no lock and sends no message.
//!
//! Plain `http://` URLs go through `rk6_http::KeepAlive`, a lean HTTP/1.1 connection that
//! writes request bytes built once and skips each response by its framing (no cookie jar,
//! pool, redirects or hyper task per request), so rk6 costs about what wrk costs per
//! request. `--h2c` and `https://` (where ALPN may choose HTTP/2) use a full
//! `rk6_http::Client` per task instead.
//!
//! Without `--rate` the loop is closed (next request as soon as the previous one is done) and
//! latency is the request's `http_req_duration` (sending + waiting + receiving). With
//! `--rate R` each connection sends `R / connections` requests per second on a fixed schedule
//! (connections staggered evenly); latency is measured from the *planned* send instant, so a
//! stall delays every request that should have been sent during it (coordinated omission
//! corrected, as wrk2), and the uncorrected service time is reported beside it.
//!
//! The crate knows nothing of the command line: the CLI fills a [`BenchConfig`] from its
//! flags, calls [`run`] and maps the result to an exit code.

#![warn(missing_docs)]

mod blast;
mod config;
mod engine;
mod json;
mod plan;
mod report;
mod stats;
mod thresholds;

use thiserror::Error;

pub use config::BenchConfig;

/// Why a benchmark did not start.
#[derive(Debug, Error)]
pub enum BenchError {
    /// A flag's value is invalid; the text names the flag.
    #[error("{0}")]
    Invalid(String),
    /// The tokio runtime could not be built.
    #[error("cannot start the I/O runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// How a benchmark that ran ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchOutcome {
    /// Every threshold held (or there were none).
    Passed,
    /// At least one `--threshold` was crossed (already reported on stderr).
    ThresholdsCrossed,
}

/// Runs the benchmark: prints wrk's header, blasts until the deadline, prints the report,
/// writes the JSON result when asked (a write failure is reported, not returned).
pub fn run(config: &BenchConfig) -> Result<BenchOutcome, BenchError> {
    let plan = plan::validate(config).map_err(BenchError::Invalid)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(plan.threads)
        .thread_name("rk6-bench")
        .enable_all()
        .build()
        .map_err(BenchError::Runtime)?;

    report::print_header(&config.url, &plan);
    let (stats, elapsed) = runtime.block_on(blast::blast(&plan));
    drop(runtime);

    let verdicts = thresholds::evaluate(&plan.thresholds, &stats);
    report::print_report(&plan, &stats, elapsed, &verdicts);
    if let Some(path) = &config.json {
        if let Err(e) = json::write(path, &config.url, &plan, &stats, elapsed, &verdicts) {
            eprintln!("rk6 bench: cannot write {}: {e}", path.display());
        }
    }
    if verdicts.iter().any(|v| !v.ok) {
        eprintln!("thresholds on metrics 'http_req_duration' have been crossed");
        return Ok(BenchOutcome::ThresholdsCrossed);
    }
    Ok(BenchOutcome::Passed)
}
