//! k6/html end to end: a page with forms and a link served in-process, read with
//! `parseHTML` and `res.html()`, followed with `submitForm` and `clickLink`.

use crate::support::recorder::{Recorder, Reply, Seen};
use crate::{metric, run_export, Dir};

const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Shop</title></head><body>
<a id="next" href="next?x=1">next page</a>
<ul><li class="item" data-price="1.5">apple</li><li class="item" data-price="2">banana</li><li class="item" data-price="0.5">cherry</li></ul>
<form id="order" action="/submit" method="post">
  <input type="hidden" name="token" value="t0k">
  <input type="text" name="qty" value="1">
  <select name="size"><option value="s">S</option><option value="m" selected>M</option></select>
  <textarea name="note">hello world</textarea>
  <input type="checkbox" name="gift" value="yes">
  <input type="submit" name="go" value="Order">
  <input type="submit" name="later" value="Later">
</form>
<form id="search" action="search?dropped=1"><input name="q" value="fruit"><input name="page" value="1"></form>
</body></html>"#;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A recording server for the shop page and the requests its forms and link lead to.
fn page_server() -> Recorder {
    Recorder::start(|req| {
        let page = match (req.method.as_str(), req.path()) {
            ("GET", "/page") => Some(PAGE.to_owned()),
            ("POST", "/submit") => Some(format!(
                "<html><body><pre id=\"got\">{}</pre><p id=\"type\">{}</p></body></html>",
                escape(&req.text()),
                escape(req.header("content-type"))
            )),
            ("GET", "/search") | ("GET", "/next") => Some(format!(
                "<html><body><h1>{}</h1><p id=\"target\">{}</p><p id=\"hdr\">{}</p></body></html>",
                &req.path()[1..],
                escape(&req.target),
                escape(req.header("x-test"))
            )),
            _ => None,
        };
        let (status, page) = page.map_or((404, "<p>not found</p>".to_owned()), |p| (200, p));
        Reply::new(status, "text/html; charset=utf-8", page)
    })
}

/// The script run under rk6 here and under k6 in the parity test.
fn script(base: &str) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
import {{ parseHTML }} from 'k6/html';
export const options = {{ iterations: 1 }};
const BASE = '{base}';
export default function () {{
  const res = http.get(`${{BASE}}/page`);
  const doc = res.html();
  let total = 0;
  doc.find('li.item').each((i, el) => {{ total += Number(el.getAttribute('data-price')); }});
  check(doc, {{
    'title': (d) => d.find('title').text() === 'Shop',
    'three items': (d) => d.find('li.item').size() === 3,
    'names by map': (d) => d.find('li').map((i, s) => s.text()).join(',') === 'apple,banana,cherry',
    'prices by each': () => total === 4,
    'eq and last': (d) => d.find('li').eq(1).text() === 'banana' && d.find('li').last().text() === 'cherry',
    'data': (d) => d.find('li').first().data('price') === 1.5,
    'serialize': (d) => d.find('#order').serialize() === 'note=hello+world&qty=1&size=m&token=t0k',
    'serializeObject': (d) => {{ const o = d.find('#search').serializeObject(); return o.q === 'fruit' && o.page === '1'; }},
    'val': (d) => d.find('select[name=size]').val() === 'm',
    'toArray': (d) => d.find('li').toArray().length === 3,
    'get element': (d) => d.find('li').get(2).textContent() === 'cherry',
    'selection url': (d) => d.url === res.url,
    'element href': (d) => d.find('a#next').get(0).href() === `${{BASE}}/next?x=1`,
    'form action': (d) => d.find('#order').get(0).action() === `${{BASE}}/submit`,
  }});
  check(res, {{
    'html(selector)': (r) => r.html('a#next').attr('href') === 'next?x=1',
    'parseHTML of the body': (r) => parseHTML(r.body).find('form').size() === 2,
  }});
  const posted = res.submitForm({{ formSelector: '#order', fields: {{ qty: '3' }} }});
  check(posted, {{
    'post form status': (r) => r.status === 200,
    'post form url': (r) => r.url === `${{BASE}}/submit`,
    'post form body': (r) => r.html('#got').text() === 'go=Order&note=hello+world&qty=3&size=m&token=t0k',
    'post form type': (r) => r.html('#type').text() === 'application/x-www-form-urlencoded',
  }});
  const later = res.submitForm({{ formSelector: '#order', submitSelector: '[name=later]', submitSelectorAttribute: 'name' }});
  check(later, {{ 'chosen submit button': (r) => r.html('#got').text() === 'later=Later&note=hello+world&qty=1&size=m&token=t0k' }});
  let noForm = '';
  try {{ res.submitForm({{ formSelector: '#none' }}); }} catch (e) {{ noForm = String(e); }}
  check(noForm, {{ 'no form throws': (m) => m.includes("no form found for selector '#none' in response") }});
  const searched = res.submitForm({{ formSelector: '#search', fields: {{ q: 'a b' }}, params: {{ headers: {{ 'X-Test': 'form' }} }} }});
  check(searched, {{
    'get form url': (r) => r.url === `${{BASE}}/search?page=1&q=a+b`,
    'get form params': (r) => r.html('#hdr').text() === 'form',
  }});
  const next = res.clickLink({{ params: {{ headers: {{ 'X-Test': 'link' }} }} }});
  check(next, {{
    'link followed': (r) => r.url === `${{BASE}}/next?x=1`,
    'link page': (r) => r.html('h1').text() === 'next',
    'link params': (r) => r.html('#hdr').text() === 'link',
  }});
  const picked = res.clickLink({{ selector: 'a#next' }});
  check(picked, {{ 'link by selector': (r) => r.status === 200 }});
  let missing = '';
  try {{ res.clickLink({{ selector: 'a.none' }}); }} catch (e) {{ missing = String(e); }}
  check(missing, {{ 'no link throws': (m) => m.includes('a.none') }});
}}
"#
    )
}

