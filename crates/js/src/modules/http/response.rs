//! The JS `Response` object k6 scripts receive.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use boa_engine::builtins::object::OrdinaryObject;
use boa_engine::native_function::NativeFunctionPointer;
use boa_engine::object::builtins::{JsArray, JsFunction};
use boa_engine::object::{FunctionObjectBuilder, ObjectTemplate};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, Finalize, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    NativeFunction, Trace,
};
use boa_gc::GcRefCell;
use bytes::Bytes;
use http::Method;
use rk6_http::{HttpError, Timings};
use rustc_hash::FxHashMap;

use super::instance::Http;
use super::ResponseType;
use crate::host::instances::native;
use crate::host::thread_objects::ThreadObjects;
use crate::host::Host;
use crate::json;
use crate::log::Level;
use crate::modules::html;
use crate::value::{array_buffer, define, plain_object};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The methods of a response, made once per thread: k6 makes them own enumerable,
/// read-only properties (listed by `Object.keys(res)` after the fields, in this order).
fn methods(ctx: &mut Context) -> [(JsString, JsFunction); 4] {
    let realm = ctx.realm().clone();
    let method = |name: &str, f: NativeFunction| {
        let name = JsString::from(name);
        let function = FunctionObjectBuilder::new(&realm, f)
            .name(name.clone())
            .length(1)
            .build();
        (name, function)
    };
    [
        method("clickLink", native::<Http>(click_link)),
        method("html", NativeFunction::from_fn_ptr(html)),
        method("json", NativeFunction::from_fn_ptr(json)),
        method("submitForm", native::<Http>(submit_form)),
    ]
}

/// Keys of `res.timings`, in k6's order.
const TIMING_KEYS: [&str; 8] = [
    "duration",
    "blocked",
    "looking_up",
    "connecting",
    "tls_handshaking",
    "sending",
    "waiting",
    "receiving",
];

fn timings(t: &Timings, kit: &Kit) -> JsObject {
    let values = [
        t.duration,
        t.blocked,
        t.looking_up,
        t.connecting,
        t.tls_handshaking,
        t.sending,
        t.waiting,
        t.receiving,
    ];
    kit.timings
        .create(OrdinaryObject, values.map(|v| ms(v).into()).to_vec())
}

/// The parts of a response that become JS values only when a script reads them: most
/// scripts look at `status` and maybe the body, and building headers, timings and the
/// request echo for every response was the largest cost of a request (see
/// docs/design/002-request-hot-path.md).
pub(super) struct Parts {
    pub(super) method: Method,
    pub(super) url: String,
    pub(super) request_headers: RequestHeaders,
    pub(super) request_body: Bytes,
    /// Response headers as received; canonical names are made when `headers` is read.
    pub(super) headers: rk6_http::HeaderFields,
    /// `None` when the body is `null` (failed request, `responseType: 'none'`).
    pub(super) body: Option<Bytes>,
    pub(super) response_type: ResponseType,
    pub(super) timings: Timings,
    /// The response came over TLS, where a server may have stapled an OCSP answer.
    pub(super) over_tls: bool,
}

impl Parts {
    /// About how much native memory these parts hold: the bodies and header bytes, plus
    /// what the header maps, URL and bookkeeping take (~1.5 KiB for a typical response).
    fn native_size(&self) -> usize {
        const OVERHEAD: usize = 1536;
        let headers = self.headers.byte_len();
        OVERHEAD
            + headers
            + self.body.as_ref().map_or(0, Bytes::len)
            + self.request_body.len()
            + self.url.len()
    }
}

/// The request headers behind `res.request.headers`.
pub(super) enum RequestHeaders {
    /// No request could be made (unparsable URL, unusable body): `res.request` is null.
    NotMade,
    /// As sent on the wire, and as the script gave them (k6 shows a view of the former
    /// that the latter decides).
    Sent(
        Vec<(http::HeaderName, http::HeaderValue)>,
        Vec<(String, String)>,
    ),
    /// As the script gave them, for a request that was never sent.
    Given(Vec<(String, String)>),
}

