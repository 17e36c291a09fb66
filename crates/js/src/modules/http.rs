//! The `k6/http` module: request functions turning JS arguments into an `rk6_http::Request`,
//! and samples for every hop of the response.

use std::time::{Duration, SystemTime};

use boa_engine::object::builtins::JsArrayBuffer;
use boa_engine::property::PropertyKey;
use boa_engine::{Context, JsNativeError, JsResult, JsValue, NativeFunction};
use bytes::Bytes;
use http::Method;
use rk6_http::{Hop, Request, Response};
use rk6_metrics::builtin;

use super::{prop, response, Export};
use crate::host::{Host, Phase};
use crate::log::Level;

pub(super) fn functions() -> Vec<Export> {
    vec![
        ("get", 2, NativeFunction::from_fn_ptr(get)),
        ("head", 2, NativeFunction::from_fn_ptr(head)),
        ("post", 3, NativeFunction::from_fn_ptr(post)),
        ("put", 3, NativeFunction::from_fn_ptr(put)),
        ("patch", 3, NativeFunction::from_fn_ptr(patch)),
        ("del", 3, NativeFunction::from_fn_ptr(del)),
        ("options", 3, NativeFunction::from_fn_ptr(options)),
        ("request", 4, NativeFunction::from_fn_ptr(request)),
    ]
}

fn arg(args: &[JsValue], i: usize) -> Option<&JsValue> {
    args.get(i).filter(|v| !v.is_undefined())
}

fn get(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    send(ctx, Method::GET, a.first(), None, arg(a, 1))
}
fn head(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    send(ctx, Method::HEAD, a.first(), None, arg(a, 1))
}
fn post(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    send(ctx, Method::POST, a.first(), arg(a, 1), arg(a, 2))
}
fn put(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    send(ctx, Method::PUT, a.first(), arg(a, 1), arg(a, 2))
}
fn patch(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    send(ctx, Method::PATCH, a.first(), arg(a, 1), arg(a, 2))
}
fn del(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    send(ctx, Method::DELETE, a.first(), arg(a, 1), arg(a, 2))
}
fn options(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    send(ctx, Method::OPTIONS, a.first(), arg(a, 1), arg(a, 2))
}
fn request(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let method = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).map_err(|_| {
        JsNativeError::typ().with_message(format!("invalid HTTP method \"{method}\""))
    })?;
    send(ctx, method, a.get(1), arg(a, 2), arg(a, 3))
}

/// What the response body becomes in JS.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ResponseType {
    Text,
    Binary,
    None,
}

/// The request parameters k6 scripts pass as the last argument.
struct Params {
    headers: Vec<(String, String)>,
    tags: Vec<(String, String)>,
    timeout: Option<Duration>,
    redirects: Option<u32>,
    cookies: Vec<(String, String)>,
    response_type: ResponseType,
}

impl Params {
    fn from_js(value: Option<&JsValue>, ctx: &mut Context) -> JsResult<Params> {
        let obj = value.and_then(JsValue::as_object);
        let obj = obj.as_ref();
        let headers = string_map(prop(obj, "headers", ctx)?.as_ref(), ctx)?;
        let tags = string_map(prop(obj, "tags", ctx)?.as_ref(), ctx)?;
        let timeout = match prop(obj, "timeout", ctx)? {
            None => None,
            Some(v) if v.is_number() => {
                Some(Duration::from_secs_f64(v.to_number(ctx)?.max(0.0) / 1000.0))
            }
            Some(v) => {
                let s = v.to_string(ctx)?.to_std_string_escaped();
                Some(
                    rk6_scheduler::parse_duration(&s)
                        .map_err(|e| JsNativeError::typ().with_message(e.to_string()))?,
                )
            }
        };
        let redirects = match prop(obj, "redirects", ctx)? {
            None => None,
            Some(v) => Some(v.to_number(ctx)?.max(0.0) as u32),
        };
        let mut cookies = Vec::new();
        if let Some(c) = prop(obj, "cookies", ctx)?
            .as_ref()
            .and_then(JsValue::as_object)
        {
            for key in c.own_property_keys(ctx)? {
                if matches!(key, PropertyKey::Symbol(_)) {
                    continue;
                }
                let name = key.to_string();
                let v = c.get(key, ctx)?;
                let value = match v.as_object() {
                    Some(o) => prop(Some(&o), "value", ctx)?.unwrap_or_default(),
                    None => v,
                };
                cookies.push((name, value.to_string(ctx)?.to_std_string_escaped()));
            }
        }
        let response_type = match prop(obj, "responseType", ctx)? {
            None => ResponseType::Text,
            Some(v) => match v.to_string(ctx)?.to_std_string_escaped().as_str() {
                "text" => ResponseType::Text,
                "binary" => ResponseType::Binary,
                "none" => ResponseType::None,
                other => {
                    return Err(JsNativeError::typ()
                        .with_message(format!(
                            "unknown responseType \"{other}\"; use text, binary or none"
                        ))
                        .into())
                }
            },
        };
        if let Some(auth) = prop(obj, "auth", ctx)? {
            let auth = auth.to_string(ctx)?.to_std_string_escaped();
            if auth != "basic" {
                return Err(JsNativeError::typ()
                    .with_message(format!("auth \"{auth}\" is not supported by rk6 yet (only basic, with credentials in the URL)"))
                    .into());
            }
        }
        Ok(Params {
            headers,
            tags,
            timeout,
            redirects,
            cookies,
            response_type,
        })
    }
}

