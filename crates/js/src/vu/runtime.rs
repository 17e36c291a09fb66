//! One VU's JavaScript runtime: a Boa context with k6's globals and modules, the evaluated
//! script, and the calls the test lifecycle makes into it.

use std::rc::Rc;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use boa_engine::error::{EngineError, RuntimeLimitError};
use boa_engine::object::builtins::JsArrayBuffer;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{js_string, Context, JsError, JsObject, JsString, JsValue};
use rk6_metrics::builtin;
use rk6_scheduler::{Iteration, IterationOutcome, Scenario};
use rustc_hash::FxHashMap;

use crate::host::{Host, Phase};
use crate::log::Level;
use crate::script::program::{ScriptError, ScriptErrorKind};
use crate::shared::Shared;
use crate::value::{abort_reason, define, is_interrupted};
use crate::vu::globals;
use crate::vu::loader::{Loader, Main};

/// Nested JavaScript calls allowed before a call fails, instead of overflowing the VU's
/// native stack. Boa runs JS-to-JS calls without native recursion, and calls that pass
/// through natives (`map`, `JSON.stringify`, getters) count too; the coroutine stack is
/// sized for this limit.
pub(crate) const RECURSION_LIMIT: usize = 2048;

/// A VU's context after its init code ran.
pub(crate) struct Runtime {
    ctx: Context,
    /// Keeps the thread's shared built-ins alive while this VU uses them.
    _builtins: Rc<crate::vu::builtins::Builtins>,
    pub(crate) host: Rc<Host>,
    namespace: JsObject,
    /// Exported functions by name; looked up once per iteration, hence Fx, not SipHash.
    functions: FxHashMap<String, JsObject>,
    setup_data: Option<JsValue>,
    scenario: Option<Arc<Scenario>>,
}

impl Runtime {
    /// Builds the context and evaluates the script's init code.
    pub(crate) fn init(vu_id: u64, shared: Arc<Shared>) -> Result<Runtime, ScriptError> {
        // The built-ins, k6's globals and modules are the thread's, shared by its VUs
        // (`vu::builtins`).
        let builtins = crate::vu::builtins::for_this_thread(&shared)
            .map_err(|e| ScriptError::new(ScriptErrorKind::Exception, e.to_string()))?;
        let loader = Rc::new(Loader::new(shared.program.clone(), builtins.clone()));
        let mut ctx = Context::builder()
            .shared_intrinsics(builtins.objects.intrinsics.clone())
            .module_loader(loader.clone())
            .build()
            .map_err(|e| ScriptError::new(ScriptErrorKind::Exception, e.to_string()))?;
        ctx.runtime_limits_mut()
            .set_recursion_limit(RECURSION_LIMIT);
        // The VM's value stack is heap memory; let the recursion limit be the one that trips.
        ctx.runtime_limits_mut()
            .set_stack_size_limit(RECURSION_LIMIT * 64);
        let host = Host::new(vu_id, shared.clone());
        ctx.insert_data(host.clone());
        ctx.insert_data(builtins.objects.clone());
        builtins
            .globals
            .install(&mut ctx, vu_id)
            .map_err(|e| ScriptError::new(ScriptErrorKind::Exception, e.to_string()))?;
        let start = loader
            .start_main(&mut ctx)
            .map_err(|e| script_error(&e, &mut ctx))?;
        crate::host::event_loop::drive(&mut ctx).map_err(|e| script_error(&e, &mut ctx))?;
        let namespace = match start.finish().map_err(|e| script_error(&e, &mut ctx))? {
            Main::Esm(module) => module.namespace(&mut ctx),
            Main::CommonJs(exports) => {
                commonjs_main_exports(&exports, &mut ctx).map_err(|e| script_error(&e, &mut ctx))?
            }
        };
        host.phase.set(Phase::Run);
        Ok(Runtime {
            ctx,
            _builtins: builtins,
            host,
            namespace,
            functions: FxHashMap::default(),
            setup_data: None,
            scenario: None,
        })
    }

