//! `http.batch`: requests of one VU that run at the same time, bounded by k6's `batch` and
//! `batchPerHost`.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use boa_engine::object::builtins::JsArray;
use boa_engine::property::PropertyKey;
use boa_engine::{js_string, Context, JsNativeError, JsObject, JsResult, JsValue};
use http::Method;
use rk6_http::{Client, Request, Response};

use super::instance::Http;
use super::request::{finish, prepare, Prep, Prepared};
use super::url_tag::UrlTag;
use crate::host::Host;

/// A request future of the VU's client.
pub(super) type Call<'a> = Pin<Box<dyn Future<Output = Response> + 'a>>;

/// `http.batch` parallelism (k6 options `batch` and `batchPerHost`; 0 means no limit).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) total: usize,
    pub(crate) per_host: usize,
}

/// The origin a request counts against for `batchPerHost`.
pub(super) fn host_of(req: &Request) -> (String, u16) {
    (
        req.url.host_str().unwrap_or_default().to_owned(),
        req.url.port_or_known_default().unwrap_or(0),
    )
}

/// Sends `reqs` concurrently within `limits` and returns their responses in request order.
/// Requests start in order; one waiting for its host's slot does not hold a global one.
pub(crate) async fn run_batch(
    client: &Client,
    reqs: Vec<Request>,
    limits: Limits,
) -> Vec<Response> {
    let total = if limits.total == 0 {
        usize::MAX
    } else {
        limits.total
    };
    let per_host = if limits.per_host == 0 {
        usize::MAX
    } else {
        limits.per_host
    };
    let hosts: Vec<(String, u16)> = reqs.iter().map(host_of).collect();
    let mut waiting: Vec<Option<Request>> = reqs.into_iter().map(Some).collect();
    let mut out: Vec<Option<Response>> = waiting.iter().map(|_| None).collect();
    let mut running: Vec<(usize, Call<'_>)> = Vec::new();
    let mut busy: HashMap<&(String, u16), usize> = HashMap::new();
    let mut next = 0;
    poll_fn(|cx| loop {
        for i in next..waiting.len() {
            if running.len() >= total {
                break;
            }
            let slot = busy.entry(&hosts[i]).or_default();
            if *slot >= per_host {
                continue;
            }
            if let Some(req) = waiting[i].take() {
                *slot += 1;
                running.push((i, Box::pin(client.send(req))));
            }
        }
        while next < waiting.len() && waiting[next].is_none() {
            next += 1;
        }
        let mut finished = false;
        running.retain_mut(|(i, call)| match call.as_mut().poll(cx) {
            Poll::Ready(resp) => {
                out[*i] = Some(resp);
                if let Some(n) = busy.get_mut(&hosts[*i]) {
                    *n -= 1;
                }
                finished = true;
                false
            }
            Poll::Pending => true,
        });
        if running.is_empty() && next == waiting.len() {
            return Poll::Ready(());
        }
        if !finished {
            return Poll::Pending;
        }
    })
    .await;
    out.into_iter()
        .map(|r| r.expect("every batch request ran"))
        .collect()
}

/// One `http.batch` item as `(method, url, body, params)`.
pub(super) fn batch_item(
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
pub(super) fn batch(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
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
            http,
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
    let limits = Limits {
        total: host.shared.run.batch,
        per_host: host.shared.run.batch_per_host,
    };
    let mut responses = host
        .block_on(
            "Making http requests",
            run_batch(&host.http, requests, limits),
        )?
        .into_iter();
    let mut values = Vec::with_capacity(metas.len());
    for meta in metas {
        values.push(match meta {
            Err(v) => v,
            Ok(meta) => {
                let resp = responses.next().expect("one response per request");
                finish(http, &host, meta, resp, ctx)?
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
