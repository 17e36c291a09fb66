//! The metric samples of `k6/http` requests: one set of `http_req*` samples per hop, tagged
//! as k6 tags them, and rk6's `http_conns_opened` for a hop that opened a connection.

use std::time::{Duration, SystemTime};

use http::Method;
use rk6_http::{Auth, Response};
use rk6_metrics::builtin;

use super::callback::StatusRanges;
use crate::host::tags::{Pairs, TagContext};
use crate::host::Host;

/// The samples of a request refused before it reached the network (a URL that is not
/// http(s)): one `http_reqs`, zero timings, and `http_req_failed` under a callback, tagged
/// like any failed request (`status` 0, the error and its code).
pub(super) fn emit_refused(
    host: &Host,
    (tags, callback): (&RequestTags, Option<StatusRanges>),
    method: &Method,
    url: &str,
    err: &rk6_http::HttpError,
) {
    let context = host.tags.borrow();
    let code = itoa_u32(err.code);
    let ok = callback.map(|_| false);
    let mut pairs = Pairs::new();
    hop_pairs(
        &context,
        tags,
        HopTags {
            proto: "",
            status: "0",
            method: method.as_str(),
            url,
            ok,
            tls_version: "",
            error: Some(err.message.as_str()),
            error_code: code.as_str(),
        },
        &mut pairs,
    );
    let mut samples = host.samples.borrow_mut();
    let tags = samples.tags(&pairs);
    let now = SystemTime::now();
    let timings = rk6_http::Timings::default();
    push_hop(&mut samples, &tags, &timings, ok, now);
    first_response(host, &mut samples, &tags, now);
}

/// `first_response_corrected` (rk6's own): the first request an open-model iteration made
/// ended (a response or an error), measured from the iteration's scheduled start.
fn first_response(
    host: &crate::host::Host,
    samples: &mut crate::host::samples::SampleBuffer,
    tags: &rk6_metrics::TagSet,
    now: SystemTime,
) {
    if let Some(planned) = host.first_response_due.take() {
        let waited = tokio::time::Instant::now().saturating_duration_since(planned);
        samples.push(
            builtin::FIRST_RESPONSE_CORRECTED,
            tags.clone(),
            waited.as_secs_f64() * 1000.0,
            now,
        );
    }
}

/// Whether `status` falls in one of the callback's inclusive ranges.
fn expected(ranges: &[(u16, u16)], status: u16) -> bool {
    ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&status))
}

/// `url` with its credentials removed (`mask == None`) or replaced by `mask`; borrowed
/// when it has none.
pub(super) fn without_credentials<'a>(
    url: &'a url::Url,
    mask: Option<&str>,
) -> std::borrow::Cow<'a, url::Url> {
    if url.username().is_empty() && url.password().is_none() {
        return std::borrow::Cow::Borrowed(url);
    }
    let mut out = url.clone();
    let _ = out.set_username(mask.unwrap_or_default());
    let _ = out.set_password(mask.filter(|_| url.password().is_some()));
    std::borrow::Cow::Owned(out)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One set of `http_req*` samples per hop, tagged as k6 tags them. Without a response
/// callback there is neither an `expected_response` tag nor an `http_req_failed` sample.
pub(super) fn emit(
    host: &Host,
    tags: &RequestTags,
    resp: &Response,
    callback: Option<&[(u16, u16)]>,
    auth: Auth,
) {
    let context = host.tags.borrow();
    let mut samples = host.samples.borrow_mut();
    let now = SystemTime::now();
    let mut sent = 0;
    let mut received = 0;
    for (i, hop) in resp.hops.iter().enumerate() {
        sent += hop.bytes_sent;
        received += hop.bytes_received;
        // Credentials never reach a tag: k6 masks them, and drops them for digest.
        let url = match auth {
            Auth::Digest => without_credentials(&hop.url, None),
            Auth::Basic => without_credentials(&hop.url, Some("****")),
        };
        let status = itoa(hop.status);
        let code = itoa_u32(hop.error_code);
        // A digest request's first answer is its challenge: k6 expects exactly a 401 there.
        let expect = |c: &[(u16, u16)]| match (auth, i) {
            (Auth::Digest, 0) => hop.status == 401,
            _ => expected(c, hop.status),
        };
        let ok = callback.map(|c| hop.error.is_none() && expect(c));
        let mut pairs = Pairs::new();
        hop_pairs(
            &context,
            tags,
            HopTags {
                proto: hop.proto,
                status: status.as_str(),
                method: hop.method.as_str(),
                url: url.as_str(),
                ok,
                tls_version: hop.tls_version,
                error: hop.error.as_deref(),
                error_code: if hop.error_code != 0 {
                    code.as_str()
                } else {
                    ""
                },
            },
            &mut pairs,
        );
        let tags = samples.tags(&pairs);
        push_hop(&mut samples, &tags, &hop.timings, ok, now);
        if i + 1 == resp.hops.len() {
            first_response(host, &mut samples, &tags, now);
        }
        // rk6's own: once per connection, not per request, tagged as the hop that opened it
        // (the interned set is shared, so this costs no tags of its own).
        if hop.conns_opened > 0 {
            samples.push(
                builtin::HTTP_CONNS_OPENED,
                tags,
                f64::from(hop.conns_opened),
                now,
            );
        }
    }
    host.data_sent.set(host.data_sent.get() + sent);
    host.data_received.set(host.data_received.get() + received);
}

/// The tags a request brings besides the VU's: its `tags` param and, for ``http.url`...` ``,
/// the template that names it.
pub(super) struct RequestTags {
    pub(super) user: Vec<(String, String)>,
    pub(super) template: Option<String>,
}

