//! `hosts`, `blockHostnames` and `blacklistIPs` side by side with k6.

use crate::support::TestServer;

use super::compare;

#[test]
fn host_rules_agree_with_k6() {
    let srv = TestServer::start();
    let port = srv.addr.port();
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  iterations: 2,
  hosts: {{
    'myapp.test': '127.0.0.1',
    '*.wild.test': '127.0.0.1:{port}',
    'port.test:80': '127.0.0.1:{port}',
    'x.blocked.test': '127.0.0.1',
    'far.test': '127.0.0.2',
    '127.0.0.3': '127.0.0.1',
  }},
  blockHostnames: ['*.blocked.test', 'Exact.test'],
  blacklistIPs: ['127.0.0.2/32'],
  thresholds: {{
    'http_reqs{{error_code:1111}}': ['count==4'],
    'http_reqs{{error_code:1110}}': ['count==4'],
    'http_req_failed': ['rate<0.5', 'rate>0.4'],
  }},
}};
export default function () {{
  const ok = (r) => r.status === 200 && r.error_code === 0 && r.error === '';
  check(http.get('http://myapp.test:{port}/get'), {{ 'exact': ok }});
  check(http.get('http://MYAPP.test:{port}/get'), {{ 'case-insensitive': ok }});
  check(http.get('http://a.wild.test:7/get'), {{ 'wildcard': ok }});
  check(http.get('http://port.test/get'), {{ 'key port': ok }});
  check(http.get('http://127.0.0.3:{port}/get'), {{ 'ipv4 key': (r) => ok(r) && r.timings.looking_up === 0 }});
  const blocked = (r) => [r.status, r.error_code, r.error].join() === '0,1111,hostname is blocked';
  check(http.get('http://x.blocked.test:{port}/get'), {{ 'blocked wildcard': blocked }});
  check(http.get('http://exact.test:{port}/get'), {{ 'blocked exact': blocked }});
  const black = (r) => [r.status, r.error_code, r.error].join() === '0,1110,ip is blacklisted';
  check(http.get('http://far.test:{port}/get'), {{ 'blacklisted mapped': black }});
  check(http.get('http://127.0.0.2:{port}/get'), {{ 'blacklisted literal': black }});
}}
"#
    );
    compare("net-rules", &script);
}
