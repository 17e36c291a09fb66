//! The aggregator's state and its push endpoint (`rk6 aggregate`): runners' deltas merged
//! into one [`Aggregator`], each runner's sequence numbers remembered so a retried push is
//! merged once, and each runner's latest `vus` and `vus_max` so the whole test's are their
//! sum. With a secret (`RK6_AGGREGATE_SECRET`), a push without it is answered 401 before
//! its body is read, counted, and changes nothing else.

use std::convert::Infallible;
use std::io::Read as _;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_ENCODING, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rk6_metrics::delta::{Delta, DeltaError, MetricDelta, SinkState};
use rk6_metrics::{Aggregator, MetricType, ValueType};
use rk6_output::aggregate::protocol::{self, Push, PushAnswer, Runner, PUSH_PATH};
use subtle::ConstantTimeEq as _;
use tokio::net::TcpListener;

/// The largest push body taken, compressed or not (a second of a busy runner's trends
/// as buckets is a few hundred KiB).
const MAX_BODY: usize = 256 << 20;

/// The Gauges whose whole-test value is the sum of every runner's latest one (as k6's cloud
/// aggregation sums them): the VUs each runner runs. Other Gauges keep the last value
/// merged, whichever runner sent it.
const SUMMED_GAUGES: [&str; 2] = ["vus", "vus_max"];

/// One runner as the aggregator knows it.
#[derive(Debug, Clone)]
pub struct RunnerState {
    /// Who it is.
    pub runner: Runner,
    /// The next sequence number to merge.
    next_seq: u64,
    /// Its `done` push arrived.
    pub done: bool,
    /// When its last push arrived.
    pub last_seen: Instant,
    /// Whether the aggregator said it joined.
    pub announced: bool,
    /// Its run time: the latest it reported, the final one once done.
    elapsed: Duration,
    /// Its latest value of each of [`SUMMED_GAUGES`], once it sent one.
    gauges: [Option<f64>; SUMMED_GAUGES.len()],
}

/// Everything merged so far.
pub struct Hub {
    /// The merged metrics.
    pub aggregator: Aggregator,
    /// Runners in the order they joined.
    pub runners: Vec<RunnerState>,
    /// The longest run time a runner reported: the divisor of counter rates.
    pub elapsed: Duration,
    /// When the last push (of any runner) arrived.
    pub last_push: Option<Instant>,
    /// Pushes refused for want of the shared secret (answered 401, merged into nothing).
    pub refused: u64,
}

impl Hub {
    /// An empty hub over `aggregator`.
    pub fn new(aggregator: Aggregator) -> Hub {
        Hub {
            aggregator,
            runners: Vec::new(),
            elapsed: Duration::ZERO,
            last_push: None,
            refused: 0,
        }
    }

    /// Merges a push unless its sequence number was merged already.
    pub fn push(&mut self, push: Push) -> Result<PushAnswer, DeltaError> {
        let now = Instant::now();
        self.last_push = Some(now);
        let i = match self
            .runners
            .iter()
            .position(|r| r.runner.id == push.runner.id)
        {
            Some(i) => i,
            None => {
                self.runners.push(RunnerState {
                    runner: push.runner.clone(),
                    next_seq: 0,
                    done: false,
                    last_seen: now,
                    announced: false,
                    elapsed: Duration::ZERO,
                    gauges: [None; SUMMED_GAUGES.len()],
                });
                self.runners.len() - 1
            }
        };
        let r = &mut self.runners[i];
        r.last_seen = now;
        if push.seq < r.next_seq {
            return Ok(PushAnswer { merged: false });
        }
        r.next_seq = push.seq + 1;
        r.done |= push.done;
        let elapsed = Duration::try_from_secs_f64(push.elapsed_ms / 1000.0).unwrap_or_default();
        // The last push carries the run time the runner's own summary used.
        r.elapsed = if push.done {
            elapsed
        } else {
            r.elapsed.max(elapsed)
        };
        self.elapsed = self
            .runners
            .iter()
            .map(|r| r.elapsed)
            .max()
            .unwrap_or_default();
        // The VU gauges are merged as the sum of every runner's latest value, not as this
        // runner's.
        let mut delta = push.delta;
        let mut updated = [false; SUMMED_GAUGES.len()];
        delta.metrics.retain(|m| {
            let Some(g) = SUMMED_GAUGES.iter().position(|n| *n == m.name) else {
                return true;
            };
            match m.sink {
                SinkState::Gauge { last, samples, .. } if m.kind == MetricType::Gauge => {
                    if samples > 0 {
                        self.runners[i].gauges[g] = Some(last);
                        updated[g] = true;
                    }
                    false
                }
                // Another type: merged as it is, for the merge to refuse it.
                _ => true,
            }
        });
        self.aggregator.merge(&delta)?;
        let sums: Vec<MetricDelta> = SUMMED_GAUGES
            .iter()
            .enumerate()
            .filter(|(g, _)| updated[*g])
            .map(|(g, name)| {
                let sum: f64 = self.runners.iter().filter_map(|r| r.gauges[g]).sum();
                MetricDelta {
                    name: (*name).to_owned(),
                    kind: MetricType::Gauge,
                    contains: ValueType::Default,
                    sink: SinkState::Gauge {
                        last: sum,
                        min: sum,
                        max: sum,
                        samples: 1,
                    },
                }
            })
            .collect();
        if !sums.is_empty() {
            self.aggregator.merge(&Delta {
                metrics: sums,
                ..Delta::default()
            })?;
        }
        Ok(PushAnswer { merged: true })
    }

