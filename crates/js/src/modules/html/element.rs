//! The JS `Element`: one DOM node of a parsed document, with DOM-like methods (all methods,
//! as in k6: `el.nodeName()`, `el.textContent()`).

use std::rc::Rc;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::ObjectInitializer;
use boa_engine::{
    js_string, Context, Finalize, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    NativeFunction, Trace,
};
use ego_tree::{NodeId, NodeRef};
use scraper::Node;

use super::document::Doc;
use super::{kit, selection};
use crate::value::{define, plain_object};

/// Native data of a JS Element.
#[derive(Trace, Finalize, JsData)]
struct ElData {
    #[unsafe_ignore_trace]
    doc: Rc<Doc>,
    #[unsafe_ignore_trace]
    id: NodeId,
}

/// A JS Element for the node `id` of `doc`.
pub(super) fn make(doc: Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    let kit = kit(ctx);
    let proto = doc
        .tag(id)
        .and_then(|t| kit.tags.get(t))
        .unwrap_or(&kit.element)
        .clone();
    JsObject::from_proto_and_data(proto, ElData { doc, id }).into()
}

fn maybe(doc: &Rc<Doc>, node: Option<NodeRef<'_, Node>>, ctx: &mut Context) -> JsValue {
    match node {
        Some(n) => make(doc.clone(), n.id(), ctx),
        None => JsValue::undefined(),
    }
}

pub(super) fn this_el(this: &JsValue) -> JsResult<(Rc<Doc>, NodeId)> {
    this.as_object()
        .and_then(|o| o.downcast_ref::<ElData>().map(|d| (d.doc.clone(), d.id)))
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("an Element method was called on something that is not an Element")
                .into()
        })
}

fn other_el(v: Option<&JsValue>) -> Option<(Rc<Doc>, NodeId)> {
    v.and_then(JsValue::as_object)
        .and_then(|o| o.downcast_ref::<ElData>().map(|d| (d.doc.clone(), d.id)))
}

fn str_arg(args: &[JsValue], ctx: &mut Context) -> JsResult<String> {
    Ok(args
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped())
}

fn string(s: &str) -> JsValue {
    JsString::from(s).into()
}

fn opt_string(s: Option<&str>) -> JsValue {
    s.map_or(JsValue::undefined(), string)
}

fn elements(doc: &Rc<Doc>, ids: impl IntoIterator<Item = NodeId>, ctx: &mut Context) -> JsValue {
    let items: Vec<JsValue> = ids
        .into_iter()
        .map(|id| make(doc.clone(), id, ctx))
        .collect();
    JsArray::from_iter(items, ctx).into()
}

const XHTML: &str = "http://www.w3.org/1999/xhtml";

/// The prototype every Element shares, made once per VU.
pub(super) fn prototype(ctx: &mut Context) -> JsObject {
    type F = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;
    let methods: &[(&str, usize, F)] = &[
        ("attributes", 0, attributes),
        ("childElementCount", 0, child_element_count),
        ("childNodes", 0, child_nodes),
        ("children", 0, children),
        ("classList", 0, class_list),
        ("className", 0, class_name),
        ("contains", 1, contains),
        ("firstChild", 0, first_child),
        ("firstElementChild", 0, first_element_child),
        ("getAttribute", 1, get_attribute),
        ("getAttributeNode", 1, get_attribute_node),
        ("getElementsByClassName", 1, by_class_name),
        ("getElementsByTagName", 1, by_tag_name),
        ("hasAttribute", 1, has_attribute),
        ("hasAttributes", 0, has_attributes),
        ("hasChildNodes", 0, has_child_nodes),
        ("id", 0, id),
        ("innerHTML", 0, inner_html),
        ("isDefaultNamespace", 1, is_default_namespace),
        ("isEqualNode", 1, is_equal_node),
        ("isSameNode", 1, is_same_node),
        ("lang", 0, lang),
        ("lastChild", 0, last_child),
        ("lastElementChild", 0, last_element_child),
        ("matches", 1, matches),
        ("namespaceURI", 0, namespace_uri),
        ("nextElementSibling", 0, next_element_sibling),
        ("nextSibling", 0, next_sibling),
        ("nodeName", 0, node_name),
        ("nodeType", 0, node_type),
        ("nodeValue", 0, node_value),
        ("ownerDocument", 0, owner_document),
        ("parentElement", 0, parent_element),
        ("parentNode", 0, parent_node),
        ("previousElementSibling", 0, previous_element_sibling),
        ("previousSibling", 0, previous_sibling),
        ("querySelector", 1, query_selector),
        ("querySelectorAll", 1, query_selector_all),
        ("selection", 0, to_selection),
        ("textContent", 0, text_content),
        ("toString", 0, to_string),
    ];
    let mut init = ObjectInitializer::new(ctx);
    for &(name, len, f) in methods {
        init.function(NativeFunction::from_fn_ptr(f), JsString::from(name), len);
    }
    init.build()
}

