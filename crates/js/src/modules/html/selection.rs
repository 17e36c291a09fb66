//! The JS `Selection`: a list of nodes of one parsed document, with jQuery-like methods.

use std::collections::HashSet;
use std::rc::Rc;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, Finalize, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    NativeFunction, Trace,
};
use ego_tree::NodeId;

use super::document::{self, Doc, Value};
use super::selector::Selector;
use super::{element, kit};
use crate::value::plain_object;

/// The nodes of a selection and the selection it was made from (for `end()`).
pub(crate) struct Nodes {
    pub(crate) doc: Rc<Doc>,
    pub(crate) ids: Vec<NodeId>,
    prev: Option<Rc<Nodes>>,
}

/// Native data of a JS Selection.
#[derive(Trace, Finalize, JsData)]
pub(super) struct SelData {
    #[unsafe_ignore_trace]
    nodes: Rc<Nodes>,
}

/// A JS Selection of `ids` in `doc`.
pub(crate) fn make(doc: Rc<Doc>, ids: Vec<NodeId>, ctx: &mut Context) -> JsValue {
    wrap(
        Nodes {
            doc,
            ids,
            prev: None,
        },
        ctx,
    )
}

fn wrap(nodes: Nodes, ctx: &mut Context) -> JsValue {
    let proto = kit(ctx).selection.clone();
    JsObject::from_proto_and_data(
        proto,
        SelData {
            nodes: Rc::new(nodes),
        },
    )
    .into()
}

/// A selection made from `from`.
fn derived(from: &Rc<Nodes>, ids: Vec<NodeId>, ctx: &mut Context) -> JsValue {
    wrap(
        Nodes {
            doc: from.doc.clone(),
            ids,
            prev: Some(from.clone()),
        },
        ctx,
    )
}

/// The nodes of a JS value if it is a Selection.
pub(crate) fn nodes_of(v: &JsValue) -> Option<Rc<Nodes>> {
    v.as_object()
        .and_then(|o| o.downcast_ref::<SelData>().map(|d| d.nodes.clone()))
}

fn this_nodes(this: &JsValue) -> JsResult<Rc<Nodes>> {
    nodes_of(this).ok_or_else(|| {
        JsNativeError::typ()
            .with_message("a Selection method was called on something that is not a Selection")
            .into()
    })
}

fn arg(args: &[JsValue], i: usize) -> Option<&JsValue> {
    args.get(i).filter(|v| !v.is_undefined())
}