/// Native data of a response object: the raw parts, and each lazy property's JS value once
/// it was read or assigned. (The properties stay accessors: turning an accessor into a data
/// property does not update a shared shape in Boa 0.22.)
#[derive(Trace, Finalize, JsData)]
struct Lazy {
    #[unsafe_ignore_trace]
    parts: Parts,
    values: GcRefCell<[Option<JsValue>; LAZY]>,
    /// The body parsed by `json()` without a selector: k6 parses it once per response, so a
    /// change a script makes to what `json()` returned shows in the next call's result.
    parsed: GcRefCell<Option<JsValue>>,
}

/// How many properties are lazy; `Kit::getters` holds one accessor pair per property.
const LAZY: usize = 6;

/// Slots of the lazy properties in [`Lazy::values`] and [`Kit::getters`].
const BODY: usize = 0;
const HEADERS: usize = 1;
const COOKIES: usize = 2;
const TIMINGS: usize = 3;
const REQUEST: usize = 4;
const OCSP: usize = 5;

/// Objects every response of the thread's VUs shares: the methods (`json()`, …), the
/// getters of the lazy properties, and the templates responses and their timings are made
/// from (one allocation each instead of a shape transition per property).
pub(crate) struct Kit {
    methods: [(JsString, JsFunction); 4],
    getters: [(JsString, JsFunction, JsFunction); LAZY],
    response: ObjectTemplate,
    timings: ObjectTemplate,
    /// JS strings of recent field values (status texts, protocols, URLs, addresses): a VU's
    /// responses repeat them, and reusing one saves an allocation per field per response.
    strings: RefCell<FxHashMap<Box<str>, JsString>>,
    /// The last remote address and its text: formatting it cost ~1 k instructions a response.
    last_ip: RefCell<Option<(std::net::IpAddr, JsString)>>,
    /// The last canonical status text (`"200 OK"`) made, by its code.
    last_status: RefCell<Option<(u16, JsString)>>,
}

/// Bound on [`Kit::strings`]: scripts with ever-new URLs must not grow it without end.
const MAX_STRINGS: usize = 64;

impl Kit {
    /// The JS string of `ip`, reused while responses come from one address.
    fn ip(&self, ip: std::net::IpAddr) -> JsString {
        let mut last = self.last_ip.borrow_mut();
        match &*last {
            Some((seen, js)) if *seen == ip => js.clone(),
            _ => {
                let js = JsString::from(ip.to_string().as_str());
                *last = Some((ip, js.clone()));
                js
            }
        }
    }

    /// The JS string of the status text (Go's `Status`): the code with the server's reason
    /// phrase, or the canonical one, which is reused while responses keep their code.
    fn status_text(&self, status: u16, reason: Option<&rk6_http::ReasonPhrase>) -> JsString {
        if reason.is_some() {
            return JsString::from(rk6_http::status_text(status, reason).as_str());
        }
        let mut last = self.last_status.borrow_mut();
        match &*last {
            Some((seen, js)) if *seen == status => js.clone(),
            _ => {
                let js = JsString::from(rk6_http::status_text(status, None).as_str());
                *last = Some((status, js.clone()));
                js
            }
        }
    }

    /// The JS string for `s`, reused when recently seen.
    fn string(&self, s: &str) -> JsString {
        if s.is_empty() {
            return js_string!();
        }
        let mut strings = self.strings.borrow_mut();
        if let Some(js) = strings.get(s) {
            return js.clone();
        }
        if strings.len() >= MAX_STRINGS {
            strings.clear();
        }
        let js = JsString::from(s);
        strings.insert(s.into(), js.clone());
        js
    }
}

/// The response kit of the VUs of this thread (its objects are shared, `host::thread_objects`).
fn kit(ctx: &mut Context) -> Rc<Kit> {
    // Sharing fails only for an object that cannot be shared, which the kit has none of;
    // a VU would then make its own.
    ThreadObjects::of(ctx)
        .state(ctx, |ctx| {
            let kit = make_kit(ctx);
            let mut objects: Vec<JsObject> =
                kit.methods.iter().map(|(_, f)| f.clone().into()).collect();
            for (_, get, set) in &kit.getters {
                objects.push(get.clone().into());
                objects.push(set.clone().into());
            }
            (kit, objects)
        })
        .unwrap_or_else(|_| Rc::new(make_kit(ctx)))
}

