//! `k6/experimental/streams`: `ReadableStream` (with its default reader and controller) and
//! `CountQueuingStrategy` as k6 1.1 has them, `WritableStream` and its default writer as
//! k6 2.2 added them (release notes v2.2.0, #6132), and `ByteLengthQueuingStrategy`. They
//! are the WHATWG Streams standard's algorithms in JavaScript (`streams.js`), evaluated once
//! per VU on first use; their promises settle on the VU's event loop like any other.

use std::cell::RefCell;
use std::rc::Rc;

use boa_engine::{js_string, Context, JsObject, JsResult, JsString, Module, Source};

use crate::host::instances::ModuleInstance;
use crate::host::Host;

/// The standard's algorithms; the script's value is the object of exported classes.
const STREAMS_JS: &str = include_str!("streams.js");

/// The names the module exports (k6's, and `ByteLengthQueuingStrategy`).
const EXPORTS: [&str; 6] = [
    "ByteLengthQueuingStrategy",
    "CountQueuingStrategy",
    "ReadableStream",
    "ReadableStreamDefaultReader",
    "WritableStream",
    "WritableStreamDefaultWriter",
];

/// A VU's classes, made on first use.
#[derive(Default)]
pub(crate) struct Streams {
    classes: RefCell<Option<JsObject>>,
}

impl ModuleInstance for Streams {
    fn make(_: &Host) -> Rc<Self> {
        Rc::new(Streams::default())
    }
}

/// The object of the VU's stream classes, evaluated now if not yet.
fn classes(ctx: &mut Context) -> JsResult<JsObject> {
    let me = Host::of(ctx).instance::<Streams>();
    if let Some(c) = &*me.classes.borrow() {
        return Ok(c.clone());
    }
    let value = ctx.eval(Source::from_bytes(STREAMS_JS))?;
    let made = value
        .as_object()
        .expect("streams.js evaluates to its classes")
        .clone();
    *me.classes.borrow_mut() = Some(made.clone());
    Ok(made)
}

/// The VU's `ReadableStream` class (for `Blob.stream()`).
pub(crate) fn readable_stream_class(ctx: &mut Context) -> JsResult<JsObject> {
    let classes = classes(ctx)?;
    let class = classes.get(js_string!("ReadableStream"), ctx)?;
    Ok(class
        .as_object()
        .expect("ReadableStream is a class")
        .clone())
}

/// The module.
pub(crate) fn module(ctx: &mut Context) -> JsResult<Module> {
    let classes = classes(ctx)?;
    let exports = crate::value::plain_object(ctx);
    let mut names = Vec::with_capacity(EXPORTS.len());
    for name in EXPORTS {
        let class = classes.get(JsString::from(name), ctx)?;
        crate::value::define(&exports, JsString::from(name), class);
        names.push(JsString::from(name));
    }
    Ok(crate::modules::synthetic::from_object(exports, names, ctx))
}
