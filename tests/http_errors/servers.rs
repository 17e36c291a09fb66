//! Misbehaving and delay-injecting servers on 127.0.0.1, one listener per behaviour.
//!
//! Each connection is served by its own OS thread with blocking I/O, so the behaviours are
//! exact (a reset is a reset, a delay is a sleep at one point of the exchange) and no
//! thread outlives its client by more than [`HOLD`]. A set is meant for one run: the
//! keep-alive behaviours count connections.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest a server thread keeps a connection open without progress.
const HOLD: Duration = Duration::from_secs(5);

/// What a listener does with each connection (`n` = index of the connection).
type Behaviour = Arc<dyn Fn(TcpStream, usize) + Send + Sync>;

/// A set of listeners by behaviour name; `ports` is what scripts get as `__ENV.PORTS`.
pub struct Servers {
    pub ports: BTreeMap<&'static str, u16>,
    /// Kept open so the backlog stays full (see [`Servers::delays`]).
    _occupier: Option<TcpStream>,
}

impl Servers {
    /// `{"name":port,…}` for `__ENV.PORTS`.
    pub fn ports_json(&self) -> String {
        serde_json::to_string(&self.ports).unwrap()
    }

    /// Every failure k6 classifies, one listener each (plus a closed port: `refused`).
    pub fn faults() -> Servers {
        let mut s = Servers {
            ports: BTreeMap::new(),
            _occupier: None,
        };
        s.add("reset_mid", |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
                std::thread::sleep(Duration::from_millis(50));
                reset(c);
            }
        });
        s.add("eof_mid", |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        s.add("silent", |mut c, _| {
            // Reads the request, never answers; returns once the client gives up.
            if read_head(&mut c).is_some() {
                hold(c);
            }
        });
        s.add("stalled_body", |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
                hold(c);
            }
        });
        s.add("deaf", |c, _| {
            // Accepts and never reads nor answers.
            std::thread::sleep(Duration::from_secs(2));
            drop(c);
        });
        s.add("garbage", |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(b"this is not http\r\n\r\n");
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        s.add("bad_chunk", |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n",
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        s.add("bad_first_chunk", |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nworld\r\n0\r\n\r\n",
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        s.add("eof_after_head", |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        s.add("hangup", |mut c, _| {
            let _ = read_head(&mut c);
        });
        s.add("reset_at_once", |mut c, _| {
            if read_head(&mut c).is_some() {
                reset(c);
            }
        });
        for (name, rst) in [
            ("ka_close", false),
            ("ka_reset", true),
            ("ka_close_put", false),
            ("ka_reset_delete", true),
        ] {
            s.add(name, move |mut c, n| {
                if n == 0 {
                    // One answer, then the next request is read and the connection dropped.
                    if read_head(&mut c).is_some() {
                        let _ = c.write_all(&ok("first"));
                    }
                    // The body is read too: unread data would turn the close into a reset.
                    if let Some(head) = read_head(&mut c) {
                        drain(&mut c, content_length(&head));
                        if rst {
                            reset(c);
                        }
                    }
                } else {
                    while read_head(&mut c).is_some() {
                        let _ = c.write_all(&ok("second"));
                    }
                }
            });
        }
        s.add("redirect_loop", |mut c, _| {
            while read_head(&mut c).is_some() {
                let _ = c.write_all(
                    b"HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n",
                );
            }
        });
        s.add("not_tls", |mut c, _| {
            let mut buf = [0u8; 64];
            let _ = c.read(&mut buf);
            let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        });
        let leaf = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        s.add_tls(
            "tls_self_signed",
            tls_config(&leaf.cert, &leaf.key_pair),
            Duration::ZERO,
        );
        s.add_tls("tls_self_signed_ca", self_signed_ca(), Duration::ZERO);
        s.ports.insert("refused", closed_port());
        s
    }

    /// One listener per timing phase, each injecting `delay` at the point that phase
    /// measures; `connect` delays the connect by a dropped SYN (about 1 s, the kernel's
    /// initial retransmission timeout), which only a fresh set can do once.
    pub fn delays(delay: Duration) -> Servers {
        let mut s = Servers {
            ports: BTreeMap::new(),
            _occupier: None,
        };
        s.add("waiting", move |mut c, _| {
            while read_head(&mut c).is_some() {
                std::thread::sleep(delay);
                let _ = c.write_all(&ok("late"));
            }
        });
        s.add("receiving", move |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab");
                std::thread::sleep(delay / 2);
                let _ = c.write_all(b"cd");
                std::thread::sleep(delay / 2);
                let _ = c.write_all(b"ef");
            }
        });
        s.add_with("sending", small_rcvbuf_listener(), move |mut c, _| {
            if let Some(head) = read_head(&mut c) {
                std::thread::sleep(delay);
                drain(&mut c, content_length(&head));
                let _ = c.write_all(&ok("got it"));
            }
        });
        let leaf = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        s.add_tls("tls", tls_config(&leaf.cert, &leaf.key_pair), delay);
        // Backlog 0 with one connection already queued: Linux drops the next SYN. A request
        // to `connect_arm` says the client is about to connect; the queue is freed 300 ms
        // later, after the SYN was dropped and well before its retransmission.
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
        sock.listen(0).unwrap();
        let listener: TcpListener = sock.into();
        let addr = listener.local_addr().unwrap();
        s._occupier = Some(TcpStream::connect(addr).unwrap());
        s.ports.insert("connect", addr.port());
        let (armed, arm) = std::sync::mpsc::channel::<()>();
        let armed = std::sync::Mutex::new(armed);
        s.add("connect_arm", move |mut c, _| {
            if read_head(&mut c).is_some() {
                let _ = c.write_all(&ok("armed"));
                let _ = armed.lock().unwrap().send(());
            }
        });
        std::thread::spawn(move || {
            if arm.recv_timeout(Duration::from_secs(60)).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(300));
            let _ = listener.accept(); // the occupier
            if let Ok((mut c, _)) = listener.accept() {
                while read_head(&mut c).is_some() {
                    let _ = c.write_all(&ok("connected"));
                }
            }
        });
        s
    }

    fn add(&mut self, name: &'static str, f: impl Fn(TcpStream, usize) + Send + Sync + 'static) {
        self.add_with(name, TcpListener::bind("127.0.0.1:0").unwrap(), f);
    }

    fn add_with(
        &mut self,
        name: &'static str,
        listener: TcpListener,
        f: impl Fn(TcpStream, usize) + Send + Sync + 'static,
    ) {
        self.ports
            .insert(name, listener.local_addr().unwrap().port());
        let f: Behaviour = Arc::new(f);
        let n = Arc::new(AtomicUsize::new(0));
        std::thread::spawn(move || {
            // Ends with the test process; each connection gets its own thread.
            for c in listener.incoming().flatten() {
                let _ = c.set_nodelay(true);
                let _ = c.set_read_timeout(Some(HOLD));
                let (f, i) = (f.clone(), n.fetch_add(1, Ordering::SeqCst));
                std::thread::spawn(move || f(c, i));
            }
        });
    }

    /// HTTPS that holds the ServerHello back by `delay` after the ClientHello arrived.
    fn add_tls(&mut self, name: &'static str, cfg: Arc<rustls::ServerConfig>, delay: Duration) {
        self.add(name, move |c, _| {
            let mut probe = [0u8; 1];
            if c.peek(&mut probe).unwrap_or(0) == 0 {
                return;
            }
            std::thread::sleep(delay);
            let conn = rustls::ServerConnection::new(cfg.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, c);
            while read_head(&mut tls).is_some() {
                let _ = tls.write_all(&ok("tls"));
                let _ = tls.flush();
            }
        });
    }
}

fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A listener whose accepted sockets have a 16 KiB receive buffer, so a large upload
/// blocks the client until the server reads.
fn small_rcvbuf_listener() -> TcpListener {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(16 << 10).unwrap();
    sock.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    sock.listen(16).unwrap();
    sock.into()
}

fn tls_config(cert: &rcgen::Certificate, key: &rcgen::KeyPair) -> Arc<rustls::ServerConfig> {
    crate::support::tls_server_config(cert, key, &[b"http/1.1"])
}

/// A self-signed certificate that is also a CA, as `openssl req -x509` makes by default.
fn self_signed_ca() -> Arc<rustls::ServerConfig> {
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    tls_config(&cert, &key)
}

fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads a request head byte by byte (no body byte consumed); `None` on EOF or timeout.
fn read_head(s: &mut impl Read) -> Option<String> {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => buf.push(b[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    Some(head)
}

fn content_length(head: &str) -> usize {
    head.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0)
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

/// Keeps the connection open until the client closes it (or [`HOLD`] passes).
fn hold(mut c: TcpStream) {
    let mut buf = [0u8; 1024];
    while matches!(c.read(&mut buf), Ok(n) if n > 0) {}
    let _ = c.shutdown(Shutdown::Both);
}

/// Closes with RST instead of FIN.
fn reset(c: TcpStream) {
    let sock = socket2::Socket::from(c);
    let _ = sock.set_linger(Some(Duration::ZERO));
}