fn make_kit(ctx: &mut Context) -> Kit {
    let methods = methods(ctx);
    let realm = ctx.realm().clone();
    let accessor = |name: &str, get: NativeFunctionPointer, set: NativeFunctionPointer| {
        let getter = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(get))
            .name(JsString::from(format!("get {name}").as_str()))
            .build();
        let setter = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(set))
            .name(JsString::from(format!("set {name}").as_str()))
            .length(1)
            .build();
        (JsString::from(name), getter, setter)
    };
    let getters = [
        accessor("body", get_body, set_body),
        accessor("headers", get_headers, set_headers),
        accessor("cookies", get_cookies, set_cookies),
        accessor("timings", get_timings, set_timings),
        accessor("request", get_request, set_request),
        accessor("ocsp", get_ocsp, set_ocsp),
    ];
    // k6's fields are writable and enumerable but not configurable, in this order (so
    // `Object.keys(res)` and `JSON.stringify(res)` list them as k6 does); `build` fills
    // them in the same order.
    let data = Attribute::WRITABLE | Attribute::ENUMERABLE;
    let object_proto = ctx.intrinsics().constructors().object().prototype();
    let mut response = ObjectTemplate::for_prototype(ctx, Some(object_proto.clone()));
    let lazy = |t: &mut ObjectTemplate, slot: usize| {
        t.accessor(
            getters[slot].0.clone().into(),
            true,
            true,
            Attribute::ENUMERABLE,
        );
    };
    for key in [
        "remote_ip",
        "remote_port",
        "url",
        "status",
        "status_text",
        "proto",
    ] {
        response.property(JsString::from(key).into(), data);
    }
    for slot in [HEADERS, COOKIES, BODY, TIMINGS] {
        lazy(&mut response, slot);
    }
    for key in ["tls_version", "tls_cipher_suite"] {
        response.property(JsString::from(key).into(), data);
    }
    lazy(&mut response, OCSP);
    for key in ["error", "error_code"] {
        response.property(JsString::from(key).into(), data);
    }
    lazy(&mut response, REQUEST);
    for (name, _) in &methods {
        response.property(name.clone().into(), Attribute::ENUMERABLE);
    }
    let mut timings = ObjectTemplate::for_prototype(ctx, Some(object_proto));
    for key in TIMING_KEYS {
        timings.property(JsString::from(key).into(), data);
    }
    Kit {
        methods,
        getters,
        response,
        timings,
        strings: RefCell::default(),
        last_ip: RefCell::default(),
        last_status: RefCell::default(),
    }
}

/// Builds the JS object for a response (or a request that failed before one arrived).
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    status: u16,
    reason: Option<&rk6_http::ReasonPhrase>,
    proto: &str,
    url: &str,
    error: Option<&HttpError>,
    error_code: u32,
    remote: Option<std::net::SocketAddr>,
    tls_version: &str,
    tls_cipher_suite: &str,
    parts: Parts,
    ctx: &mut Context,
) -> JsValue {
    let kit = kit(ctx);
    let (ip, port) = match remote {
        Some(a) => (kit.ip(a.ip()), a.port()),
        None => (js_string!(), 0),
    };
    crate::host::gc_pacing::held(parts.native_size());
    let accessor = |slot: usize| -> [JsValue; 2] {
        let (_, get, set) = &kit.getters[slot];
        [get.clone().into(), set.clone().into()]
    };
    // In the order of the template's properties (`make_kit`).
    let mut storage = Vec::with_capacity(26);
    storage.extend([
        ip.into(),
        port.into(),
        kit.string(url).into(),
        status.into(),
        kit.status_text(status, reason).into(),
        kit.string(proto).into(),
    ]);
    for slot in [HEADERS, COOKIES, BODY, TIMINGS] {
        storage.extend(accessor(slot));
    }
    storage.extend([
        kit.string(tls_version).into(),
        kit.string(tls_cipher_suite).into(),
    ]);
    storage.extend(accessor(OCSP));
    storage.extend([
        error
            .map_or(js_string!(), |e| JsString::from(e.message.as_str()))
            .into(),
        error.map_or(error_code, |e| e.code).into(),
    ]);
    storage.extend(accessor(REQUEST));
    storage.extend(kit.methods.iter().map(|(_, f)| JsValue::from(f.clone())));
    let lazy = Lazy {
        parts,
        values: GcRefCell::new(Default::default()),
        parsed: GcRefCell::new(None),
    };
    kit.response.create(lazy, storage).into()
}

