//! The control API of a running test (`--address`, k6's REST API shape): `GET` and `PATCH`
//! `/v1/status`. It is how externally-controlled scenarios get their VUs, how a test started
//! with `--paused` is released (e.g. all segments of a split test at once) and how a test is
//! stopped from outside. `rk6 status|scale|pause|resume` are its clients.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rk6_scheduler::{CancellationToken, ExecutionState, Executor};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// Where the test is in its life, with k6's status numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// VUs are being initialised.
    InitVus = 1,
    /// Waiting for `resume` (`--paused`).
    PausedBeforeRun = 4,
    /// `setup()` runs.
    Setup = 6,
    /// Scenarios run.
    Running = 7,
    /// `teardown()` runs.
    Teardown = 8,
    /// The test is over.
    Ended = 9,
}

/// What the API reads and changes.
pub struct Control {
    phase: AtomicU8,
    /// Wakes a run waiting for its start (`--paused`); the flag itself is
    /// `ExecutionState::paused`, which externally-controlled scenarios read.
    resumed: Notify,
    state: Arc<ExecutionState>,
    stop: CancellationToken,
}

impl Control {
    /// Control over a test with this state; cancelling `stop` ends it gracefully.
    pub fn new(state: Arc<ExecutionState>, stop: CancellationToken, paused: bool) -> Arc<Self> {
        state.paused.store(paused, Ordering::Relaxed);
        Arc::new(Control {
            phase: AtomicU8::new(Phase::InitVus as u8),
            resumed: Notify::new(),
            state,
            stop,
        })
    }

    /// Records the test's phase.
    pub fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// Waits until the test is not paused (or is stopped).
    pub async fn wait_resumed(&self) {
        loop {
            let notified = self.resumed.notified();
            if !self.state.paused.load(Ordering::Relaxed) || self.stop.is_cancelled() {
                return;
            }
            tokio::select! {
                _ = notified => {}
                _ = self.stop.cancelled() => return,
            }
        }
    }

    fn running(&self) -> bool {
        self.phase.load(Ordering::Relaxed) == Phase::Running as u8
    }

    fn external(&self) -> Option<&rk6_scheduler::ScenarioState> {
        self.state
            .scenarios
            .iter()
            .find(|s| matches!(s.scenario.executor, Executor::ExternallyControlled(_)))
    }

    /// The status document k6's API returns.
    pub fn status(&self) -> Value {
        let paused = self.state.paused.load(Ordering::Relaxed);
        let (vus, vus_max) = match self.external() {
            Some(s) if paused => (0, s.scenario.max_vus()),
            Some(s) => (s.target_vus.load(Ordering::Relaxed), s.scenario.max_vus()),
            None => (
                self.state.active_vus(),
                self.state.vus_max.load(Ordering::Relaxed),
            ),
        };
        json!({"data": {"type": "status", "id": "default", "attributes": {
            "status": self.phase.load(Ordering::Relaxed),
            "paused": paused,
            "vus": vus,
            "vus-max": vus_max,
            "stopped": self.stop.is_cancelled(),
            "running": self.running(),
            "tainted": false,
        }}})
    }

    /// Applies a `PATCH /v1/status` document; the error is the text for a 400 answer.
    pub fn patch(&self, doc: &Value) -> Result<(), String> {
        let attrs = doc
            .pointer("/data/attributes")
            .and_then(Value::as_object)
            .ok_or("expected a JSON:API document with data.attributes")?;
        let int = |key: &str| -> Result<Option<u64>, String> {
            attrs
                .get(key)
                .filter(|v| !v.is_null())
                .map(|v| {
                    v.as_u64()
                        .ok_or(format!("{key} must be a non-negative integer"))
                })
                .transpose()
        };
        let vus = int("vus")?;
        let vus_max = int("vus-max")?;
        if vus.is_some() || vus_max.is_some() {
            let s = self.external().ok_or(
                "VUs can only be changed in a test with an externally-controlled scenario",
            )?;
            let max = s.scenario.max_vus();
            if let Some(m) = vus_max.filter(|m| *m > max) {
                return Err(format!(
                    "rk6 cannot raise vus-max above the scenario's maxVUs ({max}) while it runs yet (asked for {m}); set maxVUs in the script"
                ));
            }
            let limit = vus_max.unwrap_or(max);
            if let Some(v) = vus {
                if v > limit {
                    return Err(format!("invalid configuration supplied: the number of active VUs ({v}) must be less than or equal to the number of maxVUs ({limit})"));
                }
                s.target_vus.store(v, Ordering::Relaxed);
            }
        }
        if let Some(p) = attrs.get("paused").filter(|v| !v.is_null()) {
            let p = p.as_bool().ok_or("paused must be a boolean")?;
            if p && self.running() && self.external().is_none() {
                return Err("a running test can only be paused when it uses the externally-controlled executor".into());
            }
            self.state.paused.store(p, Ordering::Relaxed);
            if !p {
                self.resumed.notify_waiters();
            }
        }
        if attrs.get("stopped").and_then(Value::as_bool) == Some(true) {
            self.stop.cancel();
        }
        Ok(())
    }
}

