//! `rk6 bench`: the scriptless, wrk-style mode.
//!
//! `connections` tokio tasks on a multi-thread runtime (`--threads` workers) each keep one
//! connection and send one request at a time until the deadline. Each task keeps its own HDR
//! histogram and counters and hands them back when it ends; they are merged once, so the hot
//! path takes no lock and sends no message.
//!
//! Plain `http://` URLs go through `rk6_http::KeepAlive`, a lean HTTP/1.1 connection that
//! writes request bytes built once and skips each response by its framing (no cookie jar,
//! pool, redirects or hyper task per request), so rk6 costs about what wrk costs per
//! request. `--h2c` and `https://` (where ALPN may choose HTTP/2) use a full
//! `rk6_http::Client` per task instead.
//!
//! Without `--rate` the loop is closed (next request as soon as the previous one is done) and
//! latency is the request's `http_req_duration` (sending + waiting + receiving). With
//! `--rate R` each connection sends `R / connections` requests per second on a fixed schedule
//! (connections staggered evenly); latency is measured from the *planned* send instant, so a
//! stall delays every request that should have been sent during it (coordinated omission
//! corrected, as wrk2), and the uncorrected service time is reported beside it.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use hyper::Method;
use rk6_http::{
    error as http_error, Client, ClientConfig, HttpError, KeepAlive, Request, RequestBytes,
    Response,
};
use rk6_metrics::stat::Stat;
use rk6_metrics::threshold_parser::{parse_expression, Expression};
use serde_json::{json, Map, Value};

use crate::args::BenchArgs;
use crate::exit::ExitCode;

/// Percentiles of the distribution table, as (label, quantile).
const DISTRIBUTION: [(&str, f64); 6] = [
    ("p50", 0.50),
    ("p75", 0.75),
    ("p90", 0.90),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

/// A validated `rk6 bench` invocation.
struct Plan {
    request: Request,
    /// The request serialized for the lean HTTP/1.1 path; `None` for `--h2c` and https.
    lean: Option<Arc<RequestBytes>>,
    connections: usize,
    threads: usize,
    duration: Duration,
    timeout: Duration,
    rate: Option<f64>,
    /// (text as given, parsed).
    thresholds: Vec<(String, Expression)>,
    insecure: bool,
}

/// What one connection (or, merged, the whole test) observed.
struct Stats {
    /// Latency in µs: from the planned send instant with `--rate`, else the request duration.
    latency: Histogram<u64>,
    /// Service time in µs (request duration); only filled with `--rate`.
    service: Histogram<u64>,
    /// Requests that got an HTTP response.
    responses: u64,
    /// (status, count); a short list, usually of one entry.
    statuses: Vec<(u16, u64)>,
    /// k6 error code → (count, first message).
    errors: BTreeMap<u32, (u64, String)>,
    bytes_received: u64,
    bytes_sent: u64,
}

impl Stats {
    fn new() -> Stats {
        Stats {
            latency: new_histogram(),
            service: new_histogram(),
            responses: 0,
            statuses: Vec::new(),
            errors: BTreeMap::new(),
            bytes_received: 0,
            bytes_sent: 0,
        }
    }

    /// Records one finished request; `corrected_us` is the latency from the planned start.
    fn record(&mut self, outcome: &Outcome, corrected_us: Option<u64>) {
        self.bytes_received += outcome.bytes_received;
        self.bytes_sent += outcome.bytes_sent;
        let status = match &outcome.result {
            Ok(status) => *status,
            Err(err) => {
                let entry = self
                    .errors
                    .entry(err.code)
                    .or_insert_with(|| (0, err.message.clone()));
                entry.0 += 1;
                return;
            }
        };
        self.responses += 1;
        match self.statuses.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => self.statuses.push((status, 1)),
        }
        let service_us = outcome.duration.as_micros() as u64;
        match corrected_us {
            Some(us) => {
                self.latency.saturating_record(us);
                self.service.saturating_record(service_us);
            }
            None => self.latency.saturating_record(service_us),
        }
    }

    fn merge(&mut self, other: Stats) {
        // Auto-resizing histograms of the same precision always add.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        self.responses += other.responses;
        for (status, n) in other.statuses {
            match self.statuses.iter_mut().find(|(s, _)| *s == status) {
                Some((_, m)) => *m += n,
                None => self.statuses.push((status, n)),
            }
        }
        for (code, (n, message)) in other.errors {
            self.errors.entry(code).or_insert((0, message)).0 += n;
        }
        self.bytes_received += other.bytes_received;
        self.bytes_sent += other.bytes_sent;
    }

    fn error_count(&self) -> u64 {
        self.errors.values().map(|(n, _)| n).sum()
    }
}

