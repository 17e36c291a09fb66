//! The `k6/http` module: request functions turning JS arguments into an `rk6_http::Request`,
//! and samples for every hop of the response.

pub(crate) mod batch;
mod compression;
mod cookie_jar;
mod debug;
mod multipart;
pub(crate) mod response;
mod samples;

use std::rc::Rc;
use std::time::Duration;

use boa_engine::builtins::promise::ResolvingFunctions;
use boa_engine::object::builtins::{JsArray, JsArrayBuffer, JsPromise};
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::{Attribute, PropertyKey};
use boa_engine::{
    js_string, Context, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue, Module,
    NativeFunction,
};
use boa_gc::{Finalize, Trace};
use bytes::Bytes;
use http::Method;
use rk6_http::{Auth, Request, Response, SharedJar};

use super::{prop, Export};
use crate::host::{Host, Phase, StatusRanges};
use crate::log::Level;
use cookie_jar::{cookie_jar, new_cookie_jar, OwnJar, VuJar};
use multipart::{file, multipart_body};
use samples::{emit, emit_refused, without_credentials};

/// k6/http's string constants, in k6's export order.
const CONSTANTS: &[(&str, &str)] = &[
    ("TLS_1_0", "tls1.0"),
    ("TLS_1_1", "tls1.1"),
    ("TLS_1_2", "tls1.2"),
    ("TLS_1_3", "tls1.3"),
    ("OCSP_STATUS_GOOD", "good"),
    ("OCSP_STATUS_REVOKED", "revoked"),
    ("OCSP_STATUS_SERVER_FAILED", "server_failed"),
    ("OCSP_STATUS_UNKNOWN", "unknown"),
    ("OCSP_REASON_UNSPECIFIED", "unspecified"),
    ("OCSP_REASON_KEY_COMPROMISE", "key_compromise"),
    ("OCSP_REASON_CA_COMPROMISE", "ca_compromise"),
    ("OCSP_REASON_AFFILIATION_CHANGED", "affiliation_changed"),
    ("OCSP_REASON_SUPERSEDED", "superseded"),
    (
        "OCSP_REASON_CESSATION_OF_OPERATION",
        "cessation_of_operation",
    ),
    ("OCSP_REASON_CERTIFICATE_HOLD", "certificate_hold"),
    ("OCSP_REASON_REMOVE_FROM_CRL", "remove_from_crl"),
    ("OCSP_REASON_PRIVILEGE_WITHDRAWN", "privilege_withdrawn"),
    ("OCSP_REASON_AA_COMPROMISE", "aa_compromise"),
];

/// The `k6/http` module: constants first, then the functions (as k6 lists them).
pub(super) fn module(ctx: &mut Context) -> Module {
    super::synthetic_with(CONSTANTS, functions(), ctx)
}

fn functions() -> Vec<Export> {
    vec![
        ("url", 1, NativeFunction::from_fn_ptr(url_tag)),
        ("cookieJar", 0, NativeFunction::from_fn_ptr(cookie_jar)),
        ("CookieJar", 0, NativeFunction::from_fn_ptr(new_cookie_jar)),
        ("file", 3, NativeFunction::from_fn_ptr(file)),
        ("get", 2, NativeFunction::from_fn_ptr(get)),
        ("head", 2, NativeFunction::from_fn_ptr(head)),
        ("post", 3, NativeFunction::from_fn_ptr(post)),
        ("put", 3, NativeFunction::from_fn_ptr(put)),
        ("patch", 3, NativeFunction::from_fn_ptr(patch)),
        ("del", 3, NativeFunction::from_fn_ptr(del)),
        ("options", 3, NativeFunction::from_fn_ptr(options)),
        ("request", 4, NativeFunction::from_fn_ptr(request)),
        (
            "asyncRequest",
            4,
            NativeFunction::from_fn_ptr(async_request),
        ),
        ("batch", 1, NativeFunction::from_fn_ptr(batch)),
        (
            "setResponseCallback",
            1,
            NativeFunction::from_fn_ptr(set_response_callback),
        ),
        (
            "expectedStatuses",
            1,
            NativeFunction::from_fn_ptr(expected_statuses),
        ),
    ]
}

