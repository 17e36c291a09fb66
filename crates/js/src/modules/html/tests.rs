//! k6/html in a bare Boa context: the expected values are what k6 1.1.0 printed for the same
//! scripts and fixtures.

use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsString, NativeFunction, Source};

const PAGE: &str = r#"<html><head><title>T1</title></head><body>
<div id="a" class="c1 c2" data-foo="bar" data-num="12" data-obj='{"x":1}' data-some-thing="q">Hello <b id="bb">bold</b> world<!-- cmt --></div>
<ul><li class="x">one</li><li>two</li><li class="x">three</li></ul>
<form id="f" action="/submit" method="post">
 <input type="text" name="user" value="bob">
 <input type="checkbox" name="cb" checked>
 <input type="checkbox" name="cb2" value="v2" checked="checked">
 <input type="radio" name="r" value="r1"><input type="radio" name="r" value="r2" checked>
 <select name="s"><option value="o1">O1</option><option selected>O2</option></select>
 <select name="m" multiple><option value="a" selected>A</option><option value="b" selected>B</option></select>
 <textarea name="t">tx</textarea>
 <input type="submit" name="go" value="Go">
 <button>btn</button>
</form>
<a href="/next?x=1">next</a></body></html>"#;

/// Evaluates `body` with `doc` bound to `parseHTML(PAGE)` and returns the JSON of its
/// result (undefined written as "<undef>").
fn eval(body: &str) -> String {
    eval_on(PAGE, body)
}

/// Like [`eval`] on the page `page`; elements are written as `EL:tag#id`.
fn eval_on(page: &str, body: &str) -> String {
    let mut ctx = Context::default();
    let realm = ctx.realm().clone();
    let parse = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(super::parse_html))
        .name(js_string!("parseHTML"))
        .length(1)
        .build();
    ctx.register_global_property(js_string!("parseHTML"), parse, Attribute::all())
        .unwrap();
    ctx.register_global_property(js_string!("PAGE"), JsString::from(page), Attribute::all())
        .unwrap();
    let script = format!(
        "(() => {{ const doc = parseHTML(PAGE); const r = (() => {{ {body} }})();
         return JSON.stringify(r, (k, v) => v === undefined ? '<undef>' :
           (v && typeof v === 'object' && typeof v.nodeName === 'function') ? 'EL:' + v.nodeName() + '#' + v.id() : v); }})()"
    );
    match ctx.eval(Source::from_bytes(&script)) {
        Ok(v) => v.to_string(&mut ctx).unwrap().to_std_string_escaped(),
        Err(e) => panic!("{body}: {}", e),
    }
}