/// An object of string values as pairs (non-string values are converted with `String()`).
pub(super) fn string_map(
    value: Option<&JsValue>,
    ctx: &mut Context,
) -> JsResult<Vec<(String, String)>> {
    let Some(obj) = value.and_then(JsValue::as_object) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for key in obj.own_property_keys(ctx)? {
        if matches!(key, PropertyKey::Symbol(_)) {
            continue;
        }
        let name = key.to_string();
        let v = obj.get(key, ctx)?;
        out.push((name, v.to_string(ctx)?.to_std_string_escaped()));
    }
    Ok(out)
}

/// The request body and the content type it implies (objects become a form).
fn body_from_js(
    body: Option<&JsValue>,
    ctx: &mut Context,
) -> JsResult<(Bytes, Option<&'static str>)> {
    let Some(body) = body.filter(|b| !b.is_null()) else {
        return Ok((Bytes::new(), None));
    };
    if let Some(obj) = body.as_object() {
        if let Ok(buf) = JsArrayBuffer::from_object(obj.clone()) {
            return Ok((Bytes::from(buf.to_vec().unwrap_or_default()), None));
        }
        // k6 encodes objects like Go's url.Values: keys sorted, arrays repeat the key.
        let mut pairs: Vec<(String, String)> = Vec::new();
        for key in obj.own_property_keys(ctx)? {
            if matches!(key, PropertyKey::Symbol(_)) {
                continue;
            }
            let name = key.to_string();
            let v = obj.get(key, ctx)?;
            if let Some(arr) = v.as_object().filter(|o| o.is_array()) {
                let len = arr
                    .get(boa_engine::js_string!("length"), ctx)?
                    .to_number(ctx)? as u32;
                for i in 0..len {
                    let item = arr.get(i, ctx)?;
                    pairs.push((name.clone(), item.to_string(ctx)?.to_std_string_escaped()));
                }
            } else {
                pairs.push((name, v.to_string(ctx)?.to_std_string_escaped()));
            }
        }
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut ser = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &pairs {
            ser.append_pair(k, v);
        }
        return Ok((
            Bytes::from(ser.finish()),
            Some("application/x-www-form-urlencoded"),
        ));
    }
    Ok((
        Bytes::from(body.to_string(ctx)?.to_std_string_escaped()),
        None,
    ))
}