pub(super) fn arg(args: &[JsValue], i: usize) -> Option<&JsValue> {
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
/// `http.asyncRequest`: the request as a promise. The request starts at once and runs while
/// the VU's JS goes on; the event loop (and any other wait of the VU) drives it, and settles
/// the promise when the response is complete, so several asyncRequests overlap.
fn async_request(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let prepared = method_arg(a, ctx).and_then(|m| prepare(ctx, m, a.get(1), arg(a, 2), arg(a, 3)));
    match prepared {
        Ok(Prep::Done(v)) => Ok(JsPromise::resolve(v, ctx)?.into()),
        Ok(Prep::Send(p)) => {
            let (promise, resolvers) = JsPromise::new_pending(ctx);
            let host = Host::of(ctx);
            let client = host.http.clone();
            let Prepared { req, meta } = p;
            host.async_calls.start(
                Box::pin(async move { client.send(req).await }),
                meta,
                resolvers,
            );
            Ok(promise.into())
        }
        // Interruption and test.abort unwind the iteration; they are not promise rejections.
        Err(e) if e.as_engine().is_some() => Err(e),
        Err(e) => Ok(JsPromise::reject(e, ctx)?.into()),
    }
}

/// Settles one finished `asyncRequest`: samples, then its promise.
pub(super) fn settle_async(
    meta: Meta,
    resp: Response,
    resolvers: &ResolvingFunctions,
    ctx: &mut Context,
) -> JsResult<()> {
    let host = Host::of(ctx);
    match finish(&host, meta, resp, ctx) {
        Ok(v) => resolvers.resolve.call(&JsValue::undefined(), &[v], ctx)?,
        Err(e) => {
            let e = e.into_opaque(ctx)?;
            resolvers.reject.call(&JsValue::undefined(), &[e], ctx)?
        }
    };
    Ok(())
}

fn method_arg(a: &[JsValue], ctx: &mut Context) -> JsResult<Method> {
    let method = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    Method::from_bytes(method.to_ascii_uppercase().as_bytes()).map_err(|_| {
        JsNativeError::typ()
            .with_message(format!("invalid HTTP method \"{method}\""))
            .into()
    })
}

fn request(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let method = method_arg(a, ctx)?;
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
    /// `responseCallback`: `None` when absent, `Some(None)` when `null` (disabled).
    callback: Option<Option<StatusRanges>>,
    /// A `new http.CookieJar()`'s jar to use instead of the VU's.
    jar: Option<SharedJar>,
    /// `compression`: comma-separated algorithms applied to the body.
    compression: Option<String>,
    /// `auth`: how the URL's credentials are used.
    auth: Auth,
    /// rk6's `h2c` param: HTTP/2 with prior knowledge for an `http://` URL.
    h2c: Option<bool>,
}

impl Params {
    /// `default_type` applies when the params give no `responseType` (`discardResponseBodies`).
    fn from_js(
        value: Option<&JsValue>,
        default_type: ResponseType,
        ctx: &mut Context,
    ) -> JsResult<Params> {
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
            None => default_type,
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
        let compression = match prop(obj, "compression", ctx)? {
            Some(c) if !c.is_null() => Some(c.to_string(ctx)?.to_std_string_escaped()),
            _ => None,
        };
        let jar = match prop(obj, "jar", ctx)? {
            None => None,
            Some(v) => match v.as_object() {
                Some(o) if o.downcast_ref::<OwnJar>().is_some() => {
                    o.downcast_ref::<OwnJar>().map(|j| j.0.clone())
                }
                Some(o) if o.downcast_ref::<VuJar>().is_some() => None,
                _ => {
                    return Err(JsNativeError::typ()
                        .with_message("the jar param must be a cookie jar (http.cookieJar() or new http.CookieJar())")
                        .into())
                }
            },
        };
        let auth = match prop(obj, "auth", ctx)? {
            None => Auth::Basic,
            Some(v) => match v.to_string(ctx)?.to_std_string_escaped().as_str() {
                "basic" => Auth::Basic,
                "digest" => Auth::Digest,
                // Sending without the asked-for authentication would test something else.
                other => {
                    return Err(JsNativeError::typ()
                        .with_message(format!("auth \"{other}\" is not supported by rk6 (only basic and digest, with credentials in the URL)"))
                        .into())
                }
            },
        };
        let callback = match obj {
            Some(o) => {
                let v = o.get(js_string!("responseCallback"), ctx)?;
                (!v.is_undefined())
                    .then(|| callback_from_js(&v))
                    .transpose()?
            }
            None => None,
        };
        let h2c = match prop(obj, "h2c", ctx)? {
            None => None,
            Some(v) if v.is_boolean() => Some(v.to_boolean()),
            Some(v) => {
                return Err(JsNativeError::typ()
                    .with_message(format!(
                        "the h2c param must be a boolean (true or false), got {}",
                        v.display()
                    ))
                    .into())
            }
        };
        Ok(Params {
            headers,
            tags,
            timeout,
            redirects,
            cookies,
            response_type,
            callback,
            jar,
            compression,
            auth,
            h2c,
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
fn body_from_js(body: Option<&JsValue>, ctx: &mut Context) -> JsResult<(Bytes, Option<String>)> {
    let Some(body) = body.filter(|b| !b.is_null()) else {
        return Ok((Bytes::new(), None));
    };
    if let Some(obj) = body.as_object() {
        if let Ok(buf) = JsArrayBuffer::from_object(obj.clone()) {
            return Ok((Bytes::from(buf.to_vec().unwrap_or_default()), None));
        }
        if let Some(multipart) = multipart_body(&obj, ctx)? {
            return Ok(multipart);
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
            Some("application/x-www-form-urlencoded".to_owned()),
        ));
    }
    Ok((
        Bytes::from(body.to_string(ctx)?.to_std_string_escaped()),
        None,
    ))
}

/// A request ready to be sent, and what turns its response into JS.
pub(super) struct Prepared {
    req: Request,
    meta: Meta,
}

/// What [`finish`] needs besides the response.
pub(super) struct Meta {
    method: Method,
    url_text: String,
    body: Bytes,
    tags: Vec<(String, String)>,
    callback: Option<Option<StatusRanges>>,
    response_type: ResponseType,
    auth: Auth,
    /// The request gave its own `redirects` (no warning at the default limit then).
    redirects_set: bool,
}

/// The outcome of [`prepare`]: a request to send, or a response already decided (a URL
/// that cannot be requested).
// Boxing `Prepared` would cost an allocation per request; the value only lives briefly.
#[allow(clippy::large_enum_variant)]
pub(super) enum Prep {
    Done(JsValue),
    Send(Prepared),
}

pub(super) fn send(
    ctx: &mut Context,
    method: Method,
    url: Option<&JsValue>,
    body: Option<&JsValue>,
    params: Option<&JsValue>,
) -> JsResult<JsValue> {
    let Prepared { req, meta } = match prepare(ctx, method, url, body, params)? {
        Prep::Done(v) => return Ok(v),
        Prep::Send(p) => p,
    };
    let host = Host::of(ctx);
    let resp = host.block_on("Making http requests", host.http.send(req))?;
    finish(&host, meta, resp, ctx)
}

/// Turns JS arguments into a request (checks the phase, the params and the URL).
pub(super) fn prepare(
    ctx: &mut Context,
    method: Method,
    url: Option<&JsValue>,
    body: Option<&JsValue>,
    params: Option<&JsValue>,
) -> JsResult<Prep> {
    let host = Host::of(ctx);
    if host.phase.get() == Phase::Init {
        return Err(JsNativeError::error()
            .with_message("Making http requests in the init context is not supported")
            .into());
    }
    host.check_interrupted()?;
    let tagged = url.and_then(JsValue::as_object).and_then(|o| {
        o.downcast_ref::<UrlTag>()
            .map(|t| (t.url.clone(), t.name.clone()))
    });
    let default_type = if host.shared.run.discard_response_bodies {
        ResponseType::None
    } else {
        ResponseType::Text
    };
    let mut params = Params::from_js(params, default_type, ctx)?;
    let url_text = match tagged {
        Some((url, name)) => {
            // The template names the request unless the params name it themselves.
            params.tags.insert(0, ("name".to_owned(), name));
            url
        }
        None => match url.and_then(JsValue::as_string) {
            // Scripts mostly request the same few URL strings: reuse the last parse.
            Some(js) => {
                let hit = match &*host.last_url.borrow() {
                    Some((k, text, parsed)) if *k == js => Some((text.clone(), parsed.clone())),
                    _ => None,
                };
                if let Some((text, parsed)) = hit {
                    return prepare_body(host, method, text, Ok(parsed), params, body, ctx);
                }
                js.to_std_string_escaped()
            }
            None => url
                .cloned()
                .unwrap_or_default()
                .to_string(ctx)?
                .to_std_string_escaped(),
        },
    };
    let parsed = url::Url::parse(&url_text);
    if let (Ok(u), Some(js)) = (&parsed, url.and_then(JsValue::as_string)) {
        *host.last_url.borrow_mut() = Some((js.clone(), url_text.clone(), u.clone()));
    }
    prepare_body(host, method, url_text, parsed, params, body, ctx)
}

/// The rest of [`prepare`], once the URL is known: body, headers, compression.
fn prepare_body(
    host: Rc<Host>,
    method: Method,
    url_text: String,
    parsed: Result<url::Url, url::ParseError>,
    params: Params,
    body: Option<&JsValue>,
    ctx: &mut Context,
) -> JsResult<Prep> {
    let has_body = body.is_some_and(|b| !b.is_null());
    let (body, content_type) = body_from_js(body, ctx)?;
    let mut headers = params.headers;
    if let Some(ct) = content_type {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            headers.push(("Content-Type".into(), ct));
        }
    }
    // `res.url` of a request never sent: k6 leaves it empty when the body could not be
    // prepared, and keeps the (unusable) URL otherwise.
    // `shown` is `res.request.url` where it differs from the script's text (Go escapes a
    // relative URL's path).
    let unsent = |err: rk6_http::HttpError,
                  url: &str,
                  shown: Option<String>,
                  headers,
                  body,
                  ctx: &mut Context| {
        if host.shared.run.throw {
            return Err(JsNativeError::error().with_message(err.message).into());
        }
        host.shared
            .logger
            .log(Level::Warning, "Request Failed", &[("error", &err.message)]);
        let parts = response::Parts {
            method: method.clone(),
            url: shown.unwrap_or_else(|| url_text.clone()),
            // k6 has no request to show when the URL or the body could not be made into one.
            request_headers: if url.is_empty() {
                response::RequestHeaders::NotMade
            } else {
                response::RequestHeaders::Given(headers)
            },
            request_body: body,
            headers: http::HeaderMap::new(),
            body: None,
            response_type: params.response_type,
            timings: Default::default(),
            over_tls: false,
        };
        Ok(Prep::Done(response::build(
            &host,
            0,
            "",
            "",
            url,
            Some(&err),
            0,
            None,
            "",
            "",
            parts,
            ctx,
        )))
    };
    let parsed = match parsed {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u,
        // As k6 (Go): a URL that parses but is not http(s) — a relative one has the empty
        // scheme — fails with 1000 and keeps its text in `res.url`; one that does not parse
        // fails with 1020 and an empty `res.url`.
        // Such a request counts as one that failed at once, with zero timings (k6 hands it
        // to Go's transport, which refuses it).
        Ok(u) => {
            let err = rk6_http::HttpError::new(
                1000,
                format!("unsupported protocol scheme \"{}\"", u.scheme()),
            );
            emit_refused(
                &host,
                (&params.tags, &params.callback),
                &method,
                u.as_str(),
                &err,
            );
            return unsent(err, &url_text, None, headers, body, ctx);
        }
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            let err = rk6_http::HttpError::new(1000, "unsupported protocol scheme \"\"");
            let shown = percent_encoding::utf8_percent_encode(&url_text, RELATIVE).to_string();
            emit_refused(
                &host,
                (&params.tags, &params.callback),
                &method,
                &shown,
                &err,
            );
            return unsent(err, &url_text, Some(shown), headers, body, ctx);
        }
        Err(e) => {
            let err =
                rk6_http::HttpError::new(1020, format!("invalid URL: parse \"{url_text}\": {e}"));
            return unsent(err, "", None, headers, body, ctx);
        }
    };
    // The script sees the body it gave (`res.request.body`); the wire gets it compressed.
    let wire_body = match params.compression.as_deref().filter(|_| has_body) {
        None => body.clone(),
        Some(algorithms) => {
            match compression::apply(&host, &method, &url_text, &body, algorithms, &mut headers) {
                Ok(b) => b,
                Err(err) => return unsent(err, "", None, headers, body, ctx),
            }
        }
    };
    compression::check_content_length(&host, &method, &url_text, wire_body.len(), &mut headers);
    let req = Request {
        method: method.clone(),
        url: parsed,
        headers,
        body: wire_body,
        timeout: params.timeout,
        max_redirects: params.redirects,
        cookies: params.cookies,
        discard_body: params.response_type == ResponseType::None,
        auth: params.auth,
        jar: params.jar,
        h2c: params.h2c,
    };
    Ok(Prep::Send(Prepared {
        req,
        meta: Meta {
            method,
            url_text,
            body,
            tags: params.tags,
            callback: params.callback,
            response_type: params.response_type,
            auth: params.auth,
            redirects_set: params.redirects.is_some(),
        },
    }))
}

/// Emits the response's samples and builds its JS object (or the `throw` exception).
pub(super) fn finish(
    host: &Host,
    meta: Meta,
    resp: Response,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let Meta {
        method,
        url_text,
        body,
        tags,
        callback,
        response_type,
        auth,
        redirects_set,
    } = meta;
    let callback = match callback {
        Some(cb) => cb,
        None => host.expected_statuses.borrow().clone(),
    };
    emit(host, &tags, &resp, callback.as_deref(), auth);
    debug::log(host, &resp.debug);
    if resp.too_many_redirects && !redirects_set && !host.shared.run.max_redirects_set {
        let text = format!(
            "Stopped after {} redirects and returned the redirection; pass {{ redirects: n }} in request params or set global maxRedirects to silence this",
            resp.hops.len()
        );
        host.shared
            .logger
            .log(Level::Warning, &text, &[("url", &url_text)]);
    }
    if let Some(err) = &resp.error {
        if host.shared.run.throw {
            // `throw`: the failure is the script's exception instead of a logged warning.
            return Err(JsNativeError::error()
                .with_message(err.message.clone())
                .into());
        }
        let text = failure_text(&method, resp.url.as_str(), resp.failed_in_body, err);
        host.shared
            .logger
            .log(Level::Warning, "Request Failed", &[("error", &text)]);
    }
    let timings = resp.hops.last().map(|h| h.timings).unwrap_or_default();
    let status_text = resp.status_text();
    // k6 reports a digest request's URL without its credentials.
    let final_url = match auth {
        Auth::Digest => without_credentials(&resp.url, None).to_string(),
        Auth::Basic => resp.url.to_string(),
    };
    // A failure mid-body keeps what arrived (k6 does); one before any body has none.
    let no_body = resp.error.is_some() && resp.status == 0 && resp.body.is_empty();
    let parts = response::Parts {
        method,
        url: url_text,
        request_headers: response::RequestHeaders::Sent(resp.request_headers, resp.script_headers),
        request_body: body,
        headers: resp.headers,
        body: (!no_body).then_some(resp.body),
        response_type,
        timings,
        over_tls: !resp.tls_version.is_empty(),
    };
    Ok(response::build(
        host,
        resp.status,
        &status_text,
        resp.proto,
        &final_url,
        resp.error.as_ref(),
        resp.error_code,
        resp.remote_addr,
        resp.tls_version,
        resp.tls_cipher_suite,
        parts,
        ctx,
    ))
}

/// The error of k6's "Request Failed" warning: Go's full error text, and for a request that
/// failed before its response head, Go's `Get "url": ` in front (a failure while reading the
/// body comes from the body reader, which Go does not wrap).
fn failure_text(method: &Method, url: &str, in_body: bool, err: &rk6_http::HttpError) -> String {
    if in_body {
        return err.log_text().to_owned();
    }
    // Go's `url.Error` names the method with only its first letter upper case.
    let name = method.as_str();
    let mut op = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        op.push(if i == 0 {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        });
    }
    format!("{op} {url:?}: {}", err.log_text())
}

/// What Go escapes when it prints a relative URL's path (the `url` tag of such a request).
const RELATIVE: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// What ``http.url`...` `` returns: the interpolated URL and its `${}` template.
#[derive(Trace, Finalize, JsData)]
struct UrlTag {
    #[unsafe_ignore_trace]
    url: String,
    #[unsafe_ignore_trace]
    name: String,
}

/// ``http.url`...` ``: a URL whose `name` and `url` tags are the template with `${}`
/// in place of each interpolated value.
fn url_tag(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let strings = a.first().and_then(JsValue::as_object).ok_or_else(|| {
        JsNativeError::typ().with_message("http.url must be used as a tagged template")
    })?;
    let len = strings.get(js_string!("length"), ctx)?.to_number(ctx)? as u32;
    let mut url = String::new();
    let mut name = String::new();
    for i in 0..len {
        let part = strings.get(i, ctx)?.to_string(ctx)?.to_std_string_escaped();
        url.push_str(&part);
        name.push_str(&part);
        if i + 1 < len {
            let v = a.get(i as usize + 1).cloned().unwrap_or_default();
            url.push_str(&v.to_string(ctx)?.to_std_string_escaped());
            name.push_str("${}");
        }
    }
    let get_url = FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_fn_ptr(|this, _, _| {
            let url = this
                .as_object()
                .and_then(|o| o.downcast_ref::<UrlTag>().map(|t| t.url.clone()))
                .unwrap_or_default();
            Ok(JsString::from(url).into())
        }),
    )
    .name(js_string!("getURL"))
    .build();
    let obj = ObjectInitializer::with_native_data(
        UrlTag {
            url: url.clone(),
            name: name.clone(),
        },
        ctx,
    )
    .property(js_string!("name"), JsString::from(name), Attribute::all())
    .property(
        js_string!("url"),
        JsString::from(url.as_str()),
        Attribute::all(),
    )
    .property(
        js_string!("clean_url"),
        JsString::from(url),
        Attribute::all(),
    )
    .property(js_string!("clean"), get_url.clone(), Attribute::all())
    .property(js_string!("getURL"), get_url, Attribute::all())
    .build();
    Ok(obj.into())
}

