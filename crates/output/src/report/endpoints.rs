//! Whole-run tallies for the report's tables: requests per `name` tag and errors per
//! `error_code`, both capped in number of rows.

use std::collections::HashMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::timeline::micros;

/// Distinct `name` tags kept; further names share one overflow row, so a script that
/// requests unique URLs cannot grow the report without bound.
pub(crate) const MAX_ENDPOINTS: usize = 200;

/// The row that collects names beyond [`MAX_ENDPOINTS`].
pub(crate) const OTHER_ENDPOINTS: &str = "(other names)";

/// Distinct error codes kept (rk6's codes are a small fixed set; this is a safety net).
const MAX_ERROR_CODES: usize = 100;

/// Longest example error message kept per code.
const MAX_MESSAGE: usize = 200;

/// Two significant figures (1 %): a row's histogram stays a few kilobytes even for
/// minute-long latencies, so the full table is bounded to a few megabytes. The summary
/// keeps the exact figures.
const ENDPOINT_SIGFIG: u8 = 2;

struct Endpoint {
    count: f64,
    failed: u64,
    sum_ms: f64,
    latency: Histogram<u64>,
}

impl Endpoint {
    fn new() -> Endpoint {
        Endpoint {
            count: 0.0,
            failed: 0,
            sum_ms: 0.0,
            latency: Histogram::new(ENDPOINT_SIGFIG).expect("2 significant figures are valid"),
        }
    }
}

/// One row of the per-name table.
#[derive(Debug, Serialize, PartialEq)]
pub(crate) struct EndpointRow {
    /// The `name` tag (the URL unless the script set one).
    pub name: String,
    /// `http_reqs` with this name.
    pub count: f64,
    /// Of those, failed (`http_req_failed` true).
    pub failed: u64,
    /// Mean `http_req_duration` in ms.
    pub mean: Option<f64>,
    /// Median in ms.
    pub p50: Option<f64>,
    /// 95th percentile in ms.
    pub p95: Option<f64>,
    /// 99th percentile in ms.
    pub p99: Option<f64>,
}

/// One row of the errors table.
#[derive(Debug, Serialize, PartialEq)]
pub(crate) struct ErrorRow {
    /// The `error_code` tag.
    pub code: String,
    /// Requests with it.
    pub count: u64,
    /// The first `error` tag seen with it, if any.
    pub example: Option<String>,
}

/// Per-name and per-error-code tallies.
#[derive(Default)]
pub(crate) struct Endpoints {
    by_name: HashMap<String, Endpoint>,
    /// Names in first-seen order, for a stable table.
    order: Vec<String>,
    errors: HashMap<String, (u64, Option<String>)>,
    error_order: Vec<String>,
}

impl Endpoints {
    fn entry(&mut self, name: &str) -> &mut Endpoint {
        let key = if self.by_name.contains_key(name) || self.by_name.len() < MAX_ENDPOINTS {
            name
        } else {
            OTHER_ENDPOINTS
        };
        if !self.by_name.contains_key(key) {
            self.order.push(key.to_string());
            self.by_name.insert(key.to_string(), Endpoint::new());
        }
        self.by_name.get_mut(key).expect("inserted above")
    }

    /// An `http_reqs` sample; `error_code`/`error` are its tags.
    pub(crate) fn request(
        &mut self,
        name: &str,
        count: f64,
        error_code: Option<&str>,
        error: Option<&str>,
    ) {
        self.entry(name).count += count;
        let Some(code) = error_code else { return };
        if !self.errors.contains_key(code) {
            if self.errors.len() >= MAX_ERROR_CODES {
                return;
            }
            self.error_order.push(code.to_string());
        }
        let e = self.errors.entry(code.to_string()).or_insert((0, None));
        e.0 += 1;
        if e.1.is_none() {
            e.1 = error.map(|m| m.chars().take(MAX_MESSAGE).collect());
        }
    }

    /// A true `http_req_failed` sample.
    pub(crate) fn failed(&mut self, name: &str) {
        self.entry(name).failed += 1;
    }

    /// An `http_req_duration` sample in ms.
    pub(crate) fn duration(&mut self, name: &str, ms: f64) {
        let e = self.entry(name);
        e.sum_ms += ms;
        let _ = e.latency.record(micros(ms));
    }

    /// The table rows in first-seen order.
    pub(crate) fn rows(&self) -> Vec<EndpointRow> {
        self.order
            .iter()
            .map(|name| {
                let e = &self.by_name[name];
                let h = &e.latency;
                let q = |q: f64| {
                    (!h.is_empty())
                        .then(|| h.median_equivalent(h.value_at_quantile(q)) as f64 / 1000.0)
                };
                EndpointRow {
                    name: name.clone(),
                    count: e.count,
                    failed: e.failed,
                    mean: (!h.is_empty()).then(|| e.sum_ms / h.len() as f64),
                    p50: q(0.50),
                    p95: q(0.95),
                    p99: q(0.99),
                }
            })
            .collect()
    }

    /// Error codes, most frequent first.
    pub(crate) fn errors(&self) -> Vec<ErrorRow> {
        let mut rows: Vec<ErrorRow> = self
            .error_order
            .iter()
            .map(|code| {
                let (count, example) = &self.errors[code];
                ErrorRow {
                    code: code.clone(),
                    count: *count,
                    example: example.clone(),
                }
            })
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.count));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_per_name() {
        let mut e = Endpoints::default();
        for i in 1..=100 {
            e.request("/a", 1.0, None, None);
            e.duration("/a", i as f64);
        }
        e.request("/b", 1.0, Some("1050"), Some("request timeout"));
        e.failed("/b");
        e.duration("/b", 60_000.0);
        let rows = e.rows();
        assert_eq!(rows.len(), 2);
        let a = &rows[0];
        assert_eq!((a.name.as_str(), a.count, a.failed), ("/a", 100.0, 0));
        assert_eq!(a.mean, Some(50.5));
        let close = |got: Option<f64>, want: f64| {
            let got = got.unwrap();
            assert!((got - want).abs() <= want * 0.01, "{got} vs {want}");
        };
        close(a.p50, 50.0);
        close(a.p95, 95.0);
        close(a.p99, 99.0);
        let b = &rows[1];
        assert_eq!((b.count, b.failed), (1.0, 1));
        close(b.p99, 60_000.0);
        assert_eq!(
            e.errors(),
            vec![ErrorRow {
                code: "1050".into(),
                count: 1,
                example: Some("request timeout".into())
            }]
        );
    }

    #[test]
    fn names_are_capped_into_one_overflow_row() {
        let mut e = Endpoints::default();
        let n = MAX_ENDPOINTS + 50;
        for i in 0..n {
            let name = format!("/item/{i}");
            e.request(&name, 1.0, None, None);
            e.duration(&name, 1.0);
        }
        let rows = e.rows();
        assert_eq!(rows.len(), MAX_ENDPOINTS + 1);
        let other = rows.last().unwrap();
        assert_eq!(other.name, OTHER_ENDPOINTS);
        assert_eq!(other.count, 50.0);
        assert_eq!(rows.iter().map(|r| r.count).sum::<f64>(), n as f64);
    }

    #[test]
    fn errors_sorted_by_count() {
        let mut e = Endpoints::default();
        e.request("/x", 1.0, Some("1211"), Some("dial: i/o timeout"));
        for _ in 0..3 {
            e.request("/x", 1.0, Some("1404"), None);
        }
        let rows = e.errors();
        assert_eq!(rows[0].code, "1404");
        assert_eq!(rows[0].count, 3);
        assert_eq!(rows[0].example, None);
        assert_eq!(rows[1].code, "1211");
    }
}
