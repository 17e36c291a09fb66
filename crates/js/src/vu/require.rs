//! CommonJS `require()` in the init context: k6's built-in modules, and script files that
//! assign `module.exports` / `exports` (ES module files are returned as their namespace).

use std::path::{Path, PathBuf};

use boa_engine::builtins::promise::PromiseState;
use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsObject, JsResult, JsString, JsValue, Module,
    NativeFunction, Script, Source,
};

use crate::host::{Host, Phase};
use crate::value::{define, plain_object};
use crate::vu::loader::{native, with_location};

/// Installs the global `require`, resolving relative paths against the entry script.
pub(crate) fn install(ctx: &mut Context) -> JsResult<()> {
    let cache = plain_object(ctx);
    let f = require_function(cache, None, ctx);
    ctx.register_global_property(js_string!("require"), f, Attribute::all())
}

/// A `require` resolving relative paths against `base` (the requiring file), sharing `cache`.
fn require_function(cache: JsObject, base: Option<&Path>, ctx: &mut Context) -> JsObject {
    let base: JsValue = base.map_or_else(JsValue::undefined, |b| {
        JsString::from(b.to_string_lossy().as_ref()).into()
    });
    FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_copy_closure_with_captures(
            |_, args, (cache, base), ctx| {
                let spec = args
                    .first()
                    .cloned()
                    .unwrap_or_default()
                    .to_string(ctx)?
                    .to_std_string_escaped();
                let base = base
                    .as_string()
                    .map(|s| PathBuf::from(s.to_std_string_escaped()));
                require(&spec, base.as_deref(), cache, ctx)
            },
            (cache, base),
        ),
    )
    .name(js_string!("require"))
    .length(1)
    .build()
    .into()
}

fn require(
    spec: &str,
    base: Option<&Path>,
    cache: &JsObject,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(JsNativeError::error()
            .with_message(format!(
                "require(\"{spec}\") is only available in the init context (the script's top level)"
            ))
            .into());
    }
    let program = host.shared.program.clone();
    let key = if spec == "k6" || spec.starts_with("k6/") {
        spec.to_string()
    } else if spec.starts_with("./")
        || spec.starts_with("../")
        || spec.starts_with('/')
        || spec.starts_with("file://")
    {
        let referrer = base.map(|b| b.join("_"));
        program
            .resolve(spec, referrer.as_deref())
            .to_string_lossy()
            .into_owned()
    } else if spec.starts_with("https://") || spec.starts_with("http://") {
        program
            .remote(spec)
            .map_err(native)?
            .to_string_lossy()
            .into_owned()
    } else {
        return Err(JsNativeError::typ()
            .with_message(format!(
                "require(\"{spec}\"): bare module names are not supported; use a relative path (./{spec}) or a k6 module"
            ))
            .into());
    };
    let js_key = JsString::from(key.as_str());
    if cache.has_own_property(js_key.clone(), ctx)? {
        let record = cache.get(js_key, ctx)?;
        return match record.as_object() {
            Some(record) => record.get(js_string!("exports"), ctx),
            None => Ok(JsValue::undefined()),
        };
    }
    if key.starts_with("k6") && !key.starts_with('/') {
        let module = crate::modules::create(&key, ctx)?;
        let namespace = evaluate(&module, ctx)?;
        // k6 hands out the module's named exports as a plain object, without `default`.
        let exports = plain_object(ctx);
        for name in namespace.own_property_keys(ctx)? {
            if name.to_string() != "default" {
                let value = namespace.get(name.clone(), ctx)?;
                define(&exports, name, value);
            }
        }
        let record = plain_object(ctx);
        define(&record, js_string!("exports"), exports.clone());
        define(cache, js_key, record);
        return Ok(exports.into());
    }
    let path = PathBuf::from(&key);
    let source = program.source(&path).map_err(native)?;
    let code = String::from_utf8_lossy(&source.code);
    let module = plain_object(ctx);
    let exports = plain_object(ctx);
    define(&module, js_string!("exports"), exports.clone());
    // Cached before running, so a require cycle sees the partial exports as in Node.
    define(cache, js_key.clone(), module.clone());
    // The wrapper opens on the file's first line, so line numbers stay those of the file.
    let wrapped =
        format!("(function (exports, require, module, __filename, __dirname) {{{code}\n}})");
    let script = match Script::parse(
        Source::from_bytes(wrapped.as_bytes()).with_path(&path),
        None,
        ctx,
    ) {
        Ok(script) => script,
        Err(cjs_error) => {
            // Not a CommonJS script: perhaps an ES module, which `require` returns whole.
            let _ = cache.delete_property_or_throw(js_key.clone(), ctx);
            return match Module::parse(
                Source::from_bytes(&source.code[..]).with_path(&path),
                None,
                ctx,
            ) {
                Ok(m) => {
                    let namespace = evaluate(&m, ctx)?;
                    define(&module, js_string!("exports"), namespace.clone());
                    define(cache, js_key, module);
                    Ok(namespace.into())
                }
                Err(_) => Err(with_location(cjs_error, &path, &program)),
            };
        }
    };
    let wrapper = script.evaluate(ctx)?;
    let Some(wrapper) = wrapper.as_callable() else {
        return Err(JsNativeError::typ()
            .with_message(format!("{key} did not evaluate to a module"))
            .into());
    };
    let dir = path.parent().unwrap_or(Path::new("/"));
    let child_require = require_function(cache.clone(), Some(dir), ctx);
    wrapper.call(
        &JsValue::undefined(),
        &[
            exports.into(),
            child_require.into(),
            module.clone().into(),
            JsString::from(key.as_str()).into(),
            JsString::from(dir.to_string_lossy().as_ref()).into(),
        ],
        ctx,
    )?;
    module.get(js_string!("exports"), ctx)
}

/// Links and runs `module` now (the init context cannot wait); returns its namespace.
fn evaluate(module: &Module, ctx: &mut Context) -> JsResult<JsObject> {
    let promise = module.load_link_evaluate(ctx);
    ctx.run_jobs()?;
    match promise.state() {
        PromiseState::Fulfilled(_) => Ok(module.namespace(ctx)),
        PromiseState::Rejected(e) => Err(JsError::from_opaque(e)),
        PromiseState::Pending => Err(JsNativeError::error()
            .with_message("a required module awaited something that never finished")
            .into()),
    }
}
