//! The `k6/data` module: `SharedArray`, an array made once per run in the init context
//! and read by every VU without a copy of its own.

mod registry;
mod view;

use boa_engine::object::builtins::JsFunction;
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsResult, JsString, JsValue, Module, NativeFunction,
};

use crate::host::{Host, Phase};
pub(crate) use registry::{SharedArrays, SharedData};
/// A `SharedArray` view of stored data (for modules that make shared arrays themselves).
pub(crate) use view::make as shared_view;

/// Builds the `k6/data` module.
pub(super) fn module(ctx: &mut Context) -> Module {
    let realm = ctx.realm().clone();
    let shared_array = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(construct))
        .name(js_string!("SharedArray"))
        .length(2)
        .constructor(true)
        .build();
    let object = ObjectInitializer::new(ctx)
        .property(js_string!("SharedArray"), shared_array, Attribute::all())
        .build();
    super::synthetic::from_object(object, vec![js_string!("SharedArray")], ctx)
}

fn error(message: &str) -> JsError {
    JsNativeError::error()
        .with_message(message.to_string())
        .into()
}

/// `new SharedArray(name, fn)` (k6 also accepts a call without `new`).
fn construct(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(error("new SharedArray must be called in the init context"));
    }
    let name = args
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    if name.is_empty() {
        return Err(error("empty name provided to SharedArray's constructor"));
    }
    let Some(make) = args
        .get(1)
        .and_then(JsValue::as_callable)
        .and_then(JsFunction::from_object)
    else {
        return Err(error(
            "a function is expected as the second argument of SharedArray's constructor",
        ));
    };
    let mut made = false;
    let arrays = host.shared.program.run_scoped().get::<SharedArrays>();
    let data = arrays.get_or_make(&name, || {
        made = true;
        serialise(&make, ctx)
    })?;
    if made {
        // The script's source data (often a big parsed file) is garbage now; collect it
        // rather than keep it alive until the next automatic collection.
        boa_gc::force_collect();
    }
    Ok(view::make(data, ctx)?.into())
}

/// Calls the script's function and keeps its result as compact JSON.
fn serialise(make: &JsFunction, ctx: &mut Context) -> JsResult<SharedData> {
    let value = make.call(&JsValue::undefined(), &[], ctx)?;
    let is_array = value.as_object().is_some_and(|o| o.is_array())
        || call_global(&["Array", "isArray"], &value, ctx)?.to_boolean();
    if !is_array {
        return Err(error("only arrays can be made into SharedArray"));
    }
    let text = call_global(&["JSON", "stringify"], &value, ctx)?
        .to_string(ctx)?
        .to_std_string()
        .map_err(|_| error("the SharedArray data holds an unpaired surrogate"))?;
    SharedData::from_json_array(text).map_err(|e| error(&e.to_string()))
}

