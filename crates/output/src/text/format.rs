//! Number, duration, byte and percentage formatting of the k6 1.x summary.

use rk6_metrics::{MetricType, ValueType};

/// Formats a duration given in milliseconds the way k6 does without `summaryTimeUnit`:
/// `0s`, `Nns` below 1µs, `x.xxµs` below 1ms, `x.xxms` below 1s, then `x.xxs`, `XmYs`,
/// `XhYmZs`. Decimals are truncated, not rounded, and trailing zeros dropped.
pub fn duration(ms: f64) -> String {
    if ms == 0.0 {
        return "0s".into();
    }
    if ms < 0.0 {
        return format!("-{}", duration(-ms));
    }
    if ms < 0.001 {
        return format!("{}ns", (ms * 1_000_000.0).trunc());
    }
    if ms < 1.0 {
        return format!("{}µs", truncated(ms * 1000.0, 2));
    }
    if ms < 1000.0 {
        return format!("{}ms", truncated(ms, 2));
    }
    // Seconds keep two decimals only while under a minute.
    let secs = truncated((ms % 60_000.0) / 1000.0, if ms > 60_000.0 { 0 } else { 2 });
    let minutes = (ms / 60_000.0).trunc();
    if minutes < 1.0 {
        return format!("{secs}s");
    }
    let hours = (minutes / 60.0).trunc();
    if hours < 1.0 {
        return format!("{minutes}m{secs}s");
    }
    format!("{hours}h{}m{secs}s", minutes % 60.0)
}

/// Formats milliseconds in a fixed `summaryTimeUnit` (`s`, `ms`, `us`) with two rounded
/// decimals; `None` for an unknown unit.
pub fn duration_in_unit(ms: f64, unit: &str) -> Option<String> {
    let (factor, suffix) = match unit {
        "s" => (0.001, "s"),
        "ms" => (1.0, "ms"),
        "us" => (1000.0, "µs"),
        _ => return None,
    };
    Some(format!("{}{suffix}", to_fixed(ms * factor, 2)))
}

/// Formats a byte count in SI units: `N B` under 10, else one decimal below 10 of a unit
/// (`3.0 kB`) and none above (`10 kB`).
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 9] = ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
    if b < 10.0 {
        return format!("{} B", number(b));
    }
    let mut e = 0;
    let mut scaled = b;
    while scaled >= 1000.0 && e < UNITS.len() - 1 {
        scaled /= 1000.0;
        e += 1;
    }
    let val = (scaled * 10.0 + 0.5).floor() / 10.0;
    let decimals = if val < 10.0 { 1 } else { 0 };
    format!("{} {}", to_fixed(val, decimals), UNITS[e])
}

/// Formats a plain number: rounded to 6 decimals, trailing zeros removed (`19.297569`, `40`).
pub fn number(v: f64) -> String {
    strip_zeros(to_fixed(v, 6))
}

/// Formats a 0..1 share as a percentage truncated to 2 decimals (`0.00%`, `100.00%`).
pub fn percent(rate: f64) -> String {
    let s = truncated_fixed(rate * 100.0, 2);
    format!("{s}%")
}

/// Formats a metric value by the metric's type and value type, like k6's summary.
/// `time_unit` is `summaryTimeUnit` (`None` or an unknown unit = automatic).
pub fn value(v: f64, kind: MetricType, contains: ValueType, time_unit: Option<&str>) -> String {
    // Only rk6's corrected Trends hold infinite values: arrivals never served.
    if v == f64::INFINITY {
        return "unserved".into();
    }
    if kind == MetricType::Rate {
        return percent(v);
    }
    match contains {
        ValueType::Data => bytes(v),
        ValueType::Time => time_unit
            .and_then(|u| duration_in_unit(v, u))
            .unwrap_or_else(|| duration(v)),
        ValueType::Default => number(v),
    }
}

/// `v` truncated toward zero to `prec` decimals, trailing zeros removed.
fn truncated(v: f64, prec: usize) -> String {
    strip_zeros(truncated_fixed(v, prec))
}

/// `v` truncated toward zero to exactly `prec` decimals.
fn truncated_fixed(v: f64, prec: usize) -> String {
    // Cutting the decimal string (after rounding away binary noise at 9 places)
    // avoids `trunc(1.17 * 100) / 100 == 1.16`.
    let s = format!("{v:.9}");
    let dot = s.find('.').expect("fixed formatting has a dot");
    let cut = if prec == 0 {
        &s[..dot]
    } else {
        &s[..dot + 1 + prec]
    };
    let out = cut.to_owned();
    if out.starts_with('-') && out[1..].bytes().all(|b| b == b'0' || b == b'.') {
        out[1..].to_owned()
    } else {
        out
    }
}

