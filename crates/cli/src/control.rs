//! The REST API of a running test (`--address`), k6's: `GET`/`PATCH /v1/status`,
//! `GET`/`POST`/`PUT /v1/setup`, `POST /v1/teardown`, `GET /v1/metrics[/{id}]` and
//! `GET /v1/groups[/{id}]`, with k6's documents, status codes and content types. It is how
//! externally-controlled scenarios get their VUs, how a test started with `--paused` is
//! released (e.g. every runner of a k6-operator `TestRun`), how setup runs once for a
//! distributed test, and how a test is stopped from outside. `rk6 status|scale|pause|resume`
//! are its clients.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rk6_js::log::Level;
use rk6_js::{Lifecycle, Shared};
use rk6_scheduler::{CancellationToken, ExecutionState, Executor};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::Notify;

use crate::api_documents::{self, TREND_STATS};
use crate::collector::LiveMetrics;
use crate::lifecycle_timeouts::{self, LifecycleTimeouts};

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
    /// Stopped before it started (`stopped: true` while paused).
    Interrupted = 10,
}

/// What the API needs of the test to run `setup()`/`teardown()` and read its metrics.
pub struct Hooks {
    /// What a lifecycle VU is built from.
    pub shared: Arc<Shared>,
    /// The aggregator, as the metrics thread fills it.
    pub metrics: LiveMetrics,
    /// `setupTimeout` and `teardownTimeout`.
    pub timeouts: LifecycleTimeouts,
}

/// An error document's parts: HTTP status, `title`, `detail`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    status: StatusCode,
    title: &'static str,
    detail: String,
}

impl ApiError {
    fn new(status: StatusCode, title: &'static str, detail: impl Into<String>) -> ApiError {
        ApiError {
            status,
            title,
            detail: detail.into(),
        }
    }

    /// The `detail` text.
    #[cfg(test)]
    fn detail(&self) -> &str {
        &self.detail
    }
}

/// When the test started running (after `--paused`) and ended: the divisor of the
/// counters' rates in `/v1/metrics`, as k6's current test run duration.
#[derive(Default)]
struct RunClock {
    started: Option<Instant>,
    ended: Option<Instant>,
}

