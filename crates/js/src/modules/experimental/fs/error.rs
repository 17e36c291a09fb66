//! The errors `k6/experimental/fs` rejects with: plain objects (not `Error`s) with k6's
//! `name` (the kind), `message` and `error()`, whose string form is `"name: message"`.

use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsError, JsResult, JsString, JsValue, NativeFunction};

/// The kinds k6 gives its fs errors (their `name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The path does not exist.
    NotFound,
    /// The path is not a file (a directory).
    InvalidResource,
    /// Opening outside the init context.
    Forbidden,
    /// A wrong argument.
    Type,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::NotFound => "NotFoundError",
            Kind::InvalidResource => "InvalidResourceError",
            Kind::Forbidden => "ForbiddenError",
            Kind::Type => "TypeError",
        }
    }
}

/// An fs error of `kind` as the JS value k6 rejects with.
pub(crate) fn fs_error(kind: Kind, message: &str, ctx: &mut Context) -> JsError {
    let to_string = NativeFunction::from_fn_ptr(as_string);
    let value = ObjectInitializer::new(ctx)
        .property(
            js_string!("name"),
            js_string!(kind.name()),
            Attribute::all(),
        )
        .property(
            js_string!("message"),
            JsString::from(message),
            Attribute::all(),
        )
        .build();
    let error = boa_engine::object::FunctionObjectBuilder::new(ctx.realm(), to_string.clone())
        .name(js_string!("error"))
        .build();
    crate::value::define(&value, js_string!("error"), error);
    // `String(e)` gives "name: message" as in k6, without a `toString` key showing.
    let f = boa_engine::object::FunctionObjectBuilder::new(ctx.realm(), to_string)
        .name(js_string!("toString"))
        .build();
    value.insert_property(
        js_string!("toString"),
        boa_engine::property::PropertyDescriptor::builder()
            .value(f)
            .writable(true)
            .enumerable(false)
            .configurable(true),
    );
    JsError::from_opaque(value.into())
}

/// `this.name + ": " + this.message`.
fn as_string(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let Some(obj) = this.as_object() else {
        return Ok(js_string!("").into());
    };
    let name = obj.get(js_string!("name"), ctx)?.to_string(ctx)?;
    let message = obj.get(js_string!("message"), ctx)?.to_string(ctx)?;
    Ok(JsString::from(format!(
        "{}: {}",
        name.to_std_string_escaped(),
        message.to_std_string_escaped()
    ))
    .into())
}
