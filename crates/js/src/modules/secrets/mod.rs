//! The `k6/secrets` module: a default export (no named ones, as k6) with `get(key)`, a
//! promise of the default source's value, and `source(name)`, an object whose `get(key)`
//! reads the source `name`. The sources are the run's `--secret-source` flags, held by the
//! logger that redacts the values read (`crate::secrets`).

use boa_engine::object::builtins::JsPromise;
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsResult, JsString, JsValue, Module, NativeFunction};

use crate::host::Host;
use crate::modules::go_error::go_value;

/// Builds the `k6/secrets` module.
pub(crate) fn module(ctx: &mut Context) -> Module {
    let object = source_object("default", ctx);
    let source = FunctionObjectBuilder::new(ctx.realm(), NativeFunction::from_fn_ptr(source))
        .name(js_string!("source"))
        .length(1)
        .build();
    crate::value::define(&object, js_string!("source"), source);
    crate::modules::synthetic::from_object(object, Vec::new(), ctx)
}

/// `{ get(key) }` reading the source `name`.
fn source_object(name: &str, ctx: &mut Context) -> boa_engine::JsObject {
    let get = NativeFunction::from_copy_closure_with_captures(
        |_, args, name: &JsString, ctx| get(&name.to_std_string_escaped(), args, ctx),
        JsString::from(name),
    );
    let get = FunctionObjectBuilder::new(ctx.realm(), get)
        .name(js_string!("get"))
        .length(1)
        .build();
    ObjectInitializer::new(ctx)
        .property(js_string!("get"), get, Attribute::all())
        .build()
}

/// A string argument as Go receives it: `undefined` and `null` are empty.
fn string_arg(args: &[JsValue], ctx: &mut Context) -> JsResult<String> {
    match args.first() {
        Some(v) if !v.is_null_or_undefined() => Ok(v.to_string(ctx)?.to_std_string_escaped()),
        _ => Ok(String::new()),
    }
}

/// `secrets.source(name)`.
fn source(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let name = string_arg(args, ctx)?;
    Ok(source_object(&name, ctx).into())
}

/// `get(key)`: a promise of the value; rejected with k6's Go error value.
fn get(source: &str, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let key = string_arg(args, ctx)?;
    let secrets = Host::of(ctx).shared.logger.secrets;
    let result = match secrets {
        Some(s) => s.get(source, &key).map_err(|e| e.to_string()),
        None => Err(crate::secrets::GetError::NoSources.to_string()),
    };
    Ok(match result {
        Ok(v) => JsPromise::resolve(JsString::from(v), ctx)?,
        Err(e) => {
            let e = go_value(&e, false, ctx);
            JsPromise::reject(e, ctx)?
        }
    }
    .into())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::test_js::run;

    #[test]
    fn without_sources_get_rejects_like_k6() {
        let out = run(r#"
            import secrets from 'k6/secrets';
            import * as ns from 'k6/secrets';
            const r = { ns: Object.keys(ns), keys: Object.keys(secrets) };
            r.src = Object.keys(secrets.source('x'));
            try { await secrets.get('a'); } catch (e) { r.e = [String(e), Object.keys(e), e instanceof Error]; }
            try { await secrets.source('x').get('a'); } catch (e) { r.s = String(e); }
            export const options = r;
        "#)
        .unwrap();
        // As in k6, the namespace of a module with only a default export lists no names.
        assert_eq!(out["ns"], json!([]));
        assert_eq!(out["keys"], json!(["get", "source"]));
        assert_eq!(out["src"], json!(["get"]));
        assert_eq!(
            out["e"],
            json!(["no secret sources are configured", ["error"], false])
        );
        assert_eq!(out["s"], json!("no secret sources are configured"));
    }
}