/// Checks in the script above.
const CHECKS: f64 = 29.0;

#[test]
fn forms_links_and_selections_work_against_a_page() {
    let srv = page_server();
    let dir = Dir::new("html");
    let (run, export) = run_export(&dir, &script(&srv.url("")), &[]);
    run.assert_code(0);
    let checks = metric(&export, "checks");
    assert_eq!(
        (checks["passes"].as_f64(), checks["fails"].as_f64()),
        (Some(CHECKS), Some(0.0)),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let seen = srv.seen();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    assert_eq!(posts.len(), 2, "{seen:?}");
    assert!(posts.iter().all(|p| p.target == "/submit"));
    assert_eq!(
        posts[0].text(),
        "go=Order&note=hello+world&qty=3&size=m&token=t0k"
    );
    assert_eq!(
        posts[1].text(),
        "later=Later&note=hello+world&qty=1&size=m&token=t0k"
    );
    let get = |t: &str| {
        seen.iter()
            .filter(|s| s.method == "GET" && s.target == t)
            .count()
    };
    assert_eq!(get("/search?page=1&q=a+b"), 1, "{seen:?}");
    assert_eq!(get("/next?x=1"), 2, "{seen:?}");
    let link = seen.iter().find(|s| s.target == "/next?x=1").unwrap();
    assert_eq!(link.header("x-test"), "link");
}

#[test]
fn html_script_agrees_with_k6() {
    let srv = page_server();
    crate::parity::compare("html", &script(&srv.url("")));
}

/// cascadia's selectors in a script, as a checkout journey uses them; an invalid selector
/// gives an empty selection instead of an exception, as in k6.
#[test]
fn cascadia_selectors_work_in_scripts() {
    let dir = Dir::new("html-cascadia");
    let (run, export) = run_export(
        &dir,
        r#"
import { parseHTML } from 'k6/html';
import { check } from 'k6';
export const options = { iterations: 1 };
const page = `<form><button type="submit" disabled>Place order</button><input type="checkbox" name="terms" checked>
<table><tr><td class="name">Hoodie</td><td><span class="amount">£10.00</span></td></tr></table></form>`;
export default function () {
  const doc = parseHTML(page);
  check(doc, {
    'contains': (d) => d.find('button:contains("place ORDER")').size() === 1,
    'has': (d) => d.find('tr:has(td:contains(Hoodie)) .amount').text() === '£10.00',
    'checked': (d) => d.find('input:checked').attr('name') === 'terms',
    'disabled': (d) => d.find('button:disabled').size() === 1,
    'not equal': (d) => d.find('input[name!=terms]').size() === 0,
    'invalid is empty': (d) => d.find('[[[').size() === 0,
  });
}
"#,
        &[],
    );
    run.assert_code(0);
    assert_eq!(metric(&export, "checks")["fails"], 0, "{}", run.stderr);
    assert_eq!(metric(&export, "checks")["passes"], 6, "{}", run.stderr);
}
