//! The `k6/html` module: `parseHTML` and the jQuery-like `Selection` and DOM-like `Element`
//! objects over a parsed document. JS objects hold the document (shared through `Rc`) and
//! node ids; the prototypes are made once per VU.

mod document;
mod element;
mod navigation;
mod selection;
mod selector;
mod tags;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::rc::Rc;

use boa_engine::{Context, JsObject, JsResult, JsValue, Module, NativeFunction};

pub(crate) use document::Doc;
pub(crate) use navigation::{click_link, submit_form, Navigation};

/// The prototypes of this VU's Selection and Element objects.
struct Kit {
    selection: JsObject,
    element: JsObject,
    /// Prototypes of tags with their own methods (`a.href()`), inheriting from `element`.
    tags: HashMap<&'static str, JsObject>,
}

/// The VU's kit, made on first use and kept in the context.
fn kit(ctx: &mut Context) -> Rc<Kit> {
    if let Some(k) = ctx.get_data::<Rc<Kit>>() {
        return k.clone();
    }
    let element = element::prototype(ctx);
    let k = Rc::new(Kit {
        selection: selection::prototype(ctx),
        tags: tags::prototypes(&element, ctx),
        element,
    });
    ctx.insert_data(k.clone());
    k
}

/// The `k6/html` module.
pub(super) fn module(ctx: &mut Context) -> Module {
    super::synthetic::synthetic(
        vec![("parseHTML", 1, NativeFunction::from_fn_ptr(parse_html))],
        ctx,
    )
}

/// A Selection holding the document node of `doc`.
pub(crate) fn document_selection(doc: Rc<Doc>, ctx: &mut Context) -> JsValue {
    let root = doc.root();
    selection::make(doc, vec![root], ctx)
}

/// `parseHTML(src)`.
fn parse_html(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let src = args
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    Ok(document_selection(
        Rc::new(Doc::parse(&src, String::new())),
        ctx,
    ))
}
