//! The JS `Response` object k6 scripts receive.

use std::time::Duration;

use boa_engine::object::ObjectInitializer;
use boa_engine::{
    js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction,
};
use bytes::Bytes;
use http::Method;
use rk6_http::{HttpError, Response, Timings};

use super::http::ResponseType;
use crate::host::Host;
use crate::json_path;
use crate::runtime::{array_buffer, define};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The per-VU prototype holding `json()` and `html()`, so responses do not each carry
/// their own function objects.
fn prototype(host: &Host, ctx: &mut Context) -> JsObject {
    if let Some(p) = host.response_proto.borrow().as_ref() {
        return p.clone();
    }
    let proto = ObjectInitializer::new(ctx)
        .function(NativeFunction::from_fn_ptr(json), js_string!("json"), 1)
        .function(NativeFunction::from_fn_ptr(html), js_string!("html"), 1)
        .function(
            NativeFunction::from_fn_ptr(html),
            js_string!("submitForm"),
            1,
        )
        .function(
            NativeFunction::from_fn_ptr(html),
            js_string!("clickLink"),
            1,
        )
        .build();
    *host.response_proto.borrow_mut() = Some(proto.clone());
    proto
}

fn timings(t: &Timings, ctx: &mut Context) -> JsObject {
    let obj = JsObject::with_object_proto(ctx.intrinsics());
    for (k, v) in [
        ("duration", t.duration),
        ("blocked", t.blocked),
        ("looking_up", t.looking_up),
        ("connecting", t.connecting),
        ("tls_handshaking", t.tls_handshaking),
        ("sending", t.sending),
        ("waiting", t.waiting),
        ("receiving", t.receiving),
    ] {
        define(&obj, k, ms(v), ctx);
    }
    obj
}

fn request_object(
    method: &Method,
    url: &str,
    headers: &[(String, String)],
    body: &Bytes,
    ctx: &mut Context,
) -> JsObject {
    let obj = JsObject::with_object_proto(ctx.intrinsics());
    define(&obj, "method", JsString::from(method.as_str()), ctx);
    define(&obj, "url", JsString::from(url), ctx);
    let h = JsObject::with_object_proto(ctx.intrinsics());
    for (k, v) in headers {
        let arr = boa_engine::object::builtins::JsArray::from_iter(
            [JsValue::from(JsString::from(v.as_str()))],
            ctx,
        );
        define(&h, k, arr, ctx);
    }
    define(&obj, "headers", h, ctx);
    define(
        &obj,
        "body",
        JsString::from(String::from_utf8_lossy(body).as_ref()),
        ctx,
    );
    let cookies = JsObject::with_object_proto(ctx.intrinsics());
    define(&obj, "cookies", cookies, ctx);
    obj
}

/// A response for a request that could not even be sent (e.g. an invalid URL).
pub(super) fn failed(
    host: &Host,
    method: &Method,
    url: &str,
    headers: &[(String, String)],
    body: &Bytes,
    err: HttpError,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let obj = JsObject::from_proto_and_data(Some(prototype(host, ctx)), ());
    define(&obj, "status", 0, ctx);
    define(&obj, "status_text", js_string!(""), ctx);
    define(&obj, "proto", js_string!(""), ctx);
    define(&obj, "url", JsString::from(url), ctx);
    define(&obj, "body", JsValue::null(), ctx);
    define(
        &obj,
        "headers",
        JsObject::with_object_proto(ctx.intrinsics()),
        ctx,
    );
    define(
        &obj,
        "cookies",
        JsObject::with_object_proto(ctx.intrinsics()),
        ctx,
    );
    let t = timings(&Timings::default(), ctx);
    define(&obj, "timings", t, ctx);
    define(&obj, "error", JsString::from(err.message.as_str()), ctx);
    define(&obj, "error_code", err.code, ctx);
    define(&obj, "remote_ip", js_string!(""), ctx);
    define(&obj, "remote_port", 0, ctx);
    define(&obj, "tls_version", js_string!(""), ctx);
    let req = request_object(method, url, headers, body, ctx);
    define(&obj, "request", req, ctx);
    Ok(obj.into())
}