/// What the API reads and changes.
pub struct Control {
    phase: AtomicU8,
    /// Wakes a run waiting for its start (`--paused`); the flag itself is
    /// `ExecutionState::paused`, which externally-controlled scenarios read.
    resumed: Notify,
    state: Arc<ExecutionState>,
    stop: CancellationToken,
    /// `stopped: true` came through the API (k6 then exits 103).
    stopped_by_api: AtomicBool,
    /// The setup data as JSON text: what `POST`/`PUT /v1/setup` or the run's `setup()` set;
    /// `None` until one did.
    setup_data: Mutex<Option<String>>,
    hooks: OnceLock<Hooks>,
    clock: Mutex<RunClock>,
    /// The exit code the run will end with, once known (k6 2.3's `execution_result`).
    exit_code: OnceLock<i32>,
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
            stopped_by_api: AtomicBool::new(false),
            setup_data: Mutex::new(None),
            hooks: OnceLock::new(),
            clock: Mutex::default(),
            exit_code: OnceLock::new(),
        })
    }

    /// Gives the API the test's lifecycle and metrics (before it serves them).
    pub fn attach(&self, hooks: Hooks) {
        let _ = self.hooks.set(hooks);
    }

    /// Records the exit code the run will end with, for `GET /v1/status` (k6 2.3).
    pub fn set_exit_code(&self, code: i32) {
        let _ = self.exit_code.set(code);
    }

    /// Records the test's phase.
    pub fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        let mut clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        match phase {
            Phase::Setup if clock.started.is_none() => clock.started = Some(Instant::now()),
            Phase::Ended | Phase::Interrupted if clock.ended.is_none() => {
                clock.ended = Some(Instant::now())
            }
            _ => {}
        }
    }

    /// Whether the API stopped the test (`PATCH /v1/status` with `stopped: true`).
    pub fn stopped_by_api(&self) -> bool {
        self.stopped_by_api.load(Ordering::Relaxed)
    }

    /// The setup data set through the API (`POST`/`PUT /v1/setup`), if any.
    pub fn setup_data(&self) -> Option<String> {
        self.setup_data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Records the data the run's own `setup()` returned (`GET /v1/setup` shows it).
    pub fn set_setup_data(&self, data: Option<String>) {
        *self.setup_data.lock().unwrap_or_else(|e| e.into_inner()) = data;
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

    /// k6's `running`: from the start of `setup()` to the end of `teardown()`.
    fn running(&self) -> bool {
        let phase = self.phase.load(Ordering::Relaxed);
        [Phase::Setup, Phase::Running, Phase::Teardown]
            .iter()
            .any(|p| *p as u8 == phase)
    }

    fn external(&self) -> Option<&rk6_scheduler::ScenarioState> {
        self.state
            .scenarios
            .iter()
            .find(|s| matches!(s.scenario.executor, Executor::ExternallyControlled(_)))
    }

    /// The test run's duration so far (zero before it started, frozen once it ended).
    fn run_duration(&self) -> Duration {
        let clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        match (clock.started, clock.ended) {
            (Some(s), Some(e)) => e.saturating_duration_since(s),
            (Some(s), None) => s.elapsed(),
            _ => Duration::ZERO,
        }
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
            "tainted": self.tainted(),
            // k6 2.3 (#6388): null until the run's exit code is known.
            "execution_result": self.exit_code.get().map(|code| json!({"exit_code": code})),
        }}})
    }

    /// k6's test-wide `tainted`: some threshold was crossed when last judged.
    fn tainted(&self) -> bool {
        self.hooks
            .get()
            .is_some_and(|h| h.metrics.lock().as_ref().is_some_and(|a| a.any_tainted()))
    }

    /// Applies a `PATCH /v1/status` document as k6 does: `stopped` first (and alone), then
    /// `paused`, then the VUs of an externally-controlled scenario. Answers the status as it
    /// is the moment the change is made, before a resumed or stopped run moves on (k6's
    /// answer to the starter is status 4 with `paused: false`).
    pub fn patch(&self, doc: &Value) -> Result<Value, ApiError> {
        let mut wake = Wake::None;
        let result = self.apply(doc, &mut wake);
        let mut status = self.status();
        match wake {
            Wake::None => {}
            Wake::Resume => self.resumed.notify_waiters(),
            Wake::Stop => {
                status["data"]["attributes"]["stopped"] = json!(true);
                self.stop.cancel();
            }
        }
        result.map(|()| status)
    }

    fn apply(&self, doc: &Value, wake: &mut Wake) -> Result<(), ApiError> {
        let invalid =
            |detail: String| ApiError::new(StatusCode::BAD_REQUEST, "Invalid data", detail);
        let empty = serde_json::Map::new();
        let attrs = match doc.pointer("/data/attributes") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(a)) => a,
            Some(_) => return Err(invalid("data.attributes must be an object".into())),
        };
        let int = |key: &str| -> Result<Option<u64>, ApiError> {
            attrs
                .get(key)
                .filter(|v| !v.is_null())
                .map(|v| {
                    v.as_u64()
                        .ok_or_else(|| invalid(format!("{key} must be a non-negative integer")))
                })
                .transpose()
        };
        let boolean = |key: &str| -> Result<Option<bool>, ApiError> {
            attrs
                .get(key)
                .filter(|v| !v.is_null())
                .map(|v| {
                    v.as_bool()
                        .ok_or_else(|| invalid(format!("{key} must be a boolean")))
                })
                .transpose()
        };
        let vus = int("vus")?;
        let vus_max = int("vus-max")?;
        let paused = boolean("paused")?;
        if boolean("stopped")? == Some(true) {
            self.stopped_by_api.store(true, Ordering::Relaxed);
            *wake = Wake::Stop;
            return Ok(());
        }
        if let Some(p) = paused {
            if p && self.running() {
                if let Some(s) = self
                    .state
                    .scenarios
                    .iter()
                    .find(|s| !matches!(s.scenario.executor, Executor::ExternallyControlled(_)))
                {
                    return Err(ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "Pause error",
                        format!(
                            "{} executor '{}' doesn't support pause and resume operations after its start",
                            s.scenario.executor_name(),
                            s.scenario.name
                        ),
                    ));
                }
            }
            self.state.paused.store(p, Ordering::Relaxed);
            if !p {
                *wake = Wake::Resume;
            }
        }
        if vus.is_some() || vus_max.is_some() {
            let config = |detail: String| {
                ApiError::new(StatusCode::BAD_REQUEST, "Config update error", detail)
            };
            let s = self.external().ok_or_else(|| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Execution config error",
                    "an externally-controlled executor needs to be configured for live configuration updates",
                )
            })?;
            let max = s.scenario.max_vus();
            if let Some(m) = vus_max.filter(|m| *m > max) {
                return Err(config(format!(
                    "rk6 cannot raise vus-max above the scenario's maxVUs ({max}) while it runs yet (asked for {m}); set maxVUs in the script"
                )));
            }
            let limit = vus_max.unwrap_or(max);
            if let Some(v) = vus {
                if v > limit {
                    return Err(config(format!("invalid configuration supplied: the number of active VUs ({v}) must be less than or equal to the number of maxVUs ({limit})")));
                }
                s.target_vus.store(v, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// `PUT /v1/setup`: the raw body is the data (an empty body clears it), kept as
    /// written, as k6 keeps it.
    pub fn put_setup(&self, body: &[u8]) -> Result<String, ApiError> {
        let data = if body.is_empty() {
            None
        } else {
            let parse_error =
                |e: String| ApiError::new(StatusCode::BAD_REQUEST, "Error parsing request body", e);
            serde_json::from_slice::<serde::de::IgnoredAny>(body)
                .map_err(|e| parse_error(e.to_string()))?;
            let text = std::str::from_utf8(body).map_err(|e| parse_error(e.to_string()))?;
            Some(api_documents::compact(text))
        };
        self.set_setup_data(data);
        Ok(api_documents::setup_document(self.setup_data().as_deref()))
    }

    /// `POST /v1/setup`: runs `setup()` on a VU of its own (even with `--no-setup`, as
    /// k6), keeps what it returns as the setup data and answers it.
    async fn run_setup(&self) -> Result<String, ApiError> {
        let data = self.lifecycle(Which::Setup).await?;
        self.set_setup_data(data.as_deref().map(api_documents::sorted_json));
        Ok(api_documents::setup_document(self.setup_data().as_deref()))
    }

    /// Runs `setup()` or `teardown()` on a fresh VU within its timeout; an error is the
    /// 500 document k6 answers (the k6-operator aborts on its "Error executing" title).
    async fn lifecycle(&self, which: Which) -> Result<Option<String>, ApiError> {
        let (title, name, option) = match which {
            Which::Setup => ("Error executing setup", "setup", "setupTimeout"),
            Which::Teardown => ("Error executing teardown", "teardown", "teardownTimeout"),
        };
        let fail = |detail: String| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, title, detail);
        let hooks = self
            .hooks
            .get()
            .ok_or_else(|| fail("the test is not ready yet".into()))?;
        let result = async {
            let shared = hooks.shared.clone();
            // Starting a VU evaluates the init context: off the event loop.
            let lc = tokio::task::spawn_blocking(move || Lifecycle::start(shared))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.message)?;
            let interrupt = CancellationToken::new();
            let limit = match which {
                Which::Setup => hooks.timeouts.setup,
                Which::Teardown => hooks.timeouts.teardown,
            };
            let run = async {
                match which {
                    Which::Setup => lc.setup(interrupt.clone()).await,
                    Which::Teardown => lc.teardown(interrupt.clone()).await.map(|()| None),
                }
            };
            match tokio::time::timeout(limit, run).await {
                Ok(r) => {
                    // Dropping joins the VU's thread, which ends now its channel closes.
                    let _ = tokio::task::spawn_blocking(move || drop(lc)).await;
                    r.map_err(|e| e.message)
                }
                Err(_) => {
                    interrupt.cancel();
                    lc.detach();
                    Err(lifecycle_timeouts::timed_out(name, option, limit).0)
                }
            }
        }
        .await;
        result.map_err(|detail| {
            hooks
                .shared
                .logger
                .log(Level::Error, title, &[("error", &detail)]);
            fail(detail)
        })
    }

    /// `GET /v1/metrics` or, with an id, `GET /v1/metrics/{id}`.
    fn metrics(&self, id: Option<&str>) -> Result<Value, ApiError> {
        let not_found = || {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "Not Found",
                "No metric with that ID was found",
            )
        };
        let trend_stats: Vec<String> = TREND_STATS.iter().map(|s| (*s).to_owned()).collect();
        // k6 judges thresholds from the start of the run: a paused test has none tainted.
        let started = self.run_duration() > Duration::ZERO;
        let metrics = self.hooks.get().map(|h| h.metrics.clone());
        let guard = metrics.as_ref().map(|m| m.lock());
        let Some(agg) = guard.as_ref().and_then(|g| g.as_ref()) else {
            return match id {
                Some(_) => Err(not_found()),
                None => Ok(json!({"data": []})),
            };
        };
        let data = agg.summary(self.run_duration(), &trend_stats);
        let tainted = |name: &str| agg.tainted(name).filter(|_| started);
        match id {
            None => Ok(api_documents::metrics_document(&data, tainted)),
            Some(id) => data
                .metrics
                .iter()
                .find(|m| m.name == id)
                .map(|m| json!({"data": api_documents::metric_resource(m, tainted(&m.name))}))
                .ok_or_else(not_found),
        }
    }

    /// `GET /v1/groups` or, with an id, `GET /v1/groups/{id}`.
    fn groups(&self, id: Option<&str>) -> Result<Value, ApiError> {
        let root = self
            .hooks
            .get()
            .and_then(|h| h.metrics.lock().as_ref().map(|a| a.root_group()));
        let list = root
            .map(|r| api_documents::group_resources(&r))
            .unwrap_or_default();
        match id {
            None => Ok(json!({ "data": list })),
            Some(id) => list
                .into_iter()
                .find(|g| g["id"] == id)
                .map(|g| json!({ "data": g }))
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::NOT_FOUND,
                        "Not Found",
                        "No group with that ID was found",
                    )
                }),
        }
    }
}

