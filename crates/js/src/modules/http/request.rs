//! One request from JS arguments to a JS response: the verb functions, turning arguments
//! into an `rk6_http::Request`, and finishing a response (samples, warnings, the object).

use std::rc::Rc;

use boa_engine::{Context, JsNativeError, JsResult, JsValue};
use bytes::Bytes;
use http::Method;
use rk6_http::{Auth, Request, Response};

use super::body::body_from_js;
use super::callback::StatusRanges;
use super::instance::Http;
use super::params::{Params, ResponseType};
use super::samples::{emit, emit_refused, without_credentials, RequestTags};
use super::url_tag::UrlTag;
use super::{compression, debug, response};
use crate::host::{Host, Phase};
use crate::log::Level;
use crate::modules::args::arg;

pub(super) fn get(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    send(http, ctx, Method::GET, a.first(), None, arg(a, 1))
}
pub(super) fn head(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    send(http, ctx, Method::HEAD, a.first(), None, arg(a, 1))
}
pub(super) fn post(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    send(http, ctx, Method::POST, a.first(), arg(a, 1), arg(a, 2))
}
pub(super) fn put(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    send(http, ctx, Method::PUT, a.first(), arg(a, 1), arg(a, 2))
}
pub(super) fn patch(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    send(http, ctx, Method::PATCH, a.first(), arg(a, 1), arg(a, 2))
}
pub(super) fn del(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    send(http, ctx, Method::DELETE, a.first(), arg(a, 1), arg(a, 2))
}
pub(super) fn options(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    send(http, ctx, Method::OPTIONS, a.first(), arg(a, 1), arg(a, 2))
}

pub(super) fn method_arg(a: &[JsValue], ctx: &mut Context) -> JsResult<Method> {
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

pub(super) fn request(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let method = method_arg(a, ctx)?;
    send(http, ctx, method, a.get(1), arg(a, 2), arg(a, 3))
}

/// A request ready to be sent, and what turns its response into JS.
pub(super) struct Prepared {
    pub(super) req: Request,
    pub(super) meta: Meta,
}

/// What [`finish`] needs besides the response.
pub(super) struct Meta {
    pub(super) method: Method,
    pub(super) url_text: String,
    pub(super) body: Bytes,
    pub(super) tags: RequestTags,
    pub(super) callback: Option<Option<StatusRanges>>,
    pub(super) response_type: ResponseType,
    pub(super) auth: Auth,
    /// The request gave its own `redirects` (no warning at the default limit then).
    pub(super) redirects_set: bool,
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
    http: &Http,
    ctx: &mut Context,
    method: Method,
    url: Option<&JsValue>,
    body: Option<&JsValue>,
    params: Option<&JsValue>,
) -> JsResult<JsValue> {
    let Prepared { req, meta } = match prepare(http, ctx, method, url, body, params)? {
        Prep::Done(v) => return Ok(v),
        Prep::Send(p) => p,
    };
    let host = Host::of(ctx);
    let resp = host.block_on("Making http requests", host.http.send(req))?;
    finish(http, &host, meta, resp, ctx)
}

/// Turns JS arguments into a request (checks the phase, the params and the URL).
pub(super) fn prepare(
    http: &Http,
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
            params.template = Some(name);
            url
        }
        None => match url.and_then(JsValue::as_string) {
            // Scripts mostly request the same few URL strings: reuse the last parse.
            Some(js) => {
                let hit = match &*http.last_url.borrow() {
                    Some((k, text, parsed)) if *k == js => Some((text.clone(), parsed.clone())),
                    _ => None,
                };
                if let Some((text, parsed)) = hit {
                    return prepare_body(http, host, method, text, Ok(parsed), params, body, ctx);
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
        *http.last_url.borrow_mut() = Some((js.clone(), url_text.clone(), u.clone()));
    }
    prepare_body(http, host, method, url_text, parsed, params, body, ctx)
}

/// The rest of [`prepare`], once the URL is known: body, headers, compression.
#[allow(clippy::too_many_arguments)]
pub(super) fn prepare_body(
    http: &Http,
    host: Rc<Host>,
    method: Method,
    url_text: String,
    parsed: Result<url::Url, url::ParseError>,
    mut params: Params,
    body: Option<&JsValue>,
    ctx: &mut Context,
) -> JsResult<Prep> {
    let tags = RequestTags {
        user: std::mem::take(&mut params.tags),
        template: params.template.take(),
    };
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
            headers: rk6_http::HeaderFields::default(),
            body: None,
            response_type: params.response_type,
            timings: Default::default(),
            over_tls: false,
        };
        Ok(Prep::Done(response::build(
            0,
            None,
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
                (&tags, http.callback(&params.callback)),
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
                (&tags, http.callback(&params.callback)),
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
            tags,
            callback: params.callback,
            response_type: params.response_type,
            auth: params.auth,
            redirects_set: params.redirects.is_some(),
        },
    }))
}

/// Emits the response's samples and builds its JS object (or the `throw` exception).
pub(super) fn finish(
    http: &Http,
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
    let callback = http.callback(&callback);
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
    // k6 reports a digest request's URL without its credentials.
    let final_url = match auth {
        Auth::Digest => without_credentials(&resp.url, None),
        Auth::Basic => std::borrow::Cow::Borrowed(&resp.url),
    };
    // A failure mid-body keeps what arrived (k6 does), `""` when the head came and no body
    // byte; one before the response head has no body.
    let no_body =
        resp.error.is_some() && resp.status == 0 && resp.body.is_empty() && !resp.failed_in_body;
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
        resp.status,
        resp.reason.as_ref(),
        resp.proto,
        final_url.as_str(),
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
pub(super) fn failure_text(
    method: &Method,
    url: &str,
    in_body: bool,
    err: &rk6_http::HttpError,
) -> String {
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
