//! One VU's modules, as k6 keeps them: one instance per resolved URL, shared by `import` and
//! `require()`. An ES module is a Boa source-text module; a CommonJS file runs as k6's
//! function body and is seen from `import` through an open synthetic module (`commonjs.rs`);
//! k6's own modules are synthetic modules.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use boa_engine::builtins::promise::PromiseState;
use boa_engine::module::{ModuleLoader, Referrer};
use boa_engine::object::FunctionObjectBuilder;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsObject, JsResult, JsString, JsValue, Module,
    NativeFunction, Source,
};

use crate::modules;
use crate::modules::args::string_arg;
use crate::script::classify::Kind;
use crate::script::location::{resolve, Location, Target};
use crate::script::program::{Program, ScriptError, ScriptErrorKind};
use crate::script::typescript::PositionMap;
use crate::value::{define, go_error, plain_object};
use crate::vu::builtins::Builtins;
use crate::vu::commonjs::CommonJs;

/// k6 1.1.0 has no dynamic `import()`: the promise rejects with this.
const NO_DYNAMIC_IMPORT: &str = "dynamic modules not enabled in the host program";

/// A script file of this VU.
#[derive(Clone)]
enum Record {
    Esm(Module),
    CommonJs(Rc<CommonJs>),
}

/// The entry script, evaluated.
pub(crate) enum Main {
    /// An ES module: its namespace holds the exports.
    Esm(Module),
    /// A CommonJS file: its final `module.exports`.
    CommonJs(JsObject),
}

/// Loads modules for one VU's context; each file is parsed once per VU.
pub(crate) struct Loader {
    program: Arc<Program>,
    /// The exports of k6's modules the VUs of this thread share.
    shared: Rc<Builtins>,
    files: RefCell<HashMap<Location, Record>>,
    builtins: RefCell<HashMap<String, Module>>,
    /// `require('k6/…')`: the module's named exports as a plain object, one per VU.
    required_builtins: RefCell<HashMap<String, JsObject>>,
    /// ES modules already part of a module graph Boa loads or evaluates: `require()` takes
    /// their namespace as it is (evaluating one again would re-enter it).
    in_graph: RefCell<HashSet<Location>>,
}

impl Loader {
    pub(crate) fn new(program: Arc<Program>, shared: Rc<Builtins>) -> Self {
        Loader {
            program,
            shared,
            files: RefCell::default(),
            builtins: RefCell::default(),
            required_builtins: RefCell::default(),
            in_graph: RefCell::default(),
        }
    }

    /// The test's script files.
    pub(crate) fn program(&self) -> &Program {
        &self.program
    }

    /// Loads, links and evaluates the entry script; the event loop is the caller's.
    pub(crate) fn start_main(&self, ctx: &mut Context) -> JsResult<MainStart> {
        let loc = self.program.main_location();
        let spec = loc.url();
        match self.record(&loc, &spec, ctx)? {
            Record::Esm(module) => {
                self.in_graph.borrow_mut().insert(loc);
                let promise = module.load_link_evaluate(ctx);
                Ok(MainStart::Esm(module, promise))
            }
            Record::CommonJs(c) => Ok(MainStart::CommonJs(c.exports(&self.program, ctx)?)),
        }
    }

    /// The CommonJS record of `loc` (made by an earlier [`Loader::record`]).
    pub(crate) fn commonjs(&self, loc: &Location) -> JsResult<Rc<CommonJs>> {
        match self.files.borrow().get(loc) {
            Some(Record::CommonJs(c)) => Ok(c.clone()),
            _ => Err(JsNativeError::error()
                .with_message(format!("{} is not a loaded CommonJS file", loc.url()))
                .into()),
        }
    }

    /// This VU's record of the file at `loc`, made on first use from the test's source.
    fn record(&self, loc: &Location, spec: &str, ctx: &mut Context) -> JsResult<Record> {
        if let Some(r) = self.files.borrow().get(loc) {
            return Ok(r.clone());
        }
        let source = self.program.source(loc, spec).map_err(|e| native(e, ctx))?;
        let record = match source.kind {
            Kind::Esm { .. } => {
                let path = loc.boa_path();
                let text = Source::from_bytes(&source.code[..]).with_path(&path);
                let module = Module::parse(text, None, ctx)
                    .map_err(|e| parse_error(&e, loc, &self.program, source.map.as_ref()))?;
                Record::Esm(module)
            }
            Kind::CommonJs => Record::CommonJs(Rc::new(CommonJs::new(loc.clone()))),
        };
        self.files.borrow_mut().insert(loc.clone(), record.clone());
        Ok(record)
    }

