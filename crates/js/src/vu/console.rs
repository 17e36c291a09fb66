//! How `console.*` writes its arguments, as k6 1.6 and later do (release notes v1.5.0
//! #5460 and v1.6.0 #5496; unchanged up to k6 2.2): arguments joined by spaces, each one
//!
//! - a function: `[object Function]`; a Go error value: its message; an `Error`: its
//!   `toString()` (`Error: boom`); any other primitive: its string form (strings unquoted);
//! - an object: `{ key: value, … }` over its own enumerable string keys (`{}` without any;
//!   a `Date` without any as its quoted ISO string), an array `[ a, b ]` (`[]`),
//!   an `ArrayBuffer` `ArrayBuffer { [Uint8Contents]: <04 00>, byteLength: 2 }`, a typed
//!   array `Int32Array(2) [ 4, 2 ]` (`Name(0) []`; a `Uint8ClampedArray` shows as
//!   `Uint8Array`, as in k6);
//! - inside those: strings in double quotes (not escaped), `null` and `undefined` (and
//!   array holes) as `null`, functions and classes as `[object Function]`, errors as their
//!   `toString()`, and an object already on the path from the top as `[Circular]`.
//!
//! (k6 1.1 printed objects as JSON; k6 1.5 as JSON with functions and cycles named.)

use std::collections::HashSet;

use boa_engine::builtins::error::Error;
use boa_engine::builtins::typed_array::TypedArrayKind;
use boa_engine::object::builtins::{JsArrayBuffer, JsDate, JsTypedArray};
use boa_engine::property::PropertyKey;
use boa_engine::{js_string, Context, JsObject, JsResult, JsValue};

const FUNCTION: &str = "[object Function]";

/// The message of a `console.*` call with `args`.
pub(crate) fn format_args(args: &[JsValue], ctx: &mut Context) -> JsResult<String> {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        top(a, &mut out, ctx)?;
    }
    Ok(out)
}

/// An argument.
fn top(value: &JsValue, out: &mut String, ctx: &mut Context) -> JsResult<()> {
    let Some(obj) = value.as_object() else {
        primitive(value, out, ctx)?;
        return Ok(());
    };
    if obj.is_callable() {
        out.push_str(FUNCTION);
    } else if let Some(message) = crate::modules::go_error::go_value_message(&obj) {
        out.push_str(&message);
    } else if obj.is::<Error>() {
        out.push_str(&value.to_string(ctx)?.to_std_string_lossy());
    } else {
        nested(value, out, ctx)?;
    }
    Ok(())
}

/// A primitive's string form; a symbol's is its description, as k6 prints it.
fn primitive(value: &JsValue, out: &mut String, ctx: &mut Context) -> JsResult<()> {
    if let Some(sym) = value.as_symbol() {
        if let Some(d) = sym.description() {
            out.push_str(&d.to_std_string_lossy());
        }
        return Ok(());
    }
    out.push_str(&value.to_string(ctx)?.to_std_string_lossy());
    Ok(())
}

/// What is left to print of an object argument, last first.
enum Task {
    /// A value inside an object or array (or the argument itself).
    Value(JsValue),
    /// Literal text.
    Text(String),
    /// The end of an object or array: it leaves the path.
    Leave,
}

/// The objects from the top to the one being printed (for `[Circular]`), in order and as a
/// set.
#[derive(Default)]
struct Path {
    order: Vec<JsObject>,
    set: HashSet<JsObject>,
}

/// An object argument, printed with an explicit work list rather than recursion, so that no
/// nesting depth can exhaust the VU's native stack.
fn nested(root: &JsValue, out: &mut String, ctx: &mut Context) -> JsResult<()> {
    let mut path = Path::default();
    let mut tasks = vec![Task::Value(root.clone())];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Text(t) => out.push_str(&t),
            Task::Leave => {
                if let Some(o) = path.order.pop() {
                    path.set.remove(&o);
                }
            }
            Task::Value(v) => value(&v, &mut path, &mut tasks, out, ctx)?,
        }
    }
    Ok(())
}

