//! One CommonJS file in one VU, as k6 runs it: the body of `(function(module, exports){…})`,
//! strict, called with `this === exports`; evaluated once, its failure cached, and seen from
//! `import` through an open synthetic module whose default export is
//! `'default' in E ? E.default : E` and whose names are read from `E = module.exports`.

use std::cell::RefCell;
use std::path::Path;

use boa_engine::module::{SyntheticModule, SyntheticModuleInitializer};
use boa_engine::object::builtins::JsArray;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsObject, JsResult, JsString, Module, Script,
    Source,
};

use crate::script::classify::wrap;
use crate::script::location::Location;
use crate::script::program::Program;
use crate::value::{define, plain_object};
use crate::vu::loader::Loader;

/// k6's error when a CommonJS file sets `module.exports = null` (it ends the test with 255).
pub(crate) const NULL_EXPORTS: &str = "CommonJS's exports must not be null";

/// Where a CommonJS file is in its one evaluation per VU.
#[derive(Clone)]
enum State {
    New,
    /// Running: a `require` cycle back into it sees the exports so far, as in Node.
    Running(JsObject),
    Done(JsObject),
    /// It threw: requiring it again rethrows the same error without running it.
    Failed(JsError),
}

/// A CommonJS file of one VU.
pub(crate) struct CommonJs {
    loc: Location,
    state: RefCell<State>,
    /// Its module record for `import`, made on the first import.
    record: RefCell<Option<Module>>,
}

impl CommonJs {
    pub(crate) fn new(loc: Location) -> Self {
        CommonJs {
            loc,
            state: RefCell::new(State::New),
            record: RefCell::default(),
        }
    }

    /// Runs the file once and returns its final `module.exports` as an object (a primitive
    /// is boxed, as in k6).
    pub(crate) fn exports(&self, program: &Program, ctx: &mut Context) -> JsResult<JsObject> {
        let state = self.state.borrow().clone();
        match state {
            State::Done(e) => return Ok(e),
            State::Failed(e) => return Err(e),
            State::Running(module) => {
                return module.get(js_string!("exports"), ctx)?.to_object(ctx)
            }
            State::New => {}
        }
        let module = plain_object(ctx);
        *self.state.borrow_mut() = State::Running(module.clone());
        match self.run(&module, program, ctx) {
            Ok(e) => {
                *self.state.borrow_mut() = State::Done(e.clone());
                if program.cjs_keys(&self.loc).is_none() {
                    program.record_cjs_keys(&self.loc, keys(&e, ctx)?);
                }
                Ok(e)
            }
            Err(err) => {
                *self.state.borrow_mut() = State::Failed(err.clone());
                Err(err)
            }
        }
    }

    fn run(&self, module: &JsObject, program: &Program, ctx: &mut Context) -> JsResult<JsObject> {
        let source = program
            .source(&self.loc, &self.loc.url())
            .map_err(|e| crate::vu::loader::native(e, ctx))?;
        let exports = plain_object(ctx);
        define(module, js_string!("exports"), exports.clone());
        let wrapped = wrap(&source.code);
        // k6 compiles CommonJS files strictly, "use strict" or not.
        ctx.strict(true);
        let script = Script::parse(
            Source::from_bytes(&wrapped[..]).with_path(&self.loc.boa_path()),
            None,
            ctx,
        );
        ctx.strict(false);
        let script = script.map_err(|e| {
            crate::vu::loader::parse_error(&e, &self.loc, program, source.map.as_ref())
        })?;
        let wrapper = script.evaluate(ctx)?;
        let Some(wrapper) = wrapper.as_callable() else {
            return Err(JsNativeError::typ()
                .with_message("a CommonJS wrapper did not evaluate to a function")
                .into());
        };
        wrapper.call(
            &exports.clone().into(),
            &[module.clone().into(), exports.into()],
            ctx,
        )?;
        let e = module.get(js_string!("exports"), ctx)?;
        if e.is_null() {
            return Err(JsNativeError::error().with_message(NULL_EXPORTS).into());
        }
        if e.is_undefined() {
            return Err(JsNativeError::typ()
                .with_message("Cannot convert undefined or null to object")
                .into());
        }
        e.to_object(ctx)
    }

    /// The module record `import` sees (one per VU): its names are the test's key list.
    pub(crate) fn record(&self, program: &Program, ctx: &mut Context) -> Module {
        if let Some(m) = self.record.borrow().clone() {
            return m;
        }
        let names: Vec<JsString> = program
            .cjs_keys(&self.loc)
            .map(|k| k.iter().map(|n| JsString::from(n.as_str())).collect())
            .unwrap_or_default();
        let path = self.loc.boa_path();
        let key = JsString::from(path.to_string_lossy().as_ref());
        let module = Module::open_synthetic(
            &names,
            SyntheticModuleInitializer::from_copy_closure_with_captures(evaluate_record, key),
            Some(path),
            None,
            ctx,
        );
        *self.record.borrow_mut() = Some(module.clone());
        module
    }
}

/// The record's evaluation: run the file (or take its exports when `require` ran it), then
/// set every binding: the key list's names and those importers asked for, from `E`.
fn evaluate_record(module: &SyntheticModule, key: &JsString, ctx: &mut Context) -> JsResult<()> {
    let loader = ctx
        .downcast_module_loader::<Loader>()
        .ok_or_else(|| JsNativeError::error().with_message("rk6's module loader is missing"))?;
    let loc = Location::from_boa_path(Path::new(&key.to_std_string_escaped()));
    let e = loader.commonjs(&loc)?.exports(loader.program(), ctx)?;
    let names = loader.program().cjs_keys(&loc).unwrap_or_default();
    module.set_export_names(names.iter().map(|n| JsString::from(n.as_str())))?;
    let default = js_string!("default");
    for name in module.binding_names() {
        if name != default {
            let value = e.get(name.clone(), ctx)?;
            module.set_export(&name, value)?;
        }
    }
    let value = if e.has_property(default.clone(), ctx)? {
        e.get(default.clone(), ctx)?
    } else {
        e.into()
    };
    module.set_export(&default, value)
}

/// `Object.keys(e)`: own enumerable string keys, in property order.
fn keys(e: &JsObject, ctx: &mut Context) -> JsResult<Vec<String>> {
    let object = ctx.intrinsics().constructors().object().constructor();
    let f = object.get(js_string!("keys"), ctx)?;
    let Some(f) = f.as_callable() else {
        return Ok(Vec::new());
    };
    let list = f.call(&object.into(), &[e.clone().into()], ctx)?;
    let Some(list) = list.as_object() else {
        return Ok(Vec::new());
    };
    let list = JsArray::from_object(list)?;
    let len = list.length(ctx)?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        out.push(list.get(i, ctx)?.to_string(ctx)?.to_std_string_escaped());
    }
    Ok(out)
}

/// `true` when `err` is the [`NULL_EXPORTS`] error (itself, or as the rejection of an
/// import).
pub(crate) fn is_null_exports(err: &JsError, ctx: &mut Context) -> bool {
    if let Some(n) = err.as_native() {
        return n.message() == NULL_EXPORTS;
    }
    err.as_opaque()
        .and_then(|v| v.as_object())
        .and_then(|o| o.get(js_string!("message"), ctx).ok())
        .and_then(|m| {
            m.as_string()
                .map(|s| s.to_std_string_escaped() == NULL_EXPORTS)
        })
        .unwrap_or(false)
}
