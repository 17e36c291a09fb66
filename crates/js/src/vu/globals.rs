//! k6's global names: `console`, `open`, `__ENV`, `__VU` (and `__ITER`, set per iteration),
//! `global` and `crypto`. (The leaner `JSON.parse` is part of the built-ins the VUs of a
//! thread share, `vu::builtins`.)

use std::collections::BTreeMap;

use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsNativeError, JsResult, JsString, JsValue, NativeFunction};

use crate::host::{Host, Phase};
use crate::log::Level;
use crate::value::{array_buffer, define, plain_object};

/// Installs the globals into a fresh context.
pub(crate) fn install(
    ctx: &mut Context,
    vu_id: u64,
    env: &BTreeMap<String, String>,
) -> JsResult<()> {
    let console = ObjectInitializer::new(ctx)
        .function(
            NativeFunction::from_fn_ptr(console_log),
            js_string!("log"),
            0,
        )
        .function(
            NativeFunction::from_fn_ptr(console_log),
            js_string!("info"),
            0,
        )
        .function(
            NativeFunction::from_fn_ptr(console_warn),
            js_string!("warn"),
            0,
        )
        .function(
            NativeFunction::from_fn_ptr(console_error),
            js_string!("error"),
            0,
        )
        .function(
            NativeFunction::from_fn_ptr(console_debug),
            js_string!("debug"),
            0,
        )
        .build();
    ctx.register_global_property(js_string!("console"), console, Attribute::all())?;
    let env_obj = plain_object(ctx);
    for (k, v) in env {
        define(
            &env_obj,
            JsString::from(k.as_str()),
            JsString::from(v.as_str()),
        );
    }
    ctx.register_global_property(js_string!("__ENV"), env_obj, Attribute::all())?;
    ctx.register_global_property(js_string!("__VU"), vu_id as f64, Attribute::all())?;
    ctx.register_global_callable(js_string!("open"), 2, NativeFunction::from_fn_ptr(open))?;
    crate::modules::timers::install(ctx)?;
    let global = ctx.global_object();
    ctx.register_global_property(js_string!("global"), global, Attribute::all())?;
    install_commonjs_traps(ctx)?;
    crate::modules::webcrypto::install_global(ctx)?;
    Ok(())
}

/// k6's global `module` and `exports` accessors: in an ES module (a CommonJS file has its
/// own parameters of those names) reading either throws, `typeof` included.
fn install_commonjs_traps(ctx: &mut Context) -> JsResult<()> {
    for name in ["module", "exports"] {
        let getter = NativeFunction::from_copy_closure(move |_, _, ctx| {
            Err(crate::value::go_error(format!("you are trying to access identifier \"{name}\", this likely is due to mixing ECMAScript Modules (ESM) and CommonJS syntax. This isn't supported in the JavaScript standard, please use only one or the other"), ctx))
        })
        .to_js_function(ctx.realm());
        ctx.global_object().define_property_or_throw(
            JsString::from(name),
            boa_engine::property::PropertyDescriptor::builder()
                .get(getter)
                .enumerable(false)
                .configurable(true),
            ctx,
        )?;
    }
    Ok(())
}

/// Adds a scenario's `env` entries to `__ENV`.
pub(crate) fn extend_env(ctx: &mut Context, env: &BTreeMap<String, String>) {
    let global = ctx.global_object();
    let Ok(v) = global.get(js_string!("__ENV"), ctx) else {
        return;
    };
    if let Some(obj) = v.as_object() {
        for (k, val) in env {
            define(
                &obj,
                JsString::from(k.as_str()),
                JsString::from(val.as_str()),
            );
        }
    }
}

fn format_args(args: &[JsValue], ctx: &mut Context) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let text = if a.is_object() {
            // k6 prints objects the way JSON.stringify does (errors as `{}`, functions as
            // `null`, dates through toJSON), falling back to the plain form for cycles.
            match json_stringify(a, ctx) {
                Some(json) => json,
                None => a.display().to_string(),
            }
        } else if let Some(sym) = a.as_symbol() {
            sym.description()
                .map(|d| d.to_std_string_escaped())
                .unwrap_or_default()
        } else {
            a.to_string(ctx)
                .map(|s| s.to_std_string_escaped())
                .unwrap_or_default()
        };
        out.push_str(&text);
    }
    out
}

/// `JSON.stringify(value)` with the script's own JSON object; `null` where it gives
/// `undefined` (a function), `None` when it throws (a cycle).
fn json_stringify(value: &JsValue, ctx: &mut Context) -> Option<String> {
    let json = ctx
        .global_object()
        .get(js_string!("JSON"), ctx)
        .ok()?
        .as_object()?;
    let stringify = json.get(js_string!("stringify"), ctx).ok()?.as_callable()?;
    let out = stringify
        .call(&json.into(), std::slice::from_ref(value), ctx)
        .ok()?;
    if out.is_undefined() {
        return Some("null".into());
    }
    out.to_string(ctx).ok().map(|s| s.to_std_string_escaped())
}

fn console_at(level: Level, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let msg = format_args(args, ctx);
    Host::of(ctx).shared.logger.console(level, &msg);
    Ok(JsValue::undefined())
}

fn console_log(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    console_at(Level::Info, args, ctx)
}
fn console_warn(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    console_at(Level::Warning, args, ctx)
}
fn console_error(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    console_at(Level::Error, args, ctx)
}
fn console_debug(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    console_at(Level::Debug, args, ctx)
}

/// `open(path, [mode])`: init context only; `'b'` returns an ArrayBuffer.
fn open(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(JsNativeError::error()
            .with_message("The \"open()\" function is only available in the init stage (i.e. the global scope), see https://grafana.com/docs/k6/latest/using-k6/test-lifecycle for more information")
            .into());
    }
    let path = args
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    let binary = args
        .get(1)
        .filter(|m| !m.is_undefined())
        .map(|m| m.to_string(ctx).map(|s| s.to_std_string_escaped() == "b"))
        .transpose()?
        .unwrap_or(false);
    let resolved = host.shared.program.resolve(&path, None);
    let data = host.shared.program.read_file(&resolved).map_err(|e| {
        // An archive's tree says what k6's in-memory file system says; the disk, Go's text.
        let why = e.get_ref().map_or_else(
            || "no such file or directory".to_string(),
            ToString::to_string,
        );
        JsNativeError::error().with_message(format!("open {}: {why}", resolved.display()))
    })?;
    if binary {
        array_buffer(&data, ctx)
    } else {
        Ok(JsString::from(String::from_utf8_lossy(&data).as_ref()).into())
    }
}
