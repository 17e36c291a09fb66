//! Leaf helpers on JS values that natives everywhere use: plain objects and their data
//! properties, `ArrayBuffer`s, and the uncatchable errors that unwind a VU's script.

use boa_engine::error::{EngineError, PanicError};
use boa_engine::object::builtins::JsArrayBuffer;
use boa_engine::object::ObjectInitializer;
use boa_engine::property::{PropertyDescriptor, PropertyKey};
use boa_engine::{js_string, Context, JsError, JsNativeError, JsObject, JsResult, JsValue};

const INTERRUPTED: &str = "rk6: iteration interrupted";
const ABORTED: &str = "rk6: test aborted: ";

/// The uncatchable error natives return to unwind an interrupted iteration.
pub(crate) fn interrupted_error() -> JsError {
    EngineError::Panic(PanicError::new(INTERRUPTED)).into()
}

/// The uncatchable error `exec.test.abort(reason)` unwinds the script with.
pub(crate) fn aborted_error(reason: &str) -> JsError {
    EngineError::Panic(PanicError::new(format!("{ABORTED}{reason}"))).into()
}

/// Whether `err` is the error of an interrupted iteration.
pub(crate) fn is_interrupted(err: &JsError) -> bool {
    matches!(err.as_engine(), Some(EngineError::Panic(p)) if p.message() == INTERRUPTED)
}

/// The uncatchable error a module aborts the test with when it cannot go on (k6's
/// `k6ext.Abort`: the browser cannot start), logged as `message` alone.
pub(crate) fn module_abort_error(message: &str) -> JsError {
    EngineError::Panic(PanicError::new(format!("{ABORTED}{MODULE}{message}"))).into()
}

/// Marks a module's abort among the reasons.
const MODULE: &str = "\u{1}";

/// The reason given to `exec.test.abort` (or a module's abort message), if `err` is that
/// abort.
pub(crate) fn abort_reason(err: &JsError) -> Option<&str> {
    match err.as_engine() {
        Some(EngineError::Panic(p)) => p
            .message()
            .strip_prefix(ABORTED)
            .map(|r| r.strip_prefix(MODULE).unwrap_or(r)),
        _ => None,
    }
}

/// How an abort is logged: `test aborted: reason` for the script's, the message alone
/// for a module's.
pub(crate) fn abort_log_line(err: &JsError) -> Option<String> {
    match err.as_engine() {
        Some(EngineError::Panic(p)) => {
            let r = p.message().strip_prefix(ABORTED)?;
            Some(match r.strip_prefix(MODULE) {
                Some(m) => m.to_string(),
                None => format!("test aborted: {r}"),
            })
        }
        _ => None,
    }
}

/// Makes an `ArrayBuffer` holding `bytes`.
pub(crate) fn array_buffer(bytes: &[u8], ctx: &mut Context) -> JsResult<JsValue> {
    let block = boa_engine::object::builtins::AlignedVec::from_iter(0, bytes.iter().copied());
    Ok(JsArrayBuffer::from_byte_block(block, ctx)?.into())
}

/// Sets a plain writable, enumerable data property on an object the host just made (no
/// setters or frozen objects to honour, so the full `[[DefineOwnProperty]]` is not needed).
pub(crate) fn define(obj: &JsObject, key: impl Into<PropertyKey>, value: impl Into<JsValue>) {
    obj.insert_property(
        key,
        PropertyDescriptor::builder()
            .value(value)
            .writable(true)
            .enumerable(true)
            .configurable(true),
    );
}

/// A new ordinary object. Boa's `JsObject::with_object_proto` gives each object a unique
/// shape, which is slow to build; objects from `ObjectInitializer` share shapes.
pub(crate) fn plain_object(ctx: &mut Context) -> JsObject {
    ObjectInitializer::new(ctx).build()
}

/// An error as k6 throws one that comes from Go: an `Error` named `GoError`, which scripts
/// print as `GoError: message`.
pub(crate) fn go_error(message: impl Into<String>, ctx: &mut Context) -> JsError {
    let obj = JsNativeError::error()
        .with_message(message.into())
        .into_opaque(ctx);
    obj.insert_property(
        js_string!("name"),
        PropertyDescriptor::builder()
            .value(js_string!("GoError"))
            .writable(true)
            .enumerable(false)
            .configurable(true),
    );
    JsError::from_opaque(obj.into())
}
