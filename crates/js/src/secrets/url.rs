//! The `url` secret source (k6 1.5): each secret is fetched over HTTP from a URL made from
//! a template with `{key}`, optionally picked out of a JSON response by a path; failures of
//! the server (5xx, 429, the network) are retried with a growing pause, and the requests are
//! rate-limited as k6's are.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rk6_http::{Client, ClientConfig, Request};
use serde_json::Value;
use url::Url;

use super::SecretSourceError;

/// The most of a response body k6 reads.
const MAX_BODY: usize = 24 * 1024;

/// One `url` source's settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UrlConfig {
    url_template: String,
    method: http::Method,
    headers: BTreeMap<String, String>,
    response_path: String,
    timeout: Duration,
    requests_per_minute: f64,
    burst: f64,
    max_retries: u32,
    retry_backoff: Duration,
}

impl UrlConfig {
    /// The settings of `--secret-source=url=…`: inline `key=value` pairs over a
    /// `config=FILE` (JSON) over the `K6_SECRET_SOURCE_URL_*` variables over k6's defaults.
    pub(crate) fn parse(
        inline: &str,
        cwd: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<UrlConfig, SecretSourceError> {
        let err = |m: String| SecretSourceError(m);
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        // Lowest first: the environment.
        for (var, key) in [
            ("K6_SECRET_SOURCE_URL_URL_TEMPLATE", "urlTemplate"),
            ("K6_SECRET_SOURCE_URL_METHOD", "method"),
            ("K6_SECRET_SOURCE_URL_RESPONSE_PATH", "responsePath"),
            ("K6_SECRET_SOURCE_URL_TIMEOUT", "timeout"),
            ("K6_SECRET_SOURCE_URL_MAX_RETRIES", "maxRetries"),
            ("K6_SECRET_SOURCE_URL_RETRY_BACKOFF", "retryBackoff"),
            (
                "K6_SECRET_SOURCE_URL_REQUESTS_PER_MINUTE_LIMIT",
                "requestsPerMinuteLimit",
            ),
            ("K6_SECRET_SOURCE_URL_REQUESTS_BURST", "requestsBurst"),
        ] {
            if let Some(v) = env(var).filter(|v| !v.is_empty()) {
                values.insert(key.into(), v);
            }
        }
        for (k, v) in std::env::vars() {
            if let Some(name) = k.strip_prefix("K6_SECRET_SOURCE_URL_HEADER_") {
                values.insert(format!("headers.{name}"), v);
            }
        }
        let mut pairs = Vec::new();
        for kv in inline.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| err(format!("parsing {kv:?}, needs =")))?;
            pairs.push((k.to_string(), v.to_string()));
        }
        if let Some((_, file)) = pairs.iter().find(|(k, _)| k == "config") {
            let text = std::fs::read_to_string(cwd.join(file))
                .map_err(|e| err(format!("reading the url secret source config {file}: {e}")))?;
            let json: Value = serde_json::from_str(&text)
                .map_err(|e| err(format!("parsing the url secret source config {file}: {e}")))?;
            for (k, v) in json.as_object().into_iter().flatten() {
                if k == "headers" {
                    for (h, hv) in v.as_object().into_iter().flatten() {
                        values.insert(format!("headers.{h}"), json_text(hv));
                    }
                } else {
                    values.insert(k.clone(), json_text(v));
                }
            }
        }
        for (k, v) in pairs.into_iter().filter(|(k, _)| k != "config") {
            values.insert(k, v);
        }
        let mut headers = BTreeMap::new();
        let mut config = UrlConfig {
            url_template: String::new(),
            method: http::Method::GET,
            headers: BTreeMap::new(),
            response_path: String::new(),
            timeout: Duration::from_secs(30),
            requests_per_minute: 300.0,
            burst: 10.0,
            max_retries: 3,
            retry_backoff: Duration::from_secs(1),
        };
        let duration = |k: &str, v: &str| -> Result<Duration, SecretSourceError> {
            let d = rk6_options::parse_go_duration(v)
                .map_err(|e| err(format!("invalid {k} {v:?}: {e}")))?;
            d.to_std()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| err(format!("{k} must be positive")))
        };
        let number = |k: &str, v: &str| -> Result<f64, SecretSourceError> {
            match v.parse::<f64>() {
                Ok(n) if n > 0.0 => Ok(n),
                _ => Err(err(format!("{k} must be positive"))),
            }
        };
        for (k, v) in values {
            match k.as_str() {
                "urlTemplate" => config.url_template = v,
                "method" => {
                    config.method = http::Method::from_bytes(v.to_uppercase().as_bytes())
                        .map_err(|_| err(format!("invalid method {v:?}")))?
                }
                "responsePath" => config.response_path = v,
                "timeout" => config.timeout = duration(&k, &v)?,
                "retryBackoff" => config.retry_backoff = duration(&k, &v)?,
                "requestsPerMinuteLimit" => config.requests_per_minute = number(&k, &v)?,
                "requestsBurst" => config.burst = number(&k, &v)?,
                "maxRetries" => {
                    config.max_retries = v
                        .parse()
                        .map_err(|_| err(format!("invalid maxRetries {v:?}")))?
                }
                h if h.starts_with("headers.") => {
                    headers.insert(h["headers.".len()..].to_string(), v);
                }
                other => return Err(err(format!("unknown configuration key: {other:?}"))),
            }
        }
        config.headers = headers;
        if config.url_template.is_empty() {
            return Err(err("urlTemplate is required".into()));
        }
        if !config.url_template.contains("{key}") {
            return Err(err("urlTemplate must contain {key}".into()));
        }
        if Url::parse(&config.url_template.replace("{key}", "k")).is_err() {
            return Err(err(
                "urlTemplate must be an absolute URL with a scheme".into()
            ));
        }
        Ok(config)
    }
}

fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A `url` source: its settings, a client built on first use and the rate limiter.
#[derive(Debug)]
pub(crate) struct UrlSource {
    config: UrlConfig,
    client: std::sync::OnceLock<Arc<ClientConfig>>,
    bucket: Mutex<(f64, Instant)>,
}

impl UrlSource {
    pub(crate) fn new(config: UrlConfig) -> UrlSource {
        let burst = config.burst;
        UrlSource {
            config,
            client: std::sync::OnceLock::new(),
            bucket: Mutex::new((burst, Instant::now())),
        }
    }

    /// Waits for a token of the rate limit (requests per minute, up to a burst).
    fn take_token(&self) {
        loop {
            let wait = {
                let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
                let per_sec = self.config.requests_per_minute / 60.0;
                let now = Instant::now();
                b.0 =
                    (b.0 + now.duration_since(b.1).as_secs_f64() * per_sec).min(self.config.burst);
                b.1 = now;
                if b.0 >= 1.0 {
                    b.0 -= 1.0;
                    return;
                }
                Duration::from_secs_f64((1.0 - b.0) / per_sec)
            };
            std::thread::sleep(wait);
        }
    }

    /// The secret `key`, or why there is none. Blocks: it runs on a thread of its own
    /// (the caller may be inside a VU's runtime), as module downloads do.
    pub(crate) fn get(&self, key: &str) -> Result<String, String> {
        let encoded: String = url::form_urlencoded::byte_serialize(key.as_bytes()).collect();
        let url = Url::parse(&self.config.url_template.replace("{key}", &encoded))
            .map_err(|e| e.to_string())?;
        let config = self
            .client
            .get_or_init(|| {
                Arc::new(ClientConfig {
                    extra_root_certs_pem: rk6_http::trust::go_system_roots(|k| {
                        std::env::var(k).ok()
                    }),
                    timeout: self.config.timeout,
                    ..ClientConfig::default()
                })
            })
            .clone();
        let mut attempt = 0;
        loop {
            self.take_token();
            let (retry, result) = self.once(&url, config.clone());
            if !retry || attempt >= self.config.max_retries {
                return result;
            }
            // Doubling pauses, as k6's, with up to a second of jitter.
            let mut b = [0u8; 2];
            let _ = getrandom::getrandom(&mut b);
            let jitter = Duration::from_millis(u64::from(u16::from_le_bytes(b)) % 1000);
            std::thread::sleep(self.config.retry_backoff * 2u32.pow(attempt) + jitter);
            attempt += 1;
        }
    }

