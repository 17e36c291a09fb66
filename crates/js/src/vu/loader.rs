//! Module resolution: k6's built-in modules and the script's own files.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use boa_engine::module::{ModuleLoader, Referrer};
use boa_engine::{Context, JsError, JsNativeError, JsResult, Module, Source};

use crate::modules;
use crate::script::program::{Program, ScriptError, ScriptErrorKind};

/// Loads modules for one VU's context; each module is parsed once per context.
pub(crate) struct Loader {
    program: Arc<Program>,
    files: RefCell<HashMap<PathBuf, Module>>,
    builtins: RefCell<HashMap<String, Module>>,
}

impl Loader {
    pub(crate) fn new(program: Arc<Program>) -> Self {
        Loader {
            program,
            files: RefCell::default(),
            builtins: RefCell::default(),
        }
    }

    /// Parses a script file as a module in `ctx`.
    pub(crate) fn parse_file(&self, path: &std::path::Path, ctx: &mut Context) -> JsResult<Module> {
        if let Some(m) = self.files.borrow().get(path) {
            return Ok(m.clone());
        }
        let data = self.program.source(path).map_err(native)?;
        let source = Source::from_bytes(&data.code[..]).with_path(path);
        let module =
            Module::parse(source, None, ctx).map_err(|e| with_location(e, path, &self.program))?;
        self.files
            .borrow_mut()
            .insert(path.to_path_buf(), module.clone());
        Ok(module)
    }

    fn resolve(&self, spec: &str, referrer: &Referrer, ctx: &mut Context) -> JsResult<Module> {
        if spec == "k6" || spec.starts_with("k6/") {
            if let Some(m) = self.builtins.borrow().get(spec) {
                return Ok(m.clone());
            }
            let module = modules::create(spec, ctx)?;
            self.builtins
                .borrow_mut()
                .insert(spec.to_string(), module.clone());
            return Ok(module);
        }
        if spec.starts_with("http://") || spec.starts_with("https://") {
            let path = self.program.remote(spec).map_err(native)?;
            return self.parse_file(&path, ctx);
        }
        if spec.starts_with("./")
            || spec.starts_with("../")
            || spec.starts_with('/')
            || spec.starts_with("file://")
        {
            let path = self.program.resolve(spec, referrer.path());
            return self.parse_file(&path, ctx);
        }
        Err(JsNativeError::typ()
            .with_message(format!(
                "The moduleSpecifier \"{spec}\" couldn't be resolved: bare module names are not supported; use a relative path (./{spec}) or a k6 module"
            ))
            .into())
    }
}

/// A load failure as the JS error the importer sees; syntax errors keep their kind so the
/// run ends with the syntax-error exit code.
pub(crate) fn native(e: ScriptError) -> JsError {
    let err = if e.kind == ScriptErrorKind::Syntax {
        let msg = e
            .message
            .strip_prefix("SyntaxError: ")
            .unwrap_or(&e.message);
        JsNativeError::syntax().with_message(msg.to_string())
    } else {
        JsNativeError::typ().with_message(e.message)
    };
    err.into()
}

/// Boa's syntax errors end with "at line L, col C"; k6 users expect `file:line:col` first.
/// For a transpiled TypeScript module the position is mapped back into the `.ts` file.
pub(crate) fn with_location(err: JsError, path: &std::path::Path, program: &Program) -> JsError {
    let msg = err
        .as_native()
        .map_or_else(|| err.to_string(), |n| n.message().to_string());
    let (text, location) = match msg.rsplit_once(" at line ") {
        Some((text, pos)) => {
            let pos = pos.trim_end_matches(" (native)");
            let loc = pos
                .split_once(", col ")
                .map(|(l, c)| {
                    let parsed = l
                        .trim()
                        .parse::<u32>()
                        .ok()
                        .zip(c.trim().parse::<u32>().ok());
                    match parsed.and_then(|(l, c)| program.original_position(path, l, c)) {
                        Some((l, c)) => format!(":{l}:{c}"),
                        None => format!(":{l}:{c}"),
                    }
                })
                .unwrap_or_default();
            (text.to_string(), loc)
        }
        None => (msg.clone(), String::new()),
    };
    JsNativeError::syntax()
        .with_message(format!("file://{}{location}: {text}", path.display()))
        .into()
}

impl ModuleLoader for Loader {
    fn load_imported_module(
        self: Rc<Self>,
        referrer: Referrer,
        request: boa_engine::module::ModuleRequest,
        context: &RefCell<&mut Context>,
    ) -> impl std::future::Future<Output = JsResult<Module>> {
        let spec = request.specifier().to_std_string_escaped();
        let result = self.resolve(&spec, &referrer, &mut context.borrow_mut());
        async { result }
    }
}