/// Builds the JS object for a finished request.
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    host: &Host,
    method: &Method,
    url: &str,
    headers: &[(String, String)],
    body: &Bytes,
    resp: &Response,
    response_type: ResponseType,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let obj = JsObject::from_proto_and_data(Some(prototype(host, ctx)), ());
    define(&obj, "status", resp.status, ctx);
    define(
        &obj,
        "status_text",
        JsString::from(resp.status_text.as_str()),
        ctx,
    );
    define(&obj, "proto", JsString::from(resp.proto), ctx);
    define(&obj, "url", JsString::from(resp.url.as_str()), ctx);
    let body_value: JsValue = match response_type {
        ResponseType::None => JsValue::null(),
        _ if resp.error.is_some() && resp.status == 0 => JsValue::null(),
        ResponseType::Binary => array_buffer(&resp.body, ctx)?,
        ResponseType::Text => JsString::from(String::from_utf8_lossy(&resp.body).as_ref()).into(),
    };
    define(&obj, "body", body_value, ctx);
    let h = JsObject::with_object_proto(ctx.intrinsics());
    for (k, v) in &resp.headers {
        define(&h, k, JsString::from(v.as_str()), ctx);
    }
    define(&obj, "headers", h, ctx);
    let cookies = response_cookies(&resp.set_cookies, ctx);
    define(&obj, "cookies", cookies, ctx);
    let last = resp.hops.last().map(|h| h.timings).unwrap_or_default();
    let t = timings(&last, ctx);
    define(&obj, "timings", t, ctx);
    let (error, code) = match &resp.error {
        Some(e) => (e.message.as_str(), e.code),
        None => ("", resp.error_code),
    };
    define(&obj, "error", JsString::from(error), ctx);
    define(&obj, "error_code", code, ctx);
    let (ip, port) = resp
        .remote_addr
        .map_or((String::new(), 0), |a| (a.ip().to_string(), a.port()));
    define(&obj, "remote_ip", JsString::from(ip.as_str()), ctx);
    define(&obj, "remote_port", port, ctx);
    define(&obj, "tls_version", JsString::from(resp.tls_version), ctx);
    let sent = if resp.request_headers.is_empty() {
        headers
    } else {
        &resp.request_headers[..]
    };
    let req = request_object(method, url, sent, body, ctx);
    define(&obj, "request", req, ctx);
    Ok(obj.into())
}

/// `{name: [{name, value, domain, path, http_only, secure, max_age, expires}]}` from the
/// final response's Set-Cookie headers.
fn response_cookies(set_cookies: &[String], ctx: &mut Context) -> JsObject {
    let out = JsObject::with_object_proto(ctx.intrinsics());
    for raw in set_cookies {
        let Ok(c) = cookie::Cookie::parse(raw.as_str()) else {
            continue;
        };
        let item = JsObject::with_object_proto(ctx.intrinsics());
        define(&item, "name", JsString::from(c.name()), ctx);
        define(&item, "value", JsString::from(c.value()), ctx);
        define(
            &item,
            "domain",
            JsString::from(c.domain().unwrap_or("")),
            ctx,
        );
        define(&item, "path", JsString::from(c.path().unwrap_or("")), ctx);
        define(&item, "http_only", c.http_only().unwrap_or(false), ctx);
        define(&item, "secure", c.secure().unwrap_or(false), ctx);
        define(
            &item,
            "max_age",
            c.max_age().map_or(0.0, |d| d.whole_seconds() as f64),
            ctx,
        );
        let expires = c
            .expires_datetime()
            .map_or(0.0, |t| (t.unix_timestamp_nanos() / 1_000_000) as f64);
        define(&item, "expires", expires, ctx);
        let key = JsString::from(c.name());
        let list = out.get(key.clone(), ctx).ok().and_then(|v| v.as_object());
        match list {
            Some(arr) => {
                let len = arr
                    .get(js_string!("length"), ctx)
                    .ok()
                    .and_then(|l| l.as_number())
                    .unwrap_or(0.0) as u32;
                let _ = arr.set(len, item, false, ctx);
            }
            None => {
                let arr =
                    boa_engine::object::builtins::JsArray::from_iter([JsValue::from(item)], ctx);
                let _ = out.create_data_property_or_throw(key, arr, ctx);
            }
        }
    }
    out
}

/// `Response.json([selector])`.
fn json(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let Some(obj) = this.as_object() else {
        return Err(JsNativeError::typ()
            .with_message("json() must be called on a response")
            .into());
    };
    let body = obj.get(js_string!("body"), ctx)?;
    if body.is_null() || body.is_undefined() {
        return Err(JsNativeError::error()
            .with_message("the body is null so we can't transform it to JSON - this likely was because of a request error getting the response")
            .into());
    }
    let text = body.to_string(ctx)?.to_std_string_escaped();
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        JsNativeError::syntax().with_message(format!(
            "cannot parse json due to an error at line {}, character {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    match args.first().filter(|s| !s.is_undefined()) {
        Some(sel) => {
            let sel = sel.to_string(ctx)?.to_std_string_escaped();
            match json_path::select(&value, &sel) {
                Some(v) => JsValue::from_json(&v, ctx),
                None => Ok(JsValue::undefined()),
            }
        }
        None => JsValue::from_json(&value, ctx),
    }
}

fn html(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Err(JsNativeError::error()
        .with_message("Response.html(), submitForm() and clickLink() are not supported by rk6 yet (see docs/compatibility.md)")
        .into())
}
