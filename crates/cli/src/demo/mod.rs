//! Built-in demo target for `rk6 demo`: a tiny in-memory "shop" HTTP API, and the journey
//! script that exercises it.

mod shop;
mod storefront;

pub use shop::serve;

use crate::args::{DemoArgs, OptionFlags, RunArgs};
use crate::exit::ExitCode;

/// The demo journey, embedded so `rk6 demo` works from any directory.
const JOURNEY: &str = include_str!("../../../../examples/journey.js");
/// The hybrid journey `rk6 demo --browser` runs: API load and a browser user.
const HYBRID: &str = include_str!("../../../../examples/hybrid.js");

/// Starts the shop on 127.0.0.1 and runs the journey against it (or only serves).
pub fn run(args: DemoArgs) -> ExitCode {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let listener = match rt.block_on(tokio::net::TcpListener::bind(("127.0.0.1", args.port))) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rk6 demo: cannot listen on 127.0.0.1:{}: {e}", args.port);
            return ExitCode::InvalidConfig;
        }
    };
    let addr = listener.local_addr().expect("bound address");
    let server = rt.spawn(serve(listener));
    if args.serve_only {
        println!("demo shop listening on http://{addr} (Ctrl+C to stop)");
        let _ = rt.block_on(tokio::signal::ctrl_c());
        return ExitCode::Success;
    }
    let dir = std::env::temp_dir().join(format!("rk6-demo-{}", std::process::id()));
    let (name, source) = if args.browser {
        ("hybrid.js", HYBRID)
    } else {
        ("journey.js", JOURNEY)
    };
    let script = dir.join(name);
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&script, source)) {
        eprintln!("rk6 demo: cannot write {}: {e}", script.display());
        return ExitCode::ScriptException;
    }
    let mut env = vec![format!("BASE_URL=http://{addr}")];
    if args.browser && is_root() && std::env::var_os("K6_BROWSER_ARGS").is_none() {
        // Chromium refuses to run as root with its sandbox; the demo should just work.
        println!("running as root: starting Chromium with K6_BROWSER_ARGS=no-sandbox");
        std::env::set_var("K6_BROWSER_ARGS", "no-sandbox");
    }
    println!("demo shop listening on http://{addr}; running examples/{name} against it");
    let code = crate::run::run(RunArgs {
        script,
        options: OptionFlags {
            env: std::mem::take(&mut env),
            quiet: args.quiet,
            ..Default::default()
        },
        include_system_env_vars: true,
        ..Default::default()
    });
    server.abort();
    let _ = std::fs::remove_dir_all(&dir);
    code
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}
