//! Echo servers for the protocol benchmarks (bench/protocols.py): the load generator is what
//! is measured, so the target must cost little and answer at once.
//!
//! `rk6-bench-echo ws PORT`: a WebSocket server on 127.0.0.1:PORT that sends every text or
//! binary message back (pings are answered by tungstenite).
//! `rk6-bench-echo grpc PORT`: an h2c gRPC server that answers every call with the frames it
//! received, as they arrive, then `grpc-status: 0`: a unary `Say(EchoRequest) returns
//! (EchoRequest)` gets its request back, a bidirectional stream gets each message back.
//! It parses nothing, so any method whose reply type equals its request type works.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, port) = match args.as_slice() {
        [_, mode, port] => (mode.as_str(), port.parse::<u16>()),
        _ => usage(),
    };
    let Ok(port) = port else { usage() };
    // Two threads: the target shares the machine with the load generator it serves.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    rt.block_on(async move {
        let listener = match TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("rk6-bench-echo: cannot listen on {addr}: {e}");
                std::process::exit(1);
            }
        };
        eprintln!(
            "rk6-bench-echo {mode} listening on {}",
            listener.local_addr().unwrap()
        );
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            match mode {
                "ws" => tokio::spawn(websocket(stream)),
                "grpc" => tokio::spawn(grpc(stream)),
                _ => usage(),
            };
        }
    });
}

fn usage() -> ! {
    eprintln!("usage: rk6-bench-echo ws|grpc PORT");
    std::process::exit(2);
}

async fn websocket(stream: TcpStream) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    while let Some(Ok(msg)) = ws.next().await {
        match msg {
            Message::Text(_) | Message::Binary(_) => {
                if ws.send(msg).await.is_err() {
                    return;
                }
            }
            Message::Close(_) => {
                let _ = ws.close(None).await;
                return;
            }
            // tungstenite queues the pong for a ping itself and flushes it on the next write.
            _ => {
                let _ = ws.flush().await;
            }
        }
    }
}

async fn grpc(stream: TcpStream) {
    let service = hyper::service::service_fn(|req: Request<Incoming>| async move {
        let mut res = Response::new(Echo {
            body: req.into_body(),
            trailers_sent: false,
        });
        res.headers_mut()
            .insert("content-type", HeaderValue::from_static("application/grpc"));
        Ok::<_, Infallible>(res)
    });
    if let Err(e) = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        eprintln!("rk6-bench-echo grpc: connection ended: {e:?}");
    }
}

/// The response body: the request's data frames as they come, then the OK trailers.
struct Echo<B> {
    body: B,
    trailers_sent: bool,
}

impl<B: Body<Data = Bytes> + Unpin> Body for Echo<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        if self.trailers_sent {
            return Poll::Ready(None);
        }
        loop {
            match Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    // The empty frame that carried the client's END_STREAM is not passed on:
                    // h2 clients count empty DATA frames over a connection's life and close
                    // it at 100 (h2 0.4.20's guard against empty-frame floods).
                    Ok(data) if data.is_empty() => continue,
                    Ok(data) => return Poll::Ready(Some(Ok(Frame::data(data)))),
                    // The client's own trailers (gRPC clients send none) are dropped.
                    Err(_) => continue,
                },
                Poll::Ready(None) => {
                    self.trailers_sent = true;
                    let mut trailers = HeaderMap::new();
                    trailers.insert("grpc-status", HeaderValue::from_static("0"));
                    return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, StreamBody};

    #[tokio::test]
    async fn echo_sends_each_non_empty_data_frame_back_then_ok_trailers() {
        let frames = vec![
            Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"\0\0\0\0\x02hi"))),
            Ok(Frame::data(Bytes::new())),
            Ok(Frame::data(Bytes::from_static(b"\0\0\0\0\x01!"))),
        ];
        let mut echo = Echo {
            body: StreamBody::new(futures_util::stream::iter(frames)),
            trailers_sent: false,
        };
        let mut data = Vec::new();
        let mut trailers = None;
        while let Some(frame) = echo.frame().await {
            match frame.unwrap().into_data() {
                Ok(d) => data.push(d),
                Err(f) => trailers = f.into_trailers().ok(),
            }
        }
        assert_eq!(data, [&b"\0\0\0\0\x02hi"[..], &b"\0\0\0\0\x01!"[..]]);
        assert_eq!(trailers.expect("trailers")["grpc-status"], "0");
    }
}