fn send(
    ctx: &mut Context,
    method: Method,
    url: Option<&JsValue>,
    body: Option<&JsValue>,
    params: Option<&JsValue>,
) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() == Phase::Init {
        return Err(JsNativeError::error()
            .with_message("Making http requests in the init context is not supported")
            .into());
    }
    host.check_interrupted()?;
    let url_text = url
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    let params = Params::from_js(params, ctx)?;
    let (body, content_type) = body_from_js(body, ctx)?;
    let mut headers = params.headers;
    if let Some(ct) = content_type {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            headers.push(("Content-Type".into(), ct.into()));
        }
    }
    let parsed = match url::Url::parse(&url_text) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u,
        _ => {
            let err = rk6_http::HttpError {
                code: 1020,
                message: format!("invalid URL \"{url_text}\""),
            };
            host.shared
                .logger
                .log(Level::Warning, "Request Failed", &[("error", &err.message)]);
            let parts = response::Parts {
                method,
                url: url_text.clone(),
                request_headers: headers,
                request_body: body,
                headers: Vec::new(),
                set_cookies: Vec::new(),
                body: None,
                response_type: params.response_type,
                timings: Default::default(),
            };
            return Ok(response::build(
                &host,
                0,
                "",
                "",
                &url_text,
                Some(&err),
                0,
                None,
                "",
                parts,
                ctx,
            ));
        }
    };
    let req = Request {
        method: method.clone(),
        url: parsed,
        headers,
        body: body.clone(),
        timeout: params.timeout,
        max_redirects: params.redirects,
        cookies: params.cookies,
        discard_body: params.response_type == ResponseType::None,
    };
    // The borrow spans the await on purpose: while this VU is suspended nothing else can
    // touch its client, because the VU's JS is stopped inside this very call.
    #[allow(clippy::await_holding_refcell_ref)]
    let resp = host.block_on("Making http requests", async {
        let mut client = host.http.borrow_mut();
        client.send(req).await
    })?;
    emit(&host, &params.tags, &resp);
    if let Some(err) = &resp.error {
        host.shared
            .logger
            .log(Level::Warning, "Request Failed", &[("error", &err.message)]);
    }
    let timings = resp.hops.last().map(|h| h.timings).unwrap_or_default();
    let final_url = resp.url.to_string();
    let no_body = resp.error.is_some() && resp.status == 0;
    let parts = response::Parts {
        method,
        url: url_text,
        request_headers: resp.request_headers,
        request_body: body,
        headers: resp.headers,
        set_cookies: resp.set_cookies,
        body: (!no_body).then_some(resp.body),
        response_type: params.response_type,
        timings,
    };
    Ok(response::build(
        &host,
        resp.status,
        &resp.status_text,
        resp.proto,
        &final_url,
        resp.error.as_ref(),
        resp.error_code,
        resp.remote_addr,
        resp.tls_version,
        parts,
        ctx,
    ))
}

/// k6's default response callback: 200–399 are expected.
fn expected(status: u16) -> bool {
    (200..400).contains(&status)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One set of `http_req*` samples per hop, tagged as k6 tags them.
fn emit(host: &Host, user_tags: &[(String, String)], resp: &Response) {
    let scenario = host.scenario.borrow();
    let group = host.group.borrow();
    let name_tag = user_tags
        .iter()
        .rev()
        .find(|(k, _)| k == "name")
        .map(|(_, v)| v.as_str());
    let mut samples = host.samples.borrow_mut();
    let now = SystemTime::now();
    let mut sent = 0;
    let mut received = 0;
    for hop in &resp.hops {
        sent += hop.bytes_sent;
        received += hop.bytes_received;
        let url = hop.url.as_str();
        let status = itoa(hop.status);
        let code = itoa_u32(hop.error_code);
        let ok = hop.error.is_none() && expected(hop.status);
        let mut pairs: Vec<(&str, &str)> = scenario
            .tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        pairs.extend([
            ("proto", hop.proto),
            ("status", status.as_str()),
            ("method", hop.method.as_str()),
            ("url", url),
            ("name", name_tag.unwrap_or(url)),
            ("group", group.as_str()),
            ("scenario", scenario.name.as_str()),
            ("expected_response", if ok { "true" } else { "false" }),
        ]);
        if !hop.tls_version.is_empty() {
            pairs.push(("tls_version", hop.tls_version));
        }
        if let Some(err) = &hop.error {
            pairs.push(("error", err.as_str()));
        }
        if hop.error_code != 0 {
            pairs.push(("error_code", code.as_str()));
        }
        pairs.extend(user_tags.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        if let Some(name) = name_tag {
            // A `name` tag also replaces the `url` tag (k6 behaviour).
            pairs.push(("url", name));
        }
        let tags = samples.tags(&pairs);
        push_hop(&mut samples, &tags, hop, ok, now);
    }
    host.data_sent.set(host.data_sent.get() + sent);
    host.data_received.set(host.data_received.get() + received);
}

fn push_hop(
    samples: &mut crate::samples::SampleBuffer,
    tags: &rk6_metrics::TagSet,
    hop: &Hop,
    ok: bool,
    now: SystemTime,
) {
    let t = &hop.timings;
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
    samples.push(
        builtin::HTTP_REQ_FAILED,
        tags.clone(),
        if ok { 0.0 } else { 1.0 },
        now,
    );
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
}