    /// The exported `options` as JSON (`{}` when not exported).
    pub(crate) fn options(&mut self) -> Result<serde_json::Value, ScriptError> {
        let v = self
            .namespace
            .get(js_string!("options"), &mut self.ctx)
            .map_err(|e| script_error(&e, &mut self.ctx))?;
        if v.is_undefined() || v.is_null() {
            return Ok(serde_json::Value::Object(Default::default()));
        }
        match v.to_json(&mut self.ctx) {
            Ok(Some(json)) => Ok(json),
            Ok(None) => Ok(serde_json::Value::Object(Default::default())),
            Err(e) => Err(ScriptError::new(
                ScriptErrorKind::Exception,
                format!("the exported options cannot be read: {e}"),
            )),
        }
    }

    /// Names of the exported functions.
    pub(crate) fn exported_functions(&mut self) -> Vec<String> {
        let Ok(keys) = self.namespace.own_property_keys(&mut self.ctx) else {
            return Vec::new();
        };
        keys.into_iter()
            .filter_map(|k| {
                let name = k.to_string();
                let v = self.namespace.get(k, &mut self.ctx).ok()?;
                v.as_callable().map(|_| name)
            })
            .collect()
    }

    fn function(&mut self, name: &str) -> Option<JsObject> {
        if let Some(f) = self.functions.get(name) {
            return Some(f.clone());
        }
        let v = self
            .namespace
            .get(JsString::from(name), &mut self.ctx)
            .ok()?;
        let f = v.as_callable()?.clone();
        self.functions.insert(name.to_string(), f.clone());
        Some(f)
    }

    /// Sets the global `__ITER`, a plain writable data property as k6's per-iteration
    /// assignment leaves it. Written straight into the global object's property table:
    /// `[[Set]]` validated and redefined the property through the ordinary internal
    /// methods, ~4 k instructions an iteration (design 002).
    fn set_iter(&mut self, n: f64) {
        self.ctx.global_object().insert_property(
            js_string!("__ITER"),
            PropertyDescriptor::builder()
                .value(n)
                .writable(true)
                .enumerable(true)
                .configurable(true),
        );
    }

    fn setup_arg(&mut self) -> JsValue {
        if self.setup_data.is_none() {
            let text = self.host.shared.setup_data.get().cloned().flatten();
            let v = match text {
                Some(t) => serde_json::from_str(&t)
                    .ok()
                    .and_then(|json: serde_json::Value| {
                        JsValue::from_json(&json, &mut self.ctx).ok()
                    })
                    .unwrap_or_default(),
                None => JsValue::undefined(),
            };
            self.setup_data = Some(v);
        }
        self.setup_data.clone().unwrap_or_default()
    }