fn string_arg(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<Option<String>> {
    arg(args, i)
        .map(|v| v.to_string(ctx).map(|s| s.to_std_string_escaped()))
        .transpose()
}

/// The optional selector argument `i`.
fn selector_arg(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<Option<Selector>> {
    match string_arg(args, i, ctx)? {
        Some(s) => Ok(Some(parse(&s)?)),
        None => Ok(None),
    }
}

/// A selector argument; one that does not parse matches nothing, as in k6.
pub(super) fn parse(text: &str) -> JsResult<Selector> {
    Ok(document::selector(text))
}

fn keep(doc: &Doc, ids: Vec<NodeId>, sel: Option<&Selector>) -> Vec<NodeId> {
    match sel {
        Some(s) => ids.into_iter().filter(|&id| doc.matches(id, s)).collect(),
        None => ids,
    }
}

fn unique(ids: impl IntoIterator<Item = NodeId>) -> Vec<NodeId> {
    let mut seen = HashSet::new();
    ids.into_iter().filter(|id| seen.insert(*id)).collect()
}

fn is_element(doc: &Doc, id: NodeId) -> bool {
    doc.node(id).value().is_element()
}

/// What `filter`, `not` and `is` accept: a selector, a function of (index, Selection), or a
/// Selection.
enum Matcher {
    Selector(Selector),
    Function(JsObject),
    Nodes(HashSet<NodeId>),
}

impl Matcher {
    fn from_js(v: Option<&JsValue>, ctx: &mut Context) -> JsResult<Matcher> {
        let Some(v) = v else {
            return Err(JsNativeError::typ()
                .with_message("a selector, a function or a Selection is required")
                .into());
        };
        if let Some(f) = v.as_callable() {
            return Ok(Matcher::Function(f));
        }
        if let Some(n) = nodes_of(v) {
            return Ok(Matcher::Nodes(n.ids.iter().copied().collect()));
        }
        let text = v.to_string(ctx)?.to_std_string_escaped();
        Ok(Matcher::Selector(parse(&text)?))
    }

    fn test(&self, from: &Rc<Nodes>, i: usize, id: NodeId, ctx: &mut Context) -> JsResult<bool> {
        match self {
            Matcher::Selector(s) => Ok(from.doc.matches(id, s)),
            Matcher::Nodes(set) => Ok(set.contains(&id)),
            Matcher::Function(f) => {
                let one = derived(from, vec![id], ctx);
                Ok(f.call(&JsValue::undefined(), &[i.into(), one], ctx)?
                    .to_boolean())
            }
        }
    }
}

/// The prototype every Selection shares, made once per VU.
pub(super) fn prototype(ctx: &mut Context) -> JsObject {
    type F = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;
    let methods: &[(&str, usize, F)] = &[
        ("add", 1, add),
        ("attr", 2, attr),
        ("children", 1, children),
        ("closest", 1, closest),
        ("contents", 0, contents),
        ("data", 1, data),
        ("each", 1, each),
        ("end", 0, end),
        ("eq", 1, eq),
        ("filter", 1, filter),
        ("find", 1, find),
        ("first", 0, first),
        ("get", 1, get),
        ("has", 1, has),
        ("html", 0, html),
        ("index", 1, index),
        ("is", 1, is),
        ("last", 0, last),
        ("map", 1, map),
        ("next", 1, next),
        ("nextAll", 1, next_all),
        ("nextUntil", 2, next_until),
        ("not", 1, not),
        ("parent", 1, parent),
        ("parents", 1, parents),
        ("parentsUntil", 2, parents_until),
        ("prev", 1, prev),
        ("prevAll", 1, prev_all),
        ("prevUntil", 2, prev_until),
        ("serialize", 0, serialize),
        ("serializeArray", 0, serialize_array),
        ("serializeObject", 0, serialize_object),
        ("siblings", 1, siblings),
        ("single", 1, single),
        ("size", 0, size),
        ("slice", 2, slice),
        ("text", 0, text),
        ("toArray", 0, to_array),
        ("val", 0, val),
    ];
    let realm = ctx.realm().clone();
    let url_getter =
        boa_engine::object::FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(url))
            .name(js_string!("get url"))
            .build();
    let mut init = ObjectInitializer::new(ctx);
    init.accessor(
        js_string!("url"),
        Some(url_getter),
        None,
        Attribute::ENUMERABLE | Attribute::CONFIGURABLE,
    );
    for &(name, len, f) in methods {
        init.function(NativeFunction::from_fn_ptr(f), JsString::from(name), len);
    }
    init.build()
}

fn url(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(JsString::from(this_nodes(this)?.doc.url.as_str()).into())
}

fn find(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = parse(&string_arg(args, 0, ctx)?.unwrap_or_default())?;
    let ids = s.doc.find(&s.ids, &sel);
    Ok(derived(&s, ids, ctx))
}

/// `single(selector)` (k6 2.1, release notes v2.1.0, #6002): the first node `find` would
/// give, found without searching further (goquery's `Single` matcher, trimmed to one).
fn single(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = parse(&string_arg(args, 0, ctx)?.unwrap_or_default())?;
    let ids = s.doc.find_first(&s.ids, &sel).into_iter().collect();
    Ok(derived(&s, ids, ctx))
}

fn text(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let mut out = String::new();
    for &id in &s.ids {
        out.push_str(&s.doc.text(id));
    }
    Ok(JsString::from(out).into())
}

fn html(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let out = s
        .ids
        .first()
        .map(|&id| s.doc.inner_html(id))
        .unwrap_or_default();
    Ok(JsString::from(out).into())
}

fn attr(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let name = string_arg(args, 0, ctx)?.unwrap_or_default();
    let found = s.ids.first().and_then(|&id| s.doc.attr(id, &name));
    Ok(match found {
        Some(v) => JsString::from(v).into(),
        None => args.get(1).cloned().unwrap_or_default(),
    })
}

/// A form value as JS: a string, or an array of strings.
pub(super) fn value_to_js(v: &Value, ctx: &mut Context) -> JsValue {
    match v {
        Value::One(s) => JsString::from(s.as_str()).into(),
        Value::Many(list) => JsArray::from_iter(
            list.iter()
                .map(|s| JsValue::from(JsString::from(s.as_str()))),
            ctx,
        )
        .into(),
    }
}

fn val(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    Ok(match s.ids.first().and_then(|&id| s.doc.val(id)) {
        Some(v) => value_to_js(&v, ctx),
        None => JsValue::undefined(),
    })
}

fn data(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let Some(&id) = s.ids.first() else {
        return Ok(JsValue::undefined());
    };
    let data = s.doc.data(id);
    match string_arg(args, 0, ctx)? {
        Some(key) => {
            let key = camel_key(&key);
            match data.into_iter().find(|(k, _)| *k == key) {
                Some((_, v)) => JsValue::from_json(&v, ctx),
                None => Ok(JsValue::undefined()),
            }
        }
        // As in k6: an element without any attribute has no data object at all.
        None if !s.doc.has_attributes(id) => Ok(JsValue::undefined()),
        None => {
            let map: serde_json::Map<String, serde_json::Value> = data.into_iter().collect();
            JsValue::from_json(&serde_json::Value::Object(map), ctx)
        }
    }
}

fn camel_key(key: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in key.chars() {
        match c {
            '-' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

fn serialize(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let fields = document::last_per_name(s.doc.form_fields(&s.ids));
    Ok(JsString::from(document::encode_form(&fields)).into())
}

fn serialize_array(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let arr = JsArray::new(ctx)?;
    for (name, v) in s.doc.form_fields(&s.ids) {
        let item = plain_object(ctx);
        crate::value::define(&item, js_string!("name"), JsString::from(name));
        let v = v.map_or(JsValue::undefined(), |v| value_to_js(&v, ctx));
        crate::value::define(&item, js_string!("value"), v);
        arr.push(item, ctx)?;
    }
    Ok(arr.into())
}

/// The form's fields as `{name: value}`, the last field of a name winning.
pub(crate) fn form_object(nodes: &Nodes, ctx: &mut Context) -> JsObject {
    let obj = plain_object(ctx);
    for (name, v) in document::last_per_name(nodes.doc.form_fields(&nodes.ids)) {
        let v = v.map_or(JsValue::undefined(), |v| value_to_js(&v, ctx));
        crate::value::define(&obj, JsString::from(name), v);
    }
    obj
}

fn serialize_object(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    Ok(form_object(&s, ctx).into())
}

fn children(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = selector_arg(args, 0, ctx)?;
    let ids = s
        .ids
        .iter()
        .flat_map(|&id| s.doc.node(id).children())
        .filter(|c| c.value().is_element())
        .map(|c| c.id());
    let ids = keep(&s.doc, unique(ids), sel.as_ref());
    Ok(derived(&s, ids, ctx))
}

fn contents(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let ids = s
        .ids
        .iter()
        .flat_map(|&id| s.doc.node(id).children())
        .map(|c| c.id());
    let ids = unique(ids);
    Ok(derived(&s, ids, ctx))
}

fn closest(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = parse(&string_arg(args, 0, ctx)?.unwrap_or_default())?;
    let ids = s.ids.iter().filter_map(|&id| {
        let n = s.doc.node(id);
        std::iter::once(n)
            .chain(n.ancestors())
            .find(|a| s.doc.matches(a.id(), &sel))
            .map(|a| a.id())
    });
    let ids = unique(ids);
    Ok(derived(&s, ids, ctx))
}

fn parent(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = selector_arg(args, 0, ctx)?;
    let ids = s
        .ids
        .iter()
        .filter_map(|&id| s.doc.node(id).parent())
        .filter(|p| p.value().is_element())
        .map(|p| p.id());
    let ids = keep(&s.doc, unique(ids), sel.as_ref());
    Ok(derived(&s, ids, ctx))
}

/// Nodes reached from each node of `s` by `walk`, up to (not including) the first one
/// matching `until`, kept if they match `filter`.
fn walk_until<'d, I>(
    s: &'d Nodes,
    walk: impl Fn(NodeId) -> I,
    until: Option<&Selector>,
    filter: Option<&Selector>,
) -> Vec<NodeId>
where
    I: Iterator<Item = NodeId> + 'd,
{
    let mut out = Vec::new();
    for &id in &s.ids {
        for n in walk(id) {
            if !is_element(&s.doc, n) {
                continue;
            }
            if until.is_some_and(|u| s.doc.matches(n, u)) {
                break;
            }
            out.push(n);
        }
    }
    keep(&s.doc, unique(out), filter)
}

fn parents(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = selector_arg(args, 0, ctx)?;
    let doc = s.doc.clone();
    let ids = walk_until(
        &s,
        |id| doc.node(id).ancestors().map(|a| a.id()),
        None,
        sel.as_ref(),
    );
    Ok(derived(&s, ids, ctx))
}

fn parents_until(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let until = selector_arg(args, 0, ctx)?;
    let filter = selector_arg(args, 1, ctx)?;
    let doc = s.doc.clone();
    let ids = walk_until(
        &s,
        |id| doc.node(id).ancestors().map(|a| a.id()),
        until.as_ref(),
        filter.as_ref(),
    );
    Ok(derived(&s, ids, ctx))
}

fn next_ids(doc: &Doc, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
    doc.node(id).next_siblings().map(|n| n.id())
}

fn prev_ids(doc: &Doc, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
    doc.node(id).prev_siblings().map(|n| n.id())
}

/// The first element sibling in one direction of each node.
fn adjacent(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
    forward: bool,
) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = selector_arg(args, 0, ctx)?;
    let doc = s.doc.clone();
    let ids = s.ids.iter().filter_map(|&id| {
        if forward {
            next_ids(&doc, id).find(|&n| is_element(&doc, n))
        } else {
            prev_ids(&doc, id).find(|&n| is_element(&doc, n))
        }
    });
    let ids = keep(&doc, unique(ids), sel.as_ref());
    Ok(derived(&s, ids, ctx))
}

fn next(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    adjacent(this, args, ctx, true)
}

fn prev(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    adjacent(this, args, ctx, false)
}

fn siblings_walk(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
    forward: bool,
    until: bool,
) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let (stop, filter) = if until {
        (selector_arg(args, 0, ctx)?, selector_arg(args, 1, ctx)?)
    } else {
        (None, selector_arg(args, 0, ctx)?)
    };
    let doc = s.doc.clone();
    let ids = if forward {
        walk_until(&s, |id| next_ids(&doc, id), stop.as_ref(), filter.as_ref())
    } else {
        walk_until(&s, |id| prev_ids(&doc, id), stop.as_ref(), filter.as_ref())
    };
    Ok(derived(&s, ids, ctx))
}

fn next_all(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    siblings_walk(this, args, ctx, true, false)
}

fn next_until(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    siblings_walk(this, args, ctx, true, true)
}

fn prev_all(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    siblings_walk(this, args, ctx, false, false)
}

fn prev_until(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    siblings_walk(this, args, ctx, false, true)
}

fn siblings(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = selector_arg(args, 0, ctx)?;
    let doc = s.doc.clone();
    let ids = s.ids.iter().flat_map(|&id| {
        let n = doc.node(id);
        n.parent()
            .into_iter()
            .flat_map(|p| p.children())
            .filter(move |c| c.id() != id && c.value().is_element())
            .map(|c| c.id())
    });
    let ids = keep(&doc, unique(ids), sel.as_ref());
    Ok(derived(&s, ids, ctx))
}

fn each(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let f = callable(args, "each")?;
    // k6 hands each() an Element, while map(), filter(), not() and is() get a Selection.
    for (i, &id) in s.ids.iter().enumerate() {
        let el = element::make(s.doc.clone(), id, ctx);
        f.call(&JsValue::undefined(), &[i.into(), el], ctx)?;
    }
    Ok(this.clone())
}

fn map(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let f = callable(args, "map")?;
    let out = JsArray::new(ctx)?;
    for (i, &id) in s.ids.iter().enumerate() {
        let one = derived(&s, vec![id], ctx);
        let v = f.call(&JsValue::undefined(), &[i.into(), one], ctx)?;
        out.push(v, ctx)?;
    }
    Ok(out.into())
}

fn callable(args: &[JsValue], what: &str) -> JsResult<JsObject> {
    args.first().and_then(JsValue::as_callable).ok_or_else(|| {
        JsNativeError::typ()
            .with_message(format!("{what}() needs a function"))
            .into()
    })
}

fn filtered(this: &JsValue, args: &[JsValue], ctx: &mut Context, want: bool) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let m = Matcher::from_js(args.first(), ctx)?;
    let mut ids = Vec::new();
    for (i, &id) in s.ids.iter().enumerate() {
        if m.test(&s, i, id, ctx)? == want {
            ids.push(id);
        }
    }
    Ok(derived(&s, ids, ctx))
}

