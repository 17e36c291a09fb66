//! The pusher thread of `-o aggregate`: one push in flight at a time, retried as it was
//! until the aggregator acknowledges it; deltas that arrive meanwhile wait merged into one.

use std::io::Write as _;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use rk6_metrics::delta::Delta;
use url::Url;

use super::protocol::{self, Push, Runner};
use crate::timestamp::rfc3339;
use crate::transport::Transport;

/// How long one push may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

/// How soon a failed push is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// With nothing new to send, a runner still says it is alive this often, so the
/// aggregator can tell a quiet runner (paused, sleeping VUs) from a vanished one.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// What the output hands the thread.
pub(crate) enum Message {
    /// A delta and the run time so far.
    Delta(Delta, Duration),
    /// The last delta: the test is over.
    Done(Delta, Duration),
}

/// The thread's state.
pub(crate) struct Pusher {
    url: String,
    runner: Runner,
    transport_url: Url,
    /// The secret shared with the aggregator, sent with every push.
    secret: Option<String>,
}

/// A push not yet acknowledged: its body as sent, to be sent again as it is.
struct InFlight {
    body: Bytes,
    done: bool,
}

impl Pusher {
    pub(crate) fn new(url: &Url, runner: Runner, secret: Option<String>) -> Pusher {
        Pusher {
            url: url.to_string(),
            runner,
            transport_url: url.clone(),
            secret,
        }
    }

    /// Runs until the `Done` push is acknowledged (`Ok`) or the queue closes without one.
    pub(crate) fn run(self, rx: Receiver<Message>) -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let user_agent = format!("rk6/{}", env!("CARGO_PKG_VERSION"));
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Content-Encoding".to_owned(), "gzip".to_owned()),
        ];
        if let Some(secret) = &self.secret {
            headers.push(("Authorization".to_owned(), protocol::authorization(secret)));
        }
        let transport = Transport::new(
            &self.transport_url,
            &headers,
            &user_agent,
            false,
            REQUEST_TIMEOUT,
        );
        let mut seq = 0u64;
        let mut pending = Delta::default();
        let mut elapsed = Duration::ZERO;
        let mut done = false;
        let mut in_flight: Option<InFlight> = None;
        let mut unreachable_said = false;
        let mut unauthorized_said = false;
        let mut last_sent = Instant::now();
        // The first push (empty) tells the aggregator this runner joined.
        let mut join = true;
        loop {
            // The join push goes out at once; later ones wait for deltas.
            let wait = if join && in_flight.is_none() {
                Duration::ZERO
            } else if in_flight.is_some() {
                RETRY
            } else {
                HEARTBEAT
            };
            let mut closed = false;
            match rx.recv_timeout(wait) {
                Ok(m) => take(m, &mut pending, &mut elapsed, &mut done),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    closed = true;
                    // No queue to wait on any more: pace the retries of the last push.
                    std::thread::sleep(wait);
                }
            }
            // Drain whatever else waits, so one push carries it all.
            while let Ok(m) = rx.try_recv() {
                take(m, &mut pending, &mut elapsed, &mut done);
            }
            if closed && !done {
                return Err("the test ended without its last figures".to_owned());
            }
            let due = join || done || !pending.is_empty() || last_sent.elapsed() >= HEARTBEAT;
            if in_flight.is_none() && due {
                let push = Push {
                    runner: self.runner.clone(),
                    seq,
                    elapsed_ms: elapsed.as_secs_f64() * 1000.0,
                    done,
                    delta: std::mem::take(&mut pending),
                };
                in_flight = Some(InFlight {
                    body: encode(&push)?,
                    done,
                });
            }
            let Some(push) = &in_flight else { continue };
            last_sent = Instant::now();
            match runtime.block_on(transport.post(push.body.clone())) {
                Ok(answer) if answer.status.is_success() => {
                    if unreachable_said {
                        log(
                            "info",
                            &format!("aggregate: reached the aggregator at {} again", self.url),
                            None,
                        );
                        unreachable_said = false;
                    }
                    let finished = push.done;
                    in_flight = None;
                    join = false;
                    seq += 1;
                    if finished {
                        return Ok(());
                    }
                }
                Ok(answer) if answer.status.is_client_error() => {
                    // The aggregator refuses this push for good (a bad body, or no secret):
                    // sending it again cannot help, and the next one must not wait behind
                    // it. Refused for its secret, every push would be: that is said once.
                    let unauthorized = answer.status.as_u16() == 401;
                    if !unauthorized || !unauthorized_said {
                        let msg = if unauthorized {
                            unauthorized_said = true;
                            self.unauthorized()
                        } else {
                            format!(
                                "aggregate: the aggregator at {} refused push {seq}",
                                self.url
                            )
                        };
                        log(
                            "error",
                            &msg,
                            Some(&format!(
                                "{} {}",
                                answer.status_text(),
                                String::from_utf8_lossy(&answer.body)
                            )),
                        );
                    }
                    let finished = push.done;
                    in_flight = None;
                    join = false;
                    seq += 1;
                    if finished {
                        return Err("the aggregator refused the last figures".to_owned());
                    }
                }
                Ok(answer) => {
                    if !unreachable_said {
                        unreachable_said = true;
                        log("warning", &self.unreachable(), Some(&answer.status_text()));
                    }
                }
                Err(e) => {
                    if !unreachable_said {
                        unreachable_said = true;
                        log("warning", &self.unreachable(), Some(&e));
                    }
                }
            }
        }
    }

    fn unauthorized(&self) -> String {
        let which = if self.secret.is_some() {
            "a different secret in"
        } else {
            "no"
        };
        format!(
            "aggregate: the aggregator at {} refuses this runner's pushes: it takes them only with the secret it shares with its runners, and this runner has {which} {}; none of its figures reach the whole test",
            self.url,
            protocol::SECRET_ENV
        )
    }

    fn unreachable(&self) -> String {
        format!(
            "aggregate: cannot reach the aggregator at {}; the test goes on, and its figures are kept and sent when the aggregator answers",
            self.url
        )
    }
}

