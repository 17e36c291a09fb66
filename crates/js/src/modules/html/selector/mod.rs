//! CSS selectors as k6 matches them (goquery over cascadia), on scraper's tree: the
//! grammar in parser.rs, matching here. The `scraper` crate's own selectors (Servo's) know
//! none of cascadia's extensions and match some things differently (`:empty` ignores white
//! space in cascadia, `:contains` is case-insensitive, `:lang` and `:contains` also match
//! text nodes), so this module replaces them wholesale rather than patching a few cases. A
//! selector that does not parse matches nothing, as goquery's invalid matcher: `find` gives
//! an empty Selection, `not` keeps everything.

mod parser;

use ego_tree::NodeRef;
use regex::Regex;
use scraper::Node;

#[cfg(test)]
use parser::ParseError;

/// A compiled selector group; an unparsable one matches nothing.
#[derive(Debug, Clone)]
pub(crate) struct Selector(Option<Group>);

/// Selectors separated by commas: a node matches if any does.
#[derive(Debug, Clone)]
pub(crate) struct Group(Vec<Complex>);

/// Compound selectors joined by combinators, left to right.
#[derive(Debug, Clone)]
pub(crate) struct Complex {
    first: Compound,
    rest: Vec<(Combinator, Compound)>,
}

/// How two compound selectors relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combinator {
    /// `a b`
    Descendant,
    /// `a > b`
    Child,
    /// `a + b`
    Adjacent,
    /// `a ~ b`
    Sibling,
}

/// Simple selectors that must all match; none means any element (`*`).
#[derive(Debug, Clone)]
pub(crate) struct Compound(Vec<Simple>);

/// Attribute operators, cascadia's `!=` and `#=` (regex) included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttrOp {
    Exists,
    Equals,
    NotEquals,
    Includes,
    DashMatch,
    Prefix,
    Suffix,
    Substring,
    Regex,
}

/// One simple selector.
#[derive(Debug, Clone)]
pub(crate) enum Simple {
    Tag(String),
    Id(String),
    Class(String),
    Attr {
        key: String,
        op: AttrOp,
        value: String,
        regex: Option<Regex>,
        insensitive: bool,
    },
    Not(Group),
    Has(Group),
    HasChild(Group),
    /// `:contains` / `:containsOwn`; `value` is lower-cased.
    Contains {
        own: bool,
        value: String,
    },
    /// `:matches` / `:matchesOwn`.
    Matches {
        own: bool,
        regex: Regex,
    },
    /// `:nth-*`, `:first-*`, `:last-*`: position `a*n + b` among the element siblings.
    Nth {
        a: i64,
        b: i64,
        last: bool,
        of_type: bool,
    },
    OnlyChild {
        of_type: bool,
    },
    Input,
    Empty,
    Root,
    Link,
    Lang(String),
    Enabled,
    Disabled,
    Checked,
    /// `:hover`, `:visited`…: never in a static document.
    Never,
}

type N<'a> = NodeRef<'a, Node>;

impl Selector {
    /// Compiles `text`; `Err` says why it matches nothing.
    #[cfg(test)]
    pub(crate) fn parse(text: &str) -> Result<Selector, ParseError> {
        parser::parse_group(text).map(|g| Selector(Some(g)))
    }

    /// Compiles `text` as goquery does: an unparsable selector matches nothing.
    pub(crate) fn lenient(text: &str) -> Selector {
        Selector(parser::parse_group(text).ok())
    }

    /// Whether the node (of any kind, as cascadia) matches.
    pub(crate) fn matches(&self, node: N<'_>) -> bool {
        self.0.as_ref().is_some_and(|g| g.matches(node))
    }
}

impl Group {
    fn matches(&self, node: N<'_>) -> bool {
        self.0.iter().any(|c| c.matches(node))
    }
}

impl Complex {
    fn matches(&self, node: N<'_>) -> bool {
        self.matches_upto(self.rest.len(), node)
    }

    /// Whether the selector made of the first `k + 1` compounds matches `node`.
    fn matches_upto(&self, k: usize, node: N<'_>) -> bool {
        if k == 0 {
            return self.first.matches(node);
        }
        let (combinator, compound) = &self.rest[k - 1];
        if !compound.matches(node) {
            return false;
        }
        match combinator {
            Combinator::Descendant => {
                let mut p = node.parent();
                while let Some(n) = p {
                    if self.matches_upto(k - 1, n) {
                        return true;
                    }
                    p = n.parent();
                }
                false
            }
            Combinator::Child => node.parent().is_some_and(|p| self.matches_upto(k - 1, p)),
            Combinator::Adjacent => {
                let mut s = node.prev_sibling();
                while let Some(n) = s {
                    if !matches!(n.value(), Node::Text(_) | Node::Comment(_)) {
                        return self.matches_upto(k - 1, n);
                    }
                    s = n.prev_sibling();
                }
                false
            }
            Combinator::Sibling => {
                let mut s = node.prev_sibling();
                while let Some(n) = s {
                    if self.matches_upto(k - 1, n) {
                        return true;
                    }
                    s = n.prev_sibling();
                }
                false
            }
        }
    }
}

