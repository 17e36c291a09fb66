//! Request header assembly and response header presentation.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use url::{Position, Url};

use crate::cookies::CookieJar;
use crate::error::{self, HttpError};
use crate::redirect::HopRequest;
use crate::response_head::HeaderFields;

/// What besides the hop itself shapes the request headers.
pub(crate) struct HeaderInputs<'a> {
    pub(crate) user_agent: Option<&'a str>,
    pub(crate) jar: &'a CookieJar,
    pub(crate) request_cookies: &'a [(String, String)],
    /// `noConnectionReuse`: ask the server to close, as Go's `DisableKeepAlives` does.
    pub(crate) close: bool,
}

/// A request head as the client sends it: on HTTP/1 written as it is (no `http::Request`,
/// header map or URI parse per request, ~2 k instructions), on HTTP/2 made into hyper's
/// request by [`OutRequest::into_http`].
pub(crate) struct OutRequest<'a> {
    pub(crate) method: &'a http::Method,
    /// The origin-form target (`/path?query`) on HTTP/1, the absolute URI on HTTP/2.
    pub(crate) target: std::borrow::Cow<'a, str>,
    /// In wire order; on HTTP/1 each name's values are adjacent, as a header map keeps them.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) body: &'a Bytes,
}

impl OutRequest<'_> {
    /// hyper's request for an HTTP/2 stream.
    pub(crate) fn into_http(self) -> Result<http::Request<Bytes>, HttpError> {
        let mut req = http::Request::builder()
            .method(self.method.clone())
            .uri(self.target.as_ref())
            .version(http::Version::HTTP_2)
            .body(self.body.clone())
            .map_err(|e| HttpError::new(error::INVALID_URL, format!("invalid request: {e}")))?;
        let map = req.headers_mut();
        map.reserve(self.headers.len());
        for (k, v) in self.headers {
            map.append(k, v);
        }
        Ok(req)
    }

    /// Whether a `Connection` header has the `close` token.
    pub(crate) fn asks_close(&self) -> bool {
        asks_close(&self.headers)
    }
}