/// What a status change wakes once its answer is taken.
enum Wake {
    None,
    Resume,
    Stop,
}

#[derive(Clone, Copy)]
enum Which {
    Setup,
    Teardown,
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

/// The content types k6's handlers answer with: the status handlers set
/// `application/json; charset=utf-8`, the setup handlers `application/json`, and the
/// metrics and groups handlers none (Go then sniffs `text/plain; charset=utf-8`).
#[derive(Clone, Copy)]
enum Kind {
    Status,
    Setup,
    Sniffed,
}

impl Kind {
    fn content_type(self) -> &'static str {
        match self {
            Kind::Status => "application/json; charset=utf-8",
            Kind::Setup => "application/json",
            Kind::Sniffed => "text/plain; charset=utf-8",
        }
    }
}

/// Most bytes of a request body (setup data can be large).
const BODY_LIMIT: usize = 64 * 1024 * 1024;

async fn body(req: Request<Incoming>) -> Result<Bytes, String> {
    Limited::new(req.into_body(), BODY_LIMIT)
        .collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| e.to_string())
}

async fn handle(req: Request<Incoming>, control: &Control) -> Response<Full<Bytes>> {
    let method = req.method().clone();
    let path = percent_decode(req.uri().path());
    let get_only = |answer: &dyn Fn() -> Response<Full<Bytes>>| {
        if method == Method::GET {
            answer()
        } else {
            empty(StatusCode::METHOD_NOT_ALLOWED)
        }
    };
    match path.as_str() {
        "/v1/status" => match method {
            Method::GET => reply(StatusCode::OK, Kind::Status, &control.status()),
            Method::PATCH => {
                let body = match body(req).await {
                    Ok(b) => b,
                    Err(e) => {
                        return error(
                            Kind::Status,
                            &ApiError::new(StatusCode::BAD_REQUEST, "Couldn't read request", e),
                        )
                    }
                };
                let doc: Value = match serde_json::from_slice(&body) {
                    Ok(v) => v,
                    Err(e) => {
                        return error(
                            Kind::Status,
                            &ApiError::new(StatusCode::BAD_REQUEST, "Invalid data", e.to_string()),
                        )
                    }
                };
                match control.patch(&doc) {
                    Ok(status) => reply(StatusCode::OK, Kind::Status, &status),
                    Err(e) => error(Kind::Status, &e),
                }
            }
            _ => empty(StatusCode::METHOD_NOT_ALLOWED),
        },
        "/v1/setup" => match method {
            Method::GET => reply_text(
                StatusCode::OK,
                Kind::Setup,
                api_documents::setup_document(control.setup_data().as_deref()),
            ),
            Method::PUT => match body(req).await {
                Ok(b) => answer_text(Kind::Setup, control.put_setup(&b)),
                Err(e) => error(
                    Kind::Sniffed,
                    &ApiError::new(StatusCode::BAD_REQUEST, "Error reading request body", e),
                ),
            },
            Method::POST => answer_text(Kind::Setup, control.run_setup().await),
            _ => empty(StatusCode::METHOD_NOT_ALLOWED),
        },
        "/v1/teardown" => match method {
            Method::POST => match control.lifecycle(Which::Teardown).await {
                Ok(_) => empty(StatusCode::OK),
                Err(e) => error(Kind::Sniffed, &e),
            },
            _ => empty(StatusCode::METHOD_NOT_ALLOWED),
        },
        "/v1/metrics" => get_only(&|| answer(Kind::Sniffed, control.metrics(None))),
        "/metrics" => get_only(&|| {
            let mut res = Response::new(Full::new(Bytes::from(crate::process_metrics::render())));
            res.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            res
        }),
        "/v1/groups" => get_only(&|| answer(Kind::Sniffed, control.groups(None))),
        p => {
            if let Some(id) = p.strip_prefix("/v1/metrics/") {
                get_only(&|| answer(Kind::Sniffed, control.metrics(Some(id))))
            } else if let Some(id) = p.strip_prefix("/v1/groups/") {
                get_only(&|| answer(Kind::Sniffed, control.groups(Some(id))))
            } else {
                // Go's mux for a path it does not serve.
                let mut res = Response::new(Full::new(Bytes::from_static(b"404 page not found\n")));
                *res.status_mut() = StatusCode::NOT_FOUND;
                let h = res.headers_mut();
                h.insert(
                    CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                h.insert(
                    "x-content-type-options",
                    HeaderValue::from_static("nosniff"),
                );
                res
            }
        }
    }
}

/// A path with its `%XX` escapes decoded, as Go's mux matches it (a sub-metric id holds
/// `{`, `:` and `}`).
fn percent_decode(path: &str) -> String {
    percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned()
}

fn answer(kind: Kind, result: Result<Value, ApiError>) -> Response<Full<Bytes>> {
    answer_text(kind, result.map(|doc| doc.to_string()))
}

fn answer_text(kind: Kind, result: Result<String, ApiError>) -> Response<Full<Bytes>> {
    match result {
        Ok(doc) => reply_text(StatusCode::OK, kind, doc),
        // The setup handlers' errors go out before their content type is set.
        Err(e) => error(
            if matches!(kind, Kind::Status) {
                kind
            } else {
                Kind::Sniffed
            },
            &e,
        ),
    }
}

fn empty(status: StatusCode) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(Bytes::new()));
    *res.status_mut() = status;
    res
}

