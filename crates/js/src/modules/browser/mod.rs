//! `k6/browser`: Chromium driven over the DevTools protocol (`rk6-cdp`).
//!
//! The API classes (`Browser`, `BrowserContext`, `Page`, `Locator`, ...) are JavaScript
//! (`js/api.js`), as Playwright's client is: each method is a few protocol calls and
//! awaits, and the page-side work (selectors, actionability, text) is a script run in the
//! page (`js/injected.js`). Below them, the natives here: a protocol call as a promise,
//! the events of the sessions a VU attached to (handed to the API's dispatcher by the VU's
//! event loop, as timers and sockets are), the browser metrics, and files. One Chromium per
//! run serves every browser VU ([`chromium`]); each iteration works in browser contexts of
//! its own, closed when it ends ([`instance`]).

mod chromium;
mod instance;

use std::rc::Rc;

use base64::Engine as _;
use boa_engine::object::builtins::JsPromise;
use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsNativeError, JsResult, JsString, JsValue, Module, Source};
use serde_json::Value;

use crate::host::instances::{native, InstanceFn};
use crate::host::Host;
use crate::modules::args::{arg, string_arg};
use crate::modules::synthetic::from_object;
pub(crate) use instance::BrowserVu;
use instance::{Outcome, METRICS};

/// The API classes, a function of the natives object returning the module's exports.
const API_JS: &str = include_str!("js/api.js");
/// The script run in every page: selector engines, actionability, element helpers.
const INJECTED_JS: &str = include_str!("js/injected.js");
/// Google's web-vitals (Apache-2.0, `js/web-vitals.LICENSE`), then the reporter.
const WEB_VITALS_JS: &str = include_str!("js/web-vitals.iife.js");
const VITALS_JS: &str = include_str!("js/vitals.js");

/// k6's message when a VU uses the browser outside a browser scenario.
const NOT_IN_SCENARIO: &str = "browser not found in registry. make sure to set browser type option in scenario definition in order to use the browser module";

/// Builds the module for the VU in `ctx`.
pub(crate) fn module(ctx: &mut Context) -> JsResult<Module> {
    let natives = natives(ctx);
    let factory = ctx.eval(Source::from_bytes(API_JS))?;
    let factory = factory
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message("k6/browser: bad API script"))?;
    let exports = factory.call(&JsValue::undefined(), &[natives.into()], ctx)?;
    let exports = exports
        .as_object()
        .ok_or_else(|| JsNativeError::typ().with_message("k6/browser: bad API script"))?
        .clone();
    let names = ["browser", "devices", "networkProfiles"]
        .map(JsString::from)
        .to_vec();
    Ok(from_object(exports, names, ctx))
}

fn natives(ctx: &mut Context) -> boa_engine::JsObject {
    let fns: [(&str, InstanceFn<BrowserVu>, usize); 16] = [
        ("decode64", decode64, 1),
        ("encode64", encode64, 1),
        ("text64", text64, 1),
        ("goError", go_error, 1),
        ("send", send, 3),
        ("launch", launch, 0),
        ("subscribe", subscribe, 1),
        ("setDispatcher", set_dispatcher, 1),
        ("hold", hold, 0),
        ("release", release, 0),
        ("trackContext", track_context, 1),
        ("untrackContext", untrack_context, 1),
        ("generation", generation, 0),
        ("emit", emit, 3),
        ("writeFile", write_file, 2),
        ("isConnected", is_connected, 0),
    ];
    let mut init = ObjectInitializer::new(ctx);
    for (name, f, len) in fns {
        init.function(native(f), JsString::from(name), len);
    }
    init.property(
        js_string!("injected"),
        js_string!(INJECTED_JS),
        Attribute::READONLY,
    );
    let vitals = format!("{WEB_VITALS_JS}\n{VITALS_JS}");
    init.property(
        js_string!("vitals"),
        JsString::from(vitals.as_str()),
        Attribute::READONLY,
    );
    init.build()
}

