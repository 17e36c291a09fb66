//! The text wrk prints: the header before the run and the report after it.

use std::time::Duration;

use crate::plan::Plan;
use crate::stats::{Stats, DISTRIBUTION};
use crate::thresholds::Verdict;

/// `Running 10s test @ URL` and the threads/connections (and rate) lines.
pub(crate) fn print_header(url: &str, plan: &Plan) {
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

/// Latency, distribution, totals, statuses, errors, throughput and threshold verdicts.
pub(crate) fn print_report(plan: &Plan, stats: &Stats, elapsed: Duration, verdicts: &[Verdict]) {
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
}
