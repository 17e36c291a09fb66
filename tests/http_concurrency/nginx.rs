//! h2c against a real server: nginx listening with prior-knowledge HTTP/2 on plain TCP,
//! its access log recording the protocol every request arrived with.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{rk6, Dir};

const NGINX: &str = "/usr/sbin/nginx";
const PAGE: &str = "hello from nginx over h2c\n";

/// A foreground, single-process nginx serving `dir/www`; killed by PID on drop.
struct Nginx {
    child: Child,
    addr: SocketAddr,
}

impl Nginx {
    fn start(dir: &Dir) -> Nginx {
        assert!(
            Path::new(NGINX).exists(),
            "the h2c test needs nginx at {NGINX} (apt-get install nginx; .ci/run installs it)"
        );
        dir.write("www/index.txt", PAGE);
        let root = dir.0.to_str().unwrap();
        // The port is found free and then handed to nginx, so another process may take it in
        // between: try a few times.
        let mut last_err = String::new();
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let conf = dir.write("nginx.conf", &config(root, port));
            let mut child = Command::new(NGINX)
                .arg("-p")
                .arg(&dir.0)
                .arg("-c")
                .arg(&conf)
                .args(["-g", "daemon off;"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start nginx");
            let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(status)) = child.try_wait() {
                    last_err = format!(
                        "nginx exited with {status}: {}",
                        std::fs::read_to_string(dir.path("error.log")).unwrap_or_default()
                    );
                    break;
                }
                if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    return Nginx { child, addr };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("nginx did not start: {last_err}");
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `listen … http2` without `ssl` is prior-knowledge h2c in nginx 1.22 (and still accepted,
/// deprecated, by later versions).
fn config(root: &str, port: u16) -> String {
    format!(
        r#"
worker_processes 1;
master_process off;
error_log {root}/error.log warn;
pid {root}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    log_format proto '$server_protocol $status $request_uri';
    access_log {root}/access.log proto;
    client_body_temp_path {root}/client_body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    default_type text/plain;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port} http2;
        root {root}/www;
    }}
}}
"#
    )
}

/// The access log lines since `from` lines.
fn access_log(dir: &Dir, from: usize) -> Vec<String> {
    std::fs::read_to_string(dir.path("access.log"))
        .unwrap_or_default()
        .lines()
        .skip(from)
        .map(str::to_string)
        .collect()
}

#[test]
fn h2c_against_nginx() {
    let dir = Dir::new("nginx-h2c");
    let nginx = Nginx::start(&dir);
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 2, h2c: true }};
const PAGE = {page};
export default function () {{
  for (let i = 0; i < 3; i++) {{
    const r = http.get('{page_url}');
    check(r, {{
      'h2c proto': (r) => r.proto === 'HTTP/2.0',
      'status 200': (r) => r.status === 200,
      'static body': (r) => r.body === PAGE,
      'nginx header': (r) => r.headers['Server'].startsWith('nginx'),
    }});
  }}
  const rs = http.batch(['{page_url}', '{page_url}', '{page_url}', '{page_url}']);
  check(rs, {{ 'batch over h2c': (rs) => rs.every((r) => r.proto === 'HTTP/2.0' && r.body === PAGE) }});
  check(http.get('{missing}'), {{ 'missing 404': (r) => r.status === 404 && r.proto === 'HTTP/2.0' }});
}}
"#,
        page = serde_json::to_string(PAGE).unwrap(),
        page_url = nginx.url("/index.txt"),
        missing = nginx.url("/missing.txt"),
    );
    let export = super::run_checked(&dir, &script);
    assert_eq!(crate::metric(&export, "checks")["passes"], 2 * 14);
    assert_eq!(crate::count(&export, "http_reqs"), 2.0 * 8.0);
    let log = access_log(&dir, 0);
    let page_line = "HTTP/2.0 200 /index.txt";
    assert_eq!(
        log.iter().filter(|l| *l == page_line).count(),
        2 * 7,
        "{log:?}"
    );
    assert_eq!(
        log.iter()
            .filter(|l| *l == "HTTP/2.0 404 /missing.txt")
            .count(),
        2,
        "{log:?}"
    );
    assert_eq!(log.len(), 2 * 8, "{log:?}");

    let seen = log.len();
    let run = rk6(
        &[
            "bench",
            "--h2c",
            "-c",
            "4",
            "-d",
            "1s",
            "--json",
            "bench.json",
            &nginx.url("/index.txt"),
        ],
        &dir.0,
    );
    run.assert_code(0);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("bench.json")).unwrap()).unwrap();
    let n = json["responses"].as_u64().unwrap();
    assert!(n > 0, "{json}");
    assert_eq!(json["errors_total"], 0, "{json}");
    assert_eq!(json["status_codes"].as_object().unwrap().len(), 1, "{json}");
    assert_eq!(json["status_codes"]["200"], n, "{json}");
    assert!(
        json["bytes_received"].as_u64().unwrap() >= n * PAGE.len() as u64,
        "{json}"
    );
    // Requests cut off at the end of the run may be logged by nginx but not counted by rk6.
    let log = access_log(&dir, seen);
    let ok = log.iter().filter(|l| *l == page_line).count() as u64;
    assert!(ok >= n, "nginx logged {ok} h2 responses, rk6 counted {n}");
    assert!(
        log.iter().all(|l| l.starts_with("HTTP/2.0 ")),
        "{:?}",
        log.iter().find(|l| !l.starts_with("HTTP/2.0 "))
    );
    drop(nginx);
}