#[test]
fn find_text_html_attr() {
    assert_eq!(
        eval("return [doc.size(), doc.find('li').size(), doc.find('li').text(), doc.find('#a').text()]"),
        r#"[1,3,"onetwothree","Hello bold world"]"#
    );
    assert_eq!(
        eval("return [doc.find('#a').html(), doc.find('nope').html(), doc.find('li').html()]"),
        r#"["Hello <b id=\"bb\">bold</b> world<!-- cmt -->","","one"]"#
    );
    assert_eq!(
        eval("const a = doc.find('#a'); return [a.attr('class'), a.attr('nope'), a.attr('nope', 'd'), doc.find('x').attr('y')]"),
        r#"["c1 c2","<undef>","d","<undef>"]"#
    );
    assert_eq!(eval("return doc.find('title').text()"), r#""T1""#);
}

#[test]
fn val_and_data() {
    assert_eq!(
        eval("const v = s => doc.find(s).val(); return [v('[name=user]'), v('[name=cb]'), v('[name=cb2]'), v('[name=s]'), v('[name=m]'), v('[name=t]'), v('li'), v('nope'), v('button')]"),
        r#"["bob","on","v2","O2",["a","b"],"tx","<undef>","<undef>",""]"#
    );
    assert_eq!(
        eval("const a = doc.find('#a'); return [a.data(), a.data('num'), a.data('someThing'), a.data('nope'), doc.find('li').data(), doc.find('ul').data()]"),
        r#"[{"foo":"bar","num":12,"obj":{"x":1},"someThing":"q"},12,"q","<undef>",{},"<undef>"]"#
    );
}

#[test]
fn positions_and_iteration() {
    assert_eq!(
        eval("const li = doc.find('li'); return [li.eq(1).text(), li.eq(-1).text(), li.eq(5).size(), li.first().text(), li.last().text(), li.slice(1).text(), li.slice(0, 2).text(), li.slice(-1).text()]"),
        r#"["two","three",0,"one","three","twothree","onetwo","three"]"#
    );
    assert_eq!(
        eval("const li = doc.find('li'); return [li.map((i, s) => i + ':' + s.text()), li.map(i => [i, i]), li.toArray().map(s => s.text())]"),
        r#"[["0:one","1:two","2:three"],[[0,0],[1,1],[2,2]],["one","two","three"]]"#
    );
    assert_eq!(
        eval("const out = []; const r = doc.find('li').each((i, el) => out.push(i, el.textContent())); return [out, r.size()]"),
        r#"[[0,"one",1,"two",2,"three"],3]"#
    );
    assert_eq!(
        eval("const li = doc.find('li'); return [typeof li.get(0), li.get().length, li.get(9), li.get(-1).textContent(), li.eq(1).index(), li.end().size()]"),
        r#"["object",3,"<undef>","three",1,1]"#
    );
}

#[test]
fn filtering_and_traversal() {
    assert_eq!(
        eval("const li = doc.find('li'); return [li.filter('.x').size(), li.filter((i) => i == 1).text(), li.not('.x').text(), li.is('.x'), li.is('b'), li.has('b').size(), doc.find('div').has('b').size(), li.filter(li.eq(2)).text()]"),
        r#"[2,"two","two",true,false,0,1,"three"]"#
    );
    assert_eq!(
        eval("const li = doc.find('li'); return [li.eq(0).next().text(), li.eq(0).nextAll().text(), li.eq(2).prev().text(), li.eq(2).prevAll().text(), li.eq(1).siblings().text(), li.eq(0).nextUntil('.x').text(), li.eq(2).prevUntil('.x').text()]"),
        r#"["two","twothree","two","twoone","onethree","two","two"]"#
    );
    assert_eq!(
        eval("const b = doc.find('b'); return [b.parent().attr('id'), b.parents().size(), b.closest('body').size(), doc.find('li').parent().size(), b.parentsUntil('html').size(), doc.find('ul').children().size(), doc.find('ul').children('.x').size(), doc.find('#a').contents().size()]"),
        r#"["a",3,1,1,2,3,2,4]"#
    );
    assert_eq!(
        eval("return [doc.find('li').add('b').size(), doc.find('a').url]"),
        r#"[4,""]"#
    );
}

#[test]
fn forms_serialize_like_k6() {
    assert_eq!(
        eval("return doc.find('form').serialize()"),
        r#""cb2=v2&m=a&m=b&s=O2&t=tx&user=bob""#
    );
    assert_eq!(
        eval("return doc.find('form').serializeArray()"),
        r#"[{"name":"user","value":"bob"},{"name":"cb2","value":"v2"},{"name":"s","value":"O2"},{"name":"m","value":["a","b"]},{"name":"t","value":"tx"}]"#
    );
    assert_eq!(
        eval("return doc.find('form').serializeObject()"),
        r#"{"user":"bob","cb2":"v2","s":"O2","m":["a","b"],"t":"tx"}"#
    );
}

#[test]
fn elements() {
    assert_eq!(
        eval("const el = doc.find('#a').get(0); return [el.nodeName(), el.nodeType(), el.nodeValue(), el.id(), el.className(), el.classList(), el.childElementCount(), el.childNodes().length, el.firstChild().nodeName(), el.firstChild().nodeValue(), el.hasAttribute('data-foo'), el.getAttribute('nope'), el.toString(), el.namespaceURI()]"),
        r##"["div",1,"<undef>","a","c1 c2",["c1","c2"],1,4,"#text","Hello ",true,"<undef>","[object html.Node]","http://www.w3.org/1999/xhtml"]"##
    );
    assert_eq!(
        eval("const el = doc.find('#a').get(0); const b = el.querySelector('b'); return [b.id(), b.parentNode().id(), b.previousSibling().nodeValue(), b.nextSibling().nodeValue(), el.contains(b), b.contains(el), el.isSameNode(doc.find('#a').get(0)), el.ownerDocument().nodeName(), el.ownerDocument().nodeType(), el.attributes().id.value, el.matches('div.c1'), el.innerHTML() === doc.find('#a').html(), el.selection().attr('id')]"),
        r##"["bb","a","Hello "," world",true,false,true,"#document",9,"a",true,true,"a"]"##
    );
    assert_eq!(
        eval("const c = doc.find('#a').contents().get(3); return [c.nodeType(), c.nodeValue(), doc.find('p').get(0)]"),
        r#"[8,"","<undef>"]"#
    );
}

#[test]
fn prototypes_are_made_once_per_context() {
    assert_eq!(
        eval("const P = Object.getPrototypeOf; const a = parseHTML('<a>x</a><a>y</a><p>z</p>'); const els = a.find('a').get(); return [P(doc) === P(a.find('a')), P(els[0]) === P(els[1]), P(P(els[0])) === P(a.find('p').get(0)), typeof a.find('p').get(0).href]"),
        r#"[true,true,true,"undefined"]"#
    );
}

#[test]
fn cascadia_selectors_match_and_invalid_ones_match_nothing() {
    // scraper alone cannot parse `:contains` (rk6 used to throw); k6's cascadia can, and
    // an invalid selector gives an empty selection in k6, not an error.
    assert_eq!(
        eval("const d = parseHTML('<div><a>Add to cart</a><a>x</a></div>'); return [d.find('a:contains(\"add TO\")').size(), d.find('[[[').size(), d.find('a').not('[[[').size()]"),
        "[1,0,2]"
    );
}

const TAGS: &str = r#"<body><a id="a1" href="http://u:p@ex.com:8080/p/q?y=1#h" rel="nofollow x" download="f">link text</a><a id="a2" href="/rel">r</a><a id="a3">none</a>
<form id="f" action="/act"><input id="i1" name="n" value="v" maxlength="5" checked disabled><input id="i2"><button id="b1">b</button><select id="s1" name="s"><option id="o1" value="1">One</option><option id="o2" selected>Two</option></select><textarea id="t1">tt</textarea><label id="l1" for="i1">L</label></form><form id="f2"></form>
<img id="im" src="a.png" width="10"><meta id="m" name="description" content="c"><script id="sc" src="s.js">var x;</script><ol id="ol" start="3"><li id="li" value="7">x</li></ol><table id="tb"><tr id="tr"><td id="td" colspan="2">c</td></tr></table><title>T</title></body>"#;

#[test]
fn tag_specific_methods() {
    let g = "const g = (id) => doc.find('#' + id).get(0);";
    let a = format!("{g} const a = g('a1'); return ['href','hash','host','hostname','pathname','port','protocol','search','origin','username','password','text','target','rel','relList','download','type'].map(m => a[m]())");
    assert_eq!(
        eval_on(TAGS, &a),
        r##"["http://u:p@ex.com:8080/p/q?y=1#h","#h","ex.com:8080","ex.com","/p/q","8080","http","?y=1","http://ex.com:8080","u","p","link text","","nofollow x",["nofollow","x"],"f",""]"##
    );
    assert_eq!(
        eval_on(
            TAGS,
            &format!(
                "{g} return [g('a2').href(), g('a2').host(), g('a3').href(), typeof g('li').href]"
            )
        ),
        r#"["/rel","","","undefined"]"#
    );
    let input = format!("{g} const i = g('i1'); return ['name','value','type','checked','disabled','maxLength','size','form','defaultValue','defaultChecked','autofocus','placeholder','required','min','step','tabIndex','labels','multiple','readonly','height'].map(m => i[m]()).concat(['name','value','type','checked','maxLength'].map(m => g('i2')[m]()))");
    assert_eq!(
        eval_on(TAGS, &input),
        r##"["n","v","text",true,true,5,0,"EL:form#f","v",true,false,"",false,"","",0,["EL:label#l1"],false,false,"","","","text",false,-1]"##
    );
    assert_eq!(
        eval_on(TAGS, &format!("{g} const b = g('b1'); const f = g('f'); return [b.type(), b.value(), b.form(), b.formMethod(), b.formAction(), f.action(), f.method(), f.enctype(), f.length(), f.elements(), f.autocomplete(), g('f2').action()]")),
        r##"["submit","b","EL:form#f","get","/act","/act","get","application/x-www-form-urlencoded",5,["EL:input#i1","EL:input#i2","EL:button#b1","EL:select#s1","EL:textarea#t1"],"on",""]"##
    );
    assert_eq!(
        eval_on(TAGS, &format!("{g} const s = g('s1'); return [s.name(), s.value(), s.length(), s.options(), s.selectedIndex(), s.selectedOptions(), s.size(), g('o1').value(), g('o1').text(), g('o1').label(), g('o1').selected(), g('o2').selected(), g('o2').value(), g('o2').index()]")),
        r##"["s","Two",2,["EL:option#o1","EL:option#o2"],1,["EL:option#o2"],1,"1","One","One",false,true,"Two",1]"##
    );
    assert_eq!(
        eval_on(TAGS, &format!("{g} return [g('t1').value(), g('t1').type(), g('t1').rows(), g('l1').htmlFor(), g('l1').control(), g('im').src(), g('im').width(), g('im').height(), g('m').content(), g('m').httpEquiv(), g('sc').src(), g('sc').text(), g('ol').start(), g('li').value(), g('td').colSpan(), g('td').rowSpan(), g('td').cellIndex(), g('tr').cells().length, doc.find('title').get(0).text()]")),
        r##"["","textarea",0,"i1","EL:input#i1","a.png",10,0,"c","content-type","s.js","var x;",3,7,2,1,0,1,"T"]"##
    );
}

#[test]
fn unreproduced_tag_methods_throw() {
    let out = eval_on(
        TAGS,
        "try { doc.find('#s1').get(0).type(); return 'no error'; } catch (e) { return String(e); }",
    );
    assert!(
        out.contains("select element method type() is not supported by rk6 yet"),
        "{out}"
    );
}

/// `Selection.single(selector)`, k6 2.1 (release notes v2.1.0, #6002; k6-docs
/// javascript-api/k6-html/selection/selection-single): at most one element, the first
/// `find` gives; `end()` leads back to the selection it was called on.
#[test]
fn single_is_the_first_match_of_find() {
    assert_eq!(
        eval("const s = doc.single('li'); return [s.size(), s.text(), doc.single('li.x').text(), doc.find('ul').single('li:last-child').text()]"),
        r#"[1,"one","one","three"]"#
    );
    assert_eq!(
        eval("const s = doc.find('li'); return [s.single('b').size(), doc.single('nope').size(), doc.single('[[bad').size(), doc.find('#a').single('b').attr('id')]"),
        r#"[0,0,0,"bb"]"#
    );
    assert_eq!(
        eval("const ul = doc.find('ul'); return ul.single('li').end().size() === 1 && ul.single('li').end().get(0).nodeName() === 'ul'"),
        "true"
    );
}