/// The callback object `http.expectedStatuses(...)` returns.
#[derive(Trace, Finalize, JsData)]
struct ExpectedStatuses {
    #[unsafe_ignore_trace]
    ranges: StatusRanges,
}

/// `http.expectedStatuses(...codes | {min, max})`.
fn expected_statuses(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    fn status(v: &JsValue, ctx: &mut Context) -> JsResult<u16> {
        let n = v.to_number(ctx)?;
        if !v.is_number() || n.fract() != 0.0 || !(0.0..=65535.0).contains(&n) {
            return Err(JsNativeError::typ()
                .with_message(format!(
                    "expectedStatuses: arguments must be integer status codes or objects like {{min: 200, max: 299}}, got {}",
                    v.display()
                ))
                .into());
        }
        Ok(n as u16)
    }
    let mut ranges = Vec::with_capacity(a.len());
    for (i, v) in a.iter().enumerate() {
        match v.as_object() {
            Some(o) => {
                let min = o.get(js_string!("min"), ctx)?;
                let max = o.get(js_string!("max"), ctx)?;
                if min.is_undefined() || max.is_undefined() {
                    return Err(JsNativeError::typ()
                        .with_message(format!(
                            "expectedStatuses: argument {i} must have both min and max"
                        ))
                        .into());
                }
                ranges.push((status(&min, ctx)?, status(&max, ctx)?));
            }
            None => {
                let s = status(v, ctx)?;
                ranges.push((s, s));
            }
        }
    }
    let data = ExpectedStatuses {
        ranges: Rc::from(ranges),
    };
    Ok(ObjectInitializer::with_native_data(data, ctx)
        .build()
        .into())
}

