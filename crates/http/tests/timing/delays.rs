//! Phase accuracy against servers that inject one known delay at one point of the exchange.
//!
//! The servers run in their own OS threads with blocking I/O, so their timestamps are taken
//! right at the syscalls, on the same monotonic clock as the client's. Each test checks:
//!
//! - the lower bound strictly: the phase contains the injected delay. Where the server
//!   sleeps between two events that the client's phase boundaries must enclose (request read
//!   → response written, ClientHello read → handshake resumed, …) this holds by causality,
//!   with no tolerance.
//! - the upper bound at `max(0.5 ms, 2%)` of the injected delay above the interval the
//!   server itself observed. Measuring the reference on the server absorbs its own
//!   oversleep; what is left is the client's wake-up latency, which is exactly the error the
//!   client may add. On a loaded 2-core machine that latency occasionally spikes, and it
//!   only ever adds time, so an attempt that misses the upper bound is retried (up to
//!   [`ATTEMPTS`] times) while a missed lower bound fails at once.
//! - that the phases next to the delayed one picked up no more than that same 2% of it (they
//!   include a server wake-up, so an absolute 0.5 ms would test the machine's load), and
//!   that what involves no server at all (`blocked` on a reused connection, `blocked`
//!   beyond connect + TLS) stays within 0.5 ms.

use std::collections::HashMap;
use std::future::Future;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rk6_http::{Request, Timings};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::support::*;

/// The injected delay: large enough that 2% (4 ms) is well above timer granularity.
const D: Duration = Duration::from_millis(200);
/// Tries per test for the upper bounds (see the module docs).
const ATTEMPTS: usize = 3;

/// `max(0.5 ms, 2% of injected)`.
fn tolerance(injected: Duration) -> Duration {
    (injected / 50).max(Duration::from_micros(500))
}

/// Instants the server recorded, by name.
#[derive(Clone, Default)]
struct Marks(Arc<Mutex<HashMap<&'static str, Instant>>>);

impl Marks {
    fn set(&self, name: &'static str) {
        self.0.lock().unwrap().insert(name, Instant::now());
    }

    fn get(&self, name: &str) -> Instant {
        *self
            .0
            .lock()
            .unwrap()
            .get(name)
            .unwrap_or_else(|| panic!("server never reached {name}"))
    }

    fn span(&self, from: &str, to: &str) -> Duration {
        self.get(to).saturating_duration_since(self.get(from))
    }
}

/// Serves `conns` connections one after the other on a dedicated thread.
fn serve<F>(listener: TcpListener, conns: usize, handler: F) -> (SocketAddr, Marks)
where
    F: Fn(TcpStream, &Marks) + Send + 'static,
{
    let addr = listener.local_addr().unwrap();
    let marks = Marks::default();
    let m = marks.clone();
    std::thread::spawn(move || {
        for _ in 0..conns {
            let Ok((s, _)) = listener.accept() else {
                return;
            };
            m.set("accepted");
            let _ = s.set_nodelay(true);
            handler(s, &m);
        }
    });
    (addr, marks)
}

fn listener() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").unwrap()
}

