//! k6's global names: `console` (its format in `vu::console`), `open`, `__ENV`, `__VU` (and
//! `__ITER`, set per iteration), `global`, `crypto`, and k6 2.2's `TextEncoder` and
//! `TextDecoder`. (The leaner `JSON.parse` is part of the built-ins the VUs of a thread
//! share, `vu::builtins`.)

use std::collections::BTreeMap;

use boa_engine::object::{FunctionObjectBuilder, IntegrityLevel, ObjectInitializer};
use boa_engine::property::PropertyDescriptor;
use boa_engine::{
    js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction,
};

use crate::host::{Host, Phase};
use crate::log::Level;
use crate::value::{array_buffer, define, plain_object};

/// k6's global properties, in k6's order, as each VU's global object gets them. All but
/// `__VU` and `global` hold the same objects in every VU of a thread (`vu::builtins`).
pub(crate) struct Globals(Vec<(JsString, Global)>);

enum Global {
    /// The same value (a shared object or a primitive) in every VU.
    Value(PropertyDescriptor),
    /// The VU's number.
    Vu,
    /// The VU's own global object (`global`).
    This,
}

impl Globals {
    /// Makes the values of k6's globals in `ctx` (the template context of `vu::builtins`,
    /// which shares [`Globals::objects`]).
    pub(crate) fn make(ctx: &mut Context, env: &BTreeMap<String, String>) -> JsResult<Globals> {
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
        let env_obj = plain_object(ctx);
        for (k, v) in env {
            define(
                &env_obj,
                JsString::from(k.as_str()),
                JsString::from(v.as_str()),
            );
        }
        if env_frozen(env) {
            env_obj.set_integrity_level(IntegrityLevel::Frozen, ctx)?;
        }
        let realm = ctx.realm().clone();
        let function = |name: &str, length: usize, f: NativeFunction, constructor: bool| {
            JsValue::from(
                FunctionObjectBuilder::new(&realm, f)
                    .name(JsString::from(name))
                    .length(length)
                    .constructor(constructor)
                    .build(),
            )
        };
        // As Boa's `register_global_callable` defines them (k6's are functions too).
        let callable = |value: JsValue| {
            Global::Value(
                PropertyDescriptor::builder()
                    .value(value)
                    .writable(true)
                    .enumerable(false)
                    .configurable(true)
                    .build(),
            )
        };
        let all = |value: JsValue| {
            Global::Value(
                PropertyDescriptor::builder()
                    .value(value)
                    .writable(true)
                    .enumerable(true)
                    .configurable(true)
                    .build(),
            )
        };
        let mut globals = vec![
            (js_string!("console"), all(console.into())),
            (js_string!("__ENV"), all(env_obj.into())),
            (js_string!("__VU"), Global::Vu),
            (
                js_string!("open"),
                callable(function("open", 2, NativeFunction::from_fn_ptr(open), true)),
            ),
        ];
        for (name, length, f) in crate::modules::timers::functions() {
            globals.push((
                JsString::from(name),
                callable(function(name, length, f, true)),
            ));
        }
        globals.push((js_string!("global"), Global::This));
        // k6's global `module` and `exports` accessors: in an ES module (a CommonJS file has
        // its own parameters of those names) reading either throws, `typeof` included.
        for name in ["module", "exports"] {
            let getter = NativeFunction::from_copy_closure(move |_, _, ctx| {
                Err(crate::value::go_error(format!("you are trying to access identifier \"{name}\", this likely is due to mixing ECMAScript Modules (ESM) and CommonJS syntax. This isn't supported in the JavaScript standard, please use only one or the other"), ctx))
            })
            .to_js_function(&realm);
            globals.push((
                JsString::from(name),
                Global::Value(
                    PropertyDescriptor::builder()
                        .get(getter)
                        .enumerable(false)
                        .configurable(true)
                        .build(),
                ),
            ));
        }
        let crypto = crate::modules::webcrypto::global_object(ctx)?;
        globals.push((js_string!("crypto"), all(crypto.into())));
        // k6 2.2's globals (release notes v2.2.0, #6182), as WebIDL defines interfaces.
        for (name, ctor) in crate::modules::text_encoding::constructors(ctx) {
            globals.push((JsString::from(name), callable(ctor.into())));
        }
        globals.push((
            js_string!("require"),
            all(function(
                "require",
                1,
                NativeFunction::from_fn_ptr(crate::vu::require::require),
                false,
            )),
        ));
        Ok(Globals(globals))
    }

    /// The objects the globals hold, to share with the VUs of the thread.
    pub(crate) fn objects(&self) -> Vec<JsObject> {
        let mut out = Vec::new();
        for (_, g) in &self.0 {
            if let Global::Value(desc) = g {
                for v in [desc.value(), desc.get(), desc.set()].into_iter().flatten() {
                    if let Some(o) = v.as_object() {
                        out.push(o.clone());
                    }
                }
            }
        }
        out
    }

    /// Defines the globals on the global object of a VU's fresh context.
    pub(crate) fn install(&self, ctx: &mut Context, vu_id: u64) -> JsResult<()> {
        let global = ctx.global_object();
        for (name, g) in &self.0 {
            let desc = match g {
                Global::Value(desc) => desc.clone(),
                Global::Vu => data_property(vu_id as f64),
                Global::This => data_property(global.clone()),
            };
            global.define_property_or_throw(name.clone(), desc, ctx)?;
        }
        Ok(())
    }
}

fn data_property(value: impl Into<JsValue>) -> PropertyDescriptor {
    PropertyDescriptor::builder()
        .value(value)
        .writable(true)
        .enumerable(true)
        .configurable(true)
        .build()
}

/// Whether the `freeze-env` feature flag is on (k6 2.2).
fn env_frozen(env: &BTreeMap<String, String>) -> bool {
    crate::script::program::feature_on(env, "freeze-env")
}

/// Adds a scenario's `env` entries to `__ENV`.
pub(crate) fn extend_env(ctx: &mut Context, env: &BTreeMap<String, String>) {
    let global = ctx.global_object();
    let Ok(v) = global.get(js_string!("__ENV"), ctx) else {
        return;
    };
    let Some(obj) = v.as_object() else {
        return;
    };
    if env.is_empty() {
        return;
    }
    if obj.is_extensible(ctx).unwrap_or(true) {
        // Through its internal methods: `__ENV` is shared by the VUs of the thread, and a
        // VU's change to it lands in a copy of its own.
        for (k, val) in env {
            let _ = obj.create_data_property_or_throw(
                JsString::from(k.as_str()),
                JsString::from(val.as_str()),
                ctx,
            );
        }
        return;
    }
    // Frozen (`freeze-env`): the VU gets a frozen copy with its scenario's entries.
    let copy = plain_object(ctx);
    let keys = obj.own_property_keys(ctx).unwrap_or_default();
    for key in keys {
        if let Ok(value) = obj.get(key.clone(), ctx) {
            let _ = copy.create_data_property_or_throw(key, value, ctx);
        }
    }
    for (k, val) in env {
        let _ = copy.create_data_property_or_throw(
            JsString::from(k.as_str()),
            JsString::from(val.as_str()),
            ctx,
        );
    }
    let _ = copy.set_integrity_level(IntegrityLevel::Frozen, ctx);
    let _ = global.set(js_string!("__ENV"), copy, false, ctx);
}

fn console_at(level: Level, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let msg = super::console::format_args(args, ctx)?;
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