    fn enter_scenario(&mut self, scenario: &Arc<Scenario>) {
        if self
            .scenario
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, scenario))
        {
            return;
        }
        let run_tags = self.host.shared.tags.iter().map(|(k, v)| (k, v));
        self.host
            .tags
            .borrow_mut()
            .activate(run_tags, &scenario.tags, &scenario.name);
        if !scenario.env.is_empty() {
            globals::extend_env(&mut self.ctx, &scenario.env);
        }
        self.scenario = Some(scenario.clone());
    }

    /// Runs one iteration of the scenario's exec function.
    pub(crate) fn run_iteration(&mut self, it: &Iteration, vu_iteration: u64) -> IterationOutcome {
        self.enter_scenario(&it.scenario);
        let host = self.host.clone();
        host.data_sent.set(0);
        host.data_received.set(0);
        if !host.shared.no_cookies_reset {
            host.http.cookies().clear();
        }
        if host.shared.no_vu_connection_reuse {
            host.http.close_idle();
        }
        self.set_iter(vu_iteration as f64);
        let Some(f) = self.function(&it.scenario.exec) else {
            // Validated before the test starts; reaching this is a bug, not a script error.
            return IterationOutcome::Interrupted;
        };
        *host.iteration.borrow_mut() = Some(crate::host::IterationInfo {
            scenario: it.scenario.clone(),
            iteration_in_scenario: it.iteration_in_scenario,
            vu_iteration,
            vu_iteration_in_scenario: it.vu_iteration_in_scenario,
        });
        // Open-model iterations are also measured from their scheduled start (rk6's
        // corrected Trends): a late start is a wait the arriving user had.
        let late = it
            .planned_start
            .map(|planned| tokio::time::Instant::now().saturating_duration_since(planned));
        if let Some(late) = late {
            host.sample(
                rk6_metrics::builtin::ITERATION_START_DELAY,
                late.as_secs_f64() * 1000.0,
                &[],
                &[],
            );
        }
        host.first_response_due.set(it.planned_start);
        host.tags
            .borrow_mut()
            .set_iteration(host.vu_id, vu_iteration);
        let data = self.setup_arg();
        let start = Instant::now();
        let mut result = crate::host::event_loop::call_settled(&f, &[data], &mut self.ctx);
        if let Some(min) = host.shared.run.min_iteration_duration {
            // `minIterationDuration`: the rest of the time is slept, inside the iteration.
            let left = min.saturating_sub(start.elapsed());
            if !left.is_zero() {
                if let Err(e) = host.block_on("minIterationDuration", tokio::time::sleep(left)) {
                    result = Err(crate::host::event_loop::Uncaught {
                        error: e,
                        in_promise: false,
                    });
                }
            }
        }
        host.event_loop.end_iteration();
        host.first_response_due.set(None);
        let outcome = match result {
            Err(u) if is_interrupted(&u.error) => IterationOutcome::Interrupted,
            Err(u) if abort_reason(&u.error).is_some() => {
                let line = crate::value::abort_log_line(&u.error).unwrap_or_default();
                let source: &[(&str, &str)] = if line.starts_with("test aborted: ") {
                    &[("source", "test.abort")]
                } else {
                    &[]
                };
                host.shared.logger.log(Level::Error, &line, source);
                IterationOutcome::AbortTest
            }
            Err(u) => {
                let msg = describe(&u.error, &mut self.ctx);
                let executor = it.scenario.executor_name();
                let fields = [
                    ("executor", executor),
                    ("scenario", it.scenario.name.as_str()),
                    ("source", "stacktrace"),
                ];
                if u.in_promise {
                    // k6 reports a rejected async iteration without the source field.
                    host.shared.logger.log(
                        Level::Error,
                        &format!("Uncaught (in promise) {msg}"),
                        &fields[..2],
                    );
                } else {
                    host.shared.logger.log(Level::Error, &msg, &fields);
                }
                IterationOutcome::Completed
            }
            Ok(_) => IterationOutcome::Completed,
        };
        // k6 keeps the samples of the iteration that called `test.abort()`: it counts in
        // `iterations`, with its duration and its bytes.
        if matches!(
            outcome,
            IterationOutcome::Completed | IterationOutcome::AbortTest
        ) {
            let duration = start.elapsed();
            self.emit_iteration(
                duration.as_secs_f64() * 1000.0,
                late.map(|late| (late + duration).as_secs_f64() * 1000.0),
            );
        }
        host.samples.borrow_mut().flush_due(&host.shared.samples);
        outcome
    }

    /// The iteration's samples; `corrected_ms` is its duration from the scheduled start
    /// (open-model iterations only).
    fn emit_iteration(&mut self, duration_ms: f64, corrected_ms: Option<f64>) {
        let host = &self.host;
        // As k6: the VU's tags as the iteration ends.
        let tags = host.tag_set(&[], &[]);
        let mut samples = host.samples.borrow_mut();
        let now = SystemTime::now();
        samples.push(
            builtin::DATA_SENT,
            tags.clone(),
            host.data_sent.get() as f64,
            now,
        );
        samples.push(
            builtin::DATA_RECEIVED,
            tags.clone(),
            host.data_received.get() as f64,
            now,
        );
        samples.push(builtin::ITERATION_DURATION, tags.clone(), duration_ms, now);
        if let Some(corrected) = corrected_ms {
            samples.push(
                builtin::ITERATION_DURATION_CORRECTED,
                tags.clone(),
                corrected,
                now,
            );
        }
        samples.push(builtin::ITERATIONS, tags, 1.0, now);
    }

    /// Calls `setup()` if exported; returns its result as JSON text.
    pub(crate) fn setup(&mut self) -> Result<Option<String>, ScriptError> {
        let Some(f) = self.function("setup") else {
            return Ok(None);
        };
        self.enter_lifecycle("setup");
        let v = crate::host::event_loop::call(&f, &[], &mut self.ctx);
        self.host
            .samples
            .borrow_mut()
            .flush(&self.host.shared.samples);
        let v = v.map_err(|e| script_error(&e, &mut self.ctx))?;
        if v.is_undefined() {
            return Ok(None);
        }
        let json = v.to_json(&mut self.ctx).map_err(|e| {
            ScriptError::new(
                ScriptErrorKind::Exception,
                format!("setup() returned data that cannot be serialized: {e}"),
            )
        })?;
        Ok(json.map(|j| j.to_string()))
    }

    /// Calls `teardown(data)` if exported.
    pub(crate) fn teardown(&mut self) -> Result<(), ScriptError> {
        let Some(f) = self.function("teardown") else {
            return Ok(());
        };
        self.enter_lifecycle("teardown");
        let data = self.setup_arg();
        let v = crate::host::event_loop::call(&f, &[data], &mut self.ctx);
        self.host
            .samples
            .borrow_mut()
            .flush(&self.host.shared.samples);
        v.map(drop).map_err(|e| script_error(&e, &mut self.ctx))
    }

    fn enter_lifecycle(&mut self, name: &str) {
        self.set_iter(0.0);
        // As k6: lifecycle samples carry the group `::setup`/`::teardown` and no scenario.
        let run_tags = self.host.shared.tags.iter().map(|(k, v)| (k, v));
        self.host.tags.borrow_mut().lifecycle(run_tags, name);
    }

    /// Calls `handleSummary(data)` if exported; returns the outputs it asked for
    /// (`stdout`, `stderr` or a file path → contents).
    pub(crate) fn handle_summary(
        &mut self,
        data: &serde_json::Value,
    ) -> Result<Option<crate::vu::lifecycle::SummaryOutputs>, ScriptError> {
        let Some(f) = self.function("handleSummary") else {
            return Ok(None);
        };
        let arg =
            JsValue::from_json(data, &mut self.ctx).map_err(|e| script_error(&e, &mut self.ctx))?;
        // k6's data (the legacy shape, with its `root_group`) always has the key, `undefined`
        // when there was no setup(); the machine-readable summary (k6 1.5) has none.
        let legacy_shape = data.get("root_group").is_some();
        if let Some(obj) = arg.as_object().filter(|_| legacy_shape) {
            if !obj
                .has_own_property(js_string!("setup_data"), &mut self.ctx)
                .unwrap_or(true)
            {
                define(&obj, js_string!("setup_data"), JsValue::undefined());
            }
        }
        let v = crate::host::event_loop::call(&f, &[arg], &mut self.ctx)
            .map_err(|e| script_error(&e, &mut self.ctx))?;
        let Some(obj) = v.as_object() else {
            return Err(ScriptError::new(
                ScriptErrorKind::Exception,
                "handleSummary() must return an object",
            ));
        };
        let mut out = Vec::new();
        let keys = obj
            .own_property_keys(&mut self.ctx)
            .map_err(|e| script_error(&e, &mut self.ctx))?;
        for key in keys {
            let name = key.to_string();
            let value = obj
                .get(key, &mut self.ctx)
                .map_err(|e| script_error(&e, &mut self.ctx))?;
            let bytes = match value
                .as_object()
                .and_then(|o| JsArrayBuffer::from_object(o.clone()).ok())
            {
                Some(buf) => buf.to_vec().unwrap_or_default(),
                None => value
                    .to_string(&mut self.ctx)
                    .map_err(|e| script_error(&e, &mut self.ctx))?
                    .to_std_string_escaped()
                    .into_bytes(),
            };
            out.push((name, bytes));
        }
        Ok(Some(out))
    }
}

