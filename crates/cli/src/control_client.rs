//! `rk6 status`, `rk6 scale`, `rk6 pause` and `rk6 resume`: clients of the control API of a
//! running test (see `control.rs`).

use anyhow::{anyhow, bail, Context as _, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};

/// Sends one request to the API at `address` and returns the status document.
pub(crate) async fn call(address: &str, method: Method, body: Option<Value>) -> Result<Value> {
    request(
        address,
        method,
        "/v1/status",
        body.map(|b| Bytes::from(b.to_string())),
    )
    .await
}

/// Sends one request to `path` of the API at `address` (the body as it is: `PUT /v1/setup`
/// takes the raw data) and returns the JSON document it answers; an error status is an
/// error with the document's `detail` (or `title`).
pub(crate) async fn request(
    address: &str,
    method: Method,
    path: &str,
    body: Option<Bytes>,
) -> Result<Value> {
    let stream = tokio::net::TcpStream::connect(address)
        .await
        .with_context(|| format!("cannot reach the rk6 API at {address} (is a test running with --address {address}?)"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, address)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body.unwrap_or_default()))?;
    let res = sender.send_request(req).await?;
    let status = res.status();
    let body = res.into_body().collect().await?.to_bytes();
    let doc: Value = serde_json::from_slice(&body)
        .map_err(|e| anyhow!("the API answered {status} with a body that is not JSON: {e}"))?;
    if !status.is_success() {
        let detail = doc
            .pointer("/errors/0/detail")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .or_else(|| doc.pointer("/errors/0/title").and_then(Value::as_str))
            .unwrap_or("unknown error");
        bail!("{detail}");
    }
    Ok(doc)
}

/// What a client command asks for.
#[derive(Debug, Clone)]
pub enum ControlRequest {
    /// Print the status.
    Status,
    /// Set the active VUs (and optionally the maximum).
    Scale { vus: Option<u64>, max: Option<u64> },
    /// Pause or resume.
    Paused(bool),
}

/// Runs one client command and prints the resulting status.
pub fn run(address: &str, what: ControlRequest) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let doc = rt.block_on(async {
        match what {
            ControlRequest::Status => call(address, Method::GET, None).await,
            ControlRequest::Scale { vus, max } => {
                let mut attrs = Map::new();
                if let Some(v) = vus {
                    attrs.insert("vus".into(), v.into());
                }
                if let Some(m) = max {
                    attrs.insert("vus-max".into(), m.into());
                }
                if attrs.is_empty() {
                    bail!("give --vus and/or --max");
                }
                call(address, Method::PATCH, Some(document(attrs))).await
            }
            ControlRequest::Paused(p) => {
                let mut attrs = Map::new();
                attrs.insert("paused".into(), p.into());
                call(address, Method::PATCH, Some(document(attrs))).await
            }
        }
    })?;
    let attrs = doc
        .pointer("/data/attributes")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("unexpected answer: {doc}"))?;
    for (k, v) in attrs {
        println!("{k}: {v}");
    }
    Ok(())
}

fn document(attrs: Map<String, Value>) -> Value {
    json!({"data": {"type": "status", "id": "default", "attributes": attrs}})
}
