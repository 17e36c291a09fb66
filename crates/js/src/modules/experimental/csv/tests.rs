use serde_json::json;

use crate::test_js::run;

fn dir_with(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rk6-csv-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (n, body) in files {
        std::fs::write(dir.join(n), body).unwrap();
    }
    dir
}

/// Runs `body` with `open` and `csv` imported and `D` the directory of `files`.
fn script(name: &str, files: &[(&str, &str)], body: &str) -> serde_json::Value {
    let dir = dir_with(name, files);
    let out = run(&format!(
        "import {{ open }} from 'k6/experimental/fs';
         import csv from 'k6/experimental/csv';
         const D = '{}';
         const r = {{}};
         async function all(p) {{ const out = []; for (;;) {{ const x = await p.next(); if (x.done) {{ out.push(['done', x.value]); return out; }} out.push(x.value); }} }}
         async function fails(f) {{ try {{ await f(); return 'no error'; }} catch (e) {{ return String(e); }} }}
         {body}
         export const options = r;",
        dir.display()
    ))
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

const LINES: &str = "h1,h2\n1,2\n3,4\n5,6\n7,8\n";
const PEOPLE: &str = "name,age\nalice,30\nbob,41\n\"car, ol\",\"5\"\"2\"\n";

#[test]
fn parse_gives_a_shared_array_of_records() {
    let out = script(
        "parse",
        &[("p.csv", PEOPLE), ("l.csv", LINES)],
        "const a = await csv.parse(await open(D + '/p.csv'));
         r.rows = Array.from(a); r.isArray = Array.isArray(a);
         r.immutable = await fails(() => { a[0] = 1; });
         r.objects = Array.from(await csv.parse(await open(D + '/p.csv'), { asObjects: true }));
         r.skip = Array.from(await csv.parse(await open(D + '/l.csv'), { skipFirstLine: true }));
         r.from2 = Array.from(await csv.parse(await open(D + '/l.csv'), { fromLine: 2 }));
         r.to2 = Array.from(await csv.parse(await open(D + '/l.csv'), { toLine: 2 }));",
    );
    assert_eq!(
        out["rows"],
        json!([
            ["name", "age"],
            ["alice", "30"],
            ["bob", "41"],
            ["car, ol", "5\"2"]
        ])
    );
    assert_eq!(out["isArray"], json!(true));
    assert_eq!(
        out["immutable"],
        json!("TypeError: SharedArray is immutable")
    );
    assert_eq!(
        out["objects"],
        json!([{"age": "30", "name": "alice"}, {"age": "41", "name": "bob"}, {"age": "5\"2", "name": "car, ol"}])
    );
    assert_eq!(
        out["skip"],
        json!([["1", "2"], ["3", "4"], ["5", "6"], ["7", "8"]])
    );
    assert_eq!(out["from2"], json!([["3", "4"], ["5", "6"], ["7", "8"]]));
    assert_eq!(out["to2"], json!([["h1", "h2"], ["1", "2"], ["3", "4"]]));
}

#[test]
fn parser_reads_one_record_at_a_time() {
    let out = script(
        "parser",
        &[("p.csv", PEOPLE), ("l.csv", LINES), ("bad.csv", "a,b\nc,d,e\n")],
        "r.rows = await all(new csv.Parser(await open(D + '/p.csv')));
         r.objects = await all(new csv.Parser(await open(D + '/p.csv'), { asObjects: true }));
         r.window = await all(new csv.Parser(await open(D + '/l.csv'), { fromLine: 1, toLine: 3 }));
         const f = await open(D + '/l.csv'); await f.read(new Uint8Array(6));
         r.afterRead = await all(new csv.Parser(f));
         r.keys = Object.keys(new csv.Parser(await open(D + '/l.csv')));
         r.bad = await fails(async () => all(new csv.Parser(await open(D + '/bad.csv'))));
         try { await all(new csv.Parser(await open(D + '/bad.csv'))); } catch (e) { r.badKeys = Object.keys(e); r.line = e.line; }
         r.semi = await all(new csv.Parser(await open(D + '/l.csv'), { delimiter: ';' }));",
    );
    assert_eq!(
        out["rows"],
        json!([
            ["name", "age"],
            ["alice", "30"],
            ["bob", "41"],
            ["car, ol", "5\"2"],
            ["done", []]
        ])
    );
    assert_eq!(
        out["objects"],
        json!([{"name": "alice", "age": "30"}, {"name": "bob", "age": "41"}, {"name": "car, ol", "age": "5\"2"}, ["done", []]])
    );
    assert_eq!(
        out["window"],
        json!([["1", "2"], ["3", "4"], ["5", "6"], ["done", []]])
    );
    assert_eq!(
        out["afterRead"],
        json!([["1", "2"], ["3", "4"], ["5", "6"], ["7", "8"], ["done", []]])
    );
    assert_eq!(out["keys"], json!(["next"]));
    assert_eq!(
        out["bad"],
        json!("record on line 2: wrong number of fields")
    );
    assert_eq!(
        out["badKeys"],
        json!(["start_line", "line", "column", "err", "error", "unwrap"])
    );
    assert_eq!(out["line"], json!(2));
    assert_eq!(out["semi"][0], json!(["h1,h2"]));
}

#[test]
fn option_and_argument_errors_are_k6s() {
    let out = script(
        "errors",
        &[("l.csv", LINES)],
        "const f = () => open(D + '/l.csv');
         r.e = [
           await fails(async () => new csv.Parser(await f(), { fromLine: 3, toLine: 3 })),
           await fails(async () => new csv.Parser(await f(), { fromLine: 9 })),
           await fails(async () => new csv.Parser(await f(), { asObjects: true, skipFirstLine: true })),
           await fails(async () => new csv.Parser(await f(), { asObjects: true, fromLine: 1 })),
           await fails(async () => new csv.Parser(await f(), { fromLine: -1 })),
           await fails(async () => new csv.Parser()),
           await fails(async () => new csv.Parser(null)),
           await fails(async () => new csv.Parser({})),
           await fails(async () => csv.parse(await f(), { delimiter: ';;' })),
           await fails(async () => csv.parse('x')),
         ];",
    );
    assert_eq!(
        out["e"],
        json!([
            "GoError: encountered an error while interpreting Parser options; reason: fromLine must be less than or equal to toLine",
            "GoError: failed to create a new parser; reason: failed to skip lines until line 9; reason: EOF",
            "GoError: failed to create a new parser; reason: the 'header' option cannot be enabled when 'skipFirstLine' is true",
            "GoError: failed to create a new parser; reason: the 'header' option cannot be enabled when 'fromLine' is set to a value greater than 0",
            "GoError: failed to create a new parser; reason: the 'fromLine' option must be greater than or equal to 0; got -1",
            "GoError: csv Parser constructor takes at least one non-nil source argument",
            "GoError: csv Parser constructor takes at least one non-nil source argument",
            "GoError: failed to create a new parser; reason: the reader cannot be nil",
            "failed to interpret the provided Parser options; reason: delimiter must be a single character",
            "first argument expected to be a fs.File instance, got sobek.asciiString instead",
        ])
    );
}