/// What k6 reads from a CommonJS entry script: its exports' own properties, and `default`
/// as k6 resolves it for any CommonJS file (`'default' in E ? E.default : E`).
fn commonjs_main_exports(e: &JsObject, ctx: &mut Context) -> boa_engine::JsResult<JsObject> {
    let out = crate::value::plain_object(ctx);
    for key in e.own_property_keys(ctx)? {
        let value = e.get(key.clone(), ctx)?;
        define(&out, key, value);
    }
    let default = js_string!("default");
    let value = if e.has_property(default.clone(), ctx)? {
        e.get(default.clone(), ctx)?
    } else {
        e.clone().into()
    };
    define(&out, default, value);
    Ok(out)
}

/// A script error with k6's shape: message, then the JS stack as `\tat ...` lines.
pub(crate) fn describe(err: &JsError, ctx: &mut Context) -> String {
    if let Some(EngineError::RuntimeLimit(
        RuntimeLimitError::Recursion | RuntimeLimitError::StackSize,
    )) = err.as_engine()
    {
        return recursion_overflow(err, ctx);
    }
    let (mut text, stack) = match err.as_opaque() {
        Some(v) => {
            let stack = v
                .as_object()
                .and_then(|o| o.get(js_string!("stack"), ctx).ok())
                .filter(|s| s.is_string())
                .map(|s| {
                    s.to_string(ctx)
                        .map(|s| s.to_std_string_escaped())
                        .unwrap_or_default()
                });
            let text = v
                .to_string(ctx)
                .map(|s| s.to_std_string_escaped())
                .unwrap_or_else(|_| err.to_string());
            (text, stack)
        }
        None => (
            err.as_native().map_or_else(
                || err.to_string(),
                |n| format!("{}: {}", n.kind(), n.message()),
            ),
            None,
        ),
    };
    if let Some(stack) = stack {
        let program = ctx.get_data::<Rc<Host>>().map(|h| h.shared.program.clone());
        // Boa adds a frame for the native promise machinery k6 does not show.
        for line in stack
            .lines()
            .filter(|l| !l.trim().is_empty() && l.trim() != "at  (native)")
        {
            text.push_str("\n\t");
            let line = match &program {
                Some(p) => map_frame(line.trim_start(), p),
                None => line.trim_start().to_string(),
            };
            // k6 names script files by URL.
            text.push_str(&line.replace(" (/", " (file:///"));
        }
    }
    text.push('\n');
    text
}

