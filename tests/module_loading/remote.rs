//! Remote modules over HTTPS from a server on 127.0.0.1 whose certificate is trusted through
//! `SSL_CERT_FILE`: ES modules with relative and root-relative imports, CommonJS with
//! `require`, a redirect, one download per URL per test whatever the VU count, k6's errors,
//! and the module cache that keeps a later run offline.

use super::server::{Answer, ModuleServer};
use crate::{assert_checks, run_file, Dir};

fn file(body: &str) -> Answer {
    Answer::File(body.to_string())
}

fn server() -> ModuleServer {
    ModuleServer::start(&[
        (
            "/lib/index.js",
            file("import { b } from './sub/b.js';\nimport { top } from '/top.js';\nexport const a = 'a+' + b + '+' + top;\nexport const here = import.meta.resolve('./x.js');\n"),
        ),
        ("/lib/sub/b.js", file("export const b = 'b';\n")),
        ("/top.js", file("export const top = 'top';\n")),
        (
            "/cjs/index.js",
            file("const b = require('./b.js');\nexports.v = 'c+' + b.v;\nexports.thisIsExports = this === exports;\n"),
        ),
        ("/cjs/b.js", file("exports.v = 'b';\n")),
        ("/moved.js", Answer::Redirect("/moved-here.js".into())),
        ("/moved-here.js", file("export const b = 'b';\n")),
        (
            "/local.js",
            file("import x from 'file:///etc/hostname';\nexport default x;\n"),
        ),
    ])
}

/// `SSL_CERT_FILE` pointing at the server's certificate.
fn trust(dir: &Dir, srv: &ModuleServer) -> String {
    dir.write("ca.pem", &srv.cert_pem)
        .to_string_lossy()
        .into_owned()
}

fn main_script(srv: &ModuleServer) -> String {
    format!(
        r#"import {{ check }} from 'k6';
import {{ a, here }} from '{lib}';
import c, {{ v }} from '{cjs}';
import {{ b as moved }} from '{moved}';
const required = require('{cjs}');

export const options = {{ vus: 4, iterations: 8 }};

export default function () {{
  check(null, {{
    'relative and root-relative imports resolve against the URL': () => a === 'a+b+top',
    'import.meta.resolve in a remote module': () => here === '{x}',
    'remote CommonJS with require': () => v === 'c+b' && c.thisIsExports === true,
    'require of a remote module is the imported instance': () => required === c,
    'a redirect is followed': () => moved === 'b',
  }});
}}
"#,
        lib = srv.url("/lib/index.js"),
        cjs = srv.url("/cjs/index.js"),
        moved = srv.url("/moved.js"),
        x = srv.url("/lib/x.js"),
    )
}

#[test]
fn remote_modules_are_fetched_once_per_test_and_resolve_against_their_url() {
    let srv = server();
    let dir = Dir::new("remote-fetch");
    let ca = trust(&dir, &srv);
    dir.write("main.js", &main_script(&srv));
    let (run, export) = run_file(&dir, "main.js", &[], &[("SSL_CERT_FILE", &ca)]);
    assert_checks(&run, &export, 40.0);
    // As k6: the URL with `_k6=1`, once per test although 4 VUs (and the options pass)
    // each load every module.
    for path in [
        "/lib/index.js",
        "/lib/sub/b.js",
        "/top.js",
        "/cjs/index.js",
        "/cjs/b.js",
    ] {
        assert_eq!(
            srv.hits(&format!("{path}?_k6=1")),
            1,
            "{path}: {:?}",
            srv.all_hits()
        );
        assert_eq!(srv.hits(path), 0, "{path}: {:?}", srv.all_hits());
    }
    assert_eq!(srv.hits("/moved.js?_k6=1"), 1, "{:?}", srv.all_hits());
}

#[test]
fn the_module_cache_keeps_fetched_modules_for_an_offline_run() {
    let dir = Dir::new("remote-cache");
    let cache = dir.path("cache");
    let cache = cache.to_str().unwrap();
    let script;
    {
        let srv = server();
        let ca = trust(&dir, &srv);
        script = main_script(&srv);
        dir.write("main.js", &script);
        let (run, export) = run_file(
            &dir,
            "main.js",
            &[],
            &[("SSL_CERT_FILE", &ca), ("RK6_MODULE_CACHE", cache)],
        );
        assert_checks(&run, &export, 40.0);
        let stored = dir.path(&format!("cache/127.0.0.1:{}/lib/sub/b.js", srv.addr.port()));
        assert!(stored.is_file(), "{}", stored.display());
    }
    // The server is gone (and nothing trusts it): everything comes from the cache.
    let (run, export) = run_file(&dir, "main.js", &[], &[("RK6_MODULE_CACHE", cache)]);
    assert_checks(&run, &export, 40.0);
}

#[test]
fn remote_failures_name_the_url_and_the_reason() {
    let srv = server();
    let dir = Dir::new("remote-errors");
    let ca = trust(&dir, &srv);
    let env = [("SSL_CERT_FILE", ca.as_str())];
    let missing = srv.url("/nope.js");
    dir.write(
        "missing.js",
        &format!("import x from '{missing}';\nexport default function () {{}}\n"),
    );
    let (run, _) = run_file(&dir, "missing.js", &[], &env);
    run.assert_code(107);
    assert!(
        run.stderr.contains(&format!(
            r#"The moduleSpecifier \"{missing}\" couldn't be retrieved from the resolved url \"{missing}\". Error : \"not found: {missing}\""#
        )),
        "{}",
        run.stderr
    );

    // Nothing listens there.
    let closed = crate::support::closed_addr();
    let refused = format!("https://{}/x.js", closed);
    dir.write(
        "refused.js",
        &format!("import x from '{refused}';\nexport default function () {{}}\n"),
    );
    let (run, _) = run_file(&dir, "refused.js", &[], &env);
    run.assert_code(107);
    assert!(
        run.stderr.contains(&refused) && run.stderr.contains("connection refused"),
        "{}",
        run.stderr
    );

    let http = format!("http://{}/lib/index.js", srv.addr);
    dir.write(
        "http.js",
        &format!("import x from '{http}';\nexport default function () {{}}\n"),
    );
    let (run, _) = run_file(&dir, "http.js", &[], &env);
    run.assert_code(107);
    assert!(
        run.stderr.contains(&format!(
            "only supported schemes for imports are file and https, {http} has `http`"
        )),
        "{}",
        run.stderr
    );

    let local = srv.url("/local.js");
    dir.write(
        "local.js",
        &format!("import x from '{local}';\nexport default function () {{}}\n"),
    );
    let (run, _) = run_file(&dir, "local.js", &[], &env);
    run.assert_code(107);
    assert!(
        run.stderr.contains(&format!(
            "origin ({}) not allowed to load local file: file:///etc/hostname",
            srv.url("")
        )),
        "{}",
        run.stderr
    );
    // An untrusted certificate fails the download (no SSL_CERT_FILE).
    let (run, _) = run_file(&dir, "missing.js", &[], &[]);
    run.assert_code(107);
    assert!(
        run.stderr.contains("couldn't be retrieved") && !run.stderr.contains("not found"),
        "{}",
        run.stderr
    );
}