/// A response callback value: `null` disables it, otherwise it must come from
/// `expectedStatuses` (the only kind k6 supports too).
fn callback_from_js(v: &JsValue) -> JsResult<Option<StatusRanges>> {
    if v.is_null() || v.is_undefined() {
        return Ok(None);
    }
    v.as_object()
        .and_then(|o| o.downcast_ref::<ExpectedStatuses>().map(|e| e.ranges.clone()))
        .map(Some)
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("unsupported response callback: expected the result of http.expectedStatuses() or null")
                .into()
        })
}

/// `http.setResponseCallback(cb)`: this VU's callback for every later request.
fn set_response_callback(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let cb = callback_from_js(&a.first().cloned().unwrap_or_default())?;
    *Host::of(ctx).expected_statuses.borrow_mut() = cb;
    Ok(JsValue::undefined())
}

/// One `http.batch` item as `(method, url, body, params)`.
fn batch_item(
    item: &JsValue,
    ctx: &mut Context,
) -> JsResult<(Method, JsValue, Option<JsValue>, Option<JsValue>)> {
    fn some(v: JsValue) -> Option<JsValue> {
        (!v.is_undefined()).then_some(v)
    }
    let obj = match item.as_object() {
        Some(o) if o.downcast_ref::<UrlTag>().is_none() => o,
        _ => return Ok((Method::GET, item.clone(), None, None)),
    };
    let (method, url, body, params) = if obj.is_array() {
        (
            obj.get(0, ctx)?,
            obj.get(1, ctx)?,
            obj.get(2, ctx)?,
            obj.get(3, ctx)?,
        )
    } else {
        (
            obj.get(js_string!("method"), ctx)?,
            obj.get(js_string!("url"), ctx)?,
            obj.get(js_string!("body"), ctx)?,
            obj.get(js_string!("params"), ctx)?,
        )
    };
    let method = if method.is_undefined() || method.is_null() {
        Method::GET
    } else {
        let m = method.to_string(ctx)?.to_std_string_escaped();
        Method::from_bytes(m.to_ascii_uppercase().as_bytes()).map_err(|_| {
            JsNativeError::typ().with_message(format!("invalid HTTP method \"{m}\""))
        })?
    };
    Ok((method, url, some(body), some(params)))
}

