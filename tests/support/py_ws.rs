//! The WebSocket server of Python's `websockets` library (`tests/parity/ws/server.py`) on
//! 127.0.0.1: a well-known implementation, with permessage-deflate, for the parity tests and
//! for the compression tests (tungstenite cannot compress, so the in-process server cannot
//! serve them).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The Python server on 127.0.0.1, stopped on drop.
pub struct PyWs {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl PyWs {
    /// Starts the server; `None` (after saying why) when Python's `websockets` is missing,
    /// which CI does not accept (.ci/run installs it).
    pub fn start() -> Option<PyWs> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/parity/ws/server.py");
        let missing = |why: String| {
            if std::env::var_os("CI").is_some() {
                panic!("Python's websockets is required in CI: {why}");
            }
            eprintln!("skipping a test that needs Python's websockets: {why}");
            None
        };
        let mut child = match Command::new("python3")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return missing(format!("python3: {e}")),
        };
        let mut line = String::new();
        let _ = BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
        match line.trim().parse() {
            Ok(port) => Some(PyWs { child, port }),
            Err(_) => {
                let _ = child.kill();
                let out = child.wait_with_output().ok();
                let err = out
                    .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                    .unwrap_or_default();
                missing(format!("the server did not start: {err}"))
            }
        }
    }
}

impl Drop for PyWs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
