//! How a connection task sends its requests: the lean HTTP/1.1 engine or the full client.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rk6_http::{
    error as http_error, Client, HttpError, KeepAlive, Request, RequestBytes, Response,
};

/// One connection task's way of sending the request.
pub(crate) enum Engine {
    /// Plain `http://`: one lean HTTP/1.1 keep-alive connection and the request's bytes.
    Lean {
        conn: KeepAlive,
        request: Arc<RequestBytes>,
    },
    /// `--h2c` and `https://`: a full client (HTTP/2 framing, ALPN) with its own pool.
    Client {
        client: Client,
        template: Box<Request>,
    },
}

/// One request's result, whichever engine sent it.
pub(crate) struct Outcome {
    /// The status, or the k6 error of a failed request.
    pub(crate) result: Result<u16, HttpError>,
    /// sending + waiting + receiving.
    pub(crate) duration: Duration,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
}

impl Outcome {
    fn from_response(resp: Response) -> Outcome {
        let mut outcome = Outcome {
            result: Ok(resp.status),
            duration: Duration::ZERO,
            bytes_sent: 0,
            bytes_received: 0,
        };
        for hop in &resp.hops {
            outcome.duration += hop.timings.duration;
            outcome.bytes_received += hop.bytes_received;
            outcome.bytes_sent += hop.bytes_sent;
        }
        if let Some(err) = resp.error {
            outcome.result = Err(err);
        }
        outcome
    }
}

impl Engine {
    /// Sends one request whose timeout never outlasts the test; `None` when the end of the
    /// test (rather than `--timeout`) cut it off, which is not counted, as in wrk.
    pub(crate) async fn send(&mut self, timeout: Duration, deadline: Instant) -> Option<Outcome> {
        let now = Instant::now();
        let remaining = deadline.saturating_duration_since(now);
        let bounded_by_deadline = remaining < timeout;
        let limit = remaining.min(timeout);
        let outcome = match self {
            Engine::Lean { conn, request } => match conn.send(request, now + limit).await {
                Ok(done) => Outcome {
                    result: Ok(done.status),
                    duration: done.duration,
                    bytes_sent: done.bytes_sent,
                    bytes_received: done.bytes_received,
                },
                Err(failed) => Outcome {
                    result: Err(failed.error),
                    duration: Duration::ZERO,
                    bytes_sent: failed.bytes_sent,
                    bytes_received: failed.bytes_received,
                },
            },
            Engine::Client { client, template } => {
                let mut req = Request::clone(template);
                req.timeout = Some(limit);
                Outcome::from_response(client.send(req).await)
            }
        };
        let timed_out = matches!(&outcome.result, Err(e) if e.code == http_error::REQUEST_TIMEOUT);
        (!(bounded_by_deadline && timed_out)).then_some(outcome)
    }
}
