//! Deciding and building the next hop of a redirect chain (Go `net/http` client rules).

use bytes::Bytes;
use http::Method;
use url::Url;

use crate::error::{self, HttpError};

/// The request of one hop: what changes from hop to hop.
#[derive(Clone, Debug)]
pub(crate) struct HopRequest {
    pub(crate) method: Method,
    pub(crate) url: Url,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Bytes,
    /// Whether user `Cookie`/`Authorization` headers and request-scoped cookies still apply
    /// (false once the chain left the original host and its subdomains).
    pub(crate) sensitive: bool,
}

/// Statuses Go's client follows.
pub(crate) fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Builds the hop that follows a redirect response to `prev`.
pub(crate) fn next_hop(
    prev: &HopRequest,
    first_host: &str,
    status: u16,
    location: &str,
) -> Result<HopRequest, HttpError> {
    let url = prev.url.join(location).map_err(|e| {
        HttpError::new(
            error::GENERIC,
            format!("failed to parse Location header {location:?}: {e}"),
        )
    })?;
    // 301/302/303 turn anything but GET/HEAD into a body-less GET; 307/308 replay as is.
    let keep =
        matches!(status, 307 | 308) || prev.method == Method::GET || prev.method == Method::HEAD;
    let method = if keep {
        prev.method.clone()
    } else {
        Method::GET
    };
    let body = if matches!(status, 307 | 308) {
        prev.body.clone()
    } else {
        Bytes::new()
    };
    let sensitive = prev.sensitive && url.host_str().is_some_and(|h| same_or_sub(h, first_host));

    let mut headers: Vec<(String, String)> = prev
        .headers
        .iter()
        .filter(|(k, _)| {
            let drop_body_header = body.is_empty()
                && (k.eq_ignore_ascii_case("content-type")
                    || k.eq_ignore_ascii_case("content-length")
                    || k.eq_ignore_ascii_case("content-encoding"));
            let drop_sensitive = !sensitive
                && (k.eq_ignore_ascii_case("authorization")
                    || k.eq_ignore_ascii_case("www-authenticate")
                    || k.eq_ignore_ascii_case("cookie")
                    || k.eq_ignore_ascii_case("cookie2"));
            !(drop_body_header || drop_sensitive || k.eq_ignore_ascii_case("referer"))
        })
        .cloned()
        .collect();
    let explicit_ref = prev
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("referer"));
    if let Some(r) = explicit_ref {
        headers.push(r.clone());
    } else if let Some(r) = referer(&prev.url, &url) {
        headers.push(("Referer".to_owned(), r));
    }
    Ok(HopRequest {
        method,
        url,
        headers,
        body,
        sensitive,
    })
}

/// The Referer Go sends: the previous URL without fragment and credentials, never https→http.
fn referer(prev: &Url, next: &Url) -> Option<String> {
    if prev.scheme() == "https" && next.scheme() == "http" {
        return None;
    }
    let mut r = prev.clone();
    r.set_fragment(None);
    let _ = r.set_username("");
    let _ = r.set_password(None);
    Some(r.to_string())
}

/// True if `host` equals `origin` or is a subdomain of it.
fn same_or_sub(host: &str, origin: &str) -> bool {
    host.eq_ignore_ascii_case(origin)
        || (host.len() > origin.len()
            && host.as_bytes()[host.len() - origin.len() - 1] == b'.'
            && host[host.len() - origin.len()..].eq_ignore_ascii_case(origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(method: Method, url: &str) -> HopRequest {
        HopRequest {
            method,
            url: Url::parse(url).unwrap(),
            headers: vec![
                ("Content-Type".into(), "text/plain".into()),
                ("Authorization".into(), "x".into()),
            ],
            body: Bytes::from_static(b"data"),
            sensitive: true,
        }
    }

    #[test]
    fn post_302_becomes_get() {
        let n = next_hop(&hop(Method::POST, "http://a.test/x#f"), "a.test", 302, "/y").unwrap();
        assert_eq!(n.method, Method::GET);
        assert!(n.body.is_empty());
        assert_eq!(n.url.as_str(), "http://a.test/y");
        assert!(n.headers.iter().all(|(k, _)| k != "Content-Type"));
        assert!(n
            .headers
            .contains(&("Referer".into(), "http://a.test/x".into())));
    }

    #[test]
    fn put_307_keeps_and_cross_host_drops_auth() {
        let n = next_hop(
            &hop(Method::PUT, "https://a.test/x"),
            "a.test",
            307,
            "http://b.test/",
        )
        .unwrap();
        assert_eq!(n.method, Method::PUT);
        assert_eq!(&n.body[..], b"data");
        assert!(!n.sensitive);
        assert!(n
            .headers
            .iter()
            .all(|(k, _)| k != "Authorization" && k != "Referer"));
        assert!(same_or_sub("api.a.test", "a.test") && !same_or_sub("xa.test", "a.test"));
    }
}
