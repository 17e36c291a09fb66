//! Cookie jars for scripts: `http.cookieJar()` (the VU's own jar, the one requests use by
//! default) and `new http.CookieJar()` (a separate jar, used by requests that pass it as
//! the `jar` param).

use boa_engine::object::builtins::JsArray;
use boa_engine::object::{FunctionObjectBuilder, NativeObject, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    Context, Finalize, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    NativeFunction, Trace,
};
use rk6_http::{CookieJar, SharedJar};

use crate::host::Host;
use crate::modules::args::prop;

/// The object `http.cookieJar()` returns: a handle on the VU's own jar.
#[derive(Trace, Finalize, JsData)]
pub(super) struct VuJar;

/// A jar of the script's own (`new http.CookieJar()`), used by requests that pass it as
/// `jar`; the VU's jar is left alone.
#[derive(Trace, Finalize, JsData)]
pub(super) struct OwnJar(#[unsafe_ignore_trace] pub(super) SharedJar);

/// The jar a `jar` param of another module names: a `new http.CookieJar()`'s, or `None`
/// for the VU's (`http.cookieJar()`) and anything else.
pub(crate) fn script_jar(value: &JsValue) -> Option<SharedJar> {
    value
        .as_object()
        .and_then(|o| o.downcast_ref::<OwnJar>().map(|j| j.0.clone()))
}

/// `http.cookieJar()`.
pub(super) fn cookie_jar(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    jar_object(VuJar, ctx)
}

/// `new http.CookieJar()`.
pub(super) fn new_cookie_jar(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    jar_object(OwnJar(SharedJar::default()), ctx)
}

/// Runs `f` on the jar `this` stands for: its own, or the VU's.
fn with_jar<R>(this: &JsValue, ctx: &Context, f: impl FnOnce(&mut CookieJar) -> R) -> R {
    if let Some(obj) = this.as_object() {
        if let Some(own) = obj.downcast_ref::<OwnJar>() {
            let mut jar = own
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            return f(&mut jar);
        }
    }
    f(&mut Host::of(ctx).http.cookies())
}

fn jar_object<T: NativeObject>(data: T, ctx: &mut Context) -> JsResult<JsValue> {
    let methods: [(&str, usize, NativeFunction); 4] = [
        (
            "cookiesForURL",
            1,
            NativeFunction::from_fn_ptr(jar_cookies_for_url),
        ),
        ("set", 4, NativeFunction::from_fn_ptr(jar_set)),
        ("clear", 1, NativeFunction::from_fn_ptr(jar_clear)),
        ("delete", 2, NativeFunction::from_fn_ptr(jar_delete)),
    ];
    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::with_native_data(data, ctx);
    for (name, len, f) in methods {
        let func = FunctionObjectBuilder::new(&realm, f)
            .name(JsString::from(name))
            .length(len)
            .build();
        init.property(JsString::from(name), func, Attribute::all());
    }
    Ok(init.build().into())
}

/// The absolute URL argument of a jar method.
fn jar_url(a: &[JsValue], ctx: &mut Context) -> JsResult<Result<url::Url, String>> {
    let text = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    Ok(url::Url::parse(&text).map_err(|e| format!("invalid URL \"{text}\": {e}")))
}

/// `jar.cookiesForURL(url)`: `{name: [values]}`; like k6, a URL that is not absolute
/// simply has no cookies.
fn jar_cookies_for_url(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let cookies = match jar_url(a, ctx)? {
        Ok(url) => with_jar(this, ctx, |j| j.cookies_for_url(&url)),
        Err(_) => Vec::new(),
    };
    let out = JsObject::with_object_proto(ctx.intrinsics());
    for (name, value) in cookies {
        let key = JsString::from(name);
        let list = out.get(key.clone(), ctx)?;
        let list = match list
            .as_object()
            .and_then(|o| JsArray::from_object(o.clone()).ok())
        {
            Some(l) => l,
            None => {
                let l = JsArray::new(ctx)?;
                out.create_data_property_or_throw(key, l.clone(), ctx)?;
                l
            }
        };
        list.push(JsString::from(value), ctx)?;
    }
    Ok(out.into())
}

/// `jar.set(url, name, value, [{domain, path, expires, max_age, secure, http_only}])`.
fn jar_set(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let url = jar_url(a, ctx)?.map_err(|e| JsNativeError::typ().with_message(e))?;
    let name = a.get(1).cloned().unwrap_or_default().to_string(ctx)?;
    let value = a.get(2).cloned().unwrap_or_default().to_string(ctx)?;
    let mut header = format!(
        "{}={}",
        name.to_std_string_escaped(),
        value.to_std_string_escaped()
    );
    let opts = a.get(3).and_then(JsValue::as_object);
    let opts = opts.as_ref();
    for (key, attr) in [
        ("domain", "Domain"),
        ("path", "Path"),
        ("expires", "Expires"),
        ("max_age", "Max-Age"),
    ] {
        if let Some(v) = prop(opts, key, ctx)? {
            let v = v.to_string(ctx)?.to_std_string_escaped();
            header.push_str(&format!("; {attr}={v}"));
        }
    }
    for (key, attr) in [("secure", "Secure"), ("http_only", "HttpOnly")] {
        if prop(opts, key, ctx)?.is_some_and(|v| v.to_boolean()) {
            header.push_str(&format!("; {attr}"));
        }
    }
    with_jar(this, ctx, |j| j.set(&url, &header))
        .map_err(|e| JsNativeError::error().with_message(e.message))?;
    Ok(JsValue::undefined())
}

/// `jar.clear(url)`.
fn jar_clear(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    if let Ok(url) = jar_url(a, ctx)? {
        with_jar(this, ctx, |j| j.clear_url(&url));
    }
    Ok(JsValue::undefined())
}

/// `jar.delete(url, name)`.
fn jar_delete(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let Ok(url) = jar_url(a, ctx)? else {
        return Ok(JsValue::undefined());
    };
    let name = a
        .get(1)
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    with_jar(this, ctx, |j| j.delete(&url, &name));
    Ok(JsValue::undefined())
}