fn new_histogram() -> Histogram<u64> {
    // Auto-resizing, 3 significant digits (≤ 0.1 % error), as rk6's trends.
    Histogram::new(3).expect("3 significant digits is a valid HDR precision")
}

/// Runs `rk6 bench`.
pub fn run(args: BenchArgs) -> ExitCode {
    let plan = match validate(&args) {
        Ok(plan) => plan,
        Err(message) => {
            eprintln!("rk6 bench: {message}");
            return ExitCode::InvalidConfig;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(plan.threads)
        .thread_name("rk6-bench")
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rk6 bench: cannot start the I/O runtime: {e}");
            return ExitCode::InvalidConfig;
        }
    };

    print_header(&args.url, &plan);
    let (stats, elapsed) = runtime.block_on(blast(&plan));
    drop(runtime);

    let verdicts = evaluate_thresholds(&plan.thresholds, &stats);
    print_report(&plan, &stats, elapsed, &verdicts);
    if let Some(path) = &args.json {
        if let Err(e) = write_json(path, &args.url, &plan, &stats, elapsed, &verdicts) {
            eprintln!("rk6 bench: cannot write {}: {e}", path.display());
        }
    }
    if verdicts.iter().any(|v| !v.ok) {
        eprintln!("thresholds on metrics 'http_req_duration' have been crossed");
        return ExitCode::ThresholdsFailed;
    }
    ExitCode::Success
}

fn validate(args: &BenchArgs) -> Result<Plan, String> {
    let duration =
        rk6_options::parse_duration(&args.duration).map_err(|e| format!("--duration: {e}"))?;
    if duration.is_zero() {
        return Err("--duration must be greater than 0".into());
    }
    let timeout =
        rk6_options::parse_duration(&args.timeout).map_err(|e| format!("--timeout: {e}"))?;
    if timeout.is_zero() {
        return Err("--timeout must be greater than 0".into());
    }
    if args.connections == 0 {
        return Err("--connections must be at least 1".into());
    }
    if args.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if let Some(rate) = args.rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!("--rate must be a positive number, got {rate}"));
        }
    }
    let method = Method::from_bytes(args.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| format!("invalid --method {:?}", args.method))?;
    let mut request = Request::new(method, parse_url(&args.url)?);
    if !matches!(request.url.scheme(), "http" | "https") || request.url.host_str().is_none() {
        return Err(format!(
            "invalid URL {:?}: only http:// and https:// URLs are supported",
            args.url
        ));
    }
    for header in &args.header {
        let (name, value) = header
            .split_once(':')
            .filter(|(name, _)| !name.trim().is_empty())
            .ok_or_else(|| format!("invalid --header {header:?}: expected \"Name: value\""))?;
        request
            .headers
            .push((name.trim().to_owned(), value.trim().to_owned()));
    }
    if let Some(body) = &args.body {
        request.body = Bytes::from(body.clone());
    }
    if args.h2c {
        if request.url.scheme() != "http" {
            return Err(
                "--h2c needs an http:// URL (https:// negotiates HTTP/2 by ALPN)".to_owned(),
            );
        }
        request.h2c = Some(true);
    }
    request.max_redirects = Some(0);
    request.discard_body = true;
    // The lean path speaks HTTP/1.1 over plain TCP only: h2c needs HTTP/2 framing, and an
    // https origin may negotiate HTTP/2 by ALPN, which only the client can follow.
    let lean = if request.url.scheme() == "http" && !args.h2c {
        let bytes = RequestBytes::new(
            &request.method,
            &request.url,
            &request.headers,
            &request.body,
        )
        .map_err(|e| format!("invalid request: {e}"))?;
        Some(Arc::new(bytes))
    } else {
        None
    };
    let thresholds = args
        .threshold
        .iter()
        .map(|text| {
            let expr =
                parse_expression(text).map_err(|e| format!("invalid --threshold {text:?}: {e}"))?;
            match expr.stat {
                Stat::Avg
                | Stat::Min
                | Stat::Max
                | Stat::Med
                | Stat::Percentile(_)
                | Stat::Count => Ok((text.trim().to_owned(), expr)),
                _ => Err(format!(
                    "invalid --threshold {text:?}: http_req_duration supports avg, min, med, max, \
                     count and p(N)"
                )),
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Plan {
        request,
        lean,
        connections: args.connections,
        threads: args.threads,
        duration,
        timeout,
        rate: args.rate,
        thresholds,
        insecure: args.insecure_skip_tls_verify,
    })
}

/// Parses the target URL (into `rk6_http`'s URL type, whatever crate provides it).
fn parse_url<T: FromStr>(text: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e| format!("invalid URL {text:?}: {e}"))
}