    fn builtin(&self, spec: &str, ctx: &mut Context) -> JsResult<Module> {
        if let Some(m) = self.builtins.borrow().get(spec) {
            return Ok(m.clone());
        }
        let module = match self
            .shared
            .module_exports(spec, ctx, modules::shareable_exports)?
        {
            Some((exports, names)) => modules::from_exports(exports, names, ctx),
            None => modules::create(spec, ctx)?,
        };
        self.builtins
            .borrow_mut()
            .insert(spec.to_string(), module.clone());
        Ok(module)
    }

    /// The module an `import` of `spec` from `base` links to.
    fn import(&self, spec: &str, base: &Location, ctx: &mut Context) -> JsResult<Module> {
        match resolve(spec, base).map_err(|m| resolve_error(m, ctx))? {
            Target::Builtin(name) => self.builtin(&name, ctx),
            Target::File(loc) => match self.record(&loc, spec, ctx)? {
                Record::Esm(module) => {
                    self.in_graph.borrow_mut().insert(loc);
                    Ok(module)
                }
                Record::CommonJs(c) => Ok(c.record(&self.program, ctx)),
            },
        }
    }

    /// `require(spec)` called from `base`: a CommonJS file's `module.exports`, an ES module's
    /// namespace, or a k6 module's named exports (without `default`, as in k6).
    pub(crate) fn require(
        &self,
        spec: &str,
        base: &Location,
        ctx: &mut Context,
    ) -> JsResult<JsValue> {
        match resolve(spec, base).map_err(|m| resolve_error(m, ctx))? {
            Target::Builtin(name) => self.require_builtin(&name, ctx).map(JsValue::from),
            Target::File(loc) => match self.record(&loc, spec, ctx)? {
                Record::CommonJs(c) => c.exports(&self.program, ctx).map(JsValue::from),
                Record::Esm(module) => {
                    let started = !self.in_graph.borrow_mut().insert(loc);
                    if !started {
                        evaluate_now(&module, ctx)?;
                    }
                    Ok(module.namespace(ctx).into())
                }
            },
        }
    }

    fn require_builtin(&self, spec: &str, ctx: &mut Context) -> JsResult<JsObject> {
        if let Some(o) = self.required_builtins.borrow().get(spec) {
            return Ok(o.clone());
        }
        let module = self.builtin(spec, ctx)?;
        evaluate_now(&module, ctx)?;
        let namespace = module.namespace(ctx);
        let exports = plain_object(ctx);
        for name in namespace.own_property_keys(ctx)? {
            if name.to_string() == "default" {
                continue;
            }
            let value = namespace.get(name.clone(), ctx)?;
            define(&exports, name, value);
        }
        self.required_builtins
            .borrow_mut()
            .insert(spec.to_string(), exports.clone());
        Ok(exports)
    }

    /// Whether an import of `spec` from `referrer` is a dynamic `import()` (the file does
    /// not request it statically, or is not an ES module at all).
    fn is_dynamic(&self, spec: &str, referrer: &Referrer) -> bool {
        let Referrer::Module(_) = referrer else {
            return true;
        };
        let Some(path) = referrer.path() else {
            return true;
        };
        let loc = Location::from_boa_path(path);
        match self.program.source(&loc, spec) {
            Ok(source) => match &source.kind {
                Kind::Esm { requests } => !requests.iter().any(|r| r == spec),
                Kind::CommonJs => true,
            },
            Err(_) => false,
        }
    }
}

/// How the entry script started.
pub(crate) enum MainStart {
    /// An ES module, with the promise of its evaluation.
    Esm(Module, boa_engine::object::builtins::JsPromise),
    /// A CommonJS file, already run: its exports.
    CommonJs(JsObject),
}

impl MainStart {
    /// The entry script once its promise (if any) settled.
    pub(crate) fn finish(self) -> JsResult<Main> {
        match self {
            MainStart::Esm(module, promise) => match promise.state() {
                PromiseState::Fulfilled(_) => Ok(Main::Esm(module)),
                PromiseState::Rejected(v) => Err(JsError::from_opaque(v)),
                PromiseState::Pending => Err(JsNativeError::error()
                    .with_message("the init context awaited something that never finished")
                    .into()),
            },
            MainStart::CommonJs(e) => Ok(Main::CommonJs(e)),
        }
    }
}