    /// Runners whose `done` push arrived.
    pub fn done(&self) -> usize {
        self.runners.iter().filter(|r| r.done).count()
    }
}

/// The hub as the server and the command share it.
pub type SharedHub = Arc<Mutex<Hub>>;

/// Locks the hub (a panic while merging leaves it usable: each push is merged or not).
pub fn lock(hub: &SharedHub) -> MutexGuard<'_, Hub> {
    hub.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serves the push endpoint on `listener` until the runtime ends; with a `secret`, only
/// to pushes that carry it.
pub fn serve(listener: TcpListener, hub: SharedHub, secret: Option<String>) {
    let secret: Option<Arc<str>> = secret.map(Arc::from);
    tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                continue;
            };
            let (hub, secret) = (hub.clone(), secret.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let (hub, secret) = (hub.clone(), secret.clone());
                    async move {
                        Ok::<_, Infallible>(handle(req, &hub, secret.as_deref(), peer.ip()).await)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

async fn handle(
    req: Request<Incoming>,
    hub: &SharedHub,
    secret: Option<&str>,
    peer: IpAddr,
) -> Response<Full<Bytes>> {
    if req.uri().path() != PUSH_PATH {
        return answer(StatusCode::NOT_FOUND, "not found".into());
    }
    // Before the body is read: a push without the secret costs the aggregator nothing.
    if !authorized(req.headers().get(AUTHORIZATION), secret) {
        lock(hub).refused += 1;
        let mut res = answer(
            StatusCode::UNAUTHORIZED,
            format!(
                "this aggregator takes pushes only with the secret it shares with its runners ({} on both sides)",
                protocol::SECRET_ENV
            ),
        );
        res.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"rk6 aggregate\""),
        );
        return res;
    }
    if req.method() != Method::POST {
        return answer(StatusCode::METHOD_NOT_ALLOWED, "POST only".into());
    }
    let gzip = req
        .headers()
        .get(CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"));
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return answer(
                StatusCode::BAD_REQUEST,
                format!("cannot read the push: {e}"),
            )
        }
    };
    let mut push = match decode(&body, gzip) {
        Ok(p) => p,
        Err(e) => return answer(StatusCode::BAD_REQUEST, e),
    };
    push.runner.api = push.runner.api.map(|a| reachable_api(&a, peer));
    // Merging is CPU work on the runtime's threads; it is short (docs/aggregate.md).
    let merged = lock(hub).push(push);
    match merged {
        Ok(a) => answer(
            StatusCode::OK,
            serde_json::to_string(&a).unwrap_or_default(),
        ),
        Err(e) => answer(StatusCode::BAD_REQUEST, e.to_string()),
    }
}

/// Whether a request with this `Authorization` header may push: always without a secret,
/// else only with `Bearer SECRET`, the secret compared in constant time (its length is not
/// hidden).
fn authorized(header: Option<&HeaderValue>, secret: Option<&str>) -> bool {
    let Some(secret) = secret else {
        return true;
    };
    let Some((scheme, token)) = header.and_then(|h| h.to_str().ok()?.split_once(' ')) else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && bool::from(token.as_bytes().ct_eq(secret.as_bytes()))
}