/// `http.batch(requests)`: an array gives an array of responses, an object an object keyed
/// like the input. The requests run concurrently, at most `batch` at once and `batchPerHost`
/// per host; responses come back in request order.
fn batch(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let Some(reqs) = a.first().and_then(JsValue::as_object) else {
        return Err(JsNativeError::typ()
            .with_message("http.batch expects an array or an object of requests")
            .into());
    };
    let mut keys: Vec<PropertyKey> = Vec::new();
    let items: Vec<JsValue> = if reqs.is_array() {
        let len = reqs.get(js_string!("length"), ctx)?.to_number(ctx)? as u32;
        (0..len)
            .map(|i| reqs.get(i, ctx))
            .collect::<JsResult<_>>()?
    } else {
        for key in reqs.own_property_keys(ctx)? {
            if !matches!(key, PropertyKey::Symbol(_)) {
                keys.push(key);
            }
        }
        keys.iter()
            .map(|k| reqs.get(k.clone(), ctx))
            .collect::<JsResult<_>>()?
    };
    let mut preps = Vec::with_capacity(items.len());
    for item in &items {
        let (method, url, body, params) = batch_item(item, ctx)?;
        preps.push(prepare(
            ctx,
            method,
            Some(&url),
            body.as_ref(),
            params.as_ref(),
        )?);
    }
    let host = Host::of(ctx);
    let mut metas = Vec::with_capacity(preps.len());
    let mut requests = Vec::with_capacity(preps.len());
    for prep in preps {
        match prep {
            Prep::Done(v) => metas.push(Err(v)),
            Prep::Send(Prepared { req, meta }) => {
                requests.push(req);
                metas.push(Ok(meta));
            }
        }
    }
    let limits = batch::Limits {
        total: host.shared.run.batch,
        per_host: host.shared.run.batch_per_host,
    };
    let mut responses = host
        .block_on(
            "Making http requests",
            batch::run_batch(&host.http, requests, limits),
        )?
        .into_iter();
    let mut values = Vec::with_capacity(metas.len());
    for meta in metas {
        values.push(match meta {
            Err(v) => v,
            Ok(meta) => {
                let resp = responses.next().expect("one response per request");
                finish(&host, meta, resp, ctx)?
            }
        });
    }
    if reqs.is_array() {
        let out = JsArray::new(ctx)?;
        for v in values {
            out.push(v, ctx)?;
        }
        return Ok(out.into());
    }
    let out = JsObject::with_object_proto(ctx.intrinsics());
    for (key, v) in keys.into_iter().zip(values) {
        out.create_data_property_or_throw(key, v, ctx)?;
    }
    Ok(out.into())
}