/// Links and runs `module` now (the init context cannot wait).
fn evaluate_now(module: &Module, ctx: &mut Context) -> JsResult<()> {
    let promise = module.load_link_evaluate(ctx);
    ctx.run_jobs()?;
    match promise.state() {
        PromiseState::Rejected(e) => Err(JsError::from_opaque(e)),
        // Pending: a cycle back into a module still evaluating; its bindings are what
        // they are so far, as in k6.
        _ => Ok(()),
    }
}

/// The file the running JavaScript code belongs to (`require` resolves against it).
pub(crate) fn caller(ctx: &Context, program: &Program) -> Location {
    ctx.stack_trace()
        .find_map(|frame| {
            // Boa shows a frame without a file as "unknown at ", "eval at "…
            let path = frame.code_block().path().to_string();
            (!path.is_empty() && !path.ends_with(" at "))
                .then(|| Location::from_boa_path(std::path::Path::new(&path)))
        })
        .unwrap_or_else(|| program.main_location())
}

fn resolve_error(message: String, ctx: &mut Context) -> JsError {
    go_error(message, ctx)
}

/// A load failure as the JS error the importer sees: a syntax error keeps its kind (the
/// run ends with the syntax-error exit code), a file that cannot be had is k6's GoError.
pub(crate) fn native(e: ScriptError, ctx: &mut Context) -> JsError {
    if e.kind == ScriptErrorKind::Syntax {
        let msg = e
            .message
            .strip_prefix("SyntaxError: ")
            .unwrap_or(&e.message);
        return JsNativeError::syntax().with_message(msg.to_string()).into();
    }
    go_error(e.message, ctx)
}

/// A Boa parse error (`… at line L, col C`) as k6 shows it: `file:///path:L:C: …`.
pub(crate) fn parse_error(
    err: &JsError,
    loc: &Location,
    program: &Program,
    map: Option<&PositionMap>,
) -> JsError {
    let msg = err
        .as_native()
        .map_or_else(|| err.to_string(), |n| n.message().to_string());
    JsNativeError::syntax()
        .with_message(program.syntax_message(loc, map, &msg))
        .into()
}

impl ModuleLoader for Loader {
    fn load_imported_module(
        self: Rc<Self>,
        referrer: Referrer,
        request: boa_engine::module::ModuleRequest,
        context: &std::cell::RefCell<&mut Context>,
    ) -> impl std::future::Future<Output = JsResult<Module>> {
        let spec = request.specifier().to_std_string_escaped();
        let result = if self.is_dynamic(&spec, &referrer) {
            // k6 rejects with the bare message (a string, not an Error).
            Err(JsError::from_opaque(js_string!(NO_DYNAMIC_IMPORT).into()))
        } else {
            let base = referrer
                .path()
                .map_or_else(|| self.program.main_location(), Location::from_boa_path);
            self.import(&spec, &base, &mut context.borrow_mut())
        };
        async { result }
    }

    fn init_import_meta(
        self: Rc<Self>,
        import_meta: &JsObject,
        module: &Module,
        ctx: &mut Context,
    ) {
        // k6 1.1.0: `import.meta.url` is undefined, `import.meta.resolve` resolves against
        // the module's URL.
        let base = module
            .path()
            .map_or_else(|| self.program.main_location(), Location::from_boa_path);
        let base = JsString::from(base.boa_path().to_string_lossy().as_ref());
        let f = FunctionObjectBuilder::new(
            ctx.realm(),
            NativeFunction::from_copy_closure_with_captures(
                |_, args, base, ctx| {
                    let spec = string_arg(args, 0, ctx)?;
                    let base = Location::from_boa_path(std::path::Path::new(
                        &base.to_std_string_escaped(),
                    ));
                    let url = match resolve(&spec, &base).map_err(|m| resolve_error(m, ctx))? {
                        Target::Builtin(name) => name,
                        Target::File(loc) => loc.url(),
                    };
                    Ok(JsString::from(url.as_str()).into())
                },
                base,
            ),
        )
        .name(js_string!("resolve"))
        .length(1)
        .build();
        define(import_meta, js_string!("resolve"), f);
    }
}
