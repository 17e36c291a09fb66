//! The errors k6 gives for a Go `error`, for the modules whose messages come from k6's Go
//! code: thrown as a `GoError` (an `Error` whose `name` is `GoError`), or, where k6 hands
//! the Go value itself to JS, a plain object whose `error()` and string form are the
//! message.

use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsObject, JsString, JsValue, NativeFunction,
};

use crate::value::define;

/// An `Error` named `GoError` with `message`.
pub(crate) fn go_error(message: &str, ctx: &mut Context) -> JsError {
    let obj = JsNativeError::error()
        .with_message(message.to_string())
        .into_opaque(ctx);
    hidden(&obj, js_string!("name"), js_string!("GoError").into());
    // k6's GoError carries the Go error as its one enumerable key.
    let value = message_object(message, ctx);
    define(&obj, js_string!("value"), value);
    JsError::from_opaque(obj.into())
}

/// The plain Go error value k6 rejects or throws with (not an `Error`): `error()` and
/// `String(e)` give `message`; a wrapped error (k6's `%w`) also has `unwrap()`.
pub(crate) fn go_value(message: &str, wrapped: bool, ctx: &mut Context) -> JsError {
    let obj = message_object(message, ctx);
    if wrapped {
        let unwrap = FunctionObjectBuilder::new(
            ctx.realm(),
            NativeFunction::from_fn_ptr(|_, _, _| Ok(JsValue::undefined())),
        )
        .name(js_string!("unwrap"))
        .build();
        define(&obj, js_string!("unwrap"), unwrap);
    }
    JsError::from_opaque(obj.into())
}

/// What marks an object standing for a Go error value, with its message (`console.log`
/// prints such a value as its message, as k6 1.2 and later print Go errors).
#[derive(boa_gc::Trace, boa_gc::Finalize, boa_engine::JsData)]
#[boa_gc(unsafe_empty_trace)]
struct GoValue(String);

/// An object standing for a Go error value: `error()` and `String()` give `message`.
pub(crate) fn message_object(message: &str, ctx: &mut Context) -> JsObject {
    let proto = ctx.intrinsics().constructors().object().prototype();
    let obj = JsObject::from_proto_and_data(Some(proto), GoValue(message.to_string()));
    with_message(&obj, message, ctx);
    obj
}

/// The message of an object [`message_object`] made.
pub(crate) fn go_value_message(obj: &JsObject) -> Option<String> {
    obj.downcast_ref::<GoValue>().map(|v| v.0.clone())
}

/// Gives `obj` an `error()` method and a hidden `toString`, both returning `message`.
pub(crate) fn with_message(obj: &JsObject, message: &str, ctx: &mut Context) {
    let text = JsString::from(message);
    let f = NativeFunction::from_copy_closure_with_captures(
        |_, _, text: &JsString, _| Ok(text.clone().into()),
        text,
    );
    let error_fn = FunctionObjectBuilder::new(ctx.realm(), f.clone())
        .name(js_string!("error"))
        .build();
    define(obj, js_string!("error"), error_fn);
    let to_string = FunctionObjectBuilder::new(ctx.realm(), f)
        .name(js_string!("toString"))
        .build();
    hidden(obj, js_string!("toString"), to_string.into());
}

/// A non-enumerable data property, so `Object.keys` lists what k6's object lists.
fn hidden(obj: &JsObject, key: JsString, value: JsValue) {
    obj.insert_property(
        key,
        PropertyDescriptor::builder()
            .value(value)
            .writable(true)
            .enumerable(false)
            .configurable(true),
    );
}
