//! The `rk6` command line: runs k6 scripts.

mod api_documents;
mod args;
mod bench;
mod capacity;
mod collector;
mod control;
mod control_client;
mod demo;
mod exit;
mod flag_error;
mod http_config;
mod inspect;
mod lifecycle_timeouts;
mod net_options;
mod new;
mod options;
mod options_json;
mod progress;
mod run;
mod tls_options;

use clap::Parser;

use args::{Cli, Command};
use control_client::ControlRequest;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `rk6 bench` reports bad flags with k6's invalid-options code; help and version
        // (printed to stdout) and the other commands keep clap's behaviour.
        Err(e) if e.use_stderr() && std::env::args().nth(1).as_deref() == Some("bench") => {
            let _ = e.print();
            std::process::exit(exit::ExitCode::InvalidConfig as i32);
        }
        // `rk6 run` reports bad flags as k6 does: one error line, exit 255.
        Err(e) if e.use_stderr() && std::env::args().nth(1).as_deref() == Some("run") => {
            let logger = rk6_js::log::Logger::new(false);
            logger.log(rk6_js::log::Level::Error, &flag_error::k6_text(&e), &[]);
            std::process::exit(exit::ExitCode::Failure as i32);
        }
        Err(e) => e.exit(),
    };
    // Every VU keeps connections open: the usual soft limit of 1024 descriptors would stop a
    // test at about a thousand VUs although the hard limit allows far more.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let code = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Demo(args) => demo::run(args),
        Command::Bench(args) => bench::run(*args),
        Command::Inspect(args) => inspect::run(args),
        Command::New(args) => new::run(args),
        Command::Version => {
            println!("rk6 v{} (k6-compatible: v1.1.0)", env!("CARGO_PKG_VERSION"));
            exit::ExitCode::Success
        }
        Command::Status(a) => control_command(&a.address, ControlRequest::Status),
        Command::Scale(a) => control_command(
            &a.control.address,
            ControlRequest::Scale {
                vus: a.vus,
                max: a.max,
            },
        ),
        Command::Pause(a) => control_command(&a.address, ControlRequest::Paused(true)),
        Command::Resume(a) => control_command(&a.address, ControlRequest::Paused(false)),
    };
    std::process::exit(code as i32);
}

fn control_command(address: &str, what: ControlRequest) -> exit::ExitCode {
    match control_client::run(address, what) {
        Ok(()) => exit::ExitCode::Success,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::ExitCode::Failure
        }
    }
}
