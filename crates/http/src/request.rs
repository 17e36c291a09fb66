//! A request as the script asked for it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use url::Url;

use crate::auth::Auth;
use crate::cookies::CookieJar;

/// A cookie jar that requests of one VU (running concurrently) can share.
pub type SharedJar = Arc<Mutex<CookieJar>>;

/// One request as the script asked for it.
#[derive(Clone, Debug)]
pub struct Request {
    /// HTTP method.
    pub method: http::Method,
    /// Target URL (`http` or `https`).
    pub url: Url,
    /// User headers as given; `Host` here overrides the URL's host.
    pub headers: Vec<(String, String)>,
    /// Request body; empty means none.
    pub body: Bytes,
    /// Overall deadline incl. redirects and body; `None` uses [`ClientConfig::timeout`](crate::ClientConfig::timeout).
    pub timeout: Option<Duration>,
    /// Redirect limit; `None` uses [`ClientConfig::max_redirects`](crate::ClientConfig::max_redirects), 0 returns the 3xx.
    pub max_redirects: Option<u32>,
    /// Request-scoped cookies, sent after the user's `Cookie` header and before the jar's.
    pub cookies: Vec<(String, String)>,
    /// Read and drop the body (its bytes still count) instead of buffering it.
    pub discard_body: bool,
    /// How the URL's credentials authenticate the request.
    pub auth: Auth,
    /// A jar to use instead of the client's (the `jar` param).
    pub jar: Option<SharedJar>,
    /// Overrides [`ClientConfig::h2c`](crate::ClientConfig::h2c) for this request (the `h2c` param).
    pub h2c: Option<bool>,
}

impl Request {
    /// A request with no headers, body or overrides.
    pub fn new(method: http::Method, url: Url) -> Self {
        Self {
            method,
            url,
            headers: Vec::new(),
            body: Bytes::new(),
            timeout: None,
            max_redirects: None,
            cookies: Vec::new(),
            discard_body: false,
            auth: Auth::Basic,
            jar: None,
            h2c: None,
        }
    }

    /// Shorthand for a GET.
    pub fn get(url: Url) -> Self {
        Self::new(http::Method::GET, url)
    }
}