/// Builds the request head for one hop on an HTTP/1 (`h2 == false`) or HTTP/2 connection.
pub(crate) fn build_request<'a>(
    hop: &'a HopRequest,
    h2: bool,
    inputs: HeaderInputs<'_>,
) -> Result<OutRequest<'a>, HttpError> {
    let url = &hop.url;
    // Collected as pairs so HTTP/1 can put them in Go's order.
    let mut pairs = Vec::with_capacity(hop.headers.len() + 4);
    let mut host = std::borrow::Cow::Borrowed(host_header(url));
    let mut has_ua = false;
    let mut has_len = false;
    let mut has_auth = false;
    let mut user_cookie: Option<&str> = None;
    for (k, v) in &hop.headers {
        if k.eq_ignore_ascii_case("host") {
            host = std::borrow::Cow::Owned(v.clone());
            continue;
        }
        if k.eq_ignore_ascii_case("cookie") {
            user_cookie = Some(v);
            continue;
        }
        has_ua |= k.eq_ignore_ascii_case("user-agent");
        has_len |= k.eq_ignore_ascii_case("content-length");
        has_auth |= k.eq_ignore_ascii_case("authorization");
        pairs.push((name(k)?, value(k, v)?));
    }
    if !h2 {
        // hyper's low-level client adds no Host; HTTP/2 carries it as :authority instead.
        pairs.push((http::header::HOST, recent_value("Host", &host)?));
    }
    if let (Some(ua), false) = (inputs.user_agent, has_ua) {
        pairs.push((http::header::USER_AGENT, recent_value("User-Agent", ua)?));
    }
    // Go sends Content-Length: 0 for body-less POST/PUT/PATCH and omits it otherwise.
    let wants_zero = matches!(hop.method.as_str(), "POST" | "PUT" | "PATCH");
    if !has_len && (!hop.body.is_empty() || wants_zero) {
        pairs.push((
            http::header::CONTENT_LENGTH,
            HeaderValue::from(hop.body.len()),
        ));
    }
    if !has_auth && !url.username().is_empty() {
        let v = basic_auth(url);
        pairs.push((http::header::AUTHORIZATION, value("Authorization", &v)?));
    }
    // Order as Go builds it: the user's Cookie header, request-scoped cookies, then the jar.
    let mut cookie = String::new();
    let mut add = |segment: &str| {
        if !segment.is_empty() {
            if !cookie.is_empty() {
                cookie.push_str("; ");
            }
            cookie.push_str(segment);
        }
    };
    if hop.sensitive {
        add(user_cookie.unwrap_or_default());
        for (n, v) in inputs.request_cookies {
            add(&format!("{n}={v}"));
        }
    }
    // Most jars are empty; asking one still matches the URL against its rules.
    if inputs.jar.store().iter_any().next().is_some() {
        for (n, v) in inputs.jar.store().get_request_values(url) {
            add(&format!("{n}={v}"));
        }
    }
    if !cookie.is_empty() {
        pairs.push((http::header::COOKIE, value("Cookie", &cookie)?));
    }
    if !h2 {
        // Go's order: Host, User-Agent, Content-Length, then the others by name (a stable
        // sort keeps each name's values in order). Sorting the lower-case names sorts their
        // canonical forms too: both have a capital exactly after each hyphen.
        pairs.sort_by(|a, b| {
            let rank =
                |n: &HeaderName| LEADING.iter().position(|l| l == n).unwrap_or(LEADING.len());
            rank(&a.0)
                .cmp(&rank(&b.0))
                .then_with(|| a.0.as_str().cmp(b.0.as_str()))
        });
    }
    if !h2 && inputs.close && !asks_close(&pairs) {
        // Go's transport adds it after the request's own headers, beside a `Connection` the
        // script set unless that already says close: next to the script's value (a header
        // map keeps a name's values together, and so did this list before), else last.
        let at = pairs
            .iter()
            .rposition(|(k, _)| k == http::header::CONNECTION)
            .map_or(pairs.len(), |i| i + 1);
        pairs.insert(
            at,
            (http::header::CONNECTION, HeaderValue::from_static("close")),
        );
    }
    let target = if h2 {
        std::borrow::Cow::Owned(format!(
            "{}://{}{}",
            url.scheme(),
            host,
            path_and_query(url)
        ))
    } else {
        std::borrow::Cow::Borrowed(path_and_query(url))
    };
    Ok(OutRequest {
        method: &hop.method,
        target,
        headers: pairs,
        body: &hop.body,
    })
}

/// Whether a `Connection` header has the `close` token.
fn asks_close(headers: &[(HeaderName, HeaderValue)]) -> bool {
    headers
        .iter()
        .filter(|(k, _)| k == http::header::CONNECTION)
        .filter_map(|(_, v)| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case("close"))
}

/// The headers every HTTP/1 request leads with, in Go's order.
const LEADING: [HeaderName; 3] = [
    http::header::HOST,
    http::header::USER_AGENT,
    http::header::CONTENT_LENGTH,
];

/// The request target of an HTTP/1 request line (`/` for an empty path).
pub(crate) fn path_and_query(url: &Url) -> &str {
    let p = &url[Position::BeforePath..Position::AfterQuery];
    if p.is_empty() {
        "/"
    } else {
        p
    }
}

/// `host[:port]` with the port only when it is not the scheme default: the URL's own
/// text, which leaves a default port out and brackets an IPv6 host.
pub(crate) fn host_header(url: &Url) -> &str {
    &url[Position::BeforeHost..Position::AfterPort]
}

/// [`value`], reused from a per-thread table of recent values: a VU sends the same
/// `Host` and `User-Agent` with every request, and checking and copying them again cost
/// ~500 instructions a request.
fn recent_value(k: &str, v: &str) -> Result<HeaderValue, HttpError> {
    /// Bound on the table: scripts with ever-new hosts must not grow it without end.
    const MAX_RECENT: usize = 256;
    thread_local! {
        static RECENT: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, HeaderValue>> =
            std::cell::RefCell::default();
    }
    RECENT.with_borrow_mut(|recent| {
        if let Some(hv) = recent.get(v) {
            return Ok(hv.clone());
        }
        let hv = value(k, v)?;
        if recent.len() >= MAX_RECENT {
            recent.clear();
        }
        recent.insert(v.into(), hv.clone());
        Ok(hv)
    })
}

