//! The background thread that POSTs encoded requests, so a slow or dead endpoint never
//! stalls the metrics thread. Requests wait in a small bounded queue; when it is full the
//! caller keeps its series marked changed and sends their newer state next time.

use std::collections::HashSet;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use url::Url;

use super::log::log_error;
use super::wire::HEADERS;
use crate::transport::{TlsMinimum, Transport};
use crate::worker::Worker;

/// Requests waiting to be sent.
const QUEUE: usize = 4;

/// Per-request timeout (k6's remote-write client uses 5 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// How the pusher thread ended.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PushStats {
    /// Requests the endpoint accepted (2xx).
    pub ok: u64,
    /// Requests that failed (transport error or non-2xx status).
    pub failed: u64,
}

/// Handle to the pusher thread.
pub struct Pusher {
    tx: Option<SyncSender<Vec<u8>>>,
    worker: Worker<PushStats>,
}

impl Pusher {
    /// Starts the thread posting to `url` with `headers` added to the protocol's own,
    /// over TLS `minimum` or newer.
    pub(crate) fn start(
        url: Url,
        headers: Vec<(String, String)>,
        insecure_skip_tls_verify: bool,
        minimum: TlsMinimum,
    ) -> std::io::Result<Pusher> {
        let (tx, rx) = sync_channel::<Vec<u8>>(QUEUE);
        let headers: Vec<(String, String)> = HEADERS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(headers)
            .collect();
        let user_agent = format!("rk6/{}", env!("CARGO_PKG_VERSION"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let worker = Worker::spawn("rk6-prometheus-rw", move || {
            runtime.block_on(async {
                let transport = Transport::with_tls_minimum(
                    &url,
                    &headers,
                    &user_agent,
                    insecure_skip_tls_verify,
                    minimum,
                    REQUEST_TIMEOUT,
                );
                run(rx, transport).await
            })
        })?;
        Ok(Pusher {
            tx: Some(tx),
            worker,
        })
    }

    /// Queues `body` unless the queue is full (then it is handed back).
    pub fn try_push(&self, body: Vec<u8>) -> Result<(), Vec<u8>> {
        match self.tx.as_ref().map(|tx| tx.try_send(body)) {
            Some(Ok(())) => Ok(()),
            Some(Err(TrySendError::Full(b) | TrySendError::Disconnected(b))) => Err(b),
            None => Err(Vec::new()),
        }
    }

    /// Queues `body`, waiting for room until `deadline`; false when it could not.
    pub fn push_until(&self, mut body: Vec<u8>, deadline: Instant) -> bool {
        loop {
            match self.tx.as_ref().map(|tx| tx.try_send(body)) {
                Some(Ok(())) => return true,
                Some(Err(TrySendError::Full(b))) if Instant::now() < deadline => {
                    body = b;
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => return false,
            }
        }
    }

    /// Closes the queue and waits until everything queued was sent or `deadline` passed.
    pub fn close(&mut self, deadline: Instant) -> Option<PushStats> {
        self.tx = None;
        self.worker.wait(deadline)
    }
}

async fn run(rx: Receiver<Vec<u8>>, transport: Transport) -> PushStats {
    let mut stats = PushStats::default();
    let mut logged: HashSet<String> = HashSet::new();
    // Blocking here is fine: this thread's runtime has nothing else to drive meanwhile.
    while let Ok(body) = rx.recv() {
        let failure = match transport.post(Bytes::from(body)).await {
            Err(e) => Some((e.clone(), e)),
            Ok(res) if res.status.is_success() => None,
            Ok(res) => {
                let text = String::from_utf8_lossy(&res.body);
                let text = text.trim();
                Some((
                    format!("status {}", res.status.as_u16()),
                    format!("server returned HTTP status {} {text}", res.status_text())
                        .trim_end()
                        .to_string(),
                ))
            }
        };
        match failure {
            None => stats.ok += 1,
            Some((kind, message)) => {
                stats.failed += 1;
                // One line per kind of failure: a dead endpoint must not flood the log.
                if logged.insert(kind) {
                    log_error(
                        "Failed to send the time series data to the endpoint",
                        &message,
                    );
                }
            }
        }
    }
    stats
}
