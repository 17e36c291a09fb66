//! `k6/experimental/fs`, `k6/experimental/csv` and `k6/secrets` against k6: the same
//! scripts under both, each observation (values, error strings, keys) turned into a check
//! name, so any difference shows as differing checks.

use std::process::Command;

use super::{checks, console_lines, k6, run_k6, run_rk6};
use crate::{rk6, Dir};

/// Script lines that record observations with `see(label, value)` and `fails(label, f)`,
/// and a default function that turns each into a passing check.
const OBSERVE: &str = r#"
import { check } from 'k6';
const seen = [];
function see(label, v) { seen.push(label + ' ' + JSON.stringify(v)); }
async function fails(label, f) {
  try { see(label, await f()); }
  catch (e) { see(label + ' threw', [String(e), typeof e, e instanceof Error, Object.keys(e || {})]); }
}
export const options = { iterations: 1 };
export default function () { for (const s of seen) check(null, { [s]: () => true }); }
"#;

/// Runs `body` (after [`OBSERVE`]) under both tools in a directory holding `files`, and
/// compares exit codes and checks.
fn observe_both(name: &str, files: &[(&str, &[u8])], body: &str) {
    let Some(bin) = k6() else { return };
    let dir = Dir::new(name);
    std::fs::create_dir_all(dir.path("a-dir")).unwrap();
    for (n, data) in files {
        std::fs::write(dir.path(n), data).unwrap();
    }
    let script = dir.write("script.js", &format!("{OBSERVE}\n{body}"));
    let theirs = run_k6(&bin, &script, &dir);
    let ours = run_rk6(&script, &dir);
    assert_eq!(ours.code, theirs.code, "{name}: exit codes differ");
    let (ours, theirs) = (checks(&ours.export), checks(&theirs.export));
    assert!(
        theirs.len() > 3,
        "{name}: k6 observed too little: {theirs:?}"
    );
    assert_eq!(ours, theirs, "{name}: observations differ");
}

