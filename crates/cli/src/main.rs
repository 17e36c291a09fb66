//! The `rk6` command line: runs k6 scripts.

mod args;
mod collector;
mod demo;
mod exit;
mod options;
mod progress;
mod run;

use clap::Parser;

use args::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Demo(args) => demo::run(args),
        Command::Version => {
            println!("rk6 v{} (k6-compatible: v1.1.0)", env!("CARGO_PKG_VERSION"));
            exit::ExitCode::Success
        }
    };
    std::process::exit(code as i32);
}
