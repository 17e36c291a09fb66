//! Tags against k6: the same script under both, and the counts of sub-metrics selected by
//! the VU's tags (`exec.vu.tags`), the scenario's and the run's, and by tags given to a
//! request, a check or a metric where they collide with one another and with system tags.

use serde_json::Value;

use super::{k6, run_k6, run_rk6};
use crate::support::TestServer;
use crate::Dir;

/// Sub-metrics whose counts must agree, as `(metric{tags}, what to compare)`.
const COUNTED: &[(&str, &str)] = &[
    ("http_reqs{mytag:x}", "count"),
    ("http_req_duration{mytag:x}", "count"),
    ("http_req_failed{mytag:x}", "passes"),
    ("checks{mytag:x}", "passes"),
    ("iterations{mytag:x}", "count"),
    ("iteration_duration{mytag:x}", "count"),
    ("group_duration{mytag:x}", "count"),
    ("tagged_things{mytag:x}", "count"),
    ("http_reqs{same:vu}", "count"),
    ("http_reqs{same:scenario}", "count"),
    ("http_reqs{same:req}", "count"),
    ("http_reqs{method:M}", "count"),
    ("http_reqs{status:S}", "count"),
    ("http_reqs{url:U}", "count"),
    ("http_reqs{group:G}", "count"),
    ("http_reqs{scenario:S2}", "count"),
    ("http_reqs{name:N}", "count"),
    ("http_reqs{url:N}", "count"),
    ("http_reqs{name:vn}", "count"),
    ("checks{check:C}", "passes"),
    ("checks{same:chk}", "passes"),
    ("checks{group:G}", "passes"),
    ("tagged_things{same:ctr}", "count"),
    ("tagged_things{scenario:S3}", "count"),
    ("tagged_things{group:::g}", "count"),
    ("iterations{same:vu}", "count"),
    ("iterations{same:scenario}", "count"),
];

/// Sub-metrics that count bytes: the two tools send different headers, so only whether
/// the tagged samples exist is compared.
const PRESENT: &[&str] = &["data_sent{mytag:x}", "data_received{mytag:x}"];

fn value(export: &Value, metric: &str, field: &str) -> f64 {
    export["metrics"][metric][field].as_f64().unwrap_or(-1.0)
}

#[test]
fn tags_reach_every_metric_like_k6() {
    let Some(bin) = k6() else { return };
    let srv = TestServer::start();
    let dir = Dir::new("parity-tags");
    // A threshold on each sub-metric, only so that the summary reports it.
    let thresholds: Vec<String> = COUNTED
        .iter()
        .copied()
        .chain(PRESENT.iter().map(|m| (*m, "count")))
        .map(|(m, field)| {
            let always = match field {
                "passes" => "rate>=0",
                _ if m.contains("duration") => "max>=0",
                _ => "count>=0",
            };
            format!("'{m}': ['{always}'],")
        })
        .collect();
    let script = dir.write(
        "tags.js",
        &format!(
            r#"
import http from 'k6/http';
import exec from 'k6/execution';
import {{ check, group }} from 'k6';
import {{ Counter }} from 'k6/metrics';
const things = new Counter('tagged_things');
const URL = '{url}';
export const options = {{
  summaryTrendStats: ['count', 'avg'],
  tags: {{ run: 'r', same: 'run' }},
  scenarios: {{ main: {{ executor: 'per-vu-iterations', vus: 2, iterations: 3, tags: {{ sc: 's', same: 'scenario' }} }} }},
  thresholds: {{
    'tagged_things{{mytag:x}}': ['count==12'],
    {thresholds}
  }},
}};
export default function () {{
  http.get(URL);
  exec.vu.tags.mytag = 'x';
  exec.vu.tags.same = 'vu';
  http.get(URL);
  http.get(URL, {{ tags: {{ same: 'req', method: 'M', status: 'S', url: 'U', group: 'G', scenario: 'S2' }} }});
  http.get(URL, {{ tags: {{ name: 'N' }} }});
  exec.vu.tags.name = 'vn';
  http.get(URL);
  delete exec.vu.tags.name;
  check(1, {{ ok: () => true }}, {{ same: 'chk', check: 'C', group: 'G' }});
  check(1, {{ plain: () => true }});
  group('g', () => {{ http.get(URL); things.add(1); }});
  things.add(1, {{ same: 'ctr', scenario: 'S3' }});
}}
"#,
            url = srv.url("/get"),
            thresholds = thresholds.join("\n    "),
        ),
    );
    let theirs = run_k6(&bin, &script, &dir);
    let ours = run_rk6(&script, &dir);
    assert_eq!(theirs.code, 0, "k6 should pass the thresholds");
    assert_eq!(ours.code, theirs.code, "exit codes differ");
    let mut differ = Vec::new();
    for (metric, field) in COUNTED {
        let (a, b) = (
            value(&ours.export, metric, field),
            value(&theirs.export, metric, field),
        );
        if a != b {
            differ.push(format!("{metric} {field}: rk6 {a}, k6 {b}"));
        }
    }
    for metric in PRESENT {
        let (a, b) = (
            value(&ours.export, metric, "count"),
            value(&theirs.export, metric, "count"),
        );
        if (a > 0.0) != (b > 0.0) {
            differ.push(format!("{metric}: rk6 {a}, k6 {b}"));
        }
    }
    assert!(
        differ.is_empty(),
        "sub-metric counts differ:\n{}",
        differ.join("\n")
    );
}
