//! What the command line hands to the bench.

use std::path::PathBuf;

/// One `rk6 bench` invocation as given (flag names in the field docs); [`run`] validates it.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    /// Target URL (http:// or https://).
    pub url: String,
    /// `--connections`: connections kept open, each sending one request at a time.
    pub connections: usize,
    /// `--duration`, in k6 duration syntax.
    pub duration: String,
    /// `--threads`: worker threads of the I/O runtime.
    pub threads: usize,
    /// `--method`, case-insensitive.
    pub method: String,
    /// `--header` values, `"Name: value"` each.
    pub headers: Vec<String>,
    /// `--body`.
    pub body: Option<String>,
    /// `--rate`: constant throughput in requests/s over all connections.
    pub rate: Option<f64>,
    /// `--timeout` per request, in k6 duration syntax.
    pub timeout: String,
    /// `--insecure-skip-tls-verify`.
    pub insecure_skip_tls_verify: bool,
    /// `--h2c`: HTTP/2 with prior knowledge to an http:// URL.
    pub h2c: bool,
    /// `--json FILE`: where the JSON result goes.
    pub json: Option<PathBuf>,
    /// `--threshold` expressions on `http_req_duration` (ms), k6 syntax.
    pub thresholds: Vec<String>,
}