fn filter(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    filtered(this, args, ctx, true)
}

fn not(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    filtered(this, args, ctx, false)
}

fn is(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let m = Matcher::from_js(args.first(), ctx)?;
    for (i, &id) in s.ids.iter().enumerate() {
        if m.test(&s, i, id, ctx)? {
            return Ok(true.into());
        }
    }
    Ok(false.into())
}

fn has(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let sel = parse(&string_arg(args, 0, ctx)?.unwrap_or_default())?;
    let ids = s
        .ids
        .iter()
        .copied()
        .filter(|&id| !s.doc.find(&[id], &sel).is_empty())
        .collect();
    Ok(derived(&s, ids, ctx))
}

/// A JS index argument made absolute; negative ones count from the end.
fn position(v: Option<&JsValue>, len: usize, ctx: &mut Context) -> JsResult<Option<usize>> {
    let i = match v {
        Some(v) => v.to_number(ctx)?,
        None => 0.0,
    };
    let i = if i.is_nan() { 0 } else { i as i64 };
    let i = if i < 0 { len as i64 + i } else { i };
    Ok((i >= 0 && (i as usize) < len).then_some(i as usize))
}

fn eq(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let ids = position(args.first(), s.ids.len(), ctx)?
        .map(|i| vec![s.ids[i]])
        .unwrap_or_default();
    Ok(derived(&s, ids, ctx))
}

