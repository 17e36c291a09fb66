//! Tag-specific Element methods (`a.href()`, `form.action()`, `input.checked()`, …): one
//! prototype per tag family on top of the common Element prototype, as k6 has one Go type
//! per family. Methods whose k6 result rk6 does not reproduce yet throw a clear error.

use std::collections::HashMap;
use std::rc::Rc;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::ObjectInitializer;
use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction};
use ego_tree::NodeId;

use super::document::Doc;
use super::element::{make, this_el};

/// How a tag-specific method computes its result.
#[derive(Clone, Copy)]
enum Get {
    /// An attribute, "" when absent.
    Str(&'static str),
    /// An attribute, or a default when absent.
    StrOr(&'static str, &'static str),
    /// Whether an attribute is present.
    Bool(&'static str),
    /// An integer attribute, or a default when absent or not a number.
    Int(&'static str, i64),
    /// An attribute split on whitespace.
    List(&'static str),
    /// An attribute holding a URL, resolved against the page URL when there is one.
    Url(&'static str),
    /// A part of the `href` URL.
    Part(Part),
    /// The element's text.
    Text,
    /// A computed value.
    Custom(fn(&Rc<Doc>, NodeId, &mut Context) -> JsValue),
    /// Not reproduced yet: throws.
    Unsupported,
}

#[derive(Clone, Copy)]
enum Part {
    Hash,
    Host,
    Hostname,
    Origin,
    Password,
    Pathname,
    Port,
    Protocol,
    Search,
    Username,
}

use Get::*;

/// A family's methods: JS name and how each is computed.
type Methods = &'static [(&'static str, Get)];

const HREF: &[(&str, Get)] = &[
    ("accessKey", Str("accesskey")),
    ("download", Str("download")),
    ("hash", Part(Part::Hash)),
    ("host", Part(Part::Host)),
    ("hostname", Part(Part::Hostname)),
    ("href", Url("href")),
    ("hrefLang", Str("hreflang")),
    ("origin", Part(Part::Origin)),
    ("password", Part(Part::Password)),
    ("pathname", Part(Part::Pathname)),
    ("port", Part(Part::Port)),
    ("protocol", Part(Part::Protocol)),
    ("referrerPolicy", Str("referrerpolicy")),
    ("rel", Str("rel")),
    ("relList", List("rel")),
    ("search", Part(Part::Search)),
    ("target", Str("target")),
    ("text", Text),
    ("type", Str("type")),
    ("username", Part(Part::Username)),
];

const MEDIA: &[(&str, Get)] = &[
    ("autoplay", Bool("autoplay")),
    ("controls", Bool("controls")),
    ("crossOrigin", Unsupported),
    ("currentSrc", Url("src")),
    ("defaultMuted", Bool("muted")),
    ("loop", Bool("loop")),
    ("mediaGroup", Str("mediagroup")),
    ("muted", Bool("muted")),
    ("preload", Unsupported),
    ("src", Url("src")),
    ("textTracks", Unsupported),
];

const BUTTON: &[(&str, Get)] = &[
    ("accessKey", Str("accesskey")),
    ("autofocus", Bool("autofocus")),
    ("disabled", Bool("disabled")),
    ("form", Custom(form)),
    ("formAction", Custom(form_action)),
    ("formEnctype", Custom(form_enctype)),
    ("formMethod", Custom(form_method)),
    ("formNoValidate", Bool("formnovalidate")),
    ("formTarget", Custom(form_target)),
    ("labels", Custom(labels)),
    ("name", Str("name")),
    ("tabIndex", Int("tabindex", 0)),
    ("type", StrOr("type", "submit")),
    ("value", Custom(button_value)),
];

const INPUT: &[(&str, Get)] = &[
    ("accept", Str("accept")),
    ("accessKey", Str("accesskey")),
    ("alt", Str("alt")),
    ("autocomplete", Str("autocomplete")),
    ("autofocus", Bool("autofocus")),
    ("checked", Bool("checked")),
    ("defaultChecked", Bool("checked")),
    ("defaultValue", Str("value")),
    ("dirName", Str("dirname")),
    ("disabled", Bool("disabled")),
    ("form", Custom(form)),
    ("formAction", Custom(form_action)),
    ("formEnctype", Custom(form_enctype)),
    ("formMethod", Custom(form_method)),
    ("formNoValidate", Bool("formnovalidate")),
    ("formTarget", Custom(form_target)),
    ("height", Str("height")),
    ("labels", Custom(labels)),
    ("list", Unsupported),
    ("max", Str("max")),
    ("maxLength", Int("maxlength", -1)),
    ("min", Str("min")),
    ("multiple", Bool("multiple")),
    ("name", Str("name")),
    ("pattern", Str("pattern")),
    ("placeholder", Str("placeholder")),
    ("readonly", Bool("readonly")),
    ("required", Bool("required")),
    ("size", Int("size", 0)),
    ("src", Url("src")),
    ("step", Str("step")),
    ("tabIndex", Int("tabindex", 0)),
    ("type", StrOr("type", "text")),
    ("value", Str("value")),
    ("width", Str("width")),
];

const FORM: &[(&str, Get)] = &[
    ("acceptCharset", Str("accept-charset")),
    ("action", Url("action")),
    ("autocomplete", StrOr("autocomplete", "on")),
    ("elements", Custom(form_elements)),
    ("encoding", Custom(enctype)),
    ("enctype", Custom(enctype)),
    ("length", Custom(form_length)),
    ("method", Custom(method)),
    ("name", Str("name")),
    ("noValidate", Bool("novalidate")),
    ("target", Str("target")),
];

const SELECT: &[(&str, Get)] = &[
    ("autofocus", Bool("autofocus")),
    ("disabled", Bool("disabled")),
    ("form", Custom(form)),
    ("labels", Custom(labels)),
    ("length", Custom(options_length)),
    ("multiple", Bool("multiple")),
    ("name", Str("name")),
    ("options", Custom(options)),
    ("required", Bool("required")),
    ("selectedIndex", Custom(selected_index)),
    ("selectedOptions", Custom(selected_options)),
    ("size", Int("size", 1)),
    ("tabIndex", Int("tabindex", 0)),
    ("type", Unsupported),
    ("value", Custom(select_value)),
];

const OPTION: &[(&str, Get)] = &[
    ("defaultSelected", Bool("selected")),
    ("disabled", Bool("disabled")),
    ("form", Custom(form)),
    ("index", Custom(option_index)),
    ("label", Custom(option_label)),
    ("selected", Bool("selected")),
    ("text", Text),
    ("value", Custom(option_value)),
];

const TEXTAREA: &[(&str, Get)] = &[
    ("accessKey", Str("accesskey")),
    ("autocapitalize", Str("autocapitalize")),
    ("autocomplete", Str("autocomplete")),
    ("cols", Int("cols", 0)),
    ("defaultValue", Str("value")),
    ("form", Custom(form)),
    ("labels", Custom(labels)),
    ("length", Custom(value_length)),
    ("maxLength", Int("maxlength", -1)),
    ("placeholder", Str("placeholder")),
    ("readOnly", Bool("readonly")),
    ("required", Bool("required")),
    ("rows", Int("rows", 0)),
    ("tabIndex", Int("tabindex", 0)),
    ("type", Custom(textarea_type)),
    // k6 reads the `value` attribute, not the text between the tags.
    ("value", Str("value")),
    ("wrap", Str("wrap")),
];

const TABLE_CELL: &[(&str, Get)] = &[
    ("abbr", Str("abbr")),
    ("cellIndex", Custom(cell_index)),
    ("colSpan", Int("colspan", 1)),
    ("headers", Str("headers")),
    ("rowSpan", Int("rowspan", 1)),
    ("scope", Str("scope")),
    ("sorted", Unsupported),
];

const IMG: &[(&str, Get)] = &[
    ("alt", Str("alt")),
    ("crossOrigin", Unsupported),
    ("currentSrc", Url("src")),
    ("height", Int("height", 0)),
    ("isMap", Bool("ismap")),
    ("name", Str("name")),
    ("referrerPolicy", Str("referrerpolicy")),
    ("sizes", Str("sizes")),
    ("src", Url("src")),
    ("srcset", Str("srcset")),
    ("useMap", Str("usemap")),
    ("width", Int("width", 0)),
];

const SCRIPT: &[(&str, Get)] = &[
    ("async", Bool("async")),
    ("charset", Str("charset")),
    ("crossOrigin", Unsupported),
    ("defer", Bool("defer")),
    ("noModule", Bool("nomodule")),
    ("src", Url("src")),
    ("text", Text),
    ("type", Str("type")),
];

const LINK: &[(&str, Get)] = &[
    ("crossOrigin", Unsupported),
    ("href", Url("href")),
    ("hreflang", Str("hreflang")),
    ("media", Str("media")),
    ("referrerPolicy", Str("referrerpolicy")),
    ("rel", Str("rel")),
    ("relList", List("rel")),
    ("target", Str("target")),
    ("type", Str("type")),
];

/// Tag families and their methods, as k6 1.1.0 lists them on each tag's element.
const FAMILIES: &[(&[&str], Methods)] = &[
    (&["a", "area"], HREF),
    (&["audio", "video"], MEDIA),
    (
        &["base"],
        &[("href", Url("href")), ("target", Str("target"))],
    ),
    (&["button"], BUTTON),
    (
        &["canvas"],
        &[("height", Unsupported), ("width", Unsupported)],
    ),
    (&["col"], &[("span", Int("span", 1))]),
    (&["data"], &[("value", Str("value"))]),
    (&["datalist"], &[("options", Custom(options))]),
    (
        &["del", "ins"],
        &[("cite", Str("cite")), ("datetime", Str("datetime"))],
    ),
    (
        &["embed"],
        &[
            ("height", Str("height")),
            ("src", Url("src")),
            ("type", Str("type")),
            ("width", Str("width")),
        ],
    ),
    (
        &["fieldset"],
        &[
            ("disabled", Bool("disabled")),
            ("elements", Unsupported),
            ("form", Custom(form)),
            ("name", Str("name")),
            ("type", Unsupported),
            ("validity", Unsupported),
        ],
    ),
    (&["form"], FORM),
    (
        &["iframe"],
        &[
            ("allowfullscreen", Bool("allowfullscreen")),
            ("height", Str("height")),
            ("name", Str("name")),
            ("referrerPolicy", Str("referrerpolicy")),
            ("src", Url("src")),
            ("width", Str("width")),
        ],
    ),
    (&["img"], IMG),
    (&["input"], INPUT),
    (
        &["label"],
        &[
            ("control", Custom(label_control)),
            ("form", Custom(form)),
            ("htmlFor", Str("for")),
        ],
    ),
    (
        &["legend"],
        &[("accessKey", Str("accesskey")), ("form", Custom(form))],
    ),
    (
        &["li"],
        &[("type", Str("type")), ("value", Int("value", 0))],
    ),
    (&["link"], LINK),
    (
        &["map"],
        &[
            ("areas", Unsupported),
            ("images", Unsupported),
            ("name", Str("name")),
        ],
    ),
    (
        &["meta"],
        &[
            ("content", Str("content")),
            ("httpEquiv", StrOr("http-equiv", "content-type")),
            ("name", Str("name")),
        ],
    ),
    (
        &["meter"],
        &[
            ("high", Unsupported),
            ("labels", Custom(labels)),
            ("low", Unsupported),
            ("max", Unsupported),
            ("min", Unsupported),
            ("optimum", Unsupported),
        ],
    ),
    (
        &["object"],
        &[
            ("data", Url("data")),
            ("form", Custom(form)),
            ("height", Str("height")),
            ("name", Str("name")),
            ("tabIndex", Int("tabindex", 0)),
            ("type", Str("type")),
            ("typeMustMatch", Bool("typemustmatch")),
            ("useMap", Str("usemap")),
            ("width", Str("width")),
        ],
    ),
    (
        &["ol"],
        &[
            ("reversed", Bool("reversed")),
            ("start", Int("start", 1)),
            ("type", Str("type")),
        ],
    ),
    (
        &["optgroup"],
        &[("disabled", Bool("disabled")), ("label", Str("label"))],
    ),
    (&["option"], OPTION),
    (
        &["output"],
        &[
            ("defaultValue", Unsupported),
            ("form", Custom(form)),
            ("htmlFor", Str("for")),
            ("labels", Custom(labels)),
            ("name", Str("name")),
            ("type", Unsupported),
            ("value", Unsupported),
        ],
    ),
    (
        &["param"],
        &[("name", Str("name")), ("value", Str("value"))],
    ),
    (&["pre"], &[("name", Str("name")), ("value", Str("value"))]),
    (
        &["progress"],
        &[
            ("labels", Custom(labels)),
            ("max", Unsupported),
            ("position", Unsupported),
            ("value", Unsupported),
        ],
    ),
    (&["script"], SCRIPT),
    (&["select"], SELECT),
    (
        &["source"],
        &[
            ("keySystem", Str("keysystem")),
            ("media", Str("media")),
            ("sizes", Str("sizes")),
            ("src", Url("src")),
            ("srcset", Str("srcset")),
            ("type", Str("type")),
        ],
    ),
    (
        &["style"],
        &[("media", Str("media")), ("type", Str("type"))],
    ),
    (
        &["table"],
        &[
            ("caption", Unsupported),
            ("rows", Unsupported),
            ("sortable", Unsupported),
            ("tBodies", Unsupported),
            ("tFoot", Unsupported),
            ("tHead", Unsupported),
        ],
    ),
    (&["tbody", "thead", "tfoot"], &[("rows", Custom(rows))]),
    (&["td", "th"], TABLE_CELL),
    (&["textarea"], TEXTAREA),
    (&["time"], &[("datetime", Str("datetime"))]),
    (&["title"], &[("text", Text)]),
    (
        &["tr"],
        &[
            ("cells", Custom(cells)),
            ("rowIndex", Unsupported),
            ("sectionRowIndex", Unsupported),
        ],
    ),
    (
        &["track"],
        &[
            ("default", Bool("default")),
            ("kind", Str("kind")),
            ("label", Str("label")),
            ("src", Url("src")),
            ("srclang", Str("srclang")),
        ],
    ),
    (&["ul"], &[("type", Str("type"))]),
];

/// One prototype per tag that has its own methods, each inheriting from `element`.
pub(super) fn prototypes(element: &JsObject, ctx: &mut Context) -> HashMap<&'static str, JsObject> {
    let mut out = HashMap::new();
    for (tags, methods) in FAMILIES {
        let mut init = ObjectInitializer::new(ctx);
        for &(name, get) in *methods {
            let f =
                NativeFunction::from_copy_closure(move |this, _, ctx| call(name, get, this, ctx));
            init.function(f, JsString::from(name), 0);
        }
        let proto = init.build();
        proto.set_prototype(Some(element.clone()));
        for tag in *tags {
            out.insert(*tag, proto.clone());
        }
    }
    out
}

fn string(s: &str) -> JsValue {
    JsString::from(s).into()
}

fn call(name: &str, get: Get, this: &JsValue, ctx: &mut Context) -> JsResult<JsValue> {
    let (doc, id) = this_el(this)?;
    let attr = |a: &str| doc.attr(id, a);
    Ok(match get {
        Str(a) => string(attr(a).unwrap_or("")),
        StrOr(a, d) => string(attr(a).unwrap_or(d)),
        Bool(a) => attr(a).is_some().into(),
        Int(a, d) => attr(a)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(d)
            .into(),
        List(a) => {
            let items = attr(a)
                .unwrap_or("")
                .split_ascii_whitespace()
                .map(string)
                .collect::<Vec<_>>();
            JsArray::from_iter(items, ctx).into()
        }
        Url(a) => string(&resolve(&doc, attr(a).unwrap_or(""))),
        Part(p) => string(&url_part(&doc, attr("href").unwrap_or(""), p)),
        Text => JsString::from(doc.text(id)).into(),
        Custom(f) => f(&doc, id, ctx),
        Unsupported => {
            let tag = doc.tag(id).unwrap_or("");
            return Err(JsNativeError::error()
                .with_message(format!(
                    "the {tag} element method {name}() is not supported by rk6 yet"
                ))
                .into());
        }
    })
}

/// `v` resolved against the page URL; as it is when there is no page URL or it is empty.
fn resolve(doc: &Doc, v: &str) -> String {
    if v.is_empty() {
        return String::new();
    }
    match url::Url::parse(&doc.url) {
        Ok(base) => base
            .join(v)
            .map_or_else(|_| v.to_owned(), |u| u.to_string()),
        Err(_) => v.to_owned(),
    }
}

fn url_part(doc: &Doc, href: &str, part: Part) -> String {
    let Ok(u) = url::Url::parse(&resolve(doc, href)) else {
        return String::new();
    };
    let host = u.host_str().unwrap_or("");
    let port = u.port().map(|p| p.to_string()).unwrap_or_default();
    match part {
        Part::Hash => u.fragment().map(|f| format!("#{f}")).unwrap_or_default(),
        Part::Host if port.is_empty() => host.to_owned(),
        Part::Host => format!("{host}:{port}"),
        Part::Hostname => host.to_owned(),
        Part::Origin => u.origin().ascii_serialization(),
        Part::Password => u.password().unwrap_or("").to_owned(),
        Part::Pathname => u.path().to_owned(),
        Part::Port => port,
        // k6 reports the scheme without the colon.
        Part::Protocol => u.scheme().to_owned(),
        Part::Search => u.query().map(|q| format!("?{q}")).unwrap_or_default(),
        Part::Username => u.username().to_owned(),
    }
}

fn elements(doc: &Rc<Doc>, ids: Vec<NodeId>, ctx: &mut Context) -> JsValue {
    let items: Vec<JsValue> = ids.into_iter().map(|i| make(doc.clone(), i, ctx)).collect();
    JsArray::from_iter(items, ctx).into()
}

fn maybe(doc: &Rc<Doc>, id: Option<NodeId>, ctx: &mut Context) -> JsValue {
    id.map_or(JsValue::undefined(), |i| make(doc.clone(), i, ctx))
}

/// The form an element belongs to: its `form` attribute's form, else its enclosing form.
fn form_of(doc: &Doc, id: NodeId) -> Option<NodeId> {
    if let Some(owner) = doc.attr(id, "form") {
        return doc
            .node(doc.root())
            .descendants()
            .find(|d| {
                d.value()
                    .as_element()
                    .is_some_and(|e| e.name() == "form" && e.id() == Some(owner))
            })
            .map(|d| d.id());
    }
    doc.node(id)
        .ancestors()
        .find(|a| a.value().as_element().is_some_and(|e| e.name() == "form"))
        .map(|a| a.id())
}

fn form(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    maybe(doc, form_of(doc, id), ctx)
}

/// A submit control's own attribute, else its form's.
fn own_or_form(doc: &Doc, id: NodeId, own: &str, of_form: &str) -> Option<String> {
    doc.attr(id, own)
        .or_else(|| form_of(doc, id).and_then(|f| doc.attr(f, of_form)))
        .map(str::to_owned)
}

fn form_action(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(&resolve(
        doc,
        &own_or_form(doc, id, "formaction", "action").unwrap_or_default(),
    ))
}

fn form_enctype(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(
        &own_or_form(doc, id, "formenctype", "enctype")
            .unwrap_or_else(|| "application/x-www-form-urlencoded".into()),
    )
}

fn form_method(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(
        &own_or_form(doc, id, "formmethod", "method")
            .unwrap_or_else(|| "get".into())
            .to_ascii_lowercase(),
    )
}

fn form_target(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(&own_or_form(doc, id, "formtarget", "target").unwrap_or_default())
}

fn enctype(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(
        doc.attr(id, "enctype")
            .unwrap_or("application/x-www-form-urlencoded"),
    )
}

fn method(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(&doc.attr(id, "method").unwrap_or("get").to_ascii_lowercase())
}

fn controls(doc: &Doc, form: NodeId) -> Vec<NodeId> {
    doc.node(form)
        .descendants()
        .filter(|d| {
            d.value().as_element().is_some_and(|e| {
                matches!(
                    e.name(),
                    "button" | "fieldset" | "input" | "object" | "output" | "select" | "textarea"
                )
            })
        })
        .map(|d| d.id())
        .collect()
}

fn form_elements(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    elements(doc, controls(doc, id), ctx)
}

fn form_length(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    controls(doc, id).len().into()
}

fn labels(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    let own = doc.attr(id, "id").filter(|i| !i.is_empty());
    let ids: Vec<NodeId> = doc
        .node(doc.root())
        .descendants()
        .filter(|d| {
            d.value().as_element().is_some_and(|e| {
                e.name() == "label"
                    && (own.is_some() && e.attr("for") == own
                        || d.descendants().any(|x| x.id() == id))
            })
        })
        .map(|d| d.id())
        .collect();
    elements(doc, ids, ctx)
}

fn label_control(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    let target = doc.attr(id, "for").map(str::to_owned);
    let found = doc
        .node(doc.root())
        .descendants()
        .find(|d| {
            d.value()
                .as_element()
                .is_some_and(|e| target.is_some() && e.id() == target.as_deref())
        })
        .map(|d| d.id());
    maybe(doc, found, ctx)
}

fn option_ids(doc: &Doc, id: NodeId) -> Vec<NodeId> {
    doc.node(id)
        .descendants()
        .filter(|d| d.value().as_element().is_some_and(|e| e.name() == "option"))
        .map(|d| d.id())
        .collect()
}

fn options(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    elements(doc, option_ids(doc, id), ctx)
}

fn options_length(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    option_ids(doc, id).len().into()
}

fn selected(doc: &Doc, id: NodeId) -> Vec<NodeId> {
    option_ids(doc, id)
        .into_iter()
        .filter(|&o| doc.attr(o, "selected").is_some())
        .collect()
}

fn selected_index(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    let all = option_ids(doc, id);
    all.iter()
        .position(|&o| doc.attr(o, "selected").is_some())
        .map_or(-1, |i| i as i64)
        .into()
}

fn selected_options(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    elements(doc, selected(doc, id), ctx)
}

fn option_text_value(doc: &Doc, id: NodeId) -> String {
    doc.attr(id, "value")
        .map_or_else(|| doc.text(id), str::to_owned)
}

fn select_value(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    let first = selected(doc, id).first().copied();
    string(&first.map(|o| option_text_value(doc, o)).unwrap_or_default())
}

fn button_value(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(&option_text_value(doc, id))
}

fn option_value(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(&option_text_value(doc, id))
}

fn option_label(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    string(
        &doc.attr(id, "label")
            .map_or_else(|| doc.text(id), str::to_owned),
    )
}

fn option_index(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    let select = doc.node(id).ancestors().find(|a| {
        a.value()
            .as_element()
            .is_some_and(|e| matches!(e.name(), "select" | "datalist"))
    });
    let Some(select) = select else {
        return 0.into();
    };
    option_ids(doc, select.id())
        .iter()
        .position(|&o| o == id)
        .unwrap_or(0)
        .into()
}

fn value_length(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    doc.attr(id, "value")
        .map_or(0, |v| v.chars().count())
        .into()
}

fn textarea_type(_: &Rc<Doc>, _: NodeId, _: &mut Context) -> JsValue {
    string("textarea")
}

fn cell_index(doc: &Rc<Doc>, id: NodeId, _: &mut Context) -> JsValue {
    doc.node(id)
        .prev_siblings()
        .filter(|s| {
            s.value()
                .as_element()
                .is_some_and(|e| matches!(e.name(), "td" | "th"))
        })
        .count()
        .into()
}

fn cells(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    let ids = doc
        .node(id)
        .children()
        .filter(|c| {
            c.value()
                .as_element()
                .is_some_and(|e| matches!(e.name(), "td" | "th"))
        })
        .map(|c| c.id())
        .collect();
    elements(doc, ids, ctx)
}

fn rows(doc: &Rc<Doc>, id: NodeId, ctx: &mut Context) -> JsValue {
    let ids = doc
        .node(id)
        .children()
        .filter(|c| c.value().as_element().is_some_and(|e| e.name() == "tr"))
        .map(|c| c.id())
        .collect();
    elements(doc, ids, ctx)
}
