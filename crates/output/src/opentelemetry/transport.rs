//! Sending one encoded `ExportMetricsServiceRequest`: OTLP/gRPC (a unary call over HTTP/2,
//! h2c when insecure) or OTLP/HTTP (a protobuf POST), both on hyper's client over rustls.
//! Connections are kept between exports, as the OTLP exporters k6 uses keep theirs.

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, USER_AGENT};
use http::{Method, Uri};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use percent_encoding::percent_decode_str;
use rk6_http::TrustedCerts;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::config::{Exporter, TlsSettings};
use crate::transport::{describe, tls_builder};

/// A client for one OTLP endpoint.
pub(crate) struct Transport {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    uri: Uri,
    grpc: bool,
    headers: HeaderMap,
    timeout: Duration,
}

impl Transport {
    /// A client for `exporter` sending `headers` (the user's win over the defaults).
    /// `tls.roots` replaces Mozilla's roots when given (`K6_OTEL_TLS_CERTIFICATE`);
    /// `tls.client` is presented when the server asks for a certificate; no TLS version
    /// below `tls.minimum` is accepted.
    pub(crate) fn new(
        exporter: &Exporter,
        headers: &[(String, String)],
        tls: &TlsSettings,
        timeout: Duration,
    ) -> Result<Transport, String> {
        let grpc = matches!(exporter, Exporter::Grpc { .. });
        let roots = tls.roots.as_ref().map(|certs| {
            let mut trusted = TrustedCerts::empty();
            for cert in certs {
                trusted.add(cert.clone());
            }
            trusted
        });
        let builder = tls_builder(tls.insecure_skip_verify, roots, tls.minimum);
        let tls_config = match &tls.client {
            None => builder.with_no_client_auth(),
            Some(client) => {
                let chain: Vec<CertificateDer<'static>> =
                    CertificateDer::pem_slice_iter(&client.cert_pem)
                        .filter_map(Result::ok)
                        .collect();
                let key = PrivateKeyDer::from_pem_slice(&client.key_pem)
                    .map_err(|e| format!("failed to load client certificate: {e}"))?;
                if chain.is_empty() {
                    return Err(
                        "failed to load client certificate: no certificate in the PEM file".into(),
                    );
                }
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("failed to load client certificate: {e}"))?
            }
        };
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config)
            .https_or_http();
        let connector = if grpc {
            builder.enable_http2().build()
        } else {
            builder.enable_all_versions().build()
        };
        let mut client = Client::builder(TokioExecutor::new());
        // gRPC is HTTP/2 only: prior knowledge on plain text, ALPN `h2` over TLS.
        client.http2_only(grpc);
        let uri: Uri = exporter
            .url()
            .parse()
            .map_err(|e| format!("invalid OTLP endpoint: {e}"))?;
        let mut map = HeaderMap::new();
        if grpc {
            map.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
            map.insert("te", HeaderValue::from_static("trailers"));
        } else {
            map.insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-protobuf"),
            );
        }
        map.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("rk6/", env!("CARGO_PKG_VERSION"))),
        );
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| format!("invalid header name \"{k}\""))?;
            let value =
                HeaderValue::from_str(v).map_err(|_| format!("invalid value of header \"{k}\""))?;
            map.insert(name, value);
        }
        Ok(Transport {
            client: client.build(connector),
            uri,
            grpc,
            headers: map,
            timeout,
        })
    }

    /// Sends one encoded request; the error says why it did not arrive.
    pub(crate) async fn export(&self, message: Vec<u8>) -> Result<(), String> {
        let body = if self.grpc {
            let mut framed = BytesMut::with_capacity(message.len() + 5);
            framed.put_u8(0);
            framed.put_u32(u32::try_from(message.len()).unwrap_or(u32::MAX));
            framed.put_slice(&message);
            framed.freeze()
        } else {
            Bytes::from(message)
        };
        let mut req = http::Request::new(Full::new(body));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = self.headers.clone();
        let exchange = async {
            let res = self.client.request(req).await.map_err(|e| describe(&e))?;
            let (parts, body) = res.into_parts();
            let collected = body.collect().await.map_err(|e| describe(&e))?;
            let trailers = collected.trailers().cloned().unwrap_or_default();
            let body = collected.to_bytes();
            if !self.grpc {
                return if parts.status.is_success() {
                    Ok(())
                } else {
                    let text = String::from_utf8_lossy(&body);
                    Err(format!(
                        "server returned HTTP status {} {}",
                        parts.status,
                        text.trim()
                    )
                    .trim_end()
                    .to_string())
                };
            }
            if !parts.status.is_success() {
                return Err(format!(
                    "rpc error: code = Unavailable desc = unexpected HTTP status code received from server: {}",
                    parts.status.as_u16()
                ));
            }
            // A failed call may answer with headers only ("trailers-only").
            let status = trailers
                .get("grpc-status")
                .or_else(|| parts.headers.get("grpc-status"));
            let message = trailers
                .get("grpc-message")
                .or_else(|| parts.headers.get("grpc-message"))
                .and_then(|m| m.to_str().ok())
                .map(|m| percent_decode_str(m).decode_utf8_lossy().into_owned())
                .unwrap_or_default();
            match status.and_then(|s| s.to_str().ok()).map(str::parse::<usize>) {
                Some(Ok(0)) => Ok(()),
                Some(Ok(code)) => Err(format!(
                    "rpc error: code = {} desc = {message}",
                    rk6_http::grpc::code::NAMES.get(code).copied().unwrap_or("Unknown")
                )),
                _ => Err("rpc error: code = Internal desc = server closed the stream without sending trailers".into()),
            }
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .unwrap_or_else(|_| Err("context deadline exceeded".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refused_and_silent_endpoints_say_why() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        for exporter in [
            Exporter::Grpc {
                endpoint: format!("127.0.0.1:{port}"),
                insecure: true,
            },
            Exporter::Http {
                endpoint: format!("127.0.0.1:{port}"),
                insecure: true,
                url_path: "/v1/metrics".into(),
            },
        ] {
            let t = Transport::new(
                &exporter,
                &[],
                &TlsSettings::default(),
                Duration::from_secs(5),
            )
            .unwrap();
            assert_eq!(
                t.export(Vec::new()).await.unwrap_err(),
                "dial: connection refused"
            );
        }
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let exporter = Exporter::Grpc {
            endpoint: silent.local_addr().unwrap().to_string(),
            insecure: true,
        };
        let hold = tokio::spawn(async move { silent.accept().await });
        let t = Transport::new(
            &exporter,
            &[],
            &TlsSettings::default(),
            Duration::from_millis(200),
        )
        .unwrap();
        assert_eq!(
            t.export(Vec::new()).await.unwrap_err(),
            "context deadline exceeded"
        );
        hold.abort();
        let bad = [("bad name".to_string(), "v".to_string())];
        assert!(Transport::new(
            &exporter,
            &bad,
            &TlsSettings::default(),
            Duration::from_secs(1)
        )
        .is_err());
    }
}
