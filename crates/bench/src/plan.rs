//! Validation of a [`BenchConfig`] into the [`Plan`] the run follows.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use rk6_http::{Request, RequestBytes};
use rk6_metrics::stat::Stat;
use rk6_metrics::threshold_parser::{parse_expression, Expression};

use crate::config::BenchConfig;

/// A validated `rk6 bench` invocation.
pub(crate) struct Plan {
    pub(crate) request: Request,
    /// The request serialized for the lean HTTP/1.1 path; `None` for `--h2c` and https.
    pub(crate) lean: Option<Arc<RequestBytes>>,
    pub(crate) connections: usize,
    pub(crate) threads: usize,
    pub(crate) duration: Duration,
    pub(crate) timeout: Duration,
    pub(crate) rate: Option<f64>,
    /// (text as given, parsed).
    pub(crate) thresholds: Vec<(String, Expression)>,
    pub(crate) insecure: bool,
}

/// Checks every flag; the error names the flag at fault.
pub(crate) fn validate(args: &BenchConfig) -> Result<Plan, String> {
    let duration =
        rk6_options::parse_duration(&args.duration).map_err(|e| format!("--duration: {e}"))?;
    if duration.is_zero() {
        return Err("--duration must be greater than 0".into());
    }
    let timeout =
        rk6_options::parse_duration(&args.timeout).map_err(|e| format!("--timeout: {e}"))?;
    if timeout.is_zero() {
        return Err("--timeout must be greater than 0".into());
    }
    if args.connections == 0 {
        return Err("--connections must be at least 1".into());
    }
    if args.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if let Some(rate) = args.rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!("--rate must be a positive number, got {rate}"));
        }
    }
    let method = Method::from_bytes(args.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| format!("invalid --method {:?}", args.method))?;
    let mut request = Request::new(method, parse_url(&args.url)?);
    if !matches!(request.url.scheme(), "http" | "https") || request.url.host_str().is_none() {
        return Err(format!(
            "invalid URL {:?}: only http:// and https:// URLs are supported",
            args.url
        ));
    }
    for header in &args.headers {
        let (name, value) = header
            .split_once(':')
            .filter(|(name, _)| !name.trim().is_empty())
            .ok_or_else(|| format!("invalid --header {header:?}: expected \"Name: value\""))?;
        request
            .headers
            .push((name.trim().to_owned(), value.trim().to_owned()));
    }
    if let Some(body) = &args.body {
        request.body = Bytes::from(body.clone());
    }
    if args.h2c {
        if request.url.scheme() != "http" {
            return Err(
                "--h2c needs an http:// URL (https:// negotiates HTTP/2 by ALPN)".to_owned(),
            );
        }
        request.h2c = Some(true);
    }
    request.max_redirects = Some(0);
    request.discard_body = true;
    // The lean path speaks HTTP/1.1 over plain TCP only: h2c needs HTTP/2 framing, and an
    // https origin may negotiate HTTP/2 by ALPN, which only the client can follow.
    let lean = if request.url.scheme() == "http" && !args.h2c {
        let bytes = RequestBytes::new(
            &request.method,
            &request.url,
            &request.headers,
            &request.body,
        )
        .map_err(|e| format!("invalid request: {e}"))?;
        Some(Arc::new(bytes))
    } else {
        None
    };
    let thresholds = args
        .thresholds
        .iter()
        .map(|text| {
            let expr =
                parse_expression(text).map_err(|e| format!("invalid --threshold {text:?}: {e}"))?;
            match expr.stat {
                Stat::Avg
                | Stat::Min
                | Stat::Max
                | Stat::Med
                | Stat::Percentile(_)
                | Stat::Count => Ok((text.trim().to_owned(), expr)),
                _ => Err(format!(
                    "invalid --threshold {text:?}: http_req_duration supports avg, min, med, max, \
                     count and p(N)"
                )),
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Plan {
        request,
        lean,
        connections: args.connections,
        threads: args.threads,
        duration,
        timeout,
        rate: args.rate,
        thresholds,
        insecure: args.insecure_skip_tls_verify,
    })
}

/// Parses the target URL (into `rk6_http`'s URL type, whatever crate provides it).
fn parse_url<T: FromStr>(text: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e| format!("invalid URL {text:?}: {e}"))
}