/// A promise settled by `work`'s outcome on the VU's event loop.
fn promise(
    vu: &Rc<BrowserVu>,
    work: impl std::future::Future<Output = Outcome> + 'static,
    ctx: &mut Context,
) -> JsValue {
    let (promise, resolvers) = JsPromise::new_pending(ctx);
    vu.start(Box::pin(work), resolvers);
    promise.into()
}

fn rejected(msg: &str, ctx: &mut Context) -> JsResult<JsValue> {
    let e = crate::modules::go_error::go_value(msg, false, ctx);
    Ok(JsPromise::reject(e, ctx)?.into())
}

/// `encode64(data)`: base64 of a string's UTF-8 bytes or of an ArrayBuffer / view.
fn encode64(_: &Rc<BrowserVu>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let v = arg(a, 0).cloned().unwrap_or_default();
    let bytes = match crate::modules::encoding::bytes_of(&v, ctx)? {
        Some(b) => b,
        None => v.to_string(ctx)?.to_std_string_escaped().into_bytes(),
    };
    Ok(JsString::from(
        base64::engine::general_purpose::STANDARD
            .encode(bytes)
            .as_str(),
    )
    .into())
}

/// `text64(base64)`: the UTF-8 text base64 encodes (response bodies).
fn text64(_: &Rc<BrowserVu>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = string_arg(a, 0, ctx)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|e| JsNativeError::error().with_message(format!("decoding: {e}")))?;
    Ok(JsString::from(String::from_utf8_lossy(&bytes).as_ref()).into())
}

/// `goError(message)`: the Go error value k6's browser module rejects with.
fn go_error(_: &Rc<BrowserVu>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let msg = string_arg(a, 0, ctx)?;
    crate::modules::go_error::go_value(&msg, false, ctx).into_opaque(ctx)
}

/// `send(session, method, params)`: one protocol command; resolves with its result.
fn send(vu: &Rc<BrowserVu>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let session = match arg(a, 0) {
        Some(v) if !v.is_null_or_undefined() => Some(v.to_string(ctx)?.to_std_string_escaped()),
        _ => None,
    };
    let method = string_arg(a, 1, ctx)?;
    let params = match arg(a, 2) {
        Some(v) if !v.is_undefined() => v.to_json(ctx)?.unwrap_or(Value::Null),
        _ => Value::Object(Default::default()),
    };
    let Some(browser) = vu.browser() else {
        return rejected("browser has been closed", ctx);
    };
    if method == "Target.createBrowserContext" {
        // After the VU's last contexts are gone (see `BrowserVu::disposing`).
        let pending = std::mem::take(&mut *vu.disposing.borrow_mut());
        return Ok(promise(
            vu,
            async move {
                for d in pending {
                    let _ = d.await;
                }
                let call = browser.call(session.as_deref(), &method, params);
                call.await.map_err(|e| e.to_string())
            },
            ctx,
        ));
    }
    let call = browser.call(session.as_deref(), &method, params);
    Ok(promise(
        vu,
        async move { call.await.map_err(|e| e.to_string()) },
        ctx,
    ))
}

/// `launch()`: the run's browser, started on first use (only this VU waits for it);
/// returns its version. Outside a browser scenario it throws k6's message; a browser that
/// cannot be found or started aborts the test, as in k6 (exit 108).
fn launch(vu: &Rc<BrowserVu>, _: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    let kind = host
        .iteration
        .borrow()
        .as_ref()
        .and_then(|i| i.scenario.browser.clone());
    match kind.as_deref() {
        None => return Err(crate::modules::go_error::go_value(NOT_IN_SCENARIO, false, ctx)),
        Some("chromium") => {}
        Some(other) => {
            return Err(crate::value::module_abort_error(&format!(
                "error building browser on IterStart: initializing browser type: error parsing browser options: unsupported browser type: {other}"
            )))
        }
    }
    let browser = match vu.browser() {
        Some(b) => b,
        None => match host.block_on("browser", vu.chromium.get())? {
            Ok(Ok(b)) => b,
            Ok(Err(e)) => {
                return Err(crate::value::module_abort_error(&format!(
                    "error building browser on IterStart: {e}"
                )))
            }
            Err(_) => {
                return Err(crate::value::module_abort_error(
                    "error building browser on IterStart: launching browser: gone",
                ))
            }
        },
    };
    JsValue::from_json(browser.version(), ctx)
}

