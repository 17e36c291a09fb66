use ego_tree::NodeRef;
use scraper::{Html, Node};

use super::Selector;

const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en-GB"><head><title>Checkout</title></head>
<body class="woocommerce-checkout page">
<ul id="menu"><li id="m1" class="item first">Home</li><li id="m2" class="item">Shop</li><li id="m3" class="item">Cart</li><li id="m4" class="item last">Checkout</li></ul>
<form id="checkout" name="checkout" action="/checkout">
  <fieldset id="fs" disabled><legend id="lg">Billing <input id="in-legend"></legend><input id="in-fs" name="a"></fieldset>
  <input id="email" type="email" name="billing_email" data-x="Foo-bar">
  <input id="terms" type="checkbox" name="terms" checked>
  <input id="radio" type="RADIO" name="r">
  <select id="country"><option id="o1" value="GB" selected>UK</option><option id="o2" value="FR">France</option></select>
  <textarea id="notes"></textarea>
  <button id="place" type="submit" class="button alt" disabled>Place order</button>
  <p id="empty1">  </p><p id="empty2"><!-- c --></p><p id="full">Total: <b id="total">£12.50</b> incl. VAT</p>
</form>
<div id="links"><a id="a1" href="/cart">View cart</a><a id="a2">No href</a><span id="s1" lang="fr">Bonjour</span></div>
</body></html>"#;

/// The ids of the elements matching `sel`, in document order.
fn ids(sel: &str) -> Vec<String> {
    let html = Html::parse_document(PAGE);
    let s = Selector::lenient(sel);
    let root: NodeRef<'_, Node> = html.tree.root();
    root.descendants()
        .filter(|n| n.value().is_element() && s.matches(*n))
        .map(|n| {
            n.value()
                .as_element()
                .unwrap()
                .attr("id")
                .unwrap_or("-")
                .to_string()
        })
        .collect()
}

#[test]
fn cascadia_pseudo_classes() {
    assert_eq!(ids("button:contains('PLACE order')"), ["place"]);
    assert_eq!(ids("p:containsOwn('incl. vat')"), ["full"]);
    assert_eq!(ids("p:containsOwn('12.50')"), Vec::<String>::new());
    assert_eq!(ids("li:matches(^(Shop|Cart)$)"), ["m2", "m3"]);
    assert_eq!(ids("p:matchesOwn(Total)"), ["full"]);
    assert_eq!(ids("form:has(button[type=submit])"), ["checkout"]);
    assert_eq!(ids("fieldset:haschild(legend)"), ["fs"]);
    assert_eq!(ids(":input").len(), 8);
    assert_eq!(ids("p:empty"), ["empty1", "empty2"]);
    assert_eq!(ids(":root"), ["-"]);
    assert_eq!(ids("a:link"), ["a1"]);
    assert_eq!(ids("span:lang(fr), b:lang(en)"), ["total", "s1"]);
    assert_eq!(ids(":checked"), ["terms", "o1"]);
    assert_eq!(ids("input:disabled"), ["in-fs"]);
    assert_eq!(
        ids("input:enabled"),
        ["in-legend", "email", "terms", "radio"]
    );
    assert_eq!(ids("a:hover"), Vec::<String>::new());
}

#[test]
fn structural_pseudo_classes() {
    assert_eq!(ids("li:nth-child(2n+1)"), ["m1", "m3"]);
    assert_eq!(ids("li:nth-child(even)"), ["m2", "m4"]);
    assert_eq!(ids("li:nth-child(odd)"), ["m1", "m3"]);
    assert_eq!(ids("li:nth-last-child(1)"), ["m4"]);
    assert_eq!(ids("li:nth-child(-n+2)"), ["m1", "m2"]);
    assert_eq!(ids("p:nth-of-type(2)"), ["empty2"]);
    assert_eq!(ids("p:nth-last-of-type(1)"), ["full"]);
    assert_eq!(
        ids("option:first-of-type, option:last-of-type"),
        ["o1", "o2"]
    );
    assert_eq!(ids("b:only-child, legend:only-of-type"), ["lg", "total"]);
    assert_eq!(ids("li:not(.first, :last-child)"), ["m2", "m3"]);
    assert_eq!(ids("input:not([type]):not(fieldset > *)"), ["in-legend"]);
}

#[test]
fn attributes_and_combinators() {
    assert_eq!(ids("input[name=terms]"), ["terms"]);
    assert_eq!(ids("li[class~=item][class~=last]"), ["m4"]);
    assert_eq!(ids("[data-x|=Foo]"), ["email"]);
    assert_eq!(ids("[data-x|=foo i]"), ["email"]);
    assert_eq!(ids("input[name^=bill]"), ["email"]);
    assert_eq!(ids("input[name$=ms]"), ["terms"]);
    assert_eq!(ids("input[name*=ill]"), ["email"]);
    assert_eq!(ids("input[type=radio i]"), ["radio"]);
    assert_eq!(ids("input[type=radio]"), Vec::<String>::new());
    assert_eq!(ids("select > option[value!=GB]"), ["o2"]);
    assert_eq!(ids("input[name#=^(a|r)$]"), ["in-fs", "radio"]);
    assert_eq!(ids("#m1 + li"), ["m2"]);
    assert_eq!(ids("#m2 ~ li"), ["m3", "m4"]);
    assert_eq!(
        ids("body.woocommerce-checkout form#checkout > p b"),
        ["total"]
    );
    assert_eq!(
        ids("UL LI.Item"),
        Vec::<String>::new(),
        "classes are case-sensitive"
    );
    assert_eq!(ids("UL LI#m1"), ["m1"], "tags are not");
}

#[test]
fn invalid_selectors_match_nothing() {
    for bad in [
        "[[[",
        "a:contains(",
        "p::before",
        "a:nope",
        "li:nth-child(2x)",
        "a[href",
        ":is(a)",
        "a,",
        "",
    ] {
        assert!(Selector::parse(bad).is_err(), "{bad}");
        assert!(ids(bad).is_empty(), "{bad}");
    }
}

#[test]
fn nth_with_extreme_coefficients_wraps_as_k6() {
    // k6 1.1.0's `find(s).size()` on a list of three <li>, compared on #menu's first three.
    let count = |s: &str| {
        ids(s)
            .iter()
            .filter(|id| ["m1", "m2", "m3"].contains(&id.as_str()))
            .count()
    };
    assert_eq!(count("li:nth-child(n-9223372036854775807)"), 0);
    assert_eq!(count("li:nth-child(-n+9223372036854775807)"), 3);
    assert_eq!(
        count("li:nth-child(9223372036854775807n+9223372036854775807)"),
        0
    );
    assert_eq!(
        count("li:nth-child(-9223372036854775807n-9223372036854775807)"),
        1
    );
}