fn attr_node(this: &JsValue, name: &str, value: &str, ctx: &mut Context) -> JsObject {
    let item = plain_object(ctx);
    define(&item, js_string!("owner_element"), this.clone());
    define(&item, js_string!("name"), JsString::from(name));
    define(&item, js_string!("value"), JsString::from(value));
    item
}

fn attributes(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let out = plain_object(ctx);
    if let Some(el) = doc.node(id).value().as_element() {
        for (k, v) in el.attrs() {
            let item = attr_node(this, k, v, ctx);
            define(&out, JsString::from(k), item);
        }
    }
    Ok(out.into())
}

fn element_children(doc: &Doc, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
    doc.node(id)
        .children()
        .filter(|c| c.value().is_element())
        .map(|c| c.id())
}

fn child_element_count(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(element_children(&doc, id).count().into())
}

fn child_nodes(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let ids: Vec<NodeId> = doc.node(id).children().map(|c| c.id()).collect();
    Ok(elements(&doc, ids, ctx))
}

fn children(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let ids: Vec<NodeId> = element_children(&doc, id).collect();
    Ok(elements(&doc, ids, ctx))
}

fn class_list(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let classes = doc.attr(id, "class").unwrap_or("");
    let items = classes.split_ascii_whitespace().map(string);
    Ok(JsArray::from_iter(items, ctx).into())
}

fn class_name(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(opt_string(doc.attr(id, "class")))
}

fn contains(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let Some((other_doc, other)) = other_el(args.first()) else {
        return Ok(false.into());
    };
    let inside =
        Rc::ptr_eq(&doc, &other_doc) && doc.node(id).descendants().any(|d| d.id() == other);
    Ok(inside.into())
}

fn first_child(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc.node(id).first_child();
    Ok(maybe(&doc, n, ctx))
}

fn last_child(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc.node(id).last_child();
    Ok(maybe(&doc, n, ctx))
}

fn first_element_child(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc.node(id).children().find(|c| c.value().is_element());
    Ok(maybe(&doc, n, ctx))
}

fn last_element_child(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc
        .node(id)
        .children()
        .rev()
        .find(|c| c.value().is_element());
    Ok(maybe(&doc, n, ctx))
}

fn next_sibling(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc.node(id).next_sibling();
    Ok(maybe(&doc, n, ctx))
}

fn previous_sibling(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc.node(id).prev_sibling();
    Ok(maybe(&doc, n, ctx))
}

fn next_element_sibling(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc
        .node(id)
        .next_siblings()
        .find(|c| c.value().is_element());
    Ok(maybe(&doc, n, ctx))
}

fn previous_element_sibling(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc
        .node(id)
        .prev_siblings()
        .find(|c| c.value().is_element());
    Ok(maybe(&doc, n, ctx))
}

fn parent_node(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc.node(id).parent();
    Ok(maybe(&doc, n, ctx))
}

fn parent_element(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let n = doc.node(id).parent().filter(|p| p.value().is_element());
    Ok(maybe(&doc, n, ctx))
}

fn owner_document(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, _) = this_el(this)?;
    let root = doc.root();
    Ok(make(doc, root, ctx))
}

fn get_attribute(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let name = str_arg(args, ctx)?;
    Ok(opt_string(doc.attr(id, &name)))
}

fn get_attribute_node(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let name = str_arg(args, ctx)?;
    Ok(match doc.attr(id, &name) {
        Some(v) => attr_node(this, &name, v, ctx).into(),
        None => JsValue::undefined(),
    })
}

fn has_attribute(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let name = str_arg(args, ctx)?;
    Ok(doc.attr(id, &name).is_some().into())
}