/// Reads a request head byte by byte (so no body byte is consumed); `None` on EOF.
fn read_head(s: &mut impl Read) -> Option<String> {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => buf.push(b[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

fn drain(s: &mut impl Read, mut n: usize) {
    let mut buf = vec![0u8; 64 << 10];
    while n > 0 {
        match s.read(&mut buf[..n.min(64 << 10)]) {
            Ok(0) | Err(_) => return,
            Ok(k) => n -= k,
        }
    }
}

/// Fails the attempt (to be retried) when `got` exceeds `reference + tolerance(injected)`.
fn upper(what: &str, got: Duration, reference: Duration, injected: Duration) -> Result<(), String> {
    let limit = reference + tolerance(injected);
    eprintln!(
        "{what}: {:.3} ms (server saw {:.3} ms, limit {:.3} ms)",
        ms(got),
        ms(reference),
        ms(limit)
    );
    if got <= limit {
        Ok(())
    } else {
        Err(format!("{what}: {:.3} ms > {:.3} ms", ms(got), ms(limit)))
    }
}

/// Panics unless `got >= injected`.
#[track_caller]
fn lower(what: &str, got: Duration, injected: Duration) {
    assert!(
        got >= injected,
        "{what}: {:.3} ms < injected {:.3} ms",
        ms(got),
        ms(injected)
    );
}

fn sum_holds(t: &Timings) {
    assert_eq!(t.duration, t.sending + t.waiting + t.receiving);
}

async fn best_of<F, Fut>(attempt: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let mut misses = Vec::new();
    for _ in 0..ATTEMPTS {
        match attempt().await {
            Ok(()) => return,
            Err(e) => misses.push(e),
        }
    }
    panic!("upper bound missed in every attempt: {misses:#?}");
}

#[tokio::test]
async fn waiting_is_the_servers_think_time_and_reuse_costs_nothing() {
    let _one_at_a_time = TIMING.lock().await;
    best_of(|| async {
        let (addr, marks) = serve(listener(), 1, |mut s, m| {
            for (read, write) in [("read1", "write1"), ("read2", "write2")] {
                if read_head(&mut s).is_none() {
                    return;
                }
                m.set(read);
                std::thread::sleep(D);
                m.set(write);
                let _ = s.write_all(&ok_response("hi"));
            }
        });
        let mut c = client();
        let u = format!("http://{addr}/");
        let first = get(&mut c, &u).await;
        let second = get(&mut c, &u).await;
        assert_eq!(
            (first.status, second.status),
            (200, 200),
            "{:?}",
            first.error
        );

        let t = first.timings();
        sum_holds(&t);
        lower("waiting", t.waiting, D);
        assert_eq!(t.looking_up, Duration::ZERO, "IP literal");
        assert_eq!(t.tls_handshaking, Duration::ZERO, "plain HTTP");
        assert!(t.connecting > Duration::ZERO && t.blocked >= t.connecting);

        let r = second.timings();
        sum_holds(&r);
        lower("waiting (reused)", r.waiting, D);
        assert_eq!(
            (r.connecting, r.tls_handshaking),
            (Duration::ZERO, Duration::ZERO)
        );
        upper("waiting", t.waiting, marks.span("read1", "write1"), D)?;
        upper(
            "waiting (reused)",
            r.waiting,
            marks.span("read2", "write2"),
            D,
        )?;
        upper(
            "blocked (reused)",
            r.blocked,
            Duration::ZERO,
            Duration::ZERO,
        )?;
        upper("receiving", t.receiving, Duration::ZERO, D)?;
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn receiving_spans_a_trickled_body() {
    let _one_at_a_time = TIMING.lock().await;
    best_of(|| async {
        let (addr, marks) = serve(listener(), 1, |mut s, m| {
            if read_head(&mut s).is_none() {
                return;
            }
            m.set("head");
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello");
            std::thread::sleep(D);
            let _ = s.write_all(b"wor");
            std::thread::sleep(D);
            m.set("last");
            let _ = s.write_all(b"ld");
        });
        let r = get(&mut client(), &format!("http://{addr}/")).await;
        assert_eq!(&r.body[..], b"helloworld", "{:?}", r.error);
        let t = r.timings();
        sum_holds(&t);
        // `receiving` starts when the client reads the first chunk, which may lag the
        // server's write by a wake-up, so only here the lower bound needs the tolerance.
        lower("receiving", t.receiving + tolerance(2 * D), 2 * D);
        upper("receiving", t.receiving, marks.span("head", "last"), 2 * D)?;
        upper("waiting", t.waiting, Duration::ZERO, D)?;
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn sending_covers_an_upload_the_server_reads_late() {
    let _one_at_a_time = TIMING.lock().await;
    // A small receive buffer on the server (inherited from the listener) and a body larger
    // than the client's largest send buffer (tcp_wmem max, 4 MiB by default) make the last
    // write wait until the server starts reading.
    const LEN: usize = 8 << 20;
    best_of(|| async {
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.set_recv_buffer_size(16 << 10).unwrap();
        sock.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let l = sock.listen(8).unwrap().into_std().unwrap();
        l.set_nonblocking(false).unwrap();
        let (addr, marks) = serve(l, 1, |mut s, m| {
            let Some(head) = read_head(&mut s) else {
                return;
            };
            m.set("head");
            std::thread::sleep(D);
            drain(&mut s, content_length_of(&head));
            m.set("body");
            let _ = s.write_all(&ok_response("got it"));
        });
        let mut req = Request::new(http::Method::POST, url(&format!("http://{addr}/up")));
        req.body = Bytes::from(vec![b'a'; LEN]);
        let t_call = Instant::now();
        let r = client().send(req).await;
        assert_eq!(r.status, 200, "{:?}", r.error);
        let t = r.timings();
        sum_holds(&t);
        lower("sending", t.sending, D);
        assert!(r.hops[0].bytes_sent > LEN as u64);
        // The request cannot finish being written after the server has read all of it.
        let reference = marks.get("body").saturating_duration_since(t_call) - t.blocked;
        upper("sending", t.sending, reference, D)?;
        Ok(())
    })
    .await;
}

/// A rustls server config for the test PKI.
fn server_tls(pki: &Pki) -> Arc<rustls::ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.leaf_der.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.leaf_key.clone())),
        )
        .unwrap();
    Arc::new(cfg)
}

#[tokio::test]
async fn tls_handshaking_holds_a_late_server_hello_and_reuse_skips_it() {
    let _one_at_a_time = TIMING.lock().await;
    let pki = pki(&["127.0.0.1"]);
    let cfg = server_tls(&pki);
    best_of(|| async {
        let cfg = cfg.clone();
        let (addr, marks) = serve(listener(), 1, move |s, m| {
            // Wait for the ClientHello, then hold the ServerHello back.
            let mut probe = [0u8; 1];
            if s.peek(&mut probe).unwrap_or(0) == 0 {
                return;
            }
            m.set("hello");
            std::thread::sleep(D);
            m.set("resume");
            let conn = rustls::ServerConnection::new(cfg.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, s);
            while tls.conn.is_handshaking() {
                if tls.conn.complete_io(&mut tls.sock).is_err() {
                    return;
                }
            }
            m.set("handshaken");
            while read_head(&mut tls).is_some() {
                let _ = tls.write_all(&ok_response("tls"));
                let _ = tls.flush();
            }
        });
        let mut c = tls_client(&pki);
        let u = format!("https://{addr}/");
        let first = get(&mut c, &u).await;
        let second = get(&mut c, &u).await;
        assert_eq!(
            (first.status, second.status),
            (200, 200),
            "{:?}",
            first.error
        );
        let t = first.timings();
        sum_holds(&t);
        lower("tls_handshaking", t.tls_handshaking, D);
        assert!(t.blocked >= t.connecting + t.tls_handshaking, "{t:?}");
        upper(
            "tls_handshaking",
            t.tls_handshaking,
            marks.span("accepted", "handshaken"),
            D,
        )?;
        // blocked is connect + TLS + hyper's handshake setup, nothing else; it sits next to
        // the delayed phase, so it gets the same 2% of it (setting up hyper's handshake took
        // 0.2-1 ms over a 0.5 ms bound while other tests shared the cores).
        upper("blocked", t.blocked, t.connecting + t.tls_handshaking, D)?;
        upper("waiting", t.waiting, Duration::ZERO, D)?;

        let r = second.timings();
        sum_holds(&r);
        assert_eq!(
            (r.connecting, r.tls_handshaking),
            (Duration::ZERO, Duration::ZERO)
        );
        upper(
            "blocked (reused)",
            r.blocked,
            Duration::ZERO,
            Duration::ZERO,
        )?;
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn connecting_holds_a_dropped_syn_until_its_retransmission() {
    let _one_at_a_time = TIMING.lock().await;
    // With a listen backlog of 0 and one connection already waiting in the accept queue,
    // Linux drops further SYNs; the client retransmits after its initial RTO of 1 s
    // (TCP_TIMEOUT_INIT). Freeing the queue earlier cannot shorten that, so the connect
    // takes at least 1 s: the only faithful, timing-exact way to delay a loopback connect
    // without a proxy (which would complete the client's handshake itself).
    const SYN_RTO: Duration = Duration::from_secs(1);
    best_of(|| async {
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let l = sock.listen(0).unwrap().into_std().unwrap();
        l.set_nonblocking(false).unwrap();
        let addr = l.local_addr().unwrap();
        let occupier = TcpStream::connect(addr).unwrap();
        let marks = Marks::default();
        let m = marks.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let _ = l.accept(); // the occupier
            let Ok((mut s, _)) = l.accept() else { return };
            m.set("accepted");
            if read_head(&mut s).is_some() {
                let _ = s.write_all(&ok_response("late"));
            }
        });
        let t_call = Instant::now();
        let r = get(&mut client(), &format!("http://{addr}/")).await;
        drop(occupier);
        assert_eq!(r.status, 200, "{:?}", r.error);
        let t = r.timings();
        sum_holds(&t);
        lower("connecting", t.connecting, SYN_RTO);
        assert!(t.blocked >= t.connecting);
        upper(
            "connecting",
            t.connecting,
            marks.get("accepted").saturating_duration_since(t_call),
            SYN_RTO,
        )?;
        Ok(())
    })
    .await;
}