impl Compound {
    fn matches(&self, node: N<'_>) -> bool {
        if self.0.is_empty() {
            return node.value().is_element();
        }
        self.0.iter().all(|s| s.matches(node))
    }
}

fn element(node: N<'_>) -> Option<&scraper::node::Element> {
    node.value().as_element()
}

fn tag(node: N<'_>) -> Option<&str> {
    element(node).map(|e| e.name())
}

fn attr<'a>(node: N<'a>, key: &str) -> Option<&'a str> {
    element(node).and_then(|e| e.attr(key))
}

fn has_attr(node: N<'_>, key: &str) -> bool {
    attr(node, key).is_some()
}

fn eq(a: &str, b: &str, insensitive: bool) -> bool {
    if insensitive {
        a.to_lowercase() == b.to_lowercase()
    } else {
        a == b
    }
}

/// Go's `strings.TrimSpace(s) == ""`.
fn blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// The text of text nodes under an element (comments and the document itself give none).
fn text(node: N<'_>, out: &mut String) {
    match node.value() {
        Node::Text(t) => out.push_str(t),
        Node::Element(_) => {
            for c in node.children() {
                text(c, out);
            }
        }
        _ => {}
    }
}

fn own_text(node: N<'_>) -> String {
    node.children()
        .filter_map(|c| match c.value() {
            Node::Text(t) => Some(&**t),
            _ => None,
        })
        .collect()
}

fn node_text(node: N<'_>, own: bool) -> String {
    if own {
        return own_text(node);
    }
    let mut out = String::new();
    text(node, &mut out);
    out
}

fn attr_matches(
    node: N<'_>,
    key: &str,
    op: AttrOp,
    value: &str,
    regex: Option<&Regex>,
    insensitive: bool,
) -> bool {
    let Some(e) = element(node) else {
        return false;
    };
    if op == AttrOp::NotEquals {
        return e.attr(key).is_none_or(|v| !eq(v, value, insensitive));
    }
    let Some(v) = e.attr(key) else {
        return false;
    };
    let lower = |s: &str| s.to_lowercase();
    match op {
        AttrOp::Exists => true,
        AttrOp::Equals => eq(v, value, insensitive),
        AttrOp::NotEquals => unreachable!("handled above"),
        AttrOp::Includes => v
            .split([' ', '\t', '\r', '\n', '\x0c'])
            .any(|w| eq(w, value, insensitive)),
        AttrOp::DashMatch => {
            eq(v, value, insensitive)
                || (v.len() > value.len()
                    && v.is_char_boundary(value.len())
                    && eq(&v[..value.len()], value, insensitive)
                    && v.as_bytes()[value.len()] == b'-')
        }
        AttrOp::Prefix if insensitive => !blank(v) && lower(v).starts_with(&lower(value)),
        AttrOp::Prefix => !blank(v) && v.starts_with(value),
        AttrOp::Suffix if insensitive => !blank(v) && lower(v).ends_with(&lower(value)),
        AttrOp::Suffix => !blank(v) && v.ends_with(value),
        AttrOp::Substring if insensitive => !blank(v) && lower(v).contains(&lower(value)),
        AttrOp::Substring => !blank(v) && v.contains(value),
        AttrOp::Regex => regex.is_some_and(|r| r.is_match(v)),
    }
}

/// `node`'s 1-based position among its parent's element children (of its type), counted
/// from the end when `last`.
fn position(node: N<'_>, last: bool, of_type: bool) -> Option<i64> {
    let name = tag(node)?;
    let parent = node.parent()?;
    let same = |c: &N<'_>| tag(*c).is_some_and(|t| !of_type || t == name);
    let siblings: Vec<N<'_>> = parent.children().filter(same).collect();
    let i = siblings.iter().position(|c| c.id() == node.id())? as i64 + 1;
    Some(if last {
        siblings.len() as i64 - i + 1
    } else {
        i
    })
}