/// JavaScript's `Number.prototype.toFixed`: round half away from zero on the exact
/// binary value (Rust's `{:.N}` would round an exact tie to even).
fn to_fixed(v: f64, prec: usize) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    // 40 extra digits see past any double's tie ambiguity at these magnitudes.
    let exact = format!("{:.*}", prec + 40, v.abs());
    let dot = exact.find('.').expect("fixed formatting has a dot");
    let keep = dot + 1 + prec;
    let round_up = exact.as_bytes()[keep] >= b'5';
    let mut digits: Vec<u8> = exact.as_bytes()[..keep].to_vec();
    if prec == 0 {
        digits.pop(); // the dot
    }
    if round_up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            match digits[i] {
                b'.' => continue,
                b'9' => digits[i] = b'0',
                d => {
                    digits[i] = d + 1;
                    break;
                }
            }
        }
    }
    let s = String::from_utf8(digits).expect("ascii digits");
    if v < 0.0 && s.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        format!("-{s}")
    } else {
        s
    }
}

fn strip_zeros(s: String) -> String {
    if !s.contains('.') {
        return s;
    }
    let t = s.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".into()
    } else {
        t.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration(0.0), "0s");
        assert_eq!(duration(0.0005), "500ns");
        assert_eq!(duration(0.000_000_9), "0ns");
        assert_eq!(duration(0.7022), "702.2µs");
        assert_eq!(duration(0.793765), "793.76µs", "truncated, not rounded");
        assert_eq!(duration(0.03315), "33.15µs");
        assert_eq!(duration(1.178342), "1.17ms", "truncated, not rounded");
        assert_eq!(duration(1.17), "1.17ms", "no binary-noise truncation");
        assert_eq!(duration(1.8044498), "1.8ms");
        assert_eq!(duration(15.66), "15.66ms");
        assert_eq!(duration(103.51), "103.51ms");
        assert_eq!(duration(999.999), "999.99ms");
        assert_eq!(duration(1000.0), "1s");
        assert_eq!(duration(2000.0), "2s");
        assert_eq!(duration(1534.9), "1.53s");
        assert_eq!(duration(60_000.0), "1m0s");
        assert_eq!(duration(90_000.0), "1m30s");
        assert_eq!(
            duration(90_999.0),
            "1m30s",
            "seconds truncated past a minute"
        );
        assert_eq!(duration(3_600_000.0), "1h0m0s");
        assert_eq!(duration(3_723_000.0), "1h2m3s");
        assert_eq!(duration(-2.5), "-2.5ms");
    }

    #[test]
    fn durations_in_fixed_units() {
        assert_eq!(duration_in_unit(1.234, "ms").unwrap(), "1.23ms");
        assert_eq!(duration_in_unit(1.235, "ms").unwrap(), "1.24ms");
        assert_eq!(duration_in_unit(1500.0, "s").unwrap(), "1.50s");
        assert_eq!(duration_in_unit(0.7022, "us").unwrap(), "702.20µs");
        assert_eq!(duration_in_unit(0.0, "ms").unwrap(), "0.00ms");
        assert_eq!(duration_in_unit(1.0, "m"), None);
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(bytes(0.0), "0 B");
        assert_eq!(bytes(9.0), "9 B");
        assert_eq!(bytes(10.0), "10 B");
        assert_eq!(bytes(999.0), "999 B");
        assert_eq!(bytes(3000.0), "3.0 kB");
        assert_eq!(bytes(1449.0), "1.4 kB");
        assert_eq!(bytes(4959.94), "5.0 kB");
        assert_eq!(bytes(10160.0), "10 kB");
        assert_eq!(bytes(2_500_000.0), "2.5 MB");
        assert_eq!(
            bytes(123_456_789_000.0),
            "124 GB",
            "123.5 rounds up like toFixed(0)"
        );
        assert_eq!(bytes(999_999.0), "1000 kB");
    }

    #[test]
    fn numbers_and_percentages() {
        assert_eq!(number(40.0), "40");
        assert_eq!(number(19.297569417), "19.297569");
        assert_eq!(number(59.2262), "59.2262");
        assert_eq!(number(0.0000004), "0");
        assert_eq!(number(-1.5), "-1.5");
        assert_eq!(number(2.0000005), "2.000001", "rounded like toFixed(6)");
        assert_eq!(percent(1.0), "100.00%");
        assert_eq!(percent(0.0), "0.00%");
        assert_eq!(percent(0.75), "75.00%");
        assert_eq!(percent(0.29), "29.00%");
        assert_eq!(percent(0.99999), "99.99%", "truncated, not rounded");
        assert_eq!(percent(1.0 / 3.0), "33.33%");
    }

    #[test]
    fn js_to_fixed_rounds_ties_up() {
        assert_eq!(to_fixed(0.125, 2), "0.13");
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(9.96, 1), "10.0");
        assert_eq!(to_fixed(-0.001, 2), "0.00");
        assert_eq!(
            to_fixed(-1.005, 2),
            "-1.00",
            "1.005 is really 1.00499999..."
        );
    }

    #[test]
    fn values_by_metric_kind() {
        use MetricType::*;
        assert_eq!(value(0.0, Rate, ValueType::Default, None), "0.00%");
        assert_eq!(value(5.41, Trend, ValueType::Time, None), "5.41ms");
        assert_eq!(value(5.41, Trend, ValueType::Time, Some("s")), "0.01s");
        assert_eq!(value(5.41, Trend, ValueType::Time, Some("bogus")), "5.41ms");
        assert_eq!(value(3000.0, Counter, ValueType::Data, None), "3.0 kB");
        assert_eq!(value(2.0, Gauge, ValueType::Default, None), "2");
    }
}