/// `decode64(text)`: an `ArrayBuffer` of base64 `text` (screenshots).
fn decode64(_: &Rc<BrowserVu>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = string_arg(a, 0, ctx)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|e| JsNativeError::error().with_message(format!("decoding: {e}")))?;
    crate::value::array_buffer(&bytes, ctx)
}

fn subscribe(
    vu: &Rc<BrowserVu>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let session = string_arg(a, 0, ctx)?;
    if let Some(b) = vu.browser() {
        vu.subscribe(&b, &session);
    }
    Ok(JsValue::undefined())
}

fn set_dispatcher(
    vu: &Rc<BrowserVu>,
    _: &JsValue,
    a: &[JsValue],
    _: &mut Context,
) -> JsResult<JsValue> {
    *vu.dispatcher.borrow_mut() = arg(a, 0)
        .and_then(JsValue::as_object)
        .filter(|o| o.is_callable());
    Ok(JsValue::undefined())
}

fn hold(vu: &Rc<BrowserVu>, _: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    vu.waiters.set(vu.waiters.get() + 1);
    Ok(JsValue::undefined())
}

fn release(vu: &Rc<BrowserVu>, _: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    vu.waiters.set(vu.waiters.get().saturating_sub(1));
    Ok(JsValue::undefined())
}

fn track_context(
    vu: &Rc<BrowserVu>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let id = string_arg(a, 0, ctx)?;
    vu.contexts.borrow_mut().push(id);
    Ok(JsValue::undefined())
}

fn untrack_context(
    vu: &Rc<BrowserVu>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let id = string_arg(a, 0, ctx)?;
    vu.contexts.borrow_mut().retain(|c| *c != id);
    Ok(JsValue::undefined())
}

fn generation(
    vu: &Rc<BrowserVu>,
    _: &JsValue,
    _: &[JsValue],
    _: &mut Context,
) -> JsResult<JsValue> {
    Ok(JsValue::from(vu.generation.get() as f64))
}

/// `emit(metric, value, tags)`: a browser metric sample with the VU's tags and `tags`.
fn emit(vu: &Rc<BrowserVu>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let name = string_arg(a, 0, ctx)?;
    let value = arg(a, 1).cloned().unwrap_or_default().to_number(ctx)?;
    let Some(i) = METRICS.iter().position(|(n, _, _)| *n == name) else {
        return Ok(JsValue::undefined());
    };
    let Some(id) = vu.metric_ids[i] else {
        return Ok(JsValue::undefined());
    };
    let tags = crate::modules::args::string_map(arg(a, 2), ctx)?;
    let system: Vec<(&str, &str)> = tags.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Host::of(ctx).sample(id, value, &[], &system);
    Ok(JsValue::undefined())
}

/// `writeFile(path, base64)`: a screenshot, its folders made as k6 makes them.
fn write_file(
    _: &Rc<BrowserVu>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let path = string_arg(a, 0, ctx)?;
    let data = string_arg(a, 1, ctx)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|e| {
            JsNativeError::error().with_message(format!("decoding screenshot data: {e}"))
        })?;
    let path = std::path::Path::new(&path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            JsNativeError::error().with_message(format!("creating screenshot directory: {e}"))
        })?;
    }
    std::fs::write(path, bytes).map_err(|e| {
        JsNativeError::error().with_message(format!("saving screenshot to {}: {e}", path.display()))
    })?;
    Ok(JsValue::undefined())
}

fn is_connected(
    vu: &Rc<BrowserVu>,
    _: &JsValue,
    _: &[JsValue],
    _: &mut Context,
) -> JsResult<JsValue> {
    Ok(vu.browser().is_some_and(|b| b.is_connected()).into())
}