/// Adds a message's delta to what waits to be sent.
fn take(message: Message, pending: &mut Delta, elapsed: &mut Duration, done: &mut bool) {
    let (delta, at, last) = match message {
        Message::Delta(d, at) => (d, at, false),
        Message::Done(d, at) => (d, at, true),
    };
    if let Err(e) = pending.absorb(delta) {
        log(
            "error",
            "aggregate: a delta could not be merged",
            Some(&e.to_string()),
        );
    }
    *elapsed = at;
    *done |= last;
}

/// The push as gzip-compressed JSON.
fn encode(push: &Push) -> Result<Bytes, String> {
    let json = serde_json::to_vec(push).map_err(|e| e.to_string())?;
    let mut gz = GzEncoder::new(Vec::with_capacity(json.len() / 4), Compression::fast());
    gz.write_all(&json).map_err(|e| e.to_string())?;
    Ok(Bytes::from(gz.finish().map_err(|e| e.to_string())?))
}

/// One log line in k6's logfmt layout, with `output=aggregate`.
fn log(level: &str, msg: &str, error: Option<&str>) {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let error = error
        .map(|e| format!(" error={}", quote(e)))
        .unwrap_or_default();
    eprintln!(
        "time=\"{}\" level={level} msg={}{error} output=aggregate",
        rfc3339(std::time::SystemTime::now(), false),
        quote(msg),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::delta::{MetricDelta, SinkState};
    use rk6_metrics::{MetricType, ValueType};
    use std::io::{BufRead, BufReader, Read};
    use std::net::TcpListener;
    use std::sync::mpsc::{channel, sync_channel};

    /// One request as the server read it: the push, its raw body and its `Authorization`.
    fn read_push(stream: &mut std::net::TcpStream) -> (Push, Vec<u8>, Option<String>) {
        let mut reader = BufReader::new(stream);
        let mut length = 0usize;
        let mut gzip = false;
        let mut authorization = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if lower.starts_with("authorization:") {
                authorization = Some(line["authorization:".len()..].trim().to_owned());
            }
            gzip |= lower.starts_with("content-encoding: gzip");
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        assert!(gzip, "pushes are compressed");
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut json)
            .unwrap();
        (serde_json::from_slice(&json).unwrap(), body, authorization)
    }

    fn iterations(n: f64) -> Delta {
        Delta {
            metrics: vec![MetricDelta {
                name: "iterations".into(),
                kind: MetricType::Counter,
                contains: ValueType::Default,
                sink: SinkState::Counter {
                    sum: n,
                    samples: n as u64,
                },
            }],
            ..Delta::default()
        }
    }

    #[test]
    fn a_push_whose_answer_was_lost_is_sent_again_as_it_was() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = Url::parse(&format!(
            "http://{}/v1/push",
            listener.local_addr().unwrap()
        ))
        .unwrap();
        let (seen_tx, seen) = channel();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let mut stream = stream.unwrap();
                let (push, body, _) = read_push(&mut stream);
                let last = push.done;
                seen_tx.send((push, body)).unwrap();
                // The second request is read and then left unanswered: as if the
                // aggregator merged it and the answer was lost.
                if n != 1 {
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 15\r\nconnection: close\r\n\r\n{\"merged\":true}",
                    );
                }
                if last {
                    break;
                }
            }
        });
        let runner = Runner {
            id: "r".into(),
            ..Runner::default()
        };
        let (tx, rx) = sync_channel(4);
        let pusher = Pusher::new(&url, runner, None);
        let worker = std::thread::spawn(move || pusher.run(rx));
        let (join, _) = seen.recv().unwrap();
        assert_eq!(
            (join.seq, join.delta.is_empty()),
            (0, true),
            "joins at once"
        );
        tx.send(Message::Delta(iterations(3.0), Duration::from_secs(1)))
            .unwrap();
        let (first, first_body) = seen.recv().unwrap();
        assert_eq!(first.seq, 1);
        tx.send(Message::Delta(iterations(4.0), Duration::from_secs(2)))
            .unwrap();
        tx.send(Message::Done(iterations(5.0), Duration::from_secs(3)))
            .unwrap();
        drop(tx);
        let (again, again_body) = seen.recv().unwrap();
        assert_eq!(again.seq, 1, "the same number");
        assert_eq!(again_body, first_body, "the same delta, byte for byte");
        let (last, _) = seen.recv().unwrap();
        assert_eq!(last.seq, 2);
        assert!(last.done);
        let mut waiting = iterations(4.0);
        waiting.absorb(iterations(5.0)).unwrap();
        assert_eq!(last.delta, waiting, "what waited, merged into one push");
        assert_eq!(last.elapsed_ms, 3000.0);
        assert_eq!(worker.join().unwrap(), Ok(()));
    }

    #[test]
    fn every_push_carries_the_shared_secret() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = Url::parse(&format!(
            "http://{}/v1/push",
            listener.local_addr().unwrap()
        ))
        .unwrap();
        let (seen_tx, seen) = channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let (push, _, authorization) = read_push(&mut stream);
                let last = push.done;
                seen_tx.send((push.seq, authorization)).unwrap();
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 15\r\nconnection: close\r\n\r\n{\"merged\":true}",
                );
                if last {
                    break;
                }
            }
        });
        let (tx, rx) = sync_channel(4);
        let pusher = Pusher::new(&url, Runner::default(), Some("s3cret".into()));
        let worker = std::thread::spawn(move || pusher.run(rx));
        let join = seen.recv().unwrap();
        tx.send(Message::Done(iterations(1.0), Duration::from_secs(2)))
            .unwrap();
        assert_eq!(worker.join().unwrap(), Ok(()));
        let seen: Vec<(u64, Option<String>)> =
            std::iter::once(join).chain(seen.try_iter()).collect();
        assert_eq!(seen.len(), 2, "the join and the last push: {seen:?}");
        for (seq, authorization) in &seen {
            assert_eq!(
                authorization.as_deref(),
                Some("Bearer s3cret"),
                "push {seq}"
            );
        }
    }
}
