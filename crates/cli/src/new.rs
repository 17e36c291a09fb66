//! `rk6 new`: writes a starter script to edit.

use std::io::Write;
use std::path::Path;

use rk6_js::log::{Level, Logger};

use crate::args::NewArgs;
use crate::exit::ExitCode;

/// The starter script: one request, a check and a pause, with the target taken from
/// `__ENV.TARGET` so it runs against any server without editing.
pub const TEMPLATE: &str = r#"// A starting point for an rk6 (k6-compatible) load test.
// Try it:   rk6 run -e TARGET=http://127.0.0.1:8080/ script.js
// Then grow the options below into stages or scenarios as the test needs.
import http from 'k6/http';
import { check, sleep } from 'k6';

const target = __ENV.TARGET || 'http://127.0.0.1:8080/';

export const options = {
  vus: 5,
  duration: '20s',
  thresholds: {
    // Fail the run when more than 1% of requests fail or p95 latency passes 500 ms.
    http_req_failed: ['rate<0.01'],
    http_req_duration: ['p(95)<500'],
  },
};

// Runs once per iteration on every virtual user.
export default function () {
  const res = http.get(target);
  check(res, {
    'answered with 200': (r) => r.status === 200,
  });
  // Think time between iterations, as a real user would pause.
  sleep(1);
}
"#;

/// Runs `rk6 new`.
pub fn run(args: NewArgs) -> ExitCode {
    let logger = Logger::new(false);
    let path = args.file.as_deref().unwrap_or(Path::new("script.js"));
    let file = if args.force {
        std::fs::File::create(path)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    };
    let written = file.and_then(|mut f| f.write_all(TEMPLATE.as_bytes()));
    match written {
        Ok(()) => {
            println!("Wrote a starter script to {}.", path.display());
            ExitCode::Success
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            logger.log(
                Level::Error,
                &format!(
                    "{} already exists; pass --force to replace it",
                    path.display()
                ),
                &[],
            );
            ExitCode::Failure
        }
        Err(e) => {
            logger.log(Level::Error, &format!("{}: {e}", path.display()), &[]);
            ExitCode::Failure
        }
    }
}