/// Runs every connection until the deadline; returns the merged stats and the wall time.
async fn blast(plan: &Plan) -> (Stats, Duration) {
    let config = Arc::new(ClientConfig {
        insecure_skip_tls_verify: plan.insecure,
        user_agent: None,
        max_redirects: 0,
        timeout: plan.timeout,
        ..ClientConfig::default()
    });
    let start = Instant::now();
    let deadline = start + plan.duration;
    // With --rate: every connection's interval, and its offset so the sends interleave evenly.
    let interval = plan
        .rate
        .map(|rate| Duration::from_secs_f64(plan.connections as f64 / rate));
    let mut tasks = Vec::with_capacity(plan.connections);
    for i in 0..plan.connections {
        let engine = match &plan.lean {
            Some(request) => Engine::Lean {
                conn: KeepAlive::new(request),
                request: Arc::clone(request),
            },
            None => Engine::Client {
                client: Client::new(Arc::clone(&config)),
                template: Box::new(plan.request.clone()),
            },
        };
        let timeout = plan.timeout;
        let schedule = interval.map(|every| {
            (
                start + every.mul_f64(i as f64 / plan.connections as f64),
                every,
            )
        });
        tasks.push(tokio::spawn(async move {
            match schedule {
                None => closed_loop(engine, timeout, deadline).await,
                Some((first, every)) => {
                    constant_rate(engine, timeout, deadline, first, every).await
                }
            }
        }));
    }
    let mut total = Stats::new();
    for task in tasks {
        match task.await {
            Ok(stats) => total.merge(stats),
            Err(e) => eprintln!("rk6 bench: a connection task failed: {e}"),
        }
    }
    (total, start.elapsed())
}

/// How a connection task sends its requests.
enum Engine {
    /// Plain `http://`: one lean HTTP/1.1 keep-alive connection and the request's bytes.
    Lean {
        conn: KeepAlive,
        request: Arc<RequestBytes>,
    },
    /// `--h2c` and `https://`: a full client (HTTP/2 framing, ALPN) with its own pool.
    Client {
        client: Client,
        template: Box<Request>,
    },
}

/// One request's result, whichever engine sent it.
struct Outcome {
    /// The status, or the k6 error of a failed request.
    result: Result<u16, HttpError>,
    /// sending + waiting + receiving.
    duration: Duration,
    bytes_sent: u64,
    bytes_received: u64,
}

