//! The background thread that talks to InfluxDB, so a slow or dead server never stalls the
//! metrics thread: it first asks for the database (`CREATE DATABASE`, as k6 does; a failure
//! is harmless and silent, e.g. a user without admin rights on an existing database), then
//! POSTs each batch to `/write` with up to `concurrent_writes` requests in flight. For a
//! `udp://` address it sends the lines in datagrams instead.
//!
//! Batches wait in an unbounded channel whose size in bytes the sender watches
//! ([`Writer::pending_bytes`]): the output drops new batches rather than let it grow past
//! its cap, so memory stays bounded however long the server is away.

use std::collections::HashSet;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use url::Url;

use super::config::InfluxConfig;
use super::log::log;
use crate::transport::Transport;
use crate::worker::Worker;

/// Per-request timeout. k6's client has none (a server that accepts and never answers
/// hangs k6 for good); InfluxDB's own write timeout is 10 s, so a live server answers within it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Lines for one write.
pub(crate) struct Batch {
    /// Line protocol, one point a line.
    pub(crate) body: Vec<u8>,
    /// How many points.
    pub(crate) points: u64,
}

/// What the writer thread did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct WriteStats {
    /// Writes InfluxDB accepted.
    pub(crate) ok: u64,
    /// Writes that failed (transport error or a status other than 200/204).
    pub(crate) failed: u64,
    /// Points in the failed writes.
    pub(crate) points_failed: u64,
}

/// Handle to the writer thread.
pub(crate) struct Writer {
    tx: Option<UnboundedSender<Batch>>,
    pending: Arc<AtomicUsize>,
    worker: Worker<WriteStats>,
}

/// `addr` with `path` appended to its own path, as Go's `path.Join` does.
fn endpoint(addr: &Url, path: &str, query: &[(&str, &str)]) -> Url {
    let mut url = addr.clone();
    let base = url.path().trim_end_matches('/').to_string();
    url.set_path(&format!("{base}/{path}"));
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in query {
        q.append_pair(k, v);
    }
    url.set_query(Some(&q.finish()));
    url
}