/// The value of lazy property `slot`: cached, or made from the response's parts by `make`.
fn lazily(
    this: &JsValue,
    slot: usize,
    ctx: &mut Context,
    make: impl FnOnce(&Parts, &mut Context) -> JsResult<JsValue>,
) -> JsResult<JsValue> {
    let Some(obj) = this.as_object() else {
        return Ok(JsValue::undefined());
    };
    let Some(lazy) = obj.downcast_ref::<Lazy>() else {
        return Ok(JsValue::undefined());
    };
    if let Some(v) = &lazy.values.borrow()[slot] {
        return Ok(v.clone());
    }
    let value = make(&lazy.parts, ctx)?;
    lazy.values.borrow_mut()[slot] = Some(value.clone());
    Ok(value)
}

/// Assigning a lazy property replaces its value, as on k6's plain response object.
fn assign(this: &JsValue, slot: usize, args: &[JsValue]) -> JsResult<JsValue> {
    if let Some(lazy) = this
        .as_object()
        .as_ref()
        .and_then(|o| o.downcast_ref::<Lazy>())
    {
        lazy.values.borrow_mut()[slot] = Some(args.first().cloned().unwrap_or_default());
    }
    Ok(JsValue::undefined())
}

fn set_body(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    assign(this, BODY, args)
}
fn set_headers(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    assign(this, HEADERS, args)
}
fn set_cookies(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    assign(this, COOKIES, args)
}
fn set_timings(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    assign(this, TIMINGS, args)
}
fn set_request(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    assign(this, REQUEST, args)
}

fn set_ocsp(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    assign(this, OCSP, args)
}

/// Whether the run gave the "OCSP not decoded" warning (once per run is enough).
#[derive(Default)]
struct OcspWarned(AtomicBool);

/// True the first time a run asks.
fn first_ocsp_warning(shared: &crate::shared::Shared) -> bool {
    !shared
        .program
        .run_scoped()
        .get::<OcspWarned>()
        .0
        .swap(true, Ordering::Relaxed)
}

/// The empty record k6 gives a response without a stapled OCSP answer. rk6 does not decode
/// stapled answers, so a TLS response gets it too; reading it says so once per run rather
/// than letting a stapling server's data go missing silently.
fn get_ocsp(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    lazily(this, OCSP, ctx, |p, ctx| {
        let host = Host::of(ctx);
        if p.over_tls && first_ocsp_warning(&host.shared) {
            host.shared.logger.log(
                Level::Warning,
                "res.ocsp: rk6 does not decode stapled OCSP responses yet; the fields of TLS responses are empty even when the server stapled one",
                &[],
            );
        }
        let o = plain_object(ctx);
        define(&o, js_string!("produced_at"), 0);
        define(&o, js_string!("this_update"), 0);
        define(&o, js_string!("next_update"), 0);
        define(&o, js_string!("revoked_at"), 0);
        define(&o, js_string!("revocation_reason"), js_string!());
        define(&o, js_string!("status"), js_string!());
        Ok(o.into())
    })
}

fn get_body(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    lazily(this, BODY, ctx, |p, ctx| match (&p.body, p.response_type) {
        (None, _) | (_, ResponseType::None) => Ok(JsValue::null()),
        (Some(b), ResponseType::Binary) => array_buffer(b, ctx),
        (Some(b), ResponseType::Text) => {
            Ok(JsString::from(String::from_utf8_lossy(b).as_ref()).into())
        }
    })
}

