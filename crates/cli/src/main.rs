//! The `rk6` command line: runs k6 scripts.

mod args;
mod bench;
mod collector;
mod demo;
mod exit;
mod inspect;
mod new;
mod options;
mod progress;
mod run;

use clap::Parser;

use args::{Cli, Command};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `rk6 bench` reports bad flags with k6's invalid-options code; help and version
        // (printed to stdout) and the other commands keep clap's behaviour.
        Err(e) if e.use_stderr() && std::env::args().nth(1).as_deref() == Some("bench") => {
            let _ = e.print();
            std::process::exit(exit::ExitCode::InvalidConfig as i32);
        }
        Err(e) => e.exit(),
    };
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
    };
    std::process::exit(code as i32);
}