/// Calls the built-in `globalThis[path[0]][path[1]](arg)` (e.g. `JSON.stringify`), so the
/// result is exactly what the script would get.
fn call_global(path: &[&str; 2], arg: &JsValue, ctx: &mut Context) -> JsResult<JsValue> {
    let holder = ctx
        .global_object()
        .get(JsString::from(path[0]), ctx)?
        .as_object()
        .ok_or_else(|| error("a built-in object is missing"))?;
    let f = holder.get(JsString::from(path[1]), ctx)?;
    let f = f
        .as_callable()
        .ok_or_else(|| error("a built-in function is missing"))?;
    f.call(&holder.clone().into(), std::slice::from_ref(arg), ctx)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::test_js::run;

    #[test]
    fn each_run_makes_its_own_arrays() {
        // Two runs in one process: the second must not see the first one's array.
        let script = |n: u32| {
            format!(
                "import {{ SharedArray }} from 'k6/data';
                 const a = new SharedArray('data-test-per-run', () => [{n}]);
                 export const options = {{ first: a[0] }};"
            )
        };
        assert_eq!(run(&script(1)).unwrap(), json!({"first": 1}));
        assert_eq!(run(&script(2)).unwrap(), json!({"first": 2}));
    }

    #[test]
    fn reads_like_a_frozen_array() {
        let out = run(r#"
            import { SharedArray } from 'k6/data';
            const a = new SharedArray('data-test-read', () => [{ a: 1, b: [1, 2] }, 2, 's', null, { n: { m: 1.5 } }]);
            const r = {};
            r.isArray = Array.isArray(a);
            r.length = a.length;
            r.first = a[0];
            r.fresh = a[0] !== a[0];
            r.frozen = Object.isFrozen(a[0]) && Object.isFrozen(a[0].b) && Object.isFrozen(a[4].n);
            r.missing = [a[5] === undefined, a[-1] === undefined, a['1.0'] === undefined, a['01'] === undefined];
            r.byString = a['1'];
            r.forOf = []; for (const x of a) r.forOf.push(typeof x);
            r.forIn = []; for (const k in a) r.forIn.push(k);
            r.keys = Object.keys(a);
            r.map = a.map(x => x === null ? 'null' : typeof x);
            r.filter = a.filter(x => typeof x === 'number');
            r.slice = a.slice(1, 3);
            r.find = a.find(x => x && x.n);
            r.indexOf = [a.indexOf(2), a.indexOf('s'), a.indexOf(7)];
            r.includes = [a.includes(null), a.includes('x')];
            r.spread = [...a].length;
            r.json = JSON.stringify(a);
            r.has = [0 in a, 4 in a, 5 in a];
            r.forEach = 0; a.forEach((x, i) => { r.forEach += i; });
            r.join = a.slice(1, 3).join('|');
            r.at = a.at(-1).n.m;
            r.descriptor = Object.getOwnPropertyDescriptor(a, 'length');
            r.notFrozen = Object.isFrozen(a);
            export const options = r;
        "#)
        .unwrap();
        assert_eq!(out["isArray"], json!(true));
        assert_eq!(out["length"], json!(5));
        assert_eq!(out["first"], json!({"a": 1, "b": [1, 2]}));
        assert_eq!(out["fresh"], json!(true));
        assert_eq!(out["frozen"], json!(true));
        assert_eq!(out["missing"], json!([true, true, true, true]));
        assert_eq!(out["byString"], json!(2));
        assert_eq!(
            out["forOf"],
            json!(["object", "number", "string", "object", "object"])
        );
        assert_eq!(out["forIn"], json!(["0", "1", "2", "3", "4"]));
        assert_eq!(out["keys"], json!(["0", "1", "2", "3", "4"]));
        assert_eq!(
            out["map"],
            json!(["object", "number", "string", "null", "object"])
        );
        assert_eq!(out["filter"], json!([2]));
        assert_eq!(out["slice"], json!([2, "s"]));
        assert_eq!(out["find"], json!({"n": {"m": 1.5}}));
        assert_eq!(out["indexOf"], json!([1, 2, -1]));
        assert_eq!(out["includes"], json!([true, false]));
        assert_eq!(out["spread"], json!(5));
        assert_eq!(
            out["json"],
            json!(r#"[{"a":1,"b":[1,2]},2,"s",null,{"n":{"m":1.5}}]"#)
        );
        assert_eq!(out["has"], json!([true, true, false]));
        assert_eq!(out["forEach"], json!(10));
        assert_eq!(out["join"], json!("2|s"));
        assert_eq!(out["at"], json!(1.5));
        assert_eq!(
            out["descriptor"],
            json!({"value": 5, "writable": true, "enumerable": false, "configurable": false})
        );
        assert_eq!(out["notFrozen"], json!(false));
    }

    #[test]
    fn writes_throw() {
        let out = run(r#"
            import { SharedArray } from 'k6/data';
            const a = new SharedArray('data-test-writes', () => [{ a: 1 }, 2, 3]);
            const r = [];
            for (const f of [
                () => { a[0] = 5; }, () => a.push(1), () => { a.length = 0; },
                () => { delete a[0]; }, () => a.sort(), () => { a.foo = 1; },
                () => { 'use strict'; a[0].a = 2; },
            ]) {
                try { f(); r.push('no error'); } catch (e) { r.push(String(e)); }
            }
            export const options = { r, after: [a.length, a[0].a] };
        "#)
        .unwrap();
        let immutable = "TypeError: SharedArray is immutable";
        let r = out["r"].as_array().unwrap();
        for e in &r[..6] {
            assert_eq!(e, immutable);
        }
        assert!(r[6].as_str().unwrap().starts_with("TypeError"), "{r:?}");
        assert_eq!(out["after"], json!([3, 1]));
    }

    #[test]
    fn the_function_runs_once_per_name() {
        let script = "import { SharedArray } from 'k6/data';
             let calls = 0;
             const a = new SharedArray('data-test-once', () => { calls++; return [__VU]; });
             export const options = { calls, first: a[0] };";
        let mut vus = crate::test_js::run_vus(script, 2).into_iter();
        let first = vus.next().unwrap().unwrap();
        let second = vus.next().unwrap().unwrap();
        assert_eq!(first, json!({"calls": 1, "first": 1}));
        // Another VU (context) gets the stored data and its function is not called.
        assert_eq!(second, json!({"calls": 0, "first": 1}));
    }

    #[test]
    fn bad_arguments_throw_k6_errors() {
        for (args, msg) in [
            (
                "'data-test-obj', () => ({a: 1})",
                "only arrays can be made into SharedArray",
            ),
            (
                "'', () => [1]",
                "empty name provided to SharedArray's constructor",
            ),
            (
                "'data-test-nofn'",
                "a function is expected as the second argument of SharedArray's constructor",
            ),
            (
                "'data-test-throw', () => { throw new Error('boom'); }",
                "Error: boom",
            ),
        ] {
            let err = run(&format!(
                "import {{ SharedArray }} from 'k6/data'; new SharedArray({args});"
            ))
            .unwrap_err();
            assert!(err.message.contains(msg), "{args}: {}", err.message);
        }
    }

    #[test]
    fn works_without_new_and_keeps_json_semantics() {
        let out = run(r#"
            import { SharedArray } from 'k6/data';
            const a = SharedArray('data-test-nonew', () => [undefined, () => 1, new Date(0), { toJSON() { return 'j'; } }]);
            export const options = { all: [a[0], a[1], a[2], a[3]] };
        "#)
        .unwrap();
        assert_eq!(
            out["all"],
            json!([null, null, "1970-01-01T00:00:00.000Z", "j"])
        );
    }
}