fn reply(status: StatusCode, kind: Kind, body: &Value) -> Response<Full<Bytes>> {
    reply_text(status, kind, body.to_string())
}

/// Answers a document's JSON text, escaped as Go writes it.
fn reply_text(status: StatusCode, kind: Kind, body: String) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(Bytes::from(api_documents::go_escape(body))));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind.content_type()));
    res
}

fn error(kind: Kind, e: &ApiError) -> Response<Full<Bytes>> {
    reply(
        e.status,
        kind,
        &json!({"errors": [{"status": e.status.as_u16().to_string(), "title": e.title, "detail": e.detail}]}),
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
            e.detail()
                .contains("(5) must be less than or equal to the number of maxVUs (3)"),
            "{e:?}"
        );
        let e = c.patch(&patch(json!({"vus-max": 9}))).unwrap_err();
        assert!(e.detail().contains("cannot raise vus-max"), "{e:?}");
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

    #[test]
    fn sub_metric_ids_are_matched_decoded() {
        assert_eq!(
            percent_decode("/v1/metrics/http_req_duration%7Bstatus:200%7D"),
            "/v1/metrics/http_req_duration{status:200}"
        );
    }

    #[test]
    fn running_spans_setup_to_teardown_as_in_k6() {
        let c = control(json!({"vus": 1}), true);
        let running = |phase| {
            c.set_phase(phase);
            let attrs = c.status()["data"]["attributes"].clone();
            assert_eq!(attrs["status"], phase as u8);
            attrs["running"].as_bool().unwrap()
        };
        assert!(!running(Phase::PausedBeforeRun));
        assert!(running(Phase::Setup));
        assert!(running(Phase::Running));
        assert!(running(Phase::Teardown));
        assert!(!running(Phase::Ended));
    }

    #[test]
    fn patch_errors_are_k6s_documents() {
        let c = control(json!({"vus": 2, "duration": "10s"}), false);
        let e = c.patch(&patch(json!({"vus": 1}))).unwrap_err();
        assert_eq!(
            (e.status, e.title, e.detail()),
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Execution config error",
                "an externally-controlled executor needs to be configured for live configuration updates"
            )
        );
        let e = c.patch(&patch(json!({"vus": "x"}))).unwrap_err();
        assert_eq!(
            (e.status, e.title),
            (StatusCode::BAD_REQUEST, "Invalid data")
        );
        c.set_phase(Phase::Running);
        let e = c.patch(&patch(json!({"paused": true}))).unwrap_err();
        assert_eq!(
            (e.status, e.title, e.detail()),
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Pause error",
                "constant-vus executor 'default' doesn't support pause and resume operations after its start"
            )
        );
        // `stopped` wins over everything else in the document, as in k6.
        c.patch(&patch(json!({"stopped": true, "vus": 1}))).unwrap();
        assert!(c.stopped_by_api());
    }

    #[test]
    fn put_setup_keeps_raw_data_and_rejects_bad_json() {
        let c = control(json!({"vus": 1}), true);
        assert_eq!(
            c.put_setup(br#"{"x":[1,2]}"#).unwrap().to_string(),
            r#"{"data":{"type":"setupData","id":"default","attributes":{"data":{"x":[1,2]}}}}"#
        );
        assert_eq!(c.setup_data().as_deref(), Some(r#"{"x":[1,2]}"#));
        let e = c.put_setup(b"{bad").unwrap_err();
        assert_eq!(
            (e.status, e.title),
            (StatusCode::BAD_REQUEST, "Error parsing request body")
        );
        c.put_setup(b"").unwrap();
        assert_eq!(c.setup_data(), None);
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