impl Outcome {
    fn from_response(resp: Response) -> Outcome {
        let mut outcome = Outcome {
            result: Ok(resp.status),
            duration: Duration::ZERO,
            bytes_sent: 0,
            bytes_received: 0,
        };
        for hop in &resp.hops {
            outcome.duration += hop.timings.duration;
            outcome.bytes_received += hop.bytes_received;
            outcome.bytes_sent += hop.bytes_sent;
        }
        if let Some(err) = resp.error {
            outcome.result = Err(err);
        }
        outcome
    }
}

impl Engine {
    /// Sends one request whose timeout never outlasts the test; `None` when the end of the
    /// test (rather than `--timeout`) cut it off, which is not counted, as in wrk.
    async fn send(&mut self, timeout: Duration, deadline: Instant) -> Option<Outcome> {
        let now = Instant::now();
        let remaining = deadline.saturating_duration_since(now);
        let bounded_by_deadline = remaining < timeout;
        let limit = remaining.min(timeout);
        let outcome = match self {
            Engine::Lean { conn, request } => match conn.send(request, now + limit).await {
                Ok(done) => Outcome {
                    result: Ok(done.status),
                    duration: done.duration,
                    bytes_sent: done.bytes_sent,
                    bytes_received: done.bytes_received,
                },
                Err(failed) => Outcome {
                    result: Err(failed.error),
                    duration: Duration::ZERO,
                    bytes_sent: failed.bytes_sent,
                    bytes_received: failed.bytes_received,
                },
            },
            Engine::Client { client, template } => {
                let mut req = Request::clone(template);
                req.timeout = Some(limit);
                Outcome::from_response(client.send(req).await)
            }
        };
        let timed_out = matches!(&outcome.result, Err(e) if e.code == http_error::REQUEST_TIMEOUT);
        (!(bounded_by_deadline && timed_out)).then_some(outcome)
    }
}

async fn closed_loop(mut engine: Engine, timeout: Duration, deadline: Instant) -> Stats {
    let mut stats = Stats::new();
    while Instant::now() < deadline {
        let Some(outcome) = engine.send(timeout, deadline).await else {
            break;
        };
        stats.record(&outcome, None);
    }
    stats
}

async fn constant_rate(
    mut engine: Engine,
    timeout: Duration,
    deadline: Instant,
    first: Instant,
    every: Duration,
) -> Stats {
    let mut stats = Stats::new();
    let mut planned = first;
    while planned < deadline {
        if planned > Instant::now() {
            tokio::time::sleep_until(planned.into()).await;
        }
        let Some(outcome) = engine.send(timeout, deadline).await else {
            break;
        };
        let corrected = planned.elapsed().as_micros() as u64;
        stats.record(&outcome, Some(corrected));
        planned += every;
    }
    stats
}

/// One evaluated `--threshold`.
struct Verdict {
    text: String,
    ok: bool,
    /// The measured value in ms (count for `count`); `None` when there were no samples.
    value: Option<f64>,
}

fn stat_value(hist: &Histogram<u64>, stat: Stat) -> Option<f64> {
    if hist.is_empty() {
        return None;
    }
    let ms = |us: f64| us / 1000.0;
    Some(match stat {
        Stat::Avg => ms(hist.mean()),
        Stat::Min => ms(hist.min() as f64),
        Stat::Max => ms(hist.max() as f64),
        Stat::Med => ms(hist.value_at_quantile(0.5) as f64),
        Stat::Percentile(p) => ms(hist.value_at_quantile(p / 100.0) as f64),
        Stat::Count => hist.len() as f64,
        _ => return None,
    })
}

fn evaluate_thresholds(thresholds: &[(String, Expression)], stats: &Stats) -> Vec<Verdict> {
    thresholds
        .iter()
        .map(|(text, expr)| {
            let value = stat_value(&stats.latency, expr.stat);
            Verdict {
                text: text.clone(),
                // As k6: a threshold on a metric without samples passes.
                ok: value.is_none_or(|v| expr.op.holds(v, expr.value)),
                value,
            }
        })
        .collect()
}