#[test]
fn fs_agrees_with_k6() {
    observe_both(
        "parity-fs",
        &[("data.txt", b"hello world\nline2\n"), ("empty.txt", b"")],
        r#"
import { open, SeekMode } from 'k6/experimental/fs';
import * as fsm from 'k6/experimental/fs';
const file = await open('data.txt');
// k6 builds SeekMode from a Go map: its key order varies from run to run.
see('seekmode', Object.entries(SeekMode).sort());
see('keys', Object.keys(file));
see('path', file.path.endsWith('/data.txt'));
see('stat', await file.stat());
const buf = new Uint8Array(5);
see('read', await file.read(buf));
see('bytes', Array.from(buf));
see('seek current', await file.seek(2, SeekMode.Current));
see('read rest', await file.read(new Uint8Array(100)));
see('eof', await file.read(new Uint8Array(100)));
see('seek end', await file.seek(0, SeekMode.End));
see('seek end -3', await file.seek(-3, SeekMode.End));
see('seek start', await file.seek(1, SeekMode.Start));
see('read empty buffer', await file.read(new Uint8Array(0)));
const view = new Uint8Array(new ArrayBuffer(8), 4, 2);
see('read view', [await file.read(view), Array.from(new Uint8Array(view.buffer))]);
const other = await open('./data.txt');
see('own offset', [await other.read(new Uint8Array(3)), await file.seek(0, SeekMode.Current)]);
const empty = await open('empty.txt');
see('empty', [await empty.stat(), await empty.read(new Uint8Array(4))]);
await fails('empty seek end', () => empty.seek(0, SeekMode.End));
await fails('seek negative', () => file.seek(-1, SeekMode.Start));
await fails('seek past end', () => file.seek(1, SeekMode.End));
await fails('seek before', () => file.seek(-100, SeekMode.Current));
await fails('seek beyond', () => file.seek(100, SeekMode.Start));
await fails('seek mode', () => file.seek(0, 9));
await fails('seek string', () => file.seek('1', SeekMode.Start));
await fails('seek float', () => file.seek(1.5, SeekMode.Start));
await fails('seek null', () => file.seek(null, SeekMode.Start));
await fails('seek no whence', () => file.seek(1));
await fails('read null', () => file.read(null));
await fails('read array', () => file.read([1, 2]));
await fails('read ArrayBuffer', () => file.read(new ArrayBuffer(3)));
await fails('read Int8Array', () => file.read(new Int8Array(3)));
await fails('missing', async () => { try { await open('nope.txt'); } catch (e) { throw String(e).replace(/"[^"]*\//, '"'); } });
await fails('dir', async () => { try { await open('a-dir'); } catch (e) { throw String(e).replace(/"[^"]*\//, '"'); } });
await fails('empty path', () => open(''));
await fails('null path', () => open(null));
await fails('no path', () => open());
"#,
    );
}

const PEOPLE: &[u8] = b"name,age\nalice,30\nbob,41\n\"car, ol\",\"5\"\"2\"\n";
const LINES: &[u8] = b"h1,h2\n1,2\n3,4\n5,6\n7,8\n";

#[test]
fn csv_agrees_with_k6() {
    observe_both(
        "parity-csv",
        &[
            ("people.csv", PEOPLE),
            ("lines.csv", LINES),
            (
                "crlf.csv",
                b"\xef\xbb\xbfname,age\r\n\"multi\r\nline\",1\r\n\r\nx,2\r\n",
            ),
            ("count.csv", b"a,b\nc,d,e\n"),
            ("bare.csv", b"a,b\"c\n"),
            ("quote.csv", b"\"a\"b,c\n"),
            ("unterminated.csv", b"a,b\n\"unterminated\n"),
            ("multiline-error.csv", b"x\n\"a\nb\"c\n"),
            ("blank.csv", b"a,b\n1,2\n\n  \n3,4\n"),
            ("bom-quote.csv", b"\xef\xbb\xbf\"q\",b\n"),
            ("semi.csv", b"a;b\n1;\"2;3\""),
            ("empty.csv", b""),
            ("dup.csv", b"k,k,v\n1,2,3\n"),
            ("utf8.csv", "é,ü\n€,\"日本\"\n".as_bytes()),
        ],
        r#"
import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
import * as csvm from 'k6/experimental/csv';
async function all(p) {
  const out = [];
  for (;;) { const x = await p.next(); if (x.done) { out.push(['done', x.value]); return out; } out.push(x.value); }
}
see('exports', Object.keys(csvm).filter((k) => k !== 'default'));
for (const f of ['people', 'lines', 'crlf', 'count', 'bare', 'quote', 'unterminated', 'multiline-error', 'blank', 'bom-quote', 'empty', 'dup', 'utf8']) {
  await fails('parser ' + f, async () => all(new csv.Parser(await open(f + '.csv'))));
}
// k6 1.1.0 crashes on a malformed file given to parse(), so only good ones here.
for (const f of ['people', 'lines', 'crlf', 'empty', 'utf8']) {
  await fails('parse ' + f, async () => { const a = await csv.parse(await open(f + '.csv')); return [Array.isArray(a), a.length, Array.from(a)]; });
}
await fails('parse objects', async () => Array.from(await csv.parse(await open('people.csv'), { asObjects: true })));
await fails('parse objects dup', async () => Array.from(await csv.parse(await open('dup.csv'), { asObjects: true })));
await fails('parser objects', async () => (await all(new csv.Parser(await open('people.csv'), { asObjects: true }))).map((r) => JSON.stringify(Object.entries(r).sort())));
await fails('semicolon', async () => Array.from(await csv.parse(await open('semi.csv'), { delimiter: ';' })));
await fails('two-char delimiter', async () => csv.parse(await open('semi.csv'), { delimiter: ';;' }));
await fails('skipFirstLine', async () => Array.from(await csv.parse(await open('lines.csv'), { skipFirstLine: true })));
await fails('fromLine 2', async () => Array.from(await csv.parse(await open('lines.csv'), { fromLine: 2 })));
await fails('toLine 2', async () => Array.from(await csv.parse(await open('lines.csv'), { toLine: 2 })));
await fails('from 1 to 3', async () => all(new csv.Parser(await open('lines.csv'), { fromLine: 1, toLine: 3 })));
await fails('from 3 to 3', async () => all(new csv.Parser(await open('lines.csv'), { fromLine: 3, toLine: 3 })));
await fails('skip and from 2', async () => all(new csv.Parser(await open('lines.csv'), { skipFirstLine: true, fromLine: 2 })));
await fails('from 9', async () => all(new csv.Parser(await open('lines.csv'), { fromLine: 9 })));
await fails('objects and skip', async () => all(new csv.Parser(await open('lines.csv'), { asObjects: true, skipFirstLine: true })));
await fails('objects and from', async () => all(new csv.Parser(await open('lines.csv'), { asObjects: true, fromLine: 1 })));
await fails('negative from', async () => all(new csv.Parser(await open('lines.csv'), { fromLine: -1 })));
await fails('parse a string', async () => csv.parse('x'));
await fails('parser without file', async () => new csv.Parser());
await fails('parser of null', async () => new csv.Parser(null));
await fails('parser of object', async () => new csv.Parser({}));
await fails('parser keys', async () => Object.keys(new csv.Parser(await open('people.csv'))));
await fails('next keys', async () => Object.keys(await new csv.Parser(await open('people.csv')).next()));
await fails('after a read', async () => { const f = await open('lines.csv'); await f.read(new Uint8Array(6)); return all(new csv.Parser(f)); });
await fails('immutable', async () => { const a = await csv.parse(await open('lines.csv')); a[0] = 1; });
await fails('error fields', async () => { try { await all(new csv.Parser(await open('multiline-error.csv'))); } catch (e) { return [e.start_line, e.line, e.column, String(e.err)]; } });
"#,
    );
}

/// A run's console lines and exit code with `flags`.
fn secrets_run(bin: Option<&str>, dir: &Dir, flags: &[&str]) -> (i32, Vec<String>, String) {
    let script = dir.path("s.js");
    let mut args = vec!["run", "-q", "--address", ""];
    args.extend_from_slice(flags);
    args.push(script.to_str().unwrap());
    let (code, stderr) = match bin {
        Some(bin) => {
            let out = Command::new(bin)
                .args(&args)
                .env("K6_NO_USAGE_REPORT", "true")
                .current_dir(&dir.0)
                .output()
                .expect("run k6");
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
        None => {
            let run = rk6(&args, &dir.0);
            (run.code, run.stderr)
        }
    };
    (code, console_lines(&stderr), stderr)
}

#[test]
fn secrets_agree_with_k6() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("parity-secrets");
    dir.write("s.txt", "k1=fromfile\nk2=a=b\n");
    dir.write("bad.txt", "k1=x\nbad\n");
    dir.write(
        "s.js",
        r#"
import secrets from 'k6/secrets';
export const options = { iterations: 1 };
async function t(label, f) {
  try { const v = await f(); console.log(label, 'ok', v, typeof v, v.length); }
  catch (e) { console.log(label, 'threw', String(e), typeof e, e instanceof Error, JSON.stringify(Object.keys(e))); }
}
export default async function () {
  console.log('keys', JSON.stringify(Object.keys(secrets)), JSON.stringify(Object.keys(secrets.source('x'))));
  for (const key of ['cool', 'k1', 'k2', 'nope', 5, undefined]) await t('get ' + key, () => secrets.get(key));
  for (const name of ['', 'default', 'other', 'mock', 'file', 'zzz', undefined, null]) {
    await t('source ' + name, () => secrets.source(name).get('cool'));
  }
  const v = await secrets.get('cool').catch(() => 'none');
  // As JSON text: k6 1.1 and rk6 (as k6 1.6+) print objects differently.
  console.log(`in text:${v}:${v}${v}`, JSON.stringify({ nested: v }));
  console.warn(v);
}
"#,
    );
    let flag_sets: &[&[&str]] = &[
        &[],
        &["--secret-source=mock=cool=s3cret,k1=v1"],
        &[
            "--secret-source=mock=name=other,cool=o1",
            "--secret-source=mock=default,cool=d1",
        ],
        &["--secret-source=file=s.txt"],
        &[
            "--secret-source=file=name=other,filename=s.txt",
            "--secret-source=mock=cool=m,name=m",
        ],
        &["--secret-source=mock=cool=  "],
        &["--secret-source=bogus=x"],
        &["--secret-source=mock=novalue"],
        &["--secret-source="],
        &["--secret-source=mock"],
        &["--secret-source=mock=a=1", "--secret-source=mock=b=2"],
        &[
            "--secret-source=mock=name=x,default,a=1",
            "--secret-source=mock=name=y,default,b=2",
        ],
        &["--secret-source=file=missing.txt"],
        &["--secret-source=file=bad.txt"],
        &["--secret-source=file=s.txt,foo=bar"],
    ];
    for flags in flag_sets {
        let (k6_code, k6_lines, k6_err) = secrets_run(Some(&bin), &dir, flags);
        let (code, lines, err) = secrets_run(None, &dir, flags);
        assert_eq!(
            code, k6_code,
            "{flags:?}: exit codes differ\nk6: {k6_err}\nrk6: {err}"
        );
        assert_eq!(lines, k6_lines, "{flags:?}: console lines differ");
        if k6_code == 255 {
            let msg = |e: &str| {
                e.lines()
                    .find(|l| l.contains("level=error"))
                    .and_then(|l| l.split_once("msg=").map(|(_, m)| m.to_string()))
            };
            assert_eq!(msg(&err), msg(&k6_err), "{flags:?}: errors differ");
        }
    }
}

/// A checkout page like the ones load tests scrape (WooCommerce-style), for `k6/html`.
const CHECKOUT_PAGE: &str = r#"<!DOCTYPE html>
<html lang="en-GB"><head><title>Checkout</title><meta name="csrf" content="tok-123"></head>
<body class="woocommerce-checkout page">
<ul id="menu"><li id="m1" class="item first">Home</li><li id="m2" class="item">Shop</li><li id="m3" class="item">Cart</li><li id="m4" class="item last">Checkout</li></ul>
<form id="checkout" name="checkout" action="/checkout">
  <fieldset id="fs" disabled><legend id="lg">Billing <input id="in-legend"></legend><input id="in-fs" name="a"></fieldset>
  <input id="email" type="email" name="billing_email" data-x="Foo-bar">
  <input id="terms" type="checkbox" name="terms" checked>
  <input id="radio" type="RADIO" name="r">
  <input type="hidden" name="woocommerce-process-checkout-nonce" value="n0nce">
  <select id="country"><option id="o1" value="GB" selected>UK</option><option id="o2" value="FR">France</option></select>
  <textarea id="notes"></textarea>
  <button id="place" type="submit" class="button alt" disabled>Place order</button>
  <p id="empty1">  </p><p id="empty2"><!-- c --></p><p id="full">Total: <b id="total">£12.50</b> incl. VAT</p>
</form>
<div id="links"><a id="a1" href="/cart">View cart</a><a id="a2">No href</a><span id="s1" lang="fr">Bonjour</span></div>
<table id="cart"><tr><td class="product-name">Hoodie</td><td class="product-total"><span class="amount">£10.00</span></td></tr>
<tr><td class="product-name">Cap</td><td class="product-total"><span class="amount">£2.50</span></td></tr></table>
</body></html>"#;

#[test]
fn html_selectors_agree_with_k6() {
    let selectors = [
        "button:contains('PLACE order')",
        "p:containsOwn('incl. vat')",
        "p:containsOwn('12.50')",
        ":contains('Hoodie')",
        "li:matches(^(Shop|Cart)$)",
        "p:matchesOwn(Total)",
        "form:has(button[type=submit])",
        "tr:has(td:contains('Cap')) .amount",
        "fieldset:haschild(legend)",
        ":input",
        "p:empty",
        ":root",
        "a:link",
        "span:lang(fr), b:lang(en)",
        ":checked",
        "input:disabled",
        "input:enabled",
        "a:hover",
        "li:nth-child(2n+1)",
        "li:nth-child(even)",
        "li:nth-child(odd)",
        "li:nth-last-child(1)",
        "li:nth-child(-n+2)",
        "p:nth-of-type(2)",
        "p:nth-last-of-type(1)",
        "option:first-of-type, option:last-of-type",
        "b:only-child, legend:only-of-type",
        "li:not(.first, :last-child)",
        "input:not([type]):not(fieldset > *)",
        "input[name=terms]",
        "li[class~=item][class~=last]",
        "[data-x|=Foo]",
        "[data-x|=foo i]",
        "input[name^=bill]",
        "input[name$=ms]",
        "input[name*=ill]",
        "input[type=radio i]",
        "input[type=radio]",
        "select > option[value!=GB]",
        "input[name#=^(a|r)$]",
        "#m1 + li",
        "#m2 ~ li",
        "body.woocommerce-checkout form#checkout > p b",
        "UL LI.Item",
        "UL LI#m1",
        "input[name='woocommerce-process-checkout-nonce']",
        "[[[",
        "a:contains(",
        "p::before",
        "a:nope",
        "li:nth-child(2x)",
        ":is(a)",
        "a,",
        "",
    ];
    let list = serde_json::to_string(&selectors[..]).unwrap();
    let page = serde_json::to_string(CHECKOUT_PAGE).unwrap();
    observe_both(
        "parity-html-selectors",
        &[],
        &format!(
            r#"
import {{ parseHTML }} from 'k6/html';
const doc = parseHTML({page});
const describe = (s) => s.toArray().map((e) => e.get(0).nodeType === 3 ? '#text:' + e.text().trim() : (e.attr('id') || e.get(0).nodeName()));
for (const sel of {list}) {{
  await fails('find ' + sel, () => describe(doc.find(sel)));
}}
for (const sel of ['li:contains(Shop)', '[[[', 'li:nth-child(odd)']) {{
  const li = doc.find('li');
  await fails('filter ' + sel, () => describe(li.filter(sel)));
  await fails('not ' + sel, () => describe(li.not(sel)));
  await fails('is ' + sel, () => li.is(sel));
  await fails('closest ' + sel, () => describe(doc.find('#total').closest(sel)));
}}
await fails('nonce', () => doc.find('input[name="woocommerce-process-checkout-nonce"]').attr('value'));
await fails('csrf', () => doc.find('meta[name=csrf]').attr('content'));
await fails('amounts', () => doc.find('tr:has(.product-name:contains("hoodie")) .amount').text());
await fails('querySelectorAll', () => doc.find('#checkout').get(0).querySelectorAll('input:checked, option:checked').length);
await fails('matches', () => doc.find('#place').get(0).matches('button:disabled'));
"#
        ),
    );
}
