//! An in-process rustls HTTPS server that reports, per connection, what the handshake
//! negotiated: version, cipher suite, whether the session was resumed and which client
//! certificate (if any) was presented. Blocking threads keep it independent of tokio.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{HandshakeKind, RootCertStore, ServerConfig, ServerConnection, StreamOwned};
use serde_json::{json, Value};

/// A certificate authority that signs server and client certificates.
pub struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

/// A leaf certificate with its key, in PEM (what a script `open()`s) and DER.
#[derive(Clone)]
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
    der: CertificateDer<'static>,
    key_der: Vec<u8>,
}

impl Ca {
    /// A fresh CA named `name`.
    pub fn new(name: &str) -> Ca {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        Ca {
            cert: p.self_signed(&key).unwrap(),
            key,
        }
    }

    /// The CA certificate in PEM (for `SSL_CERT_FILE`).
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A leaf for `names` (DNS names or IP literals), with `cn` as its common name.
    pub fn leaf(&self, cn: &str, names: &[&str]) -> Leaf {
        self.leaf_with(cn, names, |_| {})
    }

    /// A leaf for `names` that expired in 2021.
    pub fn expired_leaf(&self, names: &[&str]) -> Leaf {
        self.leaf_with("expired", names, |p| {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2021, 1, 1);
        })
    }

    fn leaf_with(
        &self,
        cn: &str,
        names: &[&str],
        tweak: impl FnOnce(&mut CertificateParams),
    ) -> Leaf {
        let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        tweak(&mut p);
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &self.cert, &self.key).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }

    fn roots(&self) -> Arc<RootCertStore> {
        let mut roots = RootCertStore::empty();
        roots.add(self.cert.der().clone()).unwrap();
        Arc::new(roots)
    }
}

/// How the server is set up.
pub struct Setup<'a> {
    pub leaf: &'a Leaf,
    /// Protocol versions offered (default both).
    pub versions: Vec<&'static rustls::SupportedProtocolVersion>,
    /// Ask for a client certificate issued by this CA (optional for the client).
    pub client_ca: Option<&'a Ca>,
    /// Client certificates to recognise, reported by index.
    pub known_clients: Vec<Leaf>,
}

impl<'a> Setup<'a> {
    /// Both TLS versions, no client authentication.
    pub fn new(leaf: &'a Leaf) -> Self {
        Setup {
            leaf,
            versions: vec![&rustls::version::TLS13, &rustls::version::TLS12],
            client_ca: None,
            known_clients: Vec::new(),
        }
    }
}

/// What one accepted connection negotiated.
#[derive(Clone, Debug)]
pub struct Handshake {
    pub version: String,
    pub cipher: String,
    pub resumed: bool,
    /// Index into `known_clients` of the presented certificate; -1 none, -2 unknown.
    pub client: i64,
    pub sni: Option<String>,
}

impl Handshake {
    fn json(&self) -> Value {
        json!({
            "version": self.version,
            "cipher": self.cipher,
            "resumed": self.resumed,
            "client": self.client,
            "sni": self.sni,
        })
    }
}

/// A running server on 127.0.0.1; stops on drop.
pub struct TlsServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    log: Arc<Mutex<Vec<Handshake>>>,
}

impl TlsServer {
    /// Starts serving `setup`.
    pub fn start(setup: Setup<'_>) -> TlsServer {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&setup.versions)
            .unwrap();
        let builder = match setup.client_ca {
            Some(ca) => builder.with_client_cert_verifier(
                WebPkiClientVerifier::builder(ca.roots())
                    .allow_unauthenticated()
                    .build()
                    .unwrap(),
            ),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder
            .with_single_cert(
                vec![setup.leaf.der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(setup.leaf.key_der.clone())),
            )
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let known: Arc<Vec<CertificateDer<'static>>> =
            Arc::new(setup.known_clients.iter().map(|l| l.der.clone()).collect());
        let thread = {
            let (stop, log) = (stop.clone(), log.clone());
            std::thread::spawn(move || {
                // Bounded: a test server lives for one test of a few seconds.
                let deadline = std::time::Instant::now() + Duration::from_secs(60);
                while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                    match listener.accept() {
                        Ok((s, _)) => {
                            let (config, log, known) = (config.clone(), log.clone(), known.clone());
                            std::thread::spawn(move || serve(s, config, &log, &known));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        TlsServer {
            addr,
            stop,
            thread: Some(thread),
            log,
        }
    }

    /// `https://{host}:{port}{path}`.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.addr.port())
    }

    /// Every completed handshake so far.
    pub fn handshakes(&self) -> Vec<Handshake> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    tcp: TcpStream,
    config: Arc<ServerConfig>,
    log: &Mutex<Vec<Handshake>>,
    known: &[CertificateDer<'static>],
) {
    let _ = tcp.set_nonblocking(false);
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(conn) = ServerConnection::new(config) else {
        return;
    };
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        if tls.conn.complete_io(&mut tls.sock).is_err() {
            return;
        }
    }
    let c = &tls.conn;
    let shake = Handshake {
        version: format!("{:?}", c.protocol_version().unwrap()),
        cipher: c
            .negotiated_cipher_suite()
            .and_then(|s| s.suite().as_str())
            .unwrap_or("")
            .to_string(),
        resumed: c.handshake_kind() == Some(HandshakeKind::Resumed),
        client: match c.peer_certificates().and_then(|p| p.first()) {
            None => -1,
            Some(cert) => known
                .iter()
                .position(|k| k == cert)
                .map_or(-2, |i| i as i64),
        },
        sni: c.server_name().map(str::to_string),
    };
    log.lock().unwrap().push(shake.clone());
    let body = shake.json().to_string();
    let mut reader = BufReader::new(tls);
    loop {
        // Read one request head; the test scripts send no bodies.
        let mut line = String::new();
        let mut got_any = false;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            got_any = true;
        }
        if !got_any {
            return;
        }
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let tls = reader.get_mut();
        if tls
            .write_all(resp.as_bytes())
            .and_then(|_| tls.flush())
            .is_err()
        {
            return;
        }
    }
}