fn print_header(url: &str, plan: &Plan) {
    println!(
        "Running {} test @ {url}",
        rk6_options::format_duration(plan.duration)
    );
    println!(
        "  {} threads and {} connections",
        plan.threads, plan.connections
    );
    if let Some(rate) = plan.rate {
        println!(
            "  constant rate {} requests/sec ({:.2} per connection)",
            trim(rate),
            rate / plan.connections as f64
        );
    }
}

fn print_report(plan: &Plan, stats: &Stats, elapsed: Duration, verdicts: &[Verdict]) {
    let corrected = plan.rate.is_some();
    let lat = &stats.latency;
    if lat.is_empty() {
        println!("  Latency: no responses");
    } else {
        println!(
            "  Latency{}   avg {}   stdev {}   min {}   max {}",
            if corrected { " (corrected)" } else { "" },
            human_us(lat.mean()),
            human_us(lat.stdev()),
            human_us(lat.min() as f64),
            human_us(lat.max() as f64),
        );
        if corrected {
            println!("  Latency Distribution   corrected     service");
        } else {
            println!("  Latency Distribution");
        }
        let rows = DISTRIBUTION
            .iter()
            .map(|&(label, q)| {
                (
                    label,
                    lat.value_at_quantile(q),
                    stats.service.value_at_quantile(q),
                )
            })
            .chain([("max", lat.max(), stats.service.max())]);
        for (label, value, service) in rows {
            if corrected {
                println!(
                    "    {label:>6}   {:>10}  {:>10}",
                    human_us(value as f64),
                    human_us(service as f64)
                );
            } else {
                println!("    {label:>6}   {:>10}", human_us(value as f64));
            }
        }
    }
    let secs = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let requests = stats.responses + stats.error_count();
    println!(
        "  {requests} requests in {:.2}s, {} read",
        elapsed.as_secs_f64(),
        human_bytes(stats.bytes_received as f64)
    );
    let mut statuses = stats.statuses.clone();
    statuses.sort_unstable();
    if !statuses.is_empty() {
        let list: Vec<String> = statuses.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        println!("  Status codes: {}", list.join(", "));
    }
    let non_2xx_3xx: u64 = statuses
        .iter()
        .filter(|(s, _)| !(200..400).contains(s))
        .map(|(_, n)| n)
        .sum();
    if non_2xx_3xx > 0 {
        println!("  Non-2xx or 3xx responses: {non_2xx_3xx}");
    }
    if !stats.errors.is_empty() {
        println!("  Errors (k6 error codes): {}", stats.error_count());
        for (code, (n, message)) in &stats.errors {
            println!("    {code} {message}: {n}");
        }
    }
    println!("Requests/sec: {:>10.2}", requests as f64 / secs);
    println!(
        "Transfer/sec: {:>10}",
        human_bytes(stats.bytes_received as f64 / secs)
    );
    if !verdicts.is_empty() {
        println!("  Thresholds (http_req_duration)");
        for v in verdicts {
            let mark = if v.ok { '✓' } else { '✗' };
            let value = match v.value {
                Some(x) => format!("{}={}", stat_name(&v.text), human_ms(x, &v.text)),
                None => "no samples".to_owned(),
            };
            println!("    {mark} '{}' {value}", v.text);
        }
    }
}

/// The aggregation part of a threshold's text (`p(99)` of `p(99)<50`).
fn stat_name(text: &str) -> &str {
    text.find(['<', '>', '=', '!'])
        .map_or(text, |at| text[..at].trim_end())
}

fn human_ms(value: f64, text: &str) -> String {
    if stat_name(text) == "count" {
        trim(value)
    } else {
        human_us(value * 1000.0)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Microseconds in the unit that reads best, as wrk prints latencies.
fn human_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.2}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

/// Bytes in binary units, as wrk prints them.
fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2}{}", UNITS[unit])
}

