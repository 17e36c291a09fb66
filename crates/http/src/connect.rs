//! Opening a connection: DNS, TCP connect, TLS handshake, and for HTTP/2 hyper's handshake.
//!
//! Each step is timed separately into [`Progress`] as soon as it completes, so a request
//! that times out mid-connect still reports the phases it got through.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use tokio::net::{TcpSocket, TcpStream};
use url::Host;

use crate::config::ClientConfig;
use crate::dns::DnsCache;
use crate::error::{self, HttpError};
use crate::h1::conn::H1Conn;
use crate::phases::Progress;
use crate::pool::{Conn, PoolKey, Sender};
use crate::target::resolve_target;
use crate::timing_io::{IoStats, MeteredIo, Role};
use crate::tls;

/// Opens a new connection for `key`, recording looking_up/connecting/tls_handshaking.
pub(crate) async fn connect(
    key: &PoolKey,
    dns: &tokio::sync::Mutex<DnsCache>,
    config: &ClientConfig,
    local_ip: Option<IpAddr>,
    tls_config: &Arc<rustls::ClientConfig>,
    progress: &mut Progress,
) -> Result<Conn, HttpError> {
    let host = Host::parse(&key.host).map_err(|e| {
        HttpError::new(
            error::INVALID_URL,
            format!("invalid host {:?}: {e}", key.host),
        )
    })?;
    // The cache is held across the lookup on purpose: concurrent requests of the VU to a
    // new host wait for one answer instead of each asking.
    let addr = {
        let mut dns = dns.lock().await;
        resolve_target(
            &host,
            key.port,
            &config.target_rules(),
            &mut dns,
            &mut progress.looking_up,
        )
        .await?
    };

    let t0 = Instant::now();
    let tcp = dial(addr, local_ip)
        .await
        .map_err(|e| error::from_dial(addr, &e))?;
    progress.connecting = t0.elapsed();
    progress.conns_opened += 1;
    // Go's dialer disables Nagle; small request heads must not wait for ACKs.
    let _ = tcp.set_nodelay(true);
    // Both ends, for Go's wording of errors on the connection.
    let addr = (tcp.local_addr().ok(), addr);

    let stats = IoStats::new();
    if !key.https {
        let io = MeteredIo::new(tcp, stats.clone(), Role::Both);
        if key.h2c {
            return handshake_h2(io, stats, ("", ""), addr).await;
        }
        return Ok(h1(io, stats, ("", ""), addr));
    }

    let server_name = match host {
        Host::Ipv4(ip) => ServerName::IpAddress(IpAddr::V4(ip).into()),
        Host::Ipv6(ip) => ServerName::IpAddress(IpAddr::V6(ip).into()),
        Host::Domain(name) => ServerName::try_from(name.to_owned()).map_err(|e| {
            HttpError::new(error::INVALID_URL, format!("invalid host {name:?}: {e}"))
        })?,
    };
    let counted = MeteredIo::new(tcp, stats.clone(), Role::Count);
    let t0 = Instant::now();
    let tls_stream = tokio_rustls::TlsConnector::from(tls_config.clone())
        .connect(server_name, counted)
        .await
        .map_err(|e| error::from_tls(&key.host, &e))?;
    progress.tls_handshaking = t0.elapsed();
    let (_, session) = tls_stream.get_ref();
    let negotiated = tls::negotiated(session);
    let h2 = session.alpn_protocol() == Some(b"h2");
    let io = MeteredIo::new(tls_stream, stats.clone(), Role::Time);
    if h2 {
        handshake_h2(io, stats, negotiated, addr).await
    } else {
        Ok(h1(io, stats, negotiated, addr))
    }
}

/// TCP connect, from `local_ip` when the VU has one (`localIPs`).
pub(crate) async fn dial(addr: SocketAddr, local_ip: Option<IpAddr>) -> std::io::Result<TcpStream> {
    let Some(local) = local_ip else {
        return TcpStream::connect(addr).await;
    };
    let socket = if local.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.bind(SocketAddr::new(local, 0))?;
    socket.connect(addr).await
}

/// An HTTP/1.1 connection needs no handshake: rk6's own client speaks on the socket.
fn h1<S>(
    io: MeteredIo<S>,
    stats: Arc<IoStats>,
    (tls_version, tls_cipher_suite): (&'static str, &'static str),
    (local_addr, remote_addr): (Option<SocketAddr>, SocketAddr),
) -> Conn
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    Conn {
        sender: Sender::H1(H1Conn::new(Box::new(io))),
        stats,
        tls_version,
        tls_cipher_suite,
        local_addr,
        remote_addr,
    }
}

async fn handshake_h2<S>(
    io: MeteredIo<S>,
    stats: Arc<IoStats>,
    (tls_version, tls_cipher_suite): (&'static str, &'static str),
    (local_addr, remote_addr): (Option<SocketAddr>, SocketAddr),
) -> Result<Conn, HttpError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .handshake(TokioIo::new(io))
        .await
        .map_err(|e| error::from_hyper(&e, error::Side::Write))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Conn {
        sender: Sender::H2(sender),
        stats,
        tls_version,
        tls_cipher_suite,
        local_addr,
        remote_addr,
    })
}