fn get_headers(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    lazily(this, HEADERS, ctx, |p, ctx| {
        let h = plain_object(ctx);
        for (k, v) in rk6_http::header_list(&p.headers) {
            define(&h, JsString::from(k.as_str()), JsString::from(v.as_str()));
        }
        Ok(h.into())
    })
}

fn get_cookies(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    lazily(this, COOKIES, ctx, |p, ctx| {
        let raw = p.headers.get_all("set-cookie").map(String::from_utf8_lossy);
        Ok(response_cookies(raw, ctx).into())
    })
}

fn get_timings(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    lazily(this, TIMINGS, ctx, |p, ctx| {
        Ok(timings(&p.timings, &kit(ctx)).into())
    })
}

fn get_request(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    lazily(this, REQUEST, ctx, |p, ctx| {
        if matches!(p.request_headers, RequestHeaders::NotMade) {
            return Ok(JsValue::null());
        }
        let obj = plain_object(ctx);
        define(
            &obj,
            js_string!("method"),
            JsString::from(p.method.as_str()),
        );
        define(&obj, js_string!("url"), JsString::from(p.url.as_str()));
        let h = plain_object(ctx);
        let list = match &p.request_headers {
            RequestHeaders::Sent(map, given) => rk6_http::request_header_list(map, given),
            RequestHeaders::Given(pairs) => pairs.clone(),
            RequestHeaders::NotMade => Vec::new(),
        };
        for (k, v) in &list {
            let arr = JsArray::from_iter([JsValue::from(JsString::from(v.as_str()))], ctx);
            define(&h, JsString::from(k.as_str()), arr);
        }
        define(&obj, js_string!("headers"), h);
        define(
            &obj,
            js_string!("body"),
            JsString::from(String::from_utf8_lossy(&p.request_body).as_ref()),
        );
        define(&obj, js_string!("cookies"), plain_object(ctx));
        Ok(obj.into())
    })
}