/// Starts serving the API on `listener` until the process ends.
pub fn serve(listener: TcpListener, control: Arc<Control>) {
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let control = control.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let control = control.clone();
                    async move { Ok::<_, Infallible>(handle(req, &control).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

/// Binds the API address (`host:port`).
pub async fn bind(address: &str) -> std::io::Result<TcpListener> {
    let addr: Vec<SocketAddr> = tokio::net::lookup_host(address).await?.collect();
    let mut last = None;
    for a in addr {
        match TcpListener::bind(a).await {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other(format!("no address for {address}"))))
}

async fn handle(req: Request<Incoming>, control: &Control) -> Response<Full<Bytes>> {
    let path = req.uri().path().trim_end_matches('/').to_string();
    match (req.method().clone(), path.as_str()) {
        (Method::GET, "/v1/status") => reply(StatusCode::OK, &control.status()),
        (Method::PATCH, "/v1/status") => {
            let body = match Limited::new(req.into_body(), 64 * 1024).collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => return error(StatusCode::BAD_REQUEST, "Couldn't read the body", ""),
            };
            let doc: Value = match serde_json::from_slice(&body) {
                Ok(v) => v,
                Err(e) => return error(StatusCode::BAD_REQUEST, "Invalid JSON", &e.to_string()),
            };
            match control.patch(&doc) {
                Ok(()) => reply(StatusCode::OK, &control.status()),
                Err(e) => error(StatusCode::BAD_REQUEST, "Config update error", &e),
            }
        }
        (_, "/v1/status") => error(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed", ""),
        (_, p) if p.starts_with("/v1/") => error(
            StatusCode::NOT_IMPLEMENTED,
            "Not supported by rk6 yet",
            "rk6's API serves /v1/status only (see docs/compatibility.md)",
        ),
        _ => error(StatusCode::NOT_FOUND, "Not found", ""),
    }
}

fn reply(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(Bytes::from(body.to_string())));
    *res.status_mut() = status;
    res.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    res
}

fn error(status: StatusCode, title: &str, detail: &str) -> Response<Full<Bytes>> {
    reply(
        status,
        &json!({"errors": [{"status": status.as_u16().to_string(), "title": title, "detail": detail}]}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_scheduler::{scenarios_from_options, Scenario};

    fn control(options: Value, paused: bool) -> Arc<Control> {
        let scenarios: Vec<Arc<Scenario>> =
            scenarios_from_options(&rk6_options::Options::from_json(&options).unwrap().options)
                .unwrap()
                .into_iter()
                .map(Arc::new)
                .collect();
        Control::new(
            ExecutionState::new(&scenarios),
            CancellationToken::new(),
            paused,
        )
    }

    fn patch(attrs: Value) -> Value {
        json!({"data": {"type": "status", "id": "default", "attributes": attrs}})
    }

    #[test]
    fn scales_an_externally_controlled_scenario_within_max_vus() {
        let c = control(
            json!({"scenarios": {"ec": {"executor": "externally-controlled", "vus": 1, "maxVUs": 3, "duration": "10s"}}}),
            false,
        );
        assert_eq!(c.status()["data"]["attributes"]["vus"], 1);
        c.patch(&patch(json!({"vus": 3}))).unwrap();
        assert_eq!(c.status()["data"]["attributes"]["vus"], 3);
        assert_eq!(c.status()["data"]["attributes"]["vus-max"], 3);
        let e = c.patch(&patch(json!({"vus": 5}))).unwrap_err();
        assert!(
            e.contains("(5) must be less than or equal to the number of maxVUs (3)"),
            "{e}"
        );
        let e = c.patch(&patch(json!({"vus-max": 9}))).unwrap_err();
        assert!(e.contains("cannot raise vus-max"), "{e}");
        c.patch(&patch(json!({"paused": true}))).unwrap();
        assert_eq!(c.status()["data"]["attributes"]["vus"], 0);
        assert!(c.state.paused.load(Ordering::Relaxed));
    }

    #[test]
    fn closed_scenarios_cannot_be_scaled_or_paused_mid_run() {
        let c = control(json!({"vus": 2, "duration": "10s"}), false);
        assert!(c.patch(&patch(json!({"vus": 1}))).is_err());
        c.set_phase(Phase::Running);
        assert!(c.patch(&patch(json!({"paused": true}))).is_err());
        c.patch(&patch(json!({"stopped": true}))).unwrap();
        assert_eq!(c.status()["data"]["attributes"]["stopped"], true);
    }

    #[tokio::test]
    async fn resume_releases_a_paused_start() {
        let c = control(json!({"vus": 1, "duration": "10s"}), true);
        assert_eq!(c.status()["data"]["attributes"]["paused"], true);
        let waiter = {
            let c = c.clone();
            tokio::spawn(async move { c.wait_resumed().await })
        };
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        c.patch(&patch(json!({"paused": false}))).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("resumed")
            .unwrap();
    }
}
