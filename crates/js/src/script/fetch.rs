//! Downloading a remote module as k6 does: `URL?_k6=1` first, then the URL as written,
//! following redirects, trusting the system's roots and `SSL_CERT_FILE`/`SSL_CERT_DIR`.
//! Runs once per URL per test while VUs initialise, never on the request path, so it blocks
//! on a thread of its own.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rk6_http::{Client, ClientConfig, Request};
use url::Url;

/// k6 gives up on a module download after a minute.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// The HTTP client settings for module downloads, built on first use.
#[derive(Debug, Default)]
pub(crate) struct Fetcher {
    config: OnceLock<Arc<ClientConfig>>,
}

impl Fetcher {
    /// The body of `url`, or k6's reason for not having it (`not found: URL`, `wrong status
    /// code (N) for: URL`, or the transport error).
    pub(crate) fn get(&self, url: &Url) -> Result<Vec<u8>, String> {
        let config = self
            .config
            .get_or_init(|| {
                Arc::new(ClientConfig {
                    extra_root_certs_pem: rk6_http::trust::go_system_roots(|k| {
                        std::env::var(k).ok()
                    }),
                    timeout: FETCH_TIMEOUT,
                    ..ClientConfig::default()
                })
            })
            .clone();
        let mut marked = url.clone();
        let query = match url.query() {
            Some(q) if !q.is_empty() => format!("{q}&_k6=1"),
            _ => "_k6=1".to_string(),
        };
        marked.set_query(Some(&query));
        let url = url.clone();
        // The caller may be inside a VU's tokio runtime, which cannot block on another.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async move {
                let client = Client::new(config);
                // As k6: some servers dislike the unknown argument, so a failure is retried
                // without it and the second attempt's error is the one reported.
                match once(&client, marked).await {
                    Ok(body) => Ok(body),
                    Err(_) => once(&client, url).await,
                }
            })
        })
        .join()
        .unwrap_or_else(|_| Err("the download thread panicked".into()))
    }
}

async fn once(client: &Client, url: Url) -> Result<Vec<u8>, String> {
    let res = client.send(Request::get(url.clone())).await;
    if let Some(e) = &res.error {
        return Err(format!("Get \"{url}\": {}", e.log_text()));
    }
    match res.status {
        200 => Ok(res.body.to_vec()),
        404 => Err(format!("not found: {url}")),
        code => Err(format!("wrong status code ({code}) for: {url}")),
    }
}