/// The runner's API address as the aggregator can call it: a runner listening on every
/// interface (`0.0.0.0:6565`, as k6-operator starts them) is called at the address its
/// push came from.
fn reachable_api(api: &str, peer: IpAddr) -> String {
    let Some((host, port)) = api.rsplit_once(':') else {
        return api.to_owned();
    };
    let unspecified = host.is_empty()
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_unspecified());
    if !unspecified {
        return api.to_owned();
    }
    match peer {
        IpAddr::V4(ip) => format!("{ip}:{port}"),
        IpAddr::V6(ip) => format!("[{ip}]:{port}"),
    }
}

/// A push body: JSON, gzip-compressed when `gzip`.
pub fn decode(body: &[u8], gzip: bool) -> Result<Push, String> {
    let json = if gzip {
        let mut out = Vec::with_capacity(body.len() * 4);
        flate2::read::GzDecoder::new(body)
            .take(MAX_BODY as u64)
            .read_to_end(&mut out)
            .map_err(|e| format!("the push is not valid gzip: {e}"))?;
        out
    } else {
        body.to_vec()
    };
    serde_json::from_slice(&json).map_err(|e| format!("the push is not a valid push document: {e}"))
}

fn answer(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = status;
    res.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::{Registry, ThresholdSet};

    fn push(id: &str, seq: u64, iterations: f64, done: bool) -> Push {
        Push {
            runner: Runner {
                id: id.into(),
                instance_id: Some(id.into()),
                segment: None,
                api: None,
            },
            seq,
            elapsed_ms: 1500.0 * (seq + 1) as f64,
            done,
            delta: Delta {
                metrics: vec![MetricDelta {
                    name: "iterations".into(),
                    kind: MetricType::Counter,
                    contains: ValueType::Default,
                    sink: SinkState::Counter {
                        sum: iterations,
                        samples: iterations as u64,
                    },
                }],
                ..Delta::default()
            },
        }
    }

    fn iterations(hub: &Hub) -> Option<f64> {
        hub.aggregator
            .summary(hub.elapsed, &[])
            .metric("iterations")
            .and_then(|m| m.value("count"))
    }

    #[test]
    fn a_retried_push_is_merged_once() {
        let agg = Aggregator::new(
            std::sync::Arc::new(Registry::new()),
            ThresholdSet::default(),
        );
        let mut hub = Hub::new(agg);
        assert!(hub.push(push("a", 0, 3.0, false)).unwrap().merged);
        // The answer got lost; the runner sends push 0 again.
        assert!(!hub.push(push("a", 0, 3.0, false)).unwrap().merged);
        assert!(hub.push(push("b", 0, 5.0, false)).unwrap().merged);
        assert!(hub.push(push("a", 1, 2.0, true)).unwrap().merged);
        assert_eq!(iterations(&hub), Some(10.0));
        assert_eq!(hub.done(), 1);
        assert_eq!(hub.runners.len(), 2);
        assert_eq!(
            hub.elapsed,
            Duration::from_millis(3000),
            "the longest run time"
        );
    }

    fn vus(id: &str, seq: u64, vus: f64, vus_max: f64) -> Push {
        let gauge = |name: &str, v: f64| MetricDelta {
            name: name.into(),
            kind: MetricType::Gauge,
            contains: ValueType::Default,
            sink: SinkState::Gauge {
                last: v,
                min: v,
                max: v,
                samples: 1,
            },
        };
        let mut p = push(id, seq, 1.0, false);
        p.delta.metrics.push(gauge("vus", vus));
        p.delta.metrics.push(gauge("vus_max", vus_max));
        p
    }

    fn gauge(hub: &Hub, name: &str) -> (f64, f64, f64) {
        let data = hub.aggregator.summary(hub.elapsed, &[]);
        let m = data.metric(name).unwrap();
        let v = |k| m.value(k).unwrap();
        (v("value"), v("min"), v("max"))
    }

    #[test]
    fn the_whole_tests_vus_are_the_sum_of_every_runners_latest() {
        let registry = std::sync::Arc::new(Registry::new());
        let mut hub = Hub::new(Aggregator::new(registry, ThresholdSet::default()));
        hub.push(vus("a", 0, 2.0, 2.0)).unwrap();
        hub.push(vus("b", 0, 1.0, 2.0)).unwrap();
        hub.push(vus("c", 0, 2.0, 2.0)).unwrap();
        assert_eq!(gauge(&hub, "vus_max"), (6.0, 2.0, 6.0));
        assert_eq!(gauge(&hub, "vus"), (5.0, 2.0, 5.0));
        // A's latest replaces its earlier value; a push without the gauges keeps it.
        hub.push(vus("a", 1, 0.0, 2.0)).unwrap();
        hub.push(push("b", 1, 1.0, false)).unwrap();
        assert_eq!(gauge(&hub, "vus"), (3.0, 2.0, 5.0));
        assert_eq!(gauge(&hub, "vus_max").0, 6.0);
        // A retried push is not counted again.
        hub.push(vus("a", 1, 9.0, 9.0)).unwrap();
        assert_eq!(gauge(&hub, "vus_max").0, 6.0);
    }

    #[test]
    fn a_runner_on_every_interface_is_called_where_its_push_came_from() {
        let peer: IpAddr = "10.1.2.3".parse().unwrap();
        assert_eq!(reachable_api("0.0.0.0:6565", peer), "10.1.2.3:6565");
        assert_eq!(reachable_api(":6565", peer), "10.1.2.3:6565");
        assert_eq!(
            reachable_api("[::]:6565", "fd00::7".parse().unwrap()),
            "[fd00::7]:6565"
        );
        assert_eq!(reachable_api("10.9.9.9:6565", peer), "10.9.9.9:6565");
        assert_eq!(reachable_api("runner-1:6565", peer), "runner-1:6565");
    }

    #[test]
    fn pushes_decode_gzip_and_plain_json() {
        use std::io::Write as _;
        let p = push("a", 4, 1.0, true);
        let json = serde_json::to_vec(&p).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&json).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decode(&gz, true).unwrap(), p);
        assert_eq!(decode(&json, false).unwrap(), p);
        assert!(decode(&json, true).unwrap_err().contains("not valid gzip"));
        assert!(decode(b"{}", false)
            .unwrap_err()
            .contains("not a valid push"));
    }

    #[test]
    fn only_pushes_with_the_secret_are_authorized() {
        let header = |v: &'static str| HeaderValue::from_static(v);
        let secret = Some("s3cret");
        assert!(authorized(Some(&header("Bearer s3cret")), secret));
        assert!(
            authorized(Some(&header("bearer s3cret")), secret),
            "the scheme's case is free"
        );
        assert!(!authorized(None, secret), "no header");
        assert!(!authorized(Some(&header("Bearer s3cre")), secret));
        assert!(!authorized(Some(&header("Bearer s3cretX")), secret));
        assert!(!authorized(Some(&header("Bearer S3CRET")), secret));
        assert!(!authorized(Some(&header("Basic s3cret")), secret));
        assert!(!authorized(Some(&header("Bearer")), secret));
        assert!(!authorized(Some(&header("s3cret")), secret));
        // Without a secret, the aggregator takes every push (and warns when it listens
        // beyond loopback).
        assert!(authorized(None, None));
        assert!(authorized(Some(&header("Bearer whatever")), None));
    }

    /// POSTs `body` (plain JSON) to the push endpoint at `addr`; the status code.
    async fn post(addr: std::net::SocketAddr, authorization: Option<&str>, body: &[u8]) -> u16 {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let auth = authorization
            .map(|a| format!("authorization: {a}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST {PUSH_PATH} HTTP/1.1\r\nhost: {addr}\r\n{auth}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body).await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out[9..12].parse().unwrap()
    }

    #[tokio::test]
    async fn a_push_without_the_secret_changes_nothing() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let registry = std::sync::Arc::new(Registry::new());
        let hub: SharedHub = Arc::new(Mutex::new(Hub::new(Aggregator::new(
            registry,
            ThresholdSet::default(),
        ))));
        serve(listener, hub.clone(), Some("s3cret".into()));
        // A finished runner's whole test, as anyone who can connect could forge it.
        let forged = serde_json::to_vec(&push("intruder", 0, 1000.0, true)).unwrap();
        assert_eq!(post(addr, None, &forged).await, 401);
        assert_eq!(post(addr, Some("Bearer guess"), &forged).await, 401);
        {
            let h = lock(&hub);
            assert_eq!(h.refused, 2);
            assert!(h.runners.is_empty(), "nobody joined");
            assert!(
                h.last_push.is_none(),
                "no push arrived, for the silence timeout"
            );
            assert_eq!(iterations(&h), None, "nothing merged");
        }
        let honest = serde_json::to_vec(&push("a", 0, 3.0, true)).unwrap();
        assert_eq!(post(addr, Some("Bearer s3cret"), &honest).await, 200);
        let h = lock(&hub);
        assert_eq!(iterations(&h), Some(3.0));
        assert_eq!((h.runners.len(), h.done(), h.refused), (1, 1, 2));
    }
}