pub(crate) fn name(k: &str) -> Result<HeaderName, HttpError> {
    HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
        HttpError::new(
            error::GENERIC,
            format!("net/http: invalid header field name {k:?}"),
        )
    })
}

pub(crate) fn value(k: &str, v: &str) -> Result<HeaderValue, HttpError> {
    HeaderValue::from_str(v).map_err(|_| {
        HttpError::new(
            error::GENERIC,
            format!("net/http: invalid header field value for {k:?}"),
        )
    })
}

/// Response headers as k6 shows them: canonical names, repeated values joined with ", ".
pub fn response_headers(fields: &HeaderFields) -> Vec<(String, String)> {
    fields
        .grouped()
        .map(|(name, values)| {
            let mut joined = String::new();
            for v in values {
                if !joined.is_empty() {
                    joined.push_str(", ");
                }
                joined.push_str(&String::from_utf8_lossy(v));
            }
            (canonical(name), joined)
        })
        .collect()
}

/// The request headers a script sees, as k6 shows them: the script's own, the
/// `User-Agent` and the `Cookie` sent, but none of those the transport derives (`Host`,
/// `Content-Length`, `Connection`, a Basic `Authorization` from the URL). Canonical names,
/// one entry per value.
pub fn script_view(
    sent: &[(HeaderName, HeaderValue)],
    user: &[(String, String)],
) -> Vec<(String, String)> {
    sent.iter()
        .filter(|(k, _)| {
            *k == http::header::USER_AGENT
                || *k == http::header::COOKIE
                || user.iter().any(|(n, _)| n.eq_ignore_ascii_case(k.as_str()))
        })
        .map(|(k, v)| {
            (
                canonical(k.as_str()),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// Go's `CanonicalMIMEHeaderKey`: `content-type` → `Content-Type`; names with bytes outside
/// the token set are returned unchanged.
pub fn canonical(name: &str) -> String {
    let is_token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if !name.bytes().all(is_token) {
        return name.to_owned();
    }
    let mut upper = true;
    name.bytes()
        .map(|b| {
            let c = if upper {
                b.to_ascii_uppercase()
            } else {
                b.to_ascii_lowercase()
            };
            upper = b == b'-';
            c as char
        })
        .collect()
}

/// URL userinfo as the text it encodes (invalid escapes kept as they are, invalid UTF-8
/// replaced).
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The URL's user name and password, decoded (an absent password is empty).
pub(crate) fn credentials(url: &Url) -> (String, String) {
    let user = percent_decode(url.username());
    let pass = url.password().map(percent_decode).unwrap_or_default();
    (user, pass)
}

/// `Basic <base64(user:pass)>` from the URL's credentials.
pub(crate) fn basic_auth(url: &Url) -> String {
    use base64::Engine as _;
    let (user, pass) = credentials(url);
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
    format!("Basic {token}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_header_has_the_port_only_when_not_the_default() {
        let host = |u: &str| host_header(&Url::parse(u).unwrap()).to_owned();
        assert_eq!(host("http://example.test/"), "example.test");
        assert_eq!(host("https://example.test:443/"), "example.test");
        assert_eq!(host("http://127.0.0.1:8080/x"), "127.0.0.1:8080");
        assert_eq!(host("http://h:1/"), "h:1");
        assert_eq!(host("http://h:65535/"), "h:65535");
        assert_eq!(host("https://[::1]:10/"), "[::1]:10");
        assert_eq!(host("http://u:p@h:81/"), "h:81");
        assert_eq!(host("http://u@h/"), "h");
    }

    #[test]
    fn header_values_are_refused_where_go_refuses_them() {
        // Go's net/http (k6) takes tabs and non-ASCII text, refuses other control bytes.
        for ok in ["a\tb", "héllo", "日本", ""] {
            assert!(value("X-T", ok).is_ok(), "{ok:?}");
        }
        for bad in ["a\nb", "a\rb", "a\0b", "a\x7fb"] {
            let e = value("X-T", bad).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str()),
                (1000, r#"net/http: invalid header field value for "X-T""#),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn canonical_names() {
        assert_eq!(canonical("content-type"), "Content-Type");
        assert_eq!(canonical("x-FOO-bar"), "X-Foo-Bar");
        assert_eq!(canonical("bad name"), "bad name");
    }

    #[test]
    fn script_view_hides_transport_headers() {
        let mut sent = Vec::new();
        for (k, v) in [
            ("host", "h"),
            ("user-agent", "ua"),
            ("content-length", "4"),
            ("authorization", "Basic x"),
            ("x-a", "1"),
            ("cookie", "c=1"),
        ] {
            sent.push((name(k).unwrap(), value(k, v).unwrap()));
        }
        let user = [("X-A".to_owned(), "1".to_owned())];
        assert_eq!(
            script_view(&sent, &user),
            [
                ("User-Agent".to_owned(), "ua".to_owned()),
                ("X-A".to_owned(), "1".to_owned()),
                ("Cookie".to_owned(), "c=1".to_owned())
            ]
        );
        let own_auth = [("authorization".to_owned(), "Basic x".to_owned())];
        assert!(script_view(&sent, &own_auth).contains(&("Authorization".into(), "Basic x".into())));
    }

    #[test]
    fn basic_auth_encoding() {
        let basic = |url: &str| basic_auth(&Url::parse(url).unwrap());
        assert_eq!(basic("http://user:pass@h/"), "Basic dXNlcjpwYXNz");
        assert_eq!(basic("http://a:bc@h/"), "Basic YTpiYw==");
        assert_eq!(basic("http://ab:cd@h/"), "Basic YWI6Y2Q=");
        assert_eq!(basic("http://us%40er:p%3Aw@h/"), "Basic dXNAZXI6cDp3");
        assert_eq!(percent_decode("a%40b%"), "a@b%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%%41%C3%A9%FF"), "%Aé\u{fffd}");
    }
}

#[cfg(test)]
mod wire_order_tests {
    use super::*;
    use crate::redirect::HopRequest;

    fn built(headers: &[(&str, &str)], close: bool) -> Vec<(String, String)> {
        let hop = HopRequest {
            method: http::Method::GET,
            url: Url::parse("http://u:p@127.0.0.1:8080/x").unwrap(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: Bytes::new(),
            sensitive: true,
        };
        let jar = CookieJar::default();
        let inputs = HeaderInputs {
            user_agent: Some("ua"),
            jar: &jar,
            request_cookies: &[],
            close,
        };
        let req = build_request(&hop, false, inputs).unwrap();
        req.headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
            .collect()
    }

    #[test]
    fn leads_with_host_agent_then_sorts() {
        let got = built(
            &[("zz", "z"), ("Accept", "*/*"), ("b", "1"), ("b", "2")],
            false,
        );
        let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "host",
                "user-agent",
                "accept",
                "authorization",
                "b",
                "b",
                "zz"
            ]
        );
        assert_eq!((got[4].1.as_str(), got[5].1.as_str()), ("1", "2"));
    }

    #[test]
    fn connection_close_joins_a_users_connection_or_comes_last() {
        let got = built(&[("Connection", "keep-alive"), ("zz", "z")], true);
        let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "host",
                "user-agent",
                "authorization",
                "connection",
                "connection",
                "zz"
            ]
        );
        assert_eq!(
            (got[3].1.as_str(), got[4].1.as_str()),
            ("keep-alive", "close")
        );
        let got = built(&[("Connection", "Close"), ("zz", "z")], true);
        assert_eq!(got.iter().filter(|(k, _)| k == "connection").count(), 1);
        let got = built(&[("zz", "z")], true);
        assert_eq!(
            got.last().unwrap(),
            &("connection".to_string(), "close".to_string())
        );
    }
}