/// The database name in InfluxQL: as is when it is a plain identifier (what k6 sends), else
/// quoted (k6 sends `CREATE DATABASE my-db` unquoted, which InfluxDB refuses).
fn quoted_db(db: &str) -> String {
    let plain = db
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && db.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        db.to_string()
    } else {
        format!("\"{}\"", db.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The `/query` URL that creates the database (k6's parameters, in Go's sorted order).
pub(crate) fn create_url(c: &InfluxConfig) -> Url {
    let q = format!("CREATE DATABASE {}", quoted_db(&c.db));
    endpoint(&c.addr, "query", &[("db", ""), ("params", "{}"), ("q", &q)])
}

/// The `/write` URL every batch goes to.
pub(crate) fn write_url(c: &InfluxConfig) -> Url {
    endpoint(
        &c.addr,
        "write",
        &[
            ("consistency", &c.consistency),
            ("db", &c.db),
            ("precision", &c.precision.name),
            ("rp", &c.retention),
        ],
    )
}

/// Basic auth when a username is set, as Go's client sends it.
fn auth_headers(config: &InfluxConfig) -> Vec<(String, String)> {
    if config.username.is_empty() {
        return Vec::new();
    }
    let token = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        format!("{}:{}", config.username, config.password),
    );
    vec![("Authorization".to_string(), format!("Basic {token}"))]
}

/// The URL as Go's client names it in errors: a password shows as `***`.
pub(crate) fn redacted(url: &Url) -> String {
    let mut url = url.clone();
    if url.password().is_some() {
        let _ = url.set_password(Some("***"));
    }
    url.to_string()
}

impl Writer {
    /// Starts the thread for `config`: HTTP, or UDP for a `udp://` address.
    pub(crate) fn start(config: &InfluxConfig) -> std::io::Result<Writer> {
        if config.addr.scheme() == "udp" {
            return Writer::start_udp(config);
        }
        let (tx, rx) = unbounded_channel::<Batch>();
        let pending = Arc::new(AtomicUsize::new(0));
        let headers = auth_headers(config);
        let user_agent = format!("rk6/{}", env!("CARGO_PKG_VERSION"));
        let create = Transport::new(
            &create_url(config),
            &headers,
            &user_agent,
            config.insecure,
            REQUEST_TIMEOUT,
        );
        let url = write_url(config);
        let write = Arc::new(Transport::new(
            &url,
            &headers,
            &user_agent,
            config.insecure,
            REQUEST_TIMEOUT,
        ));
        let job = Job {
            url: redacted(&url),
            concurrency: config.concurrent_writes.clamp(1, Semaphore::MAX_PERMITS),
            push_interval: config.push_interval,
            pending: pending.clone(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let worker = Worker::spawn("rk6-influxdb", move || {
            runtime.block_on(job.run(rx, create, write))
        })?;
        Ok(Writer {
            tx: Some(tx),
            pending,
            worker,
        })
    }

    /// The UDP transport: lines packed into datagrams of at most `payload_size` bytes, sent
    /// to InfluxDB's UDP listener (whose configuration names the database; there is no
    /// answer, and no `CREATE DATABASE`).
    fn start_udp(config: &InfluxConfig) -> std::io::Result<Writer> {
        let host = config.addr.host_str().unwrap_or_default();
        let port = config.addr.port().unwrap_or_default();
        let peer = (host.trim_start_matches('[').trim_end_matches(']'), port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other(format!("lookup {host}: no such host")))?;
        let local: SocketAddr = if peer.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = UdpSocket::bind(local)?;
        socket.connect(peer)?;
        let (tx, mut rx) = unbounded_channel::<Batch>();
        let pending = Arc::new(AtomicUsize::new(0));
        let thread_pending = pending.clone();
        let (payload, push_interval) = (config.payload_size.max(1), config.push_interval);
        let worker = Worker::spawn("rk6-influxdb", move || {
            let mut report = Report::default();
            while let Some(batch) = rx.blocking_recv() {
                let started = Instant::now();
                let result = send_datagrams(&socket, &batch.body, payload);
                thread_pending.fetch_sub(batch.body.len(), Ordering::Relaxed);
                let failure = result.err().map(|e| {
                    let text = match e.kind() {
                        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
                        _ => e.to_string(),
                    };
                    let local = socket
                        .local_addr()
                        .map(|a| a.to_string())
                        .unwrap_or_default();
                    (
                        text.clone(),
                        format!("write udp {local}->{peer}: write: {text}"),
                    )
                });
                report.record(
                    Outcome {
                        points: batch.points,
                        took: started.elapsed(),
                        database_missing: false,
                        failure,
                    },
                    push_interval,
                );
            }
            report.stats
        })?;
        Ok(Writer {
            tx: Some(tx),
            pending,
            worker,
        })
    }

    /// Bytes queued or being written.
    pub(crate) fn pending_bytes(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// Queues `batch`; hands it back when the thread is gone.
    pub(crate) fn send(&self, batch: Batch) -> Result<(), Batch> {
        let len = batch.body.len();
        self.pending.fetch_add(len, Ordering::Relaxed);
        match self.tx.as_ref().map(|tx| tx.send(batch)) {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => {
                self.pending.fetch_sub(len, Ordering::Relaxed);
                Err(e.0)
            }
            None => unreachable!("send after close"),
        }
    }

    /// Closes the queue and waits until everything queued was written or `deadline` passed.
    pub(crate) fn close(&mut self, deadline: Instant) -> Option<WriteStats> {
        self.tx = None;
        self.worker.wait(deadline)
    }
}

/// Sends `body`'s lines in datagrams of at most `payload` bytes (a longer line goes alone),
/// as the Go client packs them; the first error is returned after the rest was sent.
fn send_datagrams(socket: &UdpSocket, body: &[u8], payload: usize) -> std::io::Result<()> {
    let mut first_error = None;
    let mut start = 0;
    let mut end = 0;
    let mut send = |chunk: &[u8]| {
        if let Err(e) = socket.send(chunk) {
            first_error.get_or_insert(e);
        }
    };
    for line in body.split_inclusive(|&b| b == b'\n') {
        if end > start && end - start + line.len() > payload {
            send(&body[start..end]);
            start = end;
        }
        end += line.len();
    }
    if end > start {
        send(&body[start..end]);
    }
    first_error.map_or(Ok(()), Err)
}

/// How one write went.
struct Outcome {
    points: u64,
    took: Duration,
    /// InfluxDB answered that the database does not exist.
    database_missing: bool,
    /// The kind of failure (logged once each) and its message.
    failure: Option<(String, String)>,
}

/// The writer thread's state.
struct Job {
    url: String,
    concurrency: usize,
    push_interval: Duration,
    pending: Arc<AtomicUsize>,
}

impl Job {
    async fn run(
        self,
        mut rx: UnboundedReceiver<Batch>,
        create: Transport,
        transport: Arc<Transport>,
    ) -> WriteStats {
        let permits = Arc::new(Semaphore::new(self.concurrency));
        let mut tasks: JoinSet<Outcome> = JoinSet::new();
        let mut report = Report::default();
        // As k6, the database is asked for once at the start, and a refusal is silent: it
        // usually means the database exists and the user may not create one. Unlike k6, a
        // server that was unreachable then, or that later says the database is missing
        // (started or wiped during the test), is asked again before the next write.
        let mut ask_for_db = true;
        loop {
            tokio::select! {
                Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                    if let Ok(o) = done {
                        ask_for_db |= o.database_missing;
                        report.record(o, self.push_interval);
                    }
                }
                next = rx.recv() => {
                    let Some(batch) = next else { break };
                    if std::mem::take(&mut ask_for_db) {
                        ask_for_db = create.post(Bytes::new()).await.is_err();
                    }
                    let Ok(permit) = permits.clone().acquire_owned().await else { break };
                    let transport = transport.clone();
                    let pending = self.pending.clone();
                    let url = self.url.clone();
                    tasks.spawn(async move {
                        let len = batch.body.len();
                        let started = Instant::now();
                        let result = transport.post(Bytes::from(batch.body)).await;
                        pending.fetch_sub(len, Ordering::Relaxed);
                        drop(permit);
                        let failure = failure(&url, result);
                        Outcome {
                            points: batch.points,
                            took: started.elapsed(),
                            database_missing: failure
                                .as_ref()
                                .is_some_and(|(kind, m)| kind == "status 404" && m.contains("database not found")),
                            failure,
                        }
                    });
                }
            }
        }
        while let Some(done) = tasks.join_next().await {
            if let Ok(o) = done {
                report.record(o, self.push_interval);
            }
        }
        report.stats
    }
}

/// Why a write failed, in k6's words: Go's `Post "URL": …` for a transport error, the
/// server's body for a refused write.
fn failure(
    url: &str,
    result: Result<crate::transport::Answer, String>,
) -> Option<(String, String)> {
    match result {
        Err(e) => Some((e.clone(), format!("Post \"{url}\": {e}"))),
        // InfluxDB answers 204; the Go client also takes 200.
        Ok(a) if matches!(a.status.as_u16(), 200 | 204) => None,
        Ok(a) => {
            let body = String::from_utf8_lossy(&a.body).trim().to_string();
            let text = if body.is_empty() {
                a.status_text()
            } else {
                body
            };
            Some((format!("status {}", a.status.as_u16()), text))
        }
    }
}

/// The tally, and which kinds of trouble were already logged.
#[derive(Default)]
struct Report {
    stats: WriteStats,
    logged: HashSet<String>,
    slow_logged: bool,
}

impl Report {
    fn record(&mut self, o: Outcome, push_interval: Duration) {
        match o.failure {
            None => self.stats.ok += 1,
            Some((kind, message)) => {
                self.stats.failed += 1;
                self.stats.points_failed += o.points;
                // One line per kind of failure: a dead server must not flood the log.
                if self.logged.insert(kind) {
                    let mut msg = String::from("Couldn't write stats");
                    if message.contains("unauthorized access") {
                        msg.push_str(", InfluxDB v2.x isn't supported by this output (rk6 speaks InfluxDB v1)");
                    }
                    log("error", &msg, Some(&message));
                }
            }
        }
        if o.took > push_interval && !self.slow_logged {
            self.slow_logged = true;
            log(
                "warning",
                &format!(
                    "A write to InfluxDB took {}, longer than the push interval ({}); writes queue up and points are dropped if this goes on",
                    rk6_options::GoDuration::from_std(o.took),
                    rk6_options::GoDuration::from_std(push_interval)
                ),
                None,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(arg: &str) -> InfluxConfig {
        InfluxConfig::parse(arg, &|_| None).unwrap()
    }

    #[test]
    fn urls_as_k6_sends_them() {
        let c = config("http://127.0.0.1:8086/mydb");
        assert_eq!(
            create_url(&c).as_str(),
            "http://127.0.0.1:8086/query?db=&params=%7B%7D&q=CREATE+DATABASE+mydb"
        );
        assert_eq!(
            write_url(&c).as_str(),
            "http://127.0.0.1:8086/write?consistency=&db=mydb&precision=ns&rp="
        );
        let c = config("http://h:1/my-db?retention=rp&consistency=one&precision=ms");
        assert_eq!(
            create_url(&c).as_str(),
            "http://h:1/query?db=&params=%7B%7D&q=CREATE+DATABASE+%22my-db%22"
        );
        assert_eq!(
            write_url(&c).as_str(),
            "http://h:1/write?consistency=one&db=my-db&precision=ms&rp=rp"
        );
        // A path in K6_INFLUXDB_ADDR is kept in front (InfluxDB behind a proxy).
        let c = InfluxConfig::parse("", &|k| {
            (k == "K6_INFLUXDB_ADDR").then(|| "http://h:1/influx/".to_string())
        })
        .unwrap();
        assert!(write_url(&c)
            .as_str()
            .starts_with("http://h:1/influx/write?"));
    }

    #[test]
    fn udp_datagrams_pack_whole_lines_up_to_the_payload_size() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let body = b"a value=1 1\nbb value=2 2\nccc value=3 3\nd value=4 4\n";
        // 12 + 13 bytes fit in 26; the 14-byte third line starts the next datagram; a line
        // longer than the payload goes alone.
        send_datagrams(&tx, body, 26).unwrap();
        send_datagrams(&tx, b"a_long_line value=1 1\n", 10).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        for _ in 0..3 {
            let n = rx.recv(&mut buf).unwrap();
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        assert_eq!(
            got,
            [
                "a value=1 1\nbb value=2 2\n",
                "ccc value=3 3\nd value=4 4\n",
                "a_long_line value=1 1\n"
            ]
        );
    }

    #[test]
    fn the_tally_logs_each_kind_of_trouble_once() {
        let outcome = |took_ms: u64, failure: Option<&str>| Outcome {
            points: 10,
            took: Duration::from_millis(took_ms),
            database_missing: false,
            failure: failure.map(|k| (k.to_string(), format!("Post \"u\": {k}"))),
        };
        let mut r = Report::default();
        let interval = Duration::from_millis(100);
        r.record(outcome(5, None), interval);
        r.record(outcome(5, Some("dial: connection refused")), interval);
        r.record(outcome(5, Some("dial: connection refused")), interval);
        r.record(outcome(5, Some("request timeout")), interval);
        assert!(!r.slow_logged);
        r.record(outcome(150, None), interval);
        assert!(r.slow_logged);
        assert_eq!(r.logged.len(), 2);
        assert_eq!(
            r.stats,
            WriteStats {
                ok: 2,
                failed: 3,
                points_failed: 30
            }
        );
    }

    #[test]
    fn basic_auth_as_k6_sends_it() {
        // Both as captured from k6 1.1.0.
        let c = config("http://u:p%40@h:1/db");
        assert_eq!(
            auth_headers(&c),
            [("Authorization".to_string(), "Basic dTpwQA==".to_string())]
        );
        assert!(auth_headers(&config("http://h:1/db")).is_empty());
    }

    #[test]
    fn failures_in_k6s_words() {
        let f = failure("http://h/write", Err("dial: connection refused".into())).unwrap();
        assert_eq!(f.1, "Post \"http://h/write\": dial: connection refused");
        let answer = |status: u16, body: &str| crate::transport::Answer {
            status: http::StatusCode::from_u16(status).unwrap(),
            reason: None,
            body: Bytes::from(body.to_string()),
        };
        assert!(failure("u", Ok(answer(204, ""))).is_none());
        assert!(failure("u", Ok(answer(200, ""))).is_none());
        let f = failure(
            "u",
            Ok(answer(
                404,
                "{\"error\":\"database not found: \\\"x\\\"\"}\n",
            )),
        );
        assert_eq!(
            f.unwrap(),
            (
                "status 404".to_string(),
                "{\"error\":\"database not found: \\\"x\\\"\"}".to_string()
            )
        );
        assert_eq!(
            failure("u", Ok(answer(502, ""))).unwrap().1,
            "502 Bad Gateway"
        );
    }
}