/// `{name: [{name, value, domain, path, http_only, secure, max_age, expires}]}` from the
/// final response's Set-Cookie headers.
fn response_cookies<'a>(
    set_cookies: impl Iterator<Item = std::borrow::Cow<'a, str>>,
    ctx: &mut Context,
) -> JsObject {
    let out = plain_object(ctx);
    for raw in set_cookies {
        let Ok(c) = cookie::Cookie::parse(raw.as_ref()) else {
            continue;
        };
        let item = plain_object(ctx);
        define(&item, js_string!("name"), JsString::from(c.name()));
        define(&item, js_string!("value"), JsString::from(c.value()));
        define(
            &item,
            js_string!("domain"),
            JsString::from(c.domain().unwrap_or("")),
        );
        define(
            &item,
            js_string!("path"),
            JsString::from(c.path().unwrap_or("")),
        );
        define(
            &item,
            js_string!("http_only"),
            c.http_only().unwrap_or(false),
        );
        define(&item, js_string!("secure"), c.secure().unwrap_or(false));
        define(
            &item,
            js_string!("max_age"),
            c.max_age().map_or(0.0, |d| d.whole_seconds() as f64),
        );
        // k6 reports Go's `Expires.UnixNano() / 1e6`: int64 nanoseconds, which wrap outside
        // 1678–2262; a cookie without `Expires` has Go's zero time, -6795364578871 that way.
        const GO_ZERO_TIME_UNIX_NANO: i64 = -6_795_364_578_871_345_152;
        let nanos = c
            .expires_datetime()
            .map_or(GO_ZERO_TIME_UNIX_NANO, |t| t.unix_timestamp_nanos() as i64);
        let expires = (nanos / 1_000_000) as f64;
        define(&item, js_string!("expires"), expires);
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
    // Parse straight from the received bytes; no JS string needs to exist for that.
    let bytes = obj
        .downcast_ref::<Lazy>()
        .and_then(|l| match l.parts.response_type {
            ResponseType::None => None,
            _ => l.parts.body.clone(),
        });
    let Some(bytes) = bytes else {
        return Err(JsNativeError::error()
            .with_message("the body is null so we can't transform it to JSON - this likely was because of a request error getting the response")
            .into());
    };
    let unparsable = |e: serde_json::Error| {
        JsNativeError::syntax().with_message(format!(
            "cannot parse json due to an error at line {}, character {}: {e}",
            e.line(),
            e.column()
        ))
    };
    match args.first().filter(|s| !s.is_undefined()) {
        Some(sel) => {
            let sel = sel.to_string(ctx)?.to_std_string_escaped();
            Ok(json::path::select(&bytes, &sel, ctx)
                .map_err(unparsable)?
                .unwrap_or_default())
        }
        // The whole document goes straight from the bytes to JS values, with objects of
        // equal keys sharing a shape (no intermediate serde_json::Value), once.
        None => {
            let lazy = obj.downcast_ref::<Lazy>();
            if let Some(parsed) = lazy.as_ref().and_then(|l| l.parsed.borrow().clone()) {
                return Ok(parsed);
            }
            let value = json::parse::from_slice(&bytes, ctx).map_err(unparsable)?;
            if let Some(lazy) = lazy {
                *lazy.parsed.borrow_mut() = Some(value.clone());
            }
            Ok(value)
        }
    }
}

/// The response body parsed as HTML, with the response's final URL as the page URL.
fn document(this: &JsValue, ctx: &mut Context) -> JsResult<Rc<html::Doc>> {
    let Some(obj) = this.as_object() else {
        return Err(JsNativeError::typ()
            .with_message("html() must be called on a response")
            .into());
    };
    let body = obj
        .downcast_ref::<Lazy>()
        .and_then(|l| match l.parts.response_type {
            ResponseType::None => None,
            _ => l.parts.body.clone(),
        });
    let Some(body) = body else {
        return Err(JsNativeError::error()
            .with_message("the body is null so we can't parse it as HTML - this likely was because of a request error getting the response")
            .into());
    };
    let url = obj
        .get(js_string!("url"), ctx)?
        .to_string(ctx)?
        .to_std_string_escaped();
    Ok(Rc::new(html::Doc::parse(
        &String::from_utf8_lossy(&body),
        url,
    )))
}

/// `Response.html([selector])`.
fn html(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let doc = document(this, ctx)?;
    let sel = html::document_selection(doc, ctx);
    match args.first().filter(|s| !s.is_undefined()) {
        Some(selector) => {
            let obj = sel.as_object().expect("a selection is an object");
            let find = obj.get(js_string!("find"), ctx)?;
            let find = find.as_callable().expect("selections have find()");
            find.call(&sel, std::slice::from_ref(selector), ctx)
        }
        None => Ok(sel),
    }
}

/// Performs `nav` like `http.request` would, with the `params` of the options.
fn navigate(
    http: &Http,
    nav: html::Navigation,
    opts: Option<&JsObject>,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let params = crate::modules::args::prop(opts, "params", ctx)?;
    let url = JsValue::from(JsString::from(nav.url));
    super::request::send(
        http,
        ctx,
        nav.method,
        Some(&url),
        nav.body.as_ref(),
        params.as_ref(),
    )
}

/// `Response.submitForm({formSelector, fields, submitSelector, submitSelectorAttribute,
/// params})`.
fn submit_form(
    http: &Rc<Http>,
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let doc = document(this, ctx)?;
    let opts = args.first().and_then(JsValue::as_object);
    let nav = html::submit_form(&doc, opts.as_ref(), ctx)?;
    navigate(http, nav, opts.as_ref(), ctx)
}

/// `Response.clickLink({selector, params})`.
fn click_link(
    http: &Rc<Http>,
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let doc = document(this, ctx)?;
    let opts = args.first().and_then(JsValue::as_object);
    let nav = html::click_link(&doc, opts.as_ref(), ctx)?;
    navigate(http, nav, opts.as_ref(), ctx)
}

#[cfg(test)]
mod tests {
    use super::first_ocsp_warning;

    #[test]
    fn the_ocsp_warning_is_once_per_run() {
        let (a, b) = (crate::test_js::shared(), crate::test_js::shared());
        assert!(first_ocsp_warning(&a));
        assert!(!first_ocsp_warning(&a), "once per run");
        assert!(first_ocsp_warning(&b), "another run warns again");
    }
}