/// What distinguishes one hop's tags; the rest comes from the VU and the request's params.
struct HopTags<'a> {
    /// Empty when no response came (k6 leaves the tag off then).
    proto: &'a str,
    status: &'a str,
    method: &'a str,
    url: &'a str,
    /// `expected_response`, when a response callback applies.
    ok: Option<bool>,
    tls_version: &'a str,
    error: Option<&'a str>,
    /// Empty for no error.
    error_code: &'a str,
}

/// A hop's tag pairs, as k6 makes them: the VU's tags, the request's tags over them, then
/// the request's system tags over both. A `name` among the VU's or the request's tags (or
/// the template's, when neither has one) names the request and is its `url` tag too;
/// otherwise both are the URL.
fn hop_pairs<'a>(
    context: &'a TagContext,
    tags: &'a RequestTags,
    hop: HopTags<'a>,
    out: &mut Pairs<'a>,
) {
    let name = tags
        .user
        .iter()
        .rev()
        .find(|(k, _)| k == "name")
        .map(|(_, v)| v.as_str())
        .or_else(|| context.get("name"));
    let template = tags
        .template
        .as_deref()
        .filter(|_| name.is_none() && context.enabled("name"));
    let mut system: Pairs<'a> = Pairs::new();
    match (name, template) {
        (Some(name), _) => system.push(("url", name)),
        (None, Some(template)) => system.extend([("name", template), ("url", template)]),
        (None, None) => system.extend([("name", hop.url), ("url", hop.url)]),
    }
    system.extend([("method", hop.method), ("status", hop.status)]);
    if !hop.proto.is_empty() {
        system.push(("proto", hop.proto));
    }
    if let Some(ok) = hop.ok {
        system.push(("expected_response", if ok { "true" } else { "false" }));
    }
    if !hop.tls_version.is_empty() {
        system.push(("tls_version", hop.tls_version));
    }
    if let Some(err) = hop.error {
        system.push(("error", err));
    }
    if !hop.error_code.is_empty() {
        system.push(("error_code", hop.error_code));
    }
    context.pairs(&tags.user, &system, out);
}

fn push_hop(
    samples: &mut crate::host::samples::SampleBuffer,
    tags: &rk6_metrics::TagSet,
    t: &rk6_http::Timings,
    ok: Option<bool>,
    now: SystemTime,
) {
    samples.push(builtin::HTTP_REQS, tags.clone(), 1.0, now);
    samples.push(
        builtin::HTTP_REQ_DURATION,
        tags.clone(),
        ms(t.duration),
        now,
    );
    samples.push(builtin::HTTP_REQ_BLOCKED, tags.clone(), ms(t.blocked), now);
    samples.push(
        builtin::HTTP_REQ_CONNECTING,
        tags.clone(),
        ms(t.connecting),
        now,
    );
    samples.push(
        builtin::HTTP_REQ_TLS_HANDSHAKING,
        tags.clone(),
        ms(t.tls_handshaking),
        now,
    );
    samples.push(builtin::HTTP_REQ_SENDING, tags.clone(), ms(t.sending), now);
    samples.push(builtin::HTTP_REQ_WAITING, tags.clone(), ms(t.waiting), now);
    samples.push(
        builtin::HTTP_REQ_RECEIVING,
        tags.clone(),
        ms(t.receiving),
        now,
    );
    if let Some(ok) = ok {
        samples.push(
            builtin::HTTP_REQ_FAILED,
            tags.clone(),
            if ok { 0.0 } else { 1.0 },
            now,
        );
    }
}

fn itoa(n: u16) -> itoa_buf::Buf {
    itoa_buf::Buf::new(u64::from(n))
}
fn itoa_u32(n: u32) -> itoa_buf::Buf {
    itoa_buf::Buf::new(u64::from(n))
}

/// Formats small integers on the stack, so tagging a response allocates nothing.
mod itoa_buf {
    pub(super) struct Buf {
        bytes: [u8; 20],
        start: usize,
    }
    impl Buf {
        pub(super) fn new(mut n: u64) -> Buf {
            let mut bytes = [0u8; 20];
            let mut i = bytes.len();
            loop {
                i -= 1;
                bytes[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            Buf { bytes, start: i }
        }
        pub(super) fn as_str(&self) -> &str {
            std::str::from_utf8(&self.bytes[self.start..]).unwrap_or("0")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_integers_without_allocating() {
        assert_eq!(itoa(0).as_str(), "0");
        assert_eq!(itoa(200).as_str(), "200");
        assert_eq!(itoa_u32(1212).as_str(), "1212");
    }

    #[test]
    fn status_ranges_are_inclusive() {
        let ranges = [(200, 200), (400, 404)];
        assert!(expected(&ranges, 200));
        assert!(expected(&ranges, 404));
        assert!(!expected(&ranges, 201));
        assert!(!expected(&ranges, 500));
        assert!(!expected(&[], 200));
    }

    #[test]
    fn credentials_are_masked_or_dropped() {
        let u = url::Url::parse("http://us%40er:pw@h.test:8080/p?q=1").unwrap();
        assert_eq!(
            without_credentials(&u, Some("****")).as_str(),
            "http://****:****@h.test:8080/p?q=1"
        );
        assert_eq!(
            without_credentials(&u, None).as_str(),
            "http://h.test:8080/p?q=1"
        );
        let plain = url::Url::parse("http://h.test/").unwrap();
        assert!(matches!(
            without_credentials(&plain, Some("****")),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