fn in_disabled_fieldset(node: N<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let legend_before = || {
        let mut s = node.prev_sibling();
        while let Some(n) = s {
            if tag(n) == Some("legend") {
                return true;
            }
            s = n.prev_sibling();
        }
        false
    };
    if tag(parent) == Some("fieldset")
        && has_attr(parent, "disabled")
        && (tag(node) != Some("legend") || legend_before())
    {
        return true;
    }
    in_disabled_fieldset(parent)
}

const FORM_CONTROLS: &[&str] = &["button", "input", "select", "textarea", "option"];

impl Simple {
    fn matches(&self, node: N<'_>) -> bool {
        let is_element = node.value().is_element();
        match self {
            Simple::Tag(t) => tag(node) == Some(t.as_str()),
            Simple::Id(id) => attr(node, "id") == Some(id.as_str()),
            Simple::Class(c) => attr(node, "class").is_some_and(|v| {
                v.split([' ', '\t', '\r', '\n', '\x0c'])
                    .any(|w| w == c.as_str())
            }),
            Simple::Attr {
                key,
                op,
                value,
                regex,
                insensitive,
            } => attr_matches(node, key, *op, value, regex.as_ref(), *insensitive),
            Simple::Not(g) => is_element && !g.matches(node),
            Simple::Has(g) => is_element && has_descendant(node, g),
            Simple::HasChild(g) => is_element && node.children().any(|c| g.matches(c)),
            Simple::Contains { own, value } => node_text(node, *own)
                .to_lowercase()
                .contains(value.as_str()),
            Simple::Matches { own, regex } => regex.is_match(&node_text(node, *own)),
            Simple::Nth {
                a,
                b,
                last,
                of_type,
            } => position(node, *last, *of_type).is_some_and(|i| {
                // Go's int arithmetic wraps (cascadia, so k6, never fails on a huge `b`).
                let i = i.wrapping_sub(*b);
                if *a == 0 {
                    i == 0
                } else {
                    i.wrapping_rem(*a) == 0 && i.wrapping_div(*a) >= 0
                }
            }),
            Simple::OnlyChild { of_type } => {
                is_element
                    && node.parent().is_some_and(|p| {
                        let name = tag(node);
                        p.children()
                            .filter(|c| tag(*c).is_some() && (!of_type || tag(*c) == name))
                            .count()
                            == 1
                    })
            }
            Simple::Input => {
                matches!(tag(node), Some("input" | "select" | "textarea" | "button"))
            }
            Simple::Empty => {
                is_element
                    && node.children().all(|c| match c.value() {
                        Node::Element(_) => false,
                        Node::Text(t) => blank(t),
                        _ => true,
                    })
            }
            Simple::Root => is_element && node.parent().is_some_and(|p| p.value().is_document()),
            Simple::Link => {
                matches!(tag(node), Some("a" | "area" | "link")) && has_attr(node, "href")
            }
            Simple::Lang(lang) => {
                let own = attr(node, "lang").is_some_and(|v| {
                    v == lang
                        || v.strip_prefix(lang.as_str())
                            .is_some_and(|r| r.starts_with('-'))
                });
                own || node.parent().is_some_and(|p| self.matches(p))
            }
            Simple::Enabled => match tag(node) {
                Some("a" | "area" | "link") => has_attr(node, "href"),
                Some("optgroup" | "menuitem" | "fieldset") => !has_attr(node, "disabled"),
                Some(t) if FORM_CONTROLS.contains(&t) => {
                    !has_attr(node, "disabled") && !in_disabled_fieldset(node)
                }
                _ => false,
            },
            Simple::Disabled => match tag(node) {
                Some("optgroup" | "menuitem" | "fieldset") => has_attr(node, "disabled"),
                Some(t) if FORM_CONTROLS.contains(&t) => {
                    has_attr(node, "disabled") || in_disabled_fieldset(node)
                }
                _ => false,
            },
            Simple::Checked => match tag(node) {
                Some("input" | "menuitem") => {
                    has_attr(node, "checked")
                        && attr(node, "type").is_some_and(|t| {
                            let t = t.to_ascii_lowercase();
                            t == "checkbox" || t == "radio"
                        })
                }
                Some("option") => has_attr(node, "selected"),
                _ => false,
            },
            Simple::Never => false,
        }
    }
}

/// Whether a node under `node` matches `g` (text nodes are tested, not entered).
fn has_descendant(node: N<'_>, g: &Group) -> bool {
    node.children()
        .any(|c| g.matches(c) || (c.value().is_element() && has_descendant(c, g)))
}

#[cfg(test)]
mod tests;