fn has_attributes(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let any = doc
        .node(id)
        .value()
        .as_element()
        .is_some_and(|e| e.attrs().next().is_some());
    Ok(any.into())
}

fn has_child_nodes(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(doc.node(id).has_children().into())
}

fn by_class_name(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let name = str_arg(args, ctx)?;
    let ids: Vec<NodeId> = doc
        .node(id)
        .descendants()
        .skip(1)
        .filter(|d| {
            d.value().as_element().is_some_and(|e| {
                e.attr("class")
                    .is_some_and(|c| c.split_ascii_whitespace().any(|c| c == name))
            })
        })
        .map(|d| d.id())
        .collect();
    Ok(elements(&doc, ids, ctx))
}

fn by_tag_name(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let name = str_arg(args, ctx)?;
    let ids: Vec<NodeId> = doc
        .node(id)
        .descendants()
        .skip(1)
        .filter(|d| {
            d.value()
                .as_element()
                .is_some_and(|e| name == "*" || e.name().eq_ignore_ascii_case(&name))
        })
        .map(|d| d.id())
        .collect();
    Ok(elements(&doc, ids, ctx))
}

fn id(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(string(doc.attr(id, "id").unwrap_or("")))
}

fn inner_html(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(JsString::from(doc.inner_html(id)).into())
}

fn namespace(doc: &Doc, id: NodeId) -> Option<String> {
    doc.node(id)
        .value()
        .as_element()
        .map(|e| e.name.ns.to_string())
}

fn namespace_uri(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(opt_string(namespace(&doc, id).as_deref()))
}

fn is_default_namespace(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let ns = namespace(&doc, id).unwrap_or_else(|| XHTML.to_owned());
    let asked = match args.first().filter(|v| !v.is_undefined()) {
        Some(v) => v.to_string(ctx)?.to_std_string_escaped(),
        None => XHTML.to_owned(),
    };
    Ok((ns == asked).into())
}

fn is_same_node(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let same = other_el(args.first()).is_some_and(|(d, o)| Rc::ptr_eq(&doc, &d) && o == id);
    Ok(same.into())
}

fn is_equal_node(this: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let equal = other_el(args.first()).is_some_and(|(d, o)| doc.outer_html(id) == d.outer_html(o));
    Ok(equal.into())
}

fn lang(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(opt_string(doc.attr(id, "lang")))
}

fn matches(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let sel = selection::parse(&str_arg(args, ctx)?)?;
    Ok(doc.matches(id, &sel).into())
}

fn node_name(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let name = match doc.node(id).value() {
        Node::Element(e) => e.name().to_owned(),
        Node::Text(_) => "#text".into(),
        Node::Comment(_) => "#comment".into(),
        Node::Document => "#document".into(),
        Node::Fragment => "#document-fragment".into(),
        Node::Doctype(d) => d.name().to_owned(),
        Node::ProcessingInstruction(p) => p.target.to_string(),
    };
    Ok(JsString::from(name).into())
}

fn node_type(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let t = match doc.node(id).value() {
        Node::Element(_) => 1,
        Node::Text(_) => 3,
        Node::ProcessingInstruction(_) => 7,
        Node::Comment(_) => 8,
        Node::Document => 9,
        Node::Doctype(_) => 10,
        Node::Fragment => 11,
    };
    Ok(t.into())
}

fn node_value(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(match doc.node(id).value() {
        Node::Text(t) => string(t),
        // k6 1.1 reports an empty value for comments.
        Node::Comment(_) => string(""),
        _ => JsValue::undefined(),
    })
}

fn query_selector(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let sel = selection::parse(&str_arg(args, ctx)?)?;
    let first = doc.find(&[id], &sel).first().copied();
    Ok(match first {
        Some(f) => make(doc, f, ctx),
        None => JsValue::undefined(),
    })
}

fn query_selector_all(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let sel = selection::parse(&str_arg(args, ctx)?)?;
    let ids = doc.find(&[id], &sel);
    Ok(elements(&doc, ids, ctx))
}

fn to_selection(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(selection::make(doc, vec![id], ctx))
}

fn text_content(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    Ok(JsString::from(doc.text(id)).into())
}

fn to_string(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(js_string!("[object html.Node]").into())
}
