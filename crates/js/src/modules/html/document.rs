//! The parsed document and the queries the JS objects run on it, in plain Rust.

use std::collections::HashSet;

use ego_tree::{NodeId, NodeRef};
use scraper::{ElementRef, Html, Node};

use super::selector::Selector;

/// A parsed HTML document and the URL it came from ("" for `parseHTML`).
pub(crate) struct Doc {
    pub(crate) html: Html,
    pub(crate) url: String,
}

/// Compiles a CSS selector as k6 does: one that does not parse matches nothing.
pub(crate) fn selector(text: &str) -> Selector {
    Selector::lenient(text)
}

/// A form control's value: most are one string, a `<select multiple>` is a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    One(String),
    Many(Vec<String>),
}

impl Doc {
    /// Parses `src` as a whole document.
    pub(crate) fn parse(src: &str, url: String) -> Doc {
        Doc {
            html: Html::parse_document(src),
            url,
        }
    }

    /// The document node.
    pub(crate) fn root(&self) -> NodeId {
        self.html.tree.root().id()
    }

    /// The node `id` (ids always come from this document).
    pub(crate) fn node(&self, id: NodeId) -> NodeRef<'_, Node> {
        self.html
            .tree
            .get(id)
            .expect("node ids come from their own document")
    }

    /// The node `id` as an element, if it is one.
    pub(crate) fn element(&self, id: NodeId) -> Option<ElementRef<'_>> {
        ElementRef::wrap(self.node(id))
    }

    /// Whether the node `id` is an element matching `sel`.
    pub(crate) fn matches(&self, id: NodeId, sel: &Selector) -> bool {
        sel.matches(self.node(id))
    }

    /// The attribute `name` of the node `id`, if it is an element that has it.
    pub(crate) fn attr(&self, id: NodeId, name: &str) -> Option<&str> {
        self.node(id)
            .value()
            .as_element()
            .and_then(|e| e.attr(name))
    }

    /// Whether the node `id` is an element with at least one attribute.
    pub(crate) fn has_attributes(&self, id: NodeId) -> bool {
        self.node(id)
            .value()
            .as_element()
            .is_some_and(|e| e.attrs().next().is_some())
    }

    /// The lower-case tag name of an element, or `None`.
    pub(crate) fn tag(&self, id: NodeId) -> Option<&str> {
        self.node(id).value().as_element().map(|e| e.name())
    }

    /// Nodes under `ids` matching `sel`, each once, in the order they are found. As
    /// goquery: the search starts at each node's element children, so text nodes can match
    /// (`:contains`), except direct text children of `ids`.
    pub(crate) fn find(&self, ids: &[NodeId], sel: &Selector) -> Vec<NodeId> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for &id in ids {
            for child in self.node(id).children().filter(|c| c.value().is_element()) {
                for d in child.descendants() {
                    if sel.matches(d) && seen.insert(d.id()) {
                        out.push(d.id());
                    }
                }
            }
        }
        out
    }

    /// The first node [`Doc::find`] would give, without looking further.
    pub(crate) fn find_first(&self, ids: &[NodeId], sel: &Selector) -> Option<NodeId> {
        ids.iter().find_map(|&id| {
            self.node(id)
                .children()
                .filter(|c| c.value().is_element())
                .find_map(|child| child.descendants().find(|d| sel.matches(*d)))
                .map(|d| d.id())
        })
    }

    /// The text of all text nodes under `id`, concatenated.
    pub(crate) fn text(&self, id: NodeId) -> String {
        let mut out = String::new();
        for d in self.node(id).descendants() {
            if let Node::Text(t) = d.value() {
                out.push_str(t);
            }
        }
        out
    }

    /// The HTML of the children of `id`.
    pub(crate) fn inner_html(&self, id: NodeId) -> String {
        match self.element(id) {
            Some(e) => e.inner_html(),
            None if id == self.root() => self.html.html(),
            None => String::new(),
        }
    }

    /// The HTML of `id` itself.
    pub(crate) fn outer_html(&self, id: NodeId) -> String {
        let node = self.node(id);
        match node.value() {
            Node::Element(_) => ElementRef::wrap(node).map(|e| e.html()).unwrap_or_default(),
            Node::Text(t) => escape_text(t),
            Node::Comment(c) => format!("<!--{}-->", &**c),
            Node::Document | Node::Fragment => self.html.html(),
            _ => String::new(),
        }
    }

    /// The value of a form control as k6's `val()` reports it.
    pub(crate) fn val(&self, id: NodeId) -> Option<Value> {
        let tag = self.tag(id)?;
        let attr = |n| self.attr(id, n).map(str::to_owned);
        match tag {
            "input" => {
                let kind = self.attr(id, "type").unwrap_or("").to_ascii_lowercase();
                let dflt = if kind == "checkbox" || kind == "radio" {
                    "on"
                } else {
                    ""
                };
                Some(Value::One(attr("value").unwrap_or_else(|| dflt.to_owned())))
            }
            "button" => Some(Value::One(attr("value").unwrap_or_default())),
            "textarea" => Some(Value::One(self.text(id))),
            "option" => Some(Value::One(self.option_value(id))),
            "select" => {
                let selected: Vec<String> = self
                    .node(id)
                    .descendants()
                    .filter(|d| {
                        d.value()
                            .as_element()
                            .is_some_and(|e| e.name() == "option" && e.attr("selected").is_some())
                    })
                    .map(|d| self.option_value(d.id()))
                    .collect();
                if self.attr(id, "multiple").is_some() {
                    Some(Value::Many(selected))
                } else {
                    Some(Value::One(selected.into_iter().next().unwrap_or_default()))
                }
            }
            _ => None,
        }
    }

    fn option_value(&self, id: NodeId) -> String {
        self.attr(id, "value")
            .map_or_else(|| self.text(id), str::to_owned)
    }

    /// The named controls of the forms (or the controls themselves) in `ids`, in document
    /// order, with their values. Like k6: disabled controls count, buttons and file inputs
    /// do not, and a checkbox or radio counts only when its `checked` attribute reads
    /// "checked". A `<keygen>` has no value.
    pub(crate) fn form_fields(&self, ids: &[NodeId]) -> Vec<(String, Option<Value>)> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for &id in ids {
            for d in self.node(id).descendants() {
                if seen.insert(d.id()) {
                    if let Some(field) = self.field(d.id()) {
                        out.push(field);
                    }
                }
            }
        }
        out
    }

    fn field(&self, id: NodeId) -> Option<(String, Option<Value>)> {
        let tag = self.tag(id)?;
        if !matches!(tag, "input" | "select" | "textarea" | "keygen") {
            return None;
        }
        let name = self.attr(id, "name").filter(|n| !n.is_empty())?.to_owned();
        if tag == "input" {
            let kind = self.attr(id, "type").unwrap_or("").to_ascii_lowercase();
            match kind.as_str() {
                "submit" | "button" | "image" | "reset" | "file" => return None,
                "checkbox" | "radio" if self.attr(id, "checked") != Some("checked") => return None,
                _ => {}
            }
        }
        Some((name, self.val(id)))
    }

    /// `data-*` attributes of the element `id` with camel-cased names and values read as
    /// JSON where they are JSON numbers, objects, arrays, booleans or null.
    pub(crate) fn data(&self, id: NodeId) -> Vec<(String, serde_json::Value)> {
        let Some(el) = self.node(id).value().as_element() else {
            return Vec::new();
        };
        el.attrs()
            .filter_map(|(k, v)| k.strip_prefix("data-").map(|k| (camel(k), data_value(v))))
            .collect()
    }
}

