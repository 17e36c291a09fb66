//! `rk6 bench`: hands the flags to rk6-bench and maps its result to k6's exit codes.

use rk6_bench::{BenchConfig, BenchOutcome};

use crate::args::BenchArgs;
use crate::exit::ExitCode;

/// Runs `rk6 bench`.
pub fn run(args: BenchArgs) -> ExitCode {
    match rk6_bench::run(&config(args)) {
        Ok(BenchOutcome::Passed) => ExitCode::Success,
        Ok(BenchOutcome::ThresholdsCrossed) => ExitCode::ThresholdsFailed,
        Err(e) => {
            eprintln!("rk6 bench: {e}");
            ExitCode::InvalidConfig
        }
    }
}

fn config(args: BenchArgs) -> BenchConfig {
    BenchConfig {
        url: args.url,
        connections: args.connections,
        duration: args.duration,
        threads: args.threads,
        method: args.method,
        headers: args.header,
        body: args.body,
        rate: args.rate,
        timeout: args.timeout,
        insecure_skip_tls_verify: args.insecure_skip_tls_verify,
        h2c: args.h2c,
        json: args.json,
        thresholds: args.threshold,
    }
}
