//! k6's built-in modules. Each is a synthetic ES module whose default export is an object
//! holding the same functions as its named exports.

pub(crate) mod crypto;
mod data;
mod encoding;
mod execution;
pub(crate) mod html;
pub(crate) mod http;
mod k6;
mod metrics;
mod webcrypto;

use boa_engine::module::SyntheticModuleInitializer;
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsNativeError, JsObject, JsResult, JsString, Module, NativeFunction,
};

/// Modules k6 1.1 has that rk6 does not implement yet: importing one fails loudly.
const NOT_YET: &[&str] = &[
    "k6/crypto/x509",
    "k6/ws",
    "k6/net/grpc",
    "k6/browser",
    "k6/secrets",
    "k6/experimental/csv",
    "k6/experimental/fs",
    "k6/experimental/redis",
    "k6/experimental/streams",
    "k6/experimental/websockets",
];

/// Modules k6 removed, with the replacement k6 names in its error.
const REMOVED: &[(&str, &str)] = &[
    ("k6/experimental/browser", "k6/browser"),
    ("k6/experimental/grpc", "k6/net/grpc"),
    (
        "k6/experimental/timers",
        "the global timer functions or k6/timers",
    ),
    (
        "k6/experimental/tracing",
        "the jslib http-instrumentation-tempo module",
    ),
    ("k6/experimental/webcrypto", "the global crypto object"),
];

/// Builds the module `spec` ("k6", "k6/http", ...) in `ctx`.
pub(crate) fn create(spec: &str, ctx: &mut Context) -> JsResult<Module> {
    match spec {
        "k6" => Ok(synthetic(k6::functions(), ctx)),
        "k6/http" => Ok(http::module(ctx)),
        "k6/encoding" => Ok(synthetic(encoding::functions(), ctx)),
        "k6/crypto" => Ok(synthetic(crypto::functions(), ctx)),
        "k6/metrics" => Ok(metrics::module(ctx)),
        "k6/data" => Ok(data::module(ctx)),
        "k6/execution" => Ok(execution::module(ctx)),
        "k6/timers" => Ok(synthetic(crate::host::event_loop::functions(), ctx)),
        "k6/html" => Ok(html::module(ctx)),
        _ => {
            if let Some((_, instead)) = REMOVED.iter().find(|(m, _)| *m == spec) {
                return Err(JsNativeError::typ()
                    .with_message(format!("{spec} has been removed; use {instead} instead"))
                    .into());
            }
            if NOT_YET.contains(&spec) {
                return Err(JsNativeError::typ()
                    .with_message(format!(
                        "the module {spec} is not supported by rk6 yet (see docs/compatibility.md)"
                    ))
                    .into());
            }
            Err(JsNativeError::typ()
                .with_message(format!("unknown module: {spec}"))
                .into())
        }
    }
}

/// A native function exported by a module.
pub(crate) type Export = (&'static str, usize, NativeFunction);

fn synthetic(exports: Vec<Export>, ctx: &mut Context) -> Module {
    synthetic_with(&[], exports, ctx)
}

/// A module exporting string `constants` first, then the native functions `exports`.
pub(super) fn synthetic_with(
    constants: &[(&str, &str)],
    exports: Vec<Export>,
    ctx: &mut Context,
) -> Module {
    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::new(ctx);
    let mut names = Vec::with_capacity(constants.len() + exports.len());
    for (name, value) in constants {
        let name = JsString::from(*name);
        init.property(name.clone(), JsString::from(*value), Attribute::all());
        names.push(name);
    }
    for (name, len, f) in exports {
        let name = JsString::from(name);
        // Exports named like classes (`http.CookieJar`) are called with `new`.
        let constructor = name
            .to_std_string_escaped()
            .starts_with(|c: char| c.is_ascii_uppercase());
        let func = FunctionObjectBuilder::new(&realm, f)
            .name(name.clone())
            .length(len)
            .constructor(constructor)
            .build();
        // Enumerable, as in k6: `Object.keys(http)` lists the module's functions.
        init.property(name.clone(), func, Attribute::all());
        names.push(name);
    }
    let object = init.build();
    from_object(object, names, ctx)
}

/// A module whose default export is `object` and whose named exports are its properties
/// `names`.
pub(super) fn from_object(object: JsObject, names: Vec<JsString>, ctx: &mut Context) -> Module {
    let mut all = Vec::with_capacity(names.len() + 1);
    all.push(js_string!("default"));
    all.extend(names.iter().cloned());
    Module::synthetic(
        &all,
        SyntheticModuleInitializer::from_copy_closure_with_captures(
            |module, (object, names), ctx| {
                module.set_export(&js_string!("default"), object.clone().into())?;
                for name in names {
                    module.set_export(name, object.get(name.clone(), ctx)?)?;
                }
                Ok(())
            },
            (object, names),
        ),
        None,
        None,
        ctx,
    )
}

/// Reads an own enumerable property `key` of `obj` if `obj` is an object.
pub(crate) fn prop(
    obj: Option<&JsObject>,
    key: &str,
    ctx: &mut Context,
) -> JsResult<Option<boa_engine::JsValue>> {
    match obj {
        Some(o) => {
            let v = o.get(JsString::from(key), ctx)?;
            Ok((!v.is_undefined() && !v.is_null()).then_some(v))
        }
        None => Ok(None),
    }
}