/// `some-thing` → `someThing`.
fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn data_value(v: &str) -> serde_json::Value {
    let t = v.trim();
    let json_like = t.starts_with('{')
        || t.starts_with('[')
        || matches!(t, "true" | "false" | "null")
        || t.parse::<f64>().is_ok_and(|n| n.is_finite());
    if json_like {
        if let Ok(j) = serde_json::from_str(t) {
            return j;
        }
    }
    serde_json::Value::String(v.to_owned())
}

fn escape_text(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The last value per name (as a JS object would hold them), names in first-seen order.
pub(crate) fn last_per_name(fields: Vec<(String, Option<Value>)>) -> Vec<(String, Option<Value>)> {
    let mut out: Vec<(String, Option<Value>)> = Vec::new();
    for (k, v) in fields {
        match out.iter_mut().find(|(n, _)| *n == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// `application/x-www-form-urlencoded` with keys sorted and Go's escaping (space as `+`,
/// only `-_.~` and alphanumerics left as they are), as k6 encodes form values.
pub(crate) fn encode_form(fields: &[(String, Option<Value>)]) -> String {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for (k, v) in fields {
        match v {
            Some(Value::One(s)) => pairs.push((k, s)),
            Some(Value::Many(list)) => pairs.extend(list.iter().map(|s| (k.as_str(), s.as_str()))),
            None => {}
        }
    }
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = String::new();
    for (k, v) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        escape_query(k, &mut out);
        out.push('=');
        escape_query(v, &mut out);
    }
    out
}

fn escape_query(s: &str, out: &mut String) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: &str = r#"<form action="/s"><input name="a" value="1 2"><input type="checkbox" name="c" checked><input type="checkbox" name="d" checked="checked"><select name="m" multiple><option selected>x</option><option value="y" selected>Y</option></select><input type="submit" name="go" value="Go"><textarea name="t">hi</textarea><input name="a" value="3"></form>"#;

    fn doc(src: &str) -> Doc {
        Doc::parse(src, String::new())
    }

    #[test]
    fn form_fields_follow_k6_rules() {
        let d = doc(FORM);
        let sel = selector("form");
        let form = d.find(&[d.root()], &sel);
        let fields = d.form_fields(&form);
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "d", "m", "t", "a"]);
        assert_eq!(fields[1].1, Some(Value::One("on".into())));
        assert_eq!(fields[2].1, Some(Value::Many(vec!["x".into(), "y".into()])));
        let last = last_per_name(fields);
        assert_eq!(last[0].1, Some(Value::One("3".into())));
        assert_eq!(encode_form(&last), "a=3&d=on&m=x&m=y&t=hi");
    }

    #[test]
    fn query_escaping_matches_go() {
        let f = [("k y".to_owned(), Some(Value::One("a b&c@~*".into())))];
        assert_eq!(encode_form(&f), "k+y=a+b%26c%40~%2A");
    }

    #[test]
    fn data_attributes_are_camel_cased_and_typed() {
        let d = doc(
            r#"<div data-n="12" data-some-thing="q" data-o='{"x":1}' data-b="true" data-s="12abc"></div>"#,
        );
        let div = d.find(&[d.root()], &selector("div"))[0];
        let data = d.data(div);
        let get = |k: &str| data.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("n"), Some(serde_json::json!(12)));
        assert_eq!(get("someThing"), Some(serde_json::json!("q")));
        assert_eq!(get("o"), Some(serde_json::json!({"x": 1})));
        assert_eq!(get("b"), Some(serde_json::json!(true)));
        assert_eq!(get("s"), Some(serde_json::json!("12abc")));
    }

    #[test]
    fn text_and_html() {
        let d = doc("<p id=x>a <b>b</b><!--c--> d</p>");
        let p = d.find(&[d.root()], &selector("#x"))[0];
        assert_eq!(d.text(p), "a b d");
        assert_eq!(d.inner_html(p), "a <b>b</b><!--c--> d");
        assert_eq!(d.outer_html(p), r#"<p id="x">a <b>b</b><!--c--> d</p>"#);
    }

    #[test]
    fn bad_selectors_match_nothing() {
        let d = doc("<p>x</p>");
        assert!(d.find(&[d.root()], &selector("[[[")).is_empty());
        assert_eq!(d.find(&[d.root()], &selector("p")).len(), 1);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The property tests' case count (`PROPTEST_CASES` raises it for a fuzzing run).
    fn config(default: u32) -> proptest::test_runner::Config {
        proptest::test_runner::Config {
            cases: std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        }
    }

    /// One flat element: tag, optional id, classes.
    fn element() -> impl Strategy<Value = (&'static str, Option<&'static str>, Vec<&'static str>)> {
        (
            prop::sample::select(&["p", "span", "div", "li"][..]),
            prop::option::of(prop::sample::select(&["a", "b"][..])),
            prop::sample::subsequence(&["x", "y"][..], 0..=2),
        )
    }

    fn page(elements: &[(&str, Option<&str>, Vec<&str>)]) -> String {
        let mut src = String::from("<html><body>");
        for (tag, id, classes) in elements {
            src.push_str(&format!("<{tag}"));
            if let Some(id) = id {
                src.push_str(&format!(" id=\"{id}\""));
            }
            if !classes.is_empty() {
                src.push_str(&format!(" class=\"{}\"", classes.join(" ")));
            }
            src.push_str(&format!(">t</{tag}>"));
        }
        src.push_str("</body></html>");
        src
    }

    proptest! {
        #![proptest_config(config(1000))]

        /// Any selector text against a small page: a match set or nothing, never a panic
        /// (goquery matches nothing for a selector that does not parse).
        #[test]
        fn any_selector_is_decided(
            text in prop_oneof![
                "\\PC{0,16}",
                "[a-z.#*>+~ ,\\[\\]=\"'^$|:()0-9n-]{0,20}",
                ":nth-(last-)?(child|of-type)\\([-+]?[0-9]{0,20}n?[ ]?[-+]?[ ]?[0-9]{0,20}\\)",
            ],
        ) {
            let doc = Doc::parse("<ul><li>1</li><li>2</li><li>3</li></ul><p id=a class=x>t</p>", String::new());
            let sel = selector(&text);
            let found = doc.find(&[doc.root()], &sel);
            prop_assert!(found.len() <= 16);
        }

        /// `an+b` with any int64 `a` and `b` (cascadia's, so k6's, arithmetic wraps): a
        /// decision, never an overflow.
        #[test]
        fn nth_extremes_are_decided(
            a in prop_oneof![any::<i64>(), -3i64..3, Just(i64::MAX)],
            b in prop_oneof![any::<i64>(), -i64::MAX..-i64::MAX + 4, i64::MAX - 4..=i64::MAX],
            of in prop::sample::select(&["child", "last-child", "of-type"][..])) {
            let doc = Doc::parse("<ul><li>1</li><li>2</li><li>3</li></ul>", String::new());
            let a = if a == i64::MIN { 0 } else { a };
            let b = if b == i64::MIN { 0 } else { b };
            let text = format!("li:nth-{of}({a}n{b:+})");
            let _ = doc.find(&[doc.root()], &selector(&text));
        }

        /// Any HTML source: parsed, searched and printed back without a panic.
        #[test]
        fn any_html_is_decided(src in prop_oneof!["\\PC{0,40}", "(<[/!]?[a-z]{0,4}( [a-z]{1,3}(=[\"']?[a-z<>&]{0,3}[\"']?)?)?/?>|[a-z&;<> ]{0,4}){0,8}"]) {
            let doc = Doc::parse(&src, String::new());
            for id in doc.find(&[doc.root()], &selector("*")) {
                let _ = (doc.text(id), doc.inner_html(id), doc.outer_html(id), doc.val(id), doc.data(id));
            }
        }

        /// Simple selectors (type, class, id, their compounds, lists) select exactly the
        /// elements the model says, in document order.
        #[test]
        fn simple_selectors_match_the_model(
            elements in prop::collection::vec(element(), 0..8),
            tag in prop::option::of(prop::sample::select(&["p", "span", "div", "li"][..])),
            id in prop::option::of(prop::sample::select(&["a", "b"][..])),
            class in prop::option::of(prop::sample::select(&["x", "y"][..])),
            or_tag in prop::option::of(prop::sample::select(&["p", "span"][..])),
        ) {
            // Never an empty compound (no rejections, so any case count runs).
            let tag = if tag.is_none() && id.is_none() && class.is_none() { Some("p") } else { tag };
            let mut text = tag.unwrap_or("").to_owned();
            if let Some(c) = class { text.push_str(&format!(".{c}")); }
            if let Some(i) = id { text.push_str(&format!("#{i}")); }
            if let Some(o) = or_tag { text.push_str(&format!(", {o}")); }
            let doc = Doc::parse(&page(&elements), String::new());
            let body = doc.find(&[doc.root()], &selector("body"))[0];
            let got: Vec<usize> = doc
                .find(&[body], &selector(&text))
                .into_iter()
                .map(|n| doc.node(body).children().position(|c| c.id() == n).unwrap())
                .collect();
            let want: Vec<usize> = elements
                .iter()
                .enumerate()
                .filter(|(_, (t, i, cs))| {
                    let first = tag.is_none_or(|x| x == *t) && id.is_none_or(|x| Some(x) == *i) && class.is_none_or(|x| cs.contains(&x));
                    first || or_tag == Some(*t)
                })
                .map(|(n, _)| n)
                .collect();
            prop_assert_eq!(got, want, "{}", text);
        }

        /// `:nth-child(an+b)` selects the positions i >= 1 with i = a*k + b for some k >= 0
        /// (small a, b; checked by enumeration).
        #[test]
        fn nth_child_matches_the_model(n in 0usize..12, a in -4i64..5, b in -6i64..8) {
            let items: String = (0..n).map(|i| format!("<li id=i{}>x</li>", i + 1)).collect();
            let doc = Doc::parse(&format!("<ul>{items}</ul>"), String::new());
            let got: Vec<String> = doc
                .find(&[doc.root()], &selector(&format!("li:nth-child({a}n{b:+})")))
                .into_iter()
                .filter_map(|id| doc.attr(id, "id").map(str::to_owned))
                .collect();
            let want: Vec<String> = (1..=n as i64)
                .filter(|i| (0..=20).any(|k| a * k + b == *i))
                .map(|i| format!("i{i}"))
                .collect();
            prop_assert_eq!(got, want);
        }

        /// A form's encoding decodes back to its fields, sorted by name (stably), as Go's
        /// `url.Values.Encode` orders them.
        #[test]
        fn forms_encode_losslessly(fields in prop::collection::vec(("\\PC{0,6}", "\\PC{0,6}"), 0..6)) {
            let input: Vec<(String, Option<Value>)> = fields.iter().map(|(k, v)| (k.clone(), Some(Value::One(v.clone())))).collect();
            let text = encode_form(&input);
            let back: Vec<(String, String)> = url::form_urlencoded::parse(text.as_bytes()).into_owned().collect();
            let mut want = fields.clone();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            if want.len() == 1 && want[0].0.is_empty() && want[0].1.is_empty() {
                // "=" decodes to one empty pair, but so does the empty string for no pairs.
                prop_assert_eq!(text, "=");
            } else {
                prop_assert_eq!(back, want);
            }
        }
    }
}