/// Prints `v` or, for an object or array, queues its parts.
fn value(
    v: &JsValue,
    path: &mut Path,
    tasks: &mut Vec<Task>,
    out: &mut String,
    ctx: &mut Context,
) -> JsResult<()> {
    if v.is_null_or_undefined() {
        out.push_str("null");
        return Ok(());
    }
    let Some(obj) = v.as_object() else {
        if let Some(s) = v.as_string() {
            out.push('"');
            out.push_str(&s.to_std_string_lossy());
            out.push('"');
        } else {
            primitive(v, out, ctx)?;
        }
        return Ok(());
    };
    if obj.is_callable() {
        out.push_str(FUNCTION);
        return Ok(());
    }
    if path.set.contains(&obj) {
        out.push_str("[Circular]");
        return Ok(());
    }
    if obj.is::<Error>() {
        out.push_str(&v.to_string(ctx)?.to_std_string_lossy());
        return Ok(());
    }
    if let Ok(buffer) = JsArrayBuffer::from_object(obj.clone()) {
        let bytes = buffer.to_vec().unwrap_or_default();
        out.push_str("ArrayBuffer { [Uint8Contents]: <");
        for (i, b) in bytes.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&format!("{b:02x}"));
        }
        out.push_str(&format!(">, byteLength: {} }}", bytes.len()));
        return Ok(());
    }
    if let Ok(view) = JsTypedArray::from_object(obj.clone()) {
        let name = view.kind().map_or("TypedArray", typed_array_name);
        let len = view.length(ctx)?;
        out.push_str(&format!("{name}({len})"));
        if len == 0 {
            out.push_str(" []");
            return Ok(());
        }
        out.push_str(" [ ");
        for i in 0..len {
            if i > 0 {
                out.push_str(", ");
            }
            let v = obj.get(i, ctx)?;
            primitive(&v, out, ctx)?;
        }
        out.push_str(" ]");
        return Ok(());
    }
    // The parts of an array or object, in order: separators, keys and values.
    let mut parts: Vec<Task> = Vec::new();
    let (open, close) = if obj.is_array() {
        let len = obj.get(js_string!("length"), ctx)?.to_length(ctx)?;
        if len == 0 {
            out.push_str("[]");
            return Ok(());
        }
        for i in 0..len {
            if i > 0 {
                parts.push(Task::Text(", ".into()));
            }
            parts.push(Task::Value(obj.get(i, ctx)?));
        }
        ("[ ", " ]")
    } else {
        let entries = obj.enumerable_own_entries(ctx)?;
        if entries.is_empty() {
            if let Ok(date) = JsDate::from_object(obj.clone()) {
                if let Ok(iso) = date.to_iso_string(ctx) {
                    out.push('"');
                    out.push_str(&iso.to_string(ctx)?.to_std_string_lossy());
                    out.push('"');
                    return Ok(());
                }
            }
            out.push_str("{}");
            return Ok(());
        }
        for (i, (key, v)) in entries.into_iter().enumerate() {
            let key = match key {
                PropertyKey::String(s) => s.to_std_string_lossy(),
                PropertyKey::Index(n) => n.get().to_string(),
                PropertyKey::Symbol(_) => continue,
            };
            let sep = if i > 0 { ", " } else { "" };
            parts.push(Task::Text(format!("{sep}{key}: ")));
            parts.push(Task::Value(v));
        }
        ("{ ", " }")
    };
    out.push_str(open);
    path.order.push(obj.clone());
    path.set.insert(obj.clone());
    tasks.push(Task::Leave);
    tasks.push(Task::Text(close.into()));
    tasks.extend(parts.into_iter().rev());
    Ok(())
}

/// The name k6 prints for a typed array of `kind`.
fn typed_array_name(kind: TypedArrayKind) -> &'static str {
    match kind {
        TypedArrayKind::Int8 => "Int8Array",
        // k6 cannot tell a Uint8ClampedArray from a Uint8Array.
        TypedArrayKind::Uint8 | TypedArrayKind::Uint8Clamped => "Uint8Array",
        TypedArrayKind::Int16 => "Int16Array",
        TypedArrayKind::Uint16 => "Uint16Array",
        TypedArrayKind::Int32 => "Int32Array",
        TypedArrayKind::Uint32 => "Uint32Array",
        TypedArrayKind::BigInt64 => "BigInt64Array",
        TypedArrayKind::BigUint64 => "BigUint64Array",
        TypedArrayKind::Float16 => "Float16Array",
        TypedArrayKind::Float32 => "Float32Array",
        TypedArrayKind::Float64 => "Float64Array",
    }
}