fn first(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let ids = s.ids.first().copied().into_iter().collect();
    Ok(derived(&s, ids, ctx))
}

fn last(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let ids = s.ids.last().copied().into_iter().collect();
    Ok(derived(&s, ids, ctx))
}

fn slice(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let len = s.ids.len() as i64;
    let clamp = |v: f64| -> usize {
        let v = if v.is_nan() { 0 } else { v as i64 };
        let v = if v < 0 { len + v } else { v };
        v.clamp(0, len) as usize
    };
    let start = clamp(arg(args, 0).map_or(Ok(0.0), |v| v.to_number(ctx))?);
    let end = clamp(arg(args, 1).map_or(Ok(len as f64), |v| v.to_number(ctx))?);
    let ids = if start < end {
        s.ids[start..end].to_vec()
    } else {
        Vec::new()
    };
    Ok(derived(&s, ids, ctx))
}

fn get(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    match arg(args, 0) {
        Some(v) => Ok(match position(Some(v), s.ids.len(), ctx)? {
            Some(i) => element::make(s.doc.clone(), s.ids[i], ctx),
            None => JsValue::undefined(),
        }),
        None => {
            let items: Vec<JsValue> = s
                .ids
                .iter()
                .map(|&id| element::make(s.doc.clone(), id, ctx))
                .collect();
            Ok(JsArray::from_iter(items, ctx).into())
        }
    }
}

