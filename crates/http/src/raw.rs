//! A connection opened with the client's connect rules but handed over as a byte stream,
//! for protocols that start as an HTTP/1.1 upgrade (WebSocket): the same `hosts`,
//! `blockHostnames`, `blacklistIPs`, DNS cache, `localIPs` and TLS settings as requests,
//! with ALPN limited to `http/1.1` (an upgrade cannot ride HTTP/2), and wire bytes counted
//! under TLS as for requests.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use url::{Host, Url};

use crate::error::{self, HttpError};
use crate::timing_io::{IoStats, MeteredIo, Role};

/// The socket under a [`RawConn`]: plain TCP or TLS over it, bytes counted on the wire.
enum Inner {
    Plain(MeteredIo<TcpStream>),
    Tls(Box<tokio_rustls::client::TlsStream<MeteredIo<TcpStream>>>),
}

/// An open connection for a protocol of its own (a WebSocket after its upgrade).
pub struct RawConn {
    inner: Inner,
    stats: Arc<IoStats>,
    /// The address connected to.
    pub remote_addr: SocketAddr,
    /// k6's name of the negotiated TLS version (`tls1.3`), empty on plain TCP.
    pub tls_version: &'static str,
}

impl RawConn {
    /// The connection's byte counters, which outlive it (a refused upgrade drops the
    /// connection, its handshake bytes still count).
    pub fn traffic(&self) -> Traffic {
        Traffic(self.stats.clone())
    }
}

/// The byte counters of a [`RawConn`].
#[derive(Clone)]
pub struct Traffic(Arc<IoStats>);

impl Traffic {
    /// Bytes (written, read) on the wire since the previous call (the first call includes
    /// the TLS handshake).
    pub fn take(&self) -> (u64, u64) {
        self.0.claim()
    }
}

impl AsyncRead for RawConn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            Inner::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for RawConn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().inner {
            Inner::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            Inner::Plain(s) => Pin::new(s).poll_flush(cx),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            Inner::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The parts of a client a raw connection needs.
pub(crate) struct Dialer<'a> {
    pub(crate) config: &'a crate::config::ClientConfig,
    pub(crate) dns: &'a tokio::sync::Mutex<crate::dns::DnsCache>,
    pub(crate) local_ip: Option<IpAddr>,
    /// The client's TLS config with ALPN `http/1.1` only.
    pub(crate) tls: Arc<rustls::ClientConfig>,
}

/// The default port of `ws`, `wss`, `http` and `https` URLs.
fn default_port(url: &Url) -> Option<u16> {
    url.port_or_known_default().or(match url.scheme() {
        "ws" => Some(80),
        "wss" => Some(443),
        _ => None,
    })
}

/// Opens a connection to `url`'s host (`wss`/`https` with TLS).
pub(crate) async fn open(d: Dialer<'_>, url: &Url) -> Result<RawConn, HttpError> {
    let tls = matches!(url.scheme(), "wss" | "https");
    let host = match url.host() {
        Some(h) => h.to_owned(),
        None => return Err(HttpError::new(error::INVALID_URL, "missing host")),
    };
    let port = default_port(url)
        .ok_or_else(|| HttpError::new(error::INVALID_URL, "unsupported URL scheme"))?;
    if let Host::Domain(name) = &host {
        // Go's dialer error, which k6's WebSocket modules show as they get it.
        if let Some(pattern) = d.config.block_hostnames.blocking(name) {
            return Err(
                HttpError::new(error::BLOCKED_HOSTNAME, "hostname is blocked").with_detail(
                    format!("hostname ({name}) is in a blocked pattern ({pattern})"),
                ),
            );
        }
    }
    let addr = {
        let mut dns = d.dns.lock().await;
        let mut looking_up = Duration::ZERO;
        // The blacklist is checked below, to word its error as Go's dialer does.
        let rules = crate::target::Rules {
            blacklist_ips: &[],
            ..d.config.target_rules()
        };
        crate::target::resolve_target(&host, port, &rules, &mut dns, &mut looking_up).await?
    };
    if let Some(range) = d
        .config
        .blacklist_ips
        .iter()
        .find(|c| c.contains(addr.ip()))
    {
        return Err(
            HttpError::new(error::BLACKLISTED_IP, "ip is blacklisted").with_detail(format!(
                "IP ({}) is in a blacklisted range ({range})",
                addr.ip()
            )),
        );
    }
    let tcp = crate::connect::dial(addr, d.local_ip)
        .await
        .map_err(|e| error::from_dial(addr, &e))?;
    // Go's dialer disables Nagle; small frames must not wait for ACKs.
    let _ = tcp.set_nodelay(true);
    let stats = IoStats::new();
    if !tls {
        return Ok(RawConn {
            inner: Inner::Plain(MeteredIo::new(tcp, stats.clone(), Role::Count)),
            stats,
            remote_addr: addr,
            tls_version: "",
        });
    }
    let server_name = match &host {
        Host::Ipv4(ip) => ServerName::IpAddress(IpAddr::V4(*ip).into()),
        Host::Ipv6(ip) => ServerName::IpAddress(IpAddr::V6(*ip).into()),
        Host::Domain(name) => ServerName::try_from(name.clone()).map_err(|e| {
            HttpError::new(error::INVALID_URL, format!("invalid host {name:?}: {e}"))
        })?,
    };
    let counted = MeteredIo::new(tcp, stats.clone(), Role::Count);
    let stream = tokio_rustls::TlsConnector::from(d.tls)
        .connect(server_name, counted)
        .await
        .map_err(|e| error::from_tls(&host.to_string(), &e))?;
    let (tls_version, _) = crate::tls::negotiated(stream.get_ref().1);
    Ok(RawConn {
        inner: Inner::Tls(Box::new(stream)),
        stats,
        remote_addr: addr,
        tls_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websocket_schemes_have_their_ports() {
        let port = |u: &str| default_port(&Url::parse(u).unwrap());
        assert_eq!(port("ws://a/"), Some(80));
        assert_eq!(port("wss://a/"), Some(443));
        assert_eq!(port("wss://a:8443/"), Some(8443));
        assert_eq!(port("ftp://a/"), Some(21));
        assert_eq!(port("foo://a/"), None);
    }
}