fn histogram_json(hist: &Histogram<u64>) -> Value {
    if hist.is_empty() {
        return Value::Null;
    }
    let ms = |us: u64| us as f64 / 1000.0;
    let mut out = Map::new();
    out.insert("avg".into(), json!(hist.mean() / 1000.0));
    out.insert("stdev".into(), json!(hist.stdev() / 1000.0));
    out.insert("min".into(), json!(ms(hist.min())));
    for (label, q) in DISTRIBUTION {
        out.insert(label.into(), json!(ms(hist.value_at_quantile(q))));
    }
    out.insert("max".into(), json!(ms(hist.max())));
    out.insert("count".into(), json!(hist.len()));
    Value::Object(out)
}

fn write_json(
    path: &Path,
    url: &str,
    plan: &Plan,
    stats: &Stats,
    elapsed: Duration,
    verdicts: &[Verdict],
) -> std::io::Result<()> {
    let secs = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let requests = stats.responses + stats.error_count();
    let mut statuses = stats.statuses.clone();
    statuses.sort_unstable();
    let status_codes: Map<String, Value> = statuses
        .iter()
        .map(|(s, n)| (s.to_string(), json!(n)))
        .collect();
    let errors: Map<String, Value> = stats
        .errors
        .iter()
        .map(|(code, (n, message))| (code.to_string(), json!({ "count": n, "message": message })))
        .collect();
    let thresholds: Vec<Value> = verdicts
        .iter()
        .map(|v| json!({ "threshold": v.text, "ok": v.ok, "value": v.value }))
        .collect();
    let corrected = plan.rate.is_some();
    let doc = json!({
        "url": url,
        "method": plan.request.method.as_str(),
        "connections": plan.connections,
        "threads": plan.threads,
        "duration_s": plan.duration.as_secs_f64(),
        "rate": plan.rate,
        "elapsed_s": elapsed.as_secs_f64(),
        "requests": requests,
        "responses": stats.responses,
        "errors_total": stats.error_count(),
        "requests_per_sec": requests as f64 / secs,
        "bytes_received": stats.bytes_received,
        "bytes_sent": stats.bytes_sent,
        "transfer_per_sec": stats.bytes_received as f64 / secs,
        "latency_ms": histogram_json(&stats.latency),
        "latency_corrected": corrected,
        "service_time_ms": if corrected { histogram_json(&stats.service) } else { Value::Null },
        "status_codes": status_codes,
        "errors": errors,
        "thresholds": thresholds,
        "thresholds_ok": verdicts.iter().all(|v| v.ok),
    });
    let mut text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_us(12.3), "12.30µs");
        assert_eq!(human_us(1500.0), "1.50ms");
        assert_eq!(human_us(2_500_000.0), "2.50s");
        assert_eq!(human_bytes(512.0), "512.00B");
        assert_eq!(human_bytes(1536.0), "1.50KB");
        assert_eq!(stat_name("p(99)<50"), "p(99)");
    }

    #[test]
    fn thresholds_on_histogram() {
        let mut stats = Stats::new();
        for us in [1000, 2000, 3000, 4000] {
            stats.latency.record(us).unwrap();
        }
        let exprs: Vec<(String, Expression)> = ["p(99)<10", "avg>5", "max<=4.01", "count==4"]
            .iter()
            .map(|t| (t.to_string(), parse_expression(t).unwrap()))
            .collect();
        let verdicts = evaluate_thresholds(&exprs, &stats);
        let oks: Vec<bool> = verdicts.iter().map(|v| v.ok).collect();
        assert_eq!(oks, [true, false, true, true]);
        // No samples: passes, as in k6.
        let empty = evaluate_thresholds(&exprs[..1], &Stats::new());
        assert!(empty[0].ok && empty[0].value.is_none());
    }
}
