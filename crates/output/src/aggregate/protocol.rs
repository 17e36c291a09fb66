//! The push a runner sends its aggregator: `POST /v1/push`, a gzip-compressed JSON
//! [`Push`] (`Content-Encoding: gzip`). The aggregator answers 200 with a [`PushAnswer`]
//! once it merged the push (or had merged that sequence number already). When the
//! aggregator has a secret ([`SECRET_ENV`]), every push carries it as `Authorization:
//! Bearer SECRET`; one without it is answered 401 and merged into nothing.

use rk6_metrics::delta::Delta;
use serde::{Deserialize, Serialize};

/// The aggregator's push endpoint.
pub const PUSH_PATH: &str = "/v1/push";

/// The environment variable holding the secret an aggregator and its runners share (both
/// read it; set on the aggregator, it refuses pushes without it).
pub const SECRET_ENV: &str = "RK6_AGGREGATE_SECRET";

/// The shared secret as `env` holds it: [`SECRET_ENV`] without surrounding whitespace (the
/// newline a file or a Kubernetes Secret often ends with), `None` when unset or empty.
pub fn secret(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    env(SECRET_ENV)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// The `Authorization` header value a push carries for `secret`.
pub fn authorization(secret: &str) -> String {
    format!("Bearer {secret}")
}

/// Who is pushing: one process of the distributed test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runner {
    /// Unique for the process (pid, start time), so two runners never share a sequence.
    pub id: String,
    /// `--tag instance_id=N`, when given (k6-operator gives every runner one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// `--execution-segment` (`0:1/3`); `None` for the whole test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// The runner's REST API (`--address`), through which the aggregator stops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
}

impl Runner {
    /// How a message names it: `instance 2 (segment 1/3:2/3)`, or its id.
    pub fn label(&self) -> String {
        let seg = self
            .segment
            .as_deref()
            .map(|s| format!(" (segment {s})"))
            .unwrap_or_default();
        match &self.instance_id {
            Some(i) => format!("instance {i}{seg}"),
            None => format!("runner {}{seg}", self.id),
        }
    }
}

/// One push: a runner's delta since its previous push.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Push {
    /// The sender.
    pub runner: Runner,
    /// 0, 1, 2, … per runner; a push is retried with the same number until acknowledged,
    /// and the aggregator merges each number once.
    pub seq: u64,
    /// The runner's test run time so far, in milliseconds (the divisor of counter rates).
    pub elapsed_ms: f64,
    /// The runner's last push: its test is over.
    #[serde(default)]
    pub done: bool,
    /// What it gathered since push `seq − 1`.
    pub delta: Delta,
}

/// The aggregator's answer to a push.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushAnswer {
    /// `false` when this sequence number had been merged before (a retried push).
    pub merged: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_read_trimmed_and_an_empty_one_is_none() {
        let env = |v: &'static str| move |k: &str| (k == SECRET_ENV).then(|| v.to_owned());
        assert_eq!(secret(&env("s3cret\n")), Some("s3cret".into()));
        assert_eq!(secret(&env("  ")), None);
        assert_eq!(secret(&|_| None), None);
        assert_eq!(authorization("s3cret"), "Bearer s3cret");
    }
}