    /// One request: whether to retry, and the value or the error.
    fn once(&self, url: &Url, config: Arc<ClientConfig>) -> (bool, Result<String, String>) {
        let mut req = Request::new(self.config.method.clone(), url.clone());
        req.headers = self.config.headers.clone().into_iter().collect();
        let response_path = self.config.response_path.clone();
        let shown = url.to_string();
        let outcome = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(runtime.block_on(async move { Client::new(config).send(req).await }))
        })
        .join()
        .unwrap_or_else(|_| Err("the secret request thread panicked".into()));
        let res = match outcome {
            Ok(r) => r,
            Err(e) => return (false, Err(e)),
        };
        if let Some(e) = &res.error {
            return (
                true,
                Err(format!(
                    "fetching the secret from {shown}: {}",
                    e.log_text()
                )),
            );
        }
        if res.status != 200 {
            let retry = res.status >= 500 || res.status == 429;
            return (
                retry,
                Err(format!(
                    "fetching the secret from {shown}: status {}",
                    res.status
                )),
            );
        }
        let body = &res.body[..res.body.len().min(MAX_BODY)];
        let body = String::from_utf8_lossy(body).into_owned();
        if response_path.is_empty() {
            return (false, Ok(body));
        }
        (false, pick(&body, &response_path))
    }
}

/// The string at `path` (dot-separated keys and array indexes, as a gjson path's simple
/// form) in the JSON `body`.
fn pick(body: &str, path: &str) -> Result<String, String> {
    let json: Value =
        serde_json::from_str(body).map_err(|e| format!("parsing the secret response: {e}"))?;
    let mut at = &json;
    for part in path.split('.') {
        at = match at {
            Value::Array(a) => part.parse::<usize>().ok().and_then(|i| a.get(i)),
            Value::Object(o) => o.get(part),
            _ => None,
        }
        .ok_or_else(|| format!("the secret response has nothing at {path:?}"))?;
    }
    match at {
        Value::String(s) => Ok(s.clone()),
        _ => Err(format!(
            "the value at {path:?} of the secret response is not a string"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(inline: &str) -> Result<UrlConfig, String> {
        UrlConfig::parse(inline, Path::new("."), &|_| None).map_err(|e| e.to_string())
    }

    #[test]
    fn config_as_k6_reads_it() {
        let c = parse("urlTemplate=http://127.0.0.1:1/s/{key},responsePath=data.value,headers.Authorization=Bearer x,timeout=5s").unwrap();
        assert_eq!(c.response_path, "data.value");
        assert_eq!(
            c.headers.get("Authorization").map(String::as_str),
            Some("Bearer x")
        );
        assert_eq!(c.timeout, Duration::from_secs(5));
        assert_eq!(parse("method=GET").unwrap_err(), "urlTemplate is required");
        assert_eq!(
            parse("urlTemplate=http://x/").unwrap_err(),
            "urlTemplate must contain {key}"
        );
        assert_eq!(
            parse("urlTemplate=/s/{key}").unwrap_err(),
            "urlTemplate must be an absolute URL with a scheme"
        );
        assert_eq!(
            parse("urlTemplate=http://x/{key},bogus=1").unwrap_err(),
            "unknown configuration key: \"bogus\""
        );
        assert_eq!(
            parse("urlTemplate=http://x/{key},timeout=0s").unwrap_err(),
            "timeout must be positive"
        );
    }

    #[test]
    fn the_response_path_picks_a_string() {
        assert_eq!(
            pick(r#"{"data":{"v":["a","b"]}}"#, "data.v.1").unwrap(),
            "b"
        );
        assert!(pick(r#"{"data":{"v":1}}"#, "data.v").is_err());
        assert!(pick(r#"{"data":{}}"#, "data.v").is_err());
    }
}