/// JavaScript recursing past [`RECURSION_LIMIT`]: k6's message, then the innermost frames.
fn recursion_overflow(err: &JsError, ctx: &mut Context) -> String {
    let program = ctx.get_data::<Rc<Host>>().map(|h| h.shared.program.clone());
    let mut text = format!(
        "RangeError: Maximum call stack size exceeded (rk6 stops JavaScript recursion at {RECURSION_LIMIT} nested calls; this error cannot be caught)"
    );
    // Boa's rendering lists up to 50 frames; the innermost few show the cycle.
    let rendered = err.to_string();
    for frame in rendered.lines().skip(1).take(10) {
        let frame = frame.trim_start();
        let frame = match &program {
            Some(p) => map_frame(frame, p),
            None => frame.to_string(),
        };
        text.push_str("\n\t");
        text.push_str(&frame.replace(" (/", " (file:///"));
    }
    text.push('\n');
    text
}

/// A stack frame `at f (/x.ts:L:C)` of a transpiled module, with the `.ts` position.
fn map_frame(frame: &str, program: &crate::script::program::Program) -> String {
    let mapped = (|| {
        let inner = frame.strip_suffix(')')?;
        let open = inner.rfind('(')?;
        let mut parts = inner[open + 1..].rsplitn(3, ':');
        let col: u32 = parts.next()?.parse().ok()?;
        let line: u32 = parts.next()?.parse().ok()?;
        let path = parts.next()?;
        let (l, c) = program.original_position(std::path::Path::new(path), line, col)?;
        Some(format!("{}({path}:{l}:{c})", &inner[..open]))
    })();
    mapped.unwrap_or_else(|| frame.to_string())
}

fn script_error(err: &JsError, ctx: &mut Context) -> ScriptError {
    if let Some(line) = crate::value::abort_log_line(err) {
        return ScriptError::new(ScriptErrorKind::Aborted, line);
    }
    if crate::vu::commonjs::is_null_exports(err, ctx) {
        let main = ctx
            .get_data::<Rc<Host>>()
            .map(|h| h.shared.program.main.clone())
            .unwrap_or_default();
        let name = main.file_name().unwrap_or_default().to_string_lossy();
        return ScriptError::new(
            ScriptErrorKind::Load,
            format!(
                "could not initialize '{name}': could not load JS test 'file://{}': {}",
                main.display(),
                crate::vu::commonjs::NULL_EXPORTS
            ),
        );
    }
    let syntax = err.as_native().is_some_and(|n| n.is_syntax())
        || err
            .as_opaque()
            .and_then(|v| v.as_object())
            .and_then(|o| o.get(js_string!("name"), ctx).ok())
            .is_some_and(|n| {
                n.as_string()
                    .is_some_and(|s| s.to_std_string_escaped() == "SyntaxError")
            });
    let kind = if syntax {
        ScriptErrorKind::Syntax
    } else {
        ScriptErrorKind::Exception
    };
    ScriptError::new(kind, describe(err, ctx).trim_end().to_string())
}
