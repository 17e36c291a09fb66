//! The `rk6` command line: runs k6 scripts.

mod aggregate;
mod api_documents;
mod archive;
mod args;
mod bench;
mod capacity;
mod collector;
mod compare;
mod control;
mod control_client;
mod demo;
mod deps;
mod exit;
mod flag_error;
mod http_config;
mod hub;
mod inspect;
mod lifecycle_timeouts;
mod net_options;
mod new;
mod options;
mod options_json;
mod plan;
mod process_metrics;
mod progress;
mod run;
mod run_error;
mod scenario_selection;
mod setup_once;
mod test_file;
mod tls_options;

use clap::Parser;

/// mimalloc's thread-local free lists suit a generator whose workers each allocate and free
/// their own VUs' garbage (measured with bench/ab.py; docs/design/004, "Allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use args::{Cli, Command};
use control_client::ControlRequest;

fn main() {
    // k6 prints the same line for `--version` as for `version`.
    if std::env::args().nth(1).as_deref() == Some("--version") && std::env::args().len() == 2 {
        println!("{}", version_line(invoked_as_k6()));
        std::process::exit(exit::ExitCode::Success as i32);
    }
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
    let ns_env = std::env::var("K6_LOG_NS_TIMESTAMPS").ok();
    rk6_js::log::set_nanosecond_timestamps(
        cli.log_ns_timestamps
            || matches!(
                ns_env.as_deref(),
                Some("1" | "t" | "T" | "true" | "TRUE" | "True")
            ),
    );
    let code = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Demo(args) => demo::run(args),
        Command::Bench(args) => bench::run(*args),
        Command::Inspect(args) => inspect::run(args),
        Command::Compare(args) => compare::run(&args),
        Command::Archive(args) => archive::run(*args),
        Command::New(args) => new::run(args),
        Command::Aggregate(args) => aggregate::run(*args),
        Command::Features(args) => {
            print!("{}", rk6_options::features::listing(args.json));
            exit::ExitCode::Success
        }
        Command::Deps(args) => deps::run(args),
        Command::Version => {
            println!("{}", version_line(invoked_as_k6()));
            exit::ExitCode::Success
        }
        Command::Status(a) => {
            deprecated_control_command("status");
            control_command(&a.address, ControlRequest::Status)
        }
        Command::Scale(a) => {
            deprecated_control_command("scale");
            control_command(
                &a.control.address,
                ControlRequest::Scale {
                    vus: a.vus,
                    max: a.max,
                },
            )
        }
        Command::Pause(a) => {
            deprecated_control_command("pause");
            control_command(&a.address, ControlRequest::Paused(true))
        }
        Command::Resume(a) => {
            deprecated_control_command("resume");
            control_command(&a.address, ControlRequest::Paused(false))
        }
    };
    std::process::exit(code as i32);
}

/// Whether the process was started as `k6` (a symlink or a copy of rk6 named so, as in a
/// k6-operator image); it then behaves as `rk6` except for the version line.
fn invoked_as_k6() -> bool {
    std::env::args_os()
        .next()
        .as_deref()
        .map(std::path::Path::new)
        .and_then(std::path::Path::file_stem)
        .is_some_and(|n| n == "k6")
}

/// `version`'s line. As `k6` it starts as k6's does (`k6 v1.1.0 (…)`), so tools that read
/// the k6 version from it get the k6 release rk6 is compatible with, and it says it is rk6.
fn version_line(as_k6: bool) -> String {
    let rk6 = env!("CARGO_PKG_VERSION");
    if as_k6 {
        format!(
            "k6 v{} (rk6 v{rk6}, k6-compatible, {}/{})",
            rk6_js::archive::K6_VERSION,
            rk6_js::archive::goos(),
            goarch()
        )
    } else {
        format!(
            "rk6 v{rk6} (k6-compatible: v{})",
            rk6_js::archive::K6_VERSION
        )
    }
}

/// `GOARCH` of this machine, as Go names it.
fn goarch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

/// k6 2.0 removed `pause`, `resume`, `scale` and `status`; rk6 keeps them for 1.x users.
fn deprecated_control_command(name: &str) {
    rk6_js::log::Logger::new(false).log(
        rk6_js::log::Level::Warning,
        &format!(
            "`{name}` is deprecated and k6 2.0 removed it: use the REST API (--address) directly"
        ),
        &[],
    );
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