fn to_array(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let items: Vec<JsValue> = s.ids.iter().map(|&id| derived(&s, vec![id], ctx)).collect();
    Ok(JsArray::from_iter(items, ctx).into())
}

fn size(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(this_nodes(this)?.ids.len().into())
}

fn index(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let Some(&first) = s.ids.first() else {
        return Ok((-1).into());
    };
    let found = match arg(args, 0) {
        None => Some(
            prev_ids(&s.doc, first)
                .filter(|&n| is_element(&s.doc, n))
                .count(),
        ),
        Some(v) => match nodes_of(v) {
            Some(other) => other
                .ids
                .first()
                .and_then(|o| s.ids.iter().position(|id| id == o)),
            None => {
                let sel = parse(&v.to_string(ctx)?.to_std_string_escaped())?;
                s.doc
                    .find(&[s.doc.root()], &sel)
                    .iter()
                    .position(|&id| id == first)
            }
        },
    };
    Ok(found.map_or(-1, |i| i as i64).into())
}

fn add(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    let more = match args.first().and_then(nodes_of) {
        Some(other) if Rc::ptr_eq(&other.doc, &s.doc) => other.ids.clone(),
        Some(_) => {
            return Err(JsNativeError::typ()
                .with_message(
                    "add() of a Selection from another document is not supported by rk6 yet",
                )
                .into())
        }
        None => {
            let sel = parse(&string_arg(args, 0, ctx)?.unwrap_or_default())?;
            s.doc.find(&[s.doc.root()], &sel)
        }
    };
    let ids = unique(s.ids.iter().copied().chain(more));
    Ok(derived(&s, ids, ctx))
}

fn end(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_nodes(this)?;
    Ok(match &s.prev {
        Some(p) => wrap(
            Nodes {
                doc: p.doc.clone(),
                ids: p.ids.clone(),
                prev: p.prev.clone(),
            },
            ctx,
        ),
        None => derived(&s, Vec::new(), ctx),
    })
}
