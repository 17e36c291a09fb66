//! k6's durations: Go duration strings (`"1m30s"`, `"500ms"`, `"-1s"`), k6's day extension
//! (`"1d"`, `"2d12h"`) and bare numbers as milliseconds (`"250"`, `1500`).

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// A duration text or value that k6 would not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration \"{0}\"")]
pub struct DurationError(pub String);

/// A k6 duration as options hold it before validation: Go's `time.Duration`, signed
/// nanoseconds, so that a negative value can be refused with the option's own message (or
/// accepted where k6 accepts it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoDuration(pub i64);

impl GoDuration {
    /// Zero.
    pub const ZERO: GoDuration = GoDuration(0);

    /// From a standard duration (saturating at Go's maximum).
    pub fn from_std(d: Duration) -> GoDuration {
        GoDuration(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }

    /// From whole seconds.
    pub const fn from_secs(s: i64) -> GoDuration {
        GoDuration(s.saturating_mul(1_000_000_000))
    }

    /// Nanoseconds, signed.
    pub fn as_nanos(self) -> i64 {
        self.0
    }

    /// Whether it is below zero.
    pub fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// The standard duration, `None` when negative.
    pub fn to_std(self) -> Option<Duration> {
        u64::try_from(self.0).ok().map(Duration::from_nanos)
    }

    /// The standard duration, negative values as zero (where k6 treats them as no time).
    pub fn to_std_or_zero(self) -> Duration {
        self.to_std().unwrap_or(Duration::ZERO)
    }
}

impl From<Duration> for GoDuration {
    fn from(d: Duration) -> Self {
        GoDuration::from_std(d)
    }
}

/// Go's `time.Duration.String()`: `30s`, `10m0s`, `1h0m0s`, `1.5s`, `500ms`, `1.5µs`, `-1s`.
impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.0 < 0;
        let mut u = self.0.unsigned_abs();
        let sign = if neg { "-" } else { "" };
        if u < 1_000_000_000 {
            // Under a second: one unit, with a fraction.
            let (unit, scale) = match u {
                0 => return f.write_str("0s"),
                1..=999 => return write!(f, "{sign}{u}ns"),
                1_000..=999_999 => ("µs", 1_000),
                _ => ("ms", 1_000_000),
            };
            return write!(f, "{sign}{}{unit}", fraction(u, scale));
        }
        let secs = fraction(u % 60_000_000_000, 1_000_000_000);
        u /= 60_000_000_000;
        if u == 0 {
            return write!(f, "{sign}{secs}s");
        }
        let minutes = u % 60;
        let hours = u / 60;
        if hours == 0 {
            write!(f, "{sign}{minutes}m{secs}s")
        } else {
            write!(f, "{sign}{hours}h{minutes}m{secs}s")
        }
    }
}

/// `v / scale` with the fraction's trailing zeros dropped (`1500, 1000` → `1.5`).
fn fraction(v: u64, scale: u64) -> String {
    let whole = v / scale;
    let rest = v % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Formats like Go's `time.Duration.String()`, as k6 prints durations in banners.
pub fn format_duration(d: Duration) -> String {
    GoDuration::from_std(d).to_string()
}

/// Parses a non-negative k6 duration (see [`parse_go_duration`]) as a standard duration.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    parse_go_duration(text)?
        .to_std()
        .ok_or_else(|| DurationError(text.to_string()))
}

/// Parses a k6 duration as k6 parses option values: a number is milliseconds (fractions and
/// signs allowed); a text with a `d` is days, optionally followed by a Go duration
/// (`2d12h`); anything else is a Go duration string (`1h2m3.5s`, `-1s`, `300ms`, `1µs`).
pub fn parse_go_duration(text: &str) -> Result<GoDuration, DurationError> {
    let err = || DurationError(text.to_string());
    if let Some(ms) = parse_go_float(text) {
        return Ok(millis(ms));
    }
    let Some(d_pos) = text.find('d') else {
        return go_duration(text).map(GoDuration).ok_or_else(err);
    };
    let mut rest = 0i64;
    if d_pos + 1 < text.len() {
        rest = go_duration(&text[d_pos + 1..]).ok_or_else(err)?;
        if rest < 0 {
            return Err(err());
        }
    }
    let days = parse_go_int(&text[..d_pos]).ok_or_else(err)?;
    if days < 0 {
        rest = -rest;
    }
    // Go's arithmetic wraps on overflow; so does k6's result.
    Ok(GoDuration(
        days.wrapping_mul(24 * 3_600_000_000_000).wrapping_add(rest),
    ))
}

/// A number of milliseconds as Go converts `float64 * time.Millisecond` to a duration:
/// out-of-range values (and NaN) become the smallest duration, as on amd64.
fn millis(ms: f64) -> GoDuration {
    let ns = ms * 1e6;
    if ns.is_finite() && ns >= i64::MIN as f64 && ns < i64::MAX as f64 {
        GoDuration(ns as i64)
    } else {
        GoDuration(i64::MIN)
    }
}

/// Go's `strconv.ParseFloat`, which k6 tries first: a number is milliseconds.
fn parse_go_float(text: &str) -> Option<f64> {
    crate::go_float::parse_go_float(text).ok()
}

/// Go's `strconv.ParseInt(text, 10, 64)`: an optional sign and decimal digits.
pub(crate) fn parse_go_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok()
}

/// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`; `None` when it is
/// malformed or overflows.
fn go_duration(text: &str) -> Option<i64> {
    go_time_duration(text).ok()
}

/// Why Go's `time.ParseDuration` refuses a text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum GoDurationFault {
    Invalid,
    MissingUnit,
    UnknownUnit(String),
}

/// Parses as Go's `time.ParseDuration` (no days, no bare numbers but `0`), as k6 parses its
/// duration flags; the error is Go's text, e.g. `time: unknown unit "d" in duration "1d"`.
pub fn parse_time_duration(text: &str) -> Result<GoDuration, String> {
    go_time_duration(text).map(GoDuration).map_err(|f| match f {
        GoDurationFault::Invalid => format!("time: invalid duration {}", go_quote(text)),
        GoDurationFault::MissingUnit => {
            format!("time: missing unit in duration {}", go_quote(text))
        }
        GoDurationFault::UnknownUnit(u) => format!(
            "time: unknown unit {} in duration {}",
            go_quote(&u),
            go_quote(text)
        ),
    })
}

/// Go's `strconv.Quote` for the printable texts flags carry.
fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn go_time_duration(text: &str) -> Result<i64, GoDurationFault> {
    use GoDurationFault::{Invalid, MissingUnit, UnknownUnit};
    const UNITS: &[(&str, u64)] = &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("μs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("m", 60_000_000_000),
        ("h", 3_600_000_000_000),
    ];
    const LIMIT: u64 = 1 << 63;
    let (neg, mut s) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(Invalid);
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut v: u64 = 0;
        for b in s[..int_len].bytes() {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(b - b'0')))
                .filter(|v| *v <= LIMIT)
                .ok_or(Invalid)?;
        }
        s = &s[int_len..];
        let (mut frac, mut scale) = (0u64, 1f64);
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for b in rest[..frac_len].bytes() {
                if overflow {
                    continue;
                }
                match frac
                    .checked_mul(10)
                    .and_then(|f| f.checked_add(u64::from(b - b'0')))
                {
                    Some(f) if f <= LIMIT => {
                        frac = f;
                        scale *= 10.0;
                    }
                    _ => overflow = true,
                }
            }
            s = &rest[frac_len..];
            if int_len == 0 && frac_len == 0 {
                return Err(Invalid);
            }
        } else if int_len == 0 {
            return Err(Invalid);
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(MissingUnit);
        }
        let unit = UNITS
            .iter()
            .find(|(u, _)| *u == &s[..unit_len])
            .ok_or_else(|| UnknownUnit(s[..unit_len].to_owned()))?
            .1;
        s = &s[unit_len..];
        if v > LIMIT / unit {
            return Err(Invalid);
        }
        v *= unit;
        if frac > 0 {
            v += (frac as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(Invalid);
            }
        }
        total = total
            .checked_add(v)
            .filter(|t| *t <= LIMIT)
            .ok_or(Invalid)?;
    }
    if neg {
        return Ok((total as i128).wrapping_neg() as i64);
    }
    i64::try_from(total).map_err(|_| Invalid)
}

/// A duration option's JSON value as k6 reads it: `null` is unset, a string is parsed with
/// [`parse_go_duration`], a number is milliseconds; anything else is refused.
pub fn duration_from_json(value: &Value) -> Result<Option<GoDuration>, DurationError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => parse_go_duration(s).map(Some),
        Value::Number(n) => Ok(Some(millis(n.as_f64().unwrap_or(f64::NAN)))),
        other => Err(DurationError(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(text: &str) -> i64 {
        parse_go_duration(text).unwrap().0
    }

    #[test]
    fn parses_go_and_k6_forms() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("250").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1d").unwrap(), Duration::from_secs(86_400));
        assert_eq!(
            parse_duration("2d12h").unwrap(),
            Duration::from_secs(2 * 86_400 + 12 * 3600)
        );
        assert_eq!(ns("1µs"), 1_000);
        assert_eq!(ns("1μs"), 1_000);
        assert_eq!(ns("1us500ns"), 1_500);
        assert_eq!(ns(".5s"), 500_000_000);
        assert_eq!(ns("1.s"), 1_000_000_000);
        assert_eq!(ns("0"), 0);
        assert_eq!(ns("-1s"), -1_000_000_000);
        assert_eq!(ns("+1s"), 1_000_000_000);
        assert_eq!(ns("-1d"), -86_400_000_000_000);
        assert_eq!(ns("-2.5"), -2_500_000);
        assert_eq!(ns("1e3"), 1_000_000_000);
        // Go's ParseFloat, tried first, reads underscores and hexadecimal floats.
        assert_eq!(ns("1_000"), 1_000_000_000);
        assert_eq!(ns("0x1p10"), 1_024_000_000);
        for bad in [
            "10x",
            "",
            "s",
            "1.5d",
            "1d-1h",
            "1h-1m",
            ".s",
            "1 s",
            "1_0s",
            "1e400",
            "d",
            "9223372037s",
        ] {
            assert!(parse_go_duration(bad).is_err(), "{bad}");
        }
        assert!(
            parse_duration("-1s").is_err(),
            "negative is not a std duration"
        );
        assert_eq!(ns("9223372036s"), 9_223_372_036_000_000_000);
    }

    #[test]
    fn json_values() {
        use serde_json::json;
        assert_eq!(duration_from_json(&json!(null)).unwrap(), None);
        assert_eq!(
            duration_from_json(&json!(1500)).unwrap(),
            Some(GoDuration(1_500_000_000))
        );
        assert_eq!(
            duration_from_json(&json!(-1.5)).unwrap(),
            Some(GoDuration(-1_500_000))
        );
        assert_eq!(
            duration_from_json(&json!("1d")).unwrap(),
            Some(GoDuration::from_secs(86_400))
        );
        assert!(duration_from_json(&json!(true)).is_err());
        assert!(duration_from_json(&json!({})).is_err());
    }

    #[test]
    fn formats_like_go() {
        let f = |d: Duration| format_duration(d);
        assert_eq!(f(Duration::from_secs(30)), "30s");
        assert_eq!(f(Duration::from_secs(600)), "10m0s");
        assert_eq!(f(Duration::from_secs(632)), "10m32s");
        assert_eq!(f(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(f(Duration::from_secs(90_000)), "25h0m0s");
        assert_eq!(f(Duration::from_millis(1500)), "1.5s");
        assert_eq!(f(Duration::from_millis(100)), "100ms");
        assert_eq!(f(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(f(Duration::from_nanos(1500)), "1.5µs");
        assert_eq!(f(Duration::from_nanos(15)), "15ns");
        assert_eq!(f(Duration::from_nanos(1_000_000_001)), "1.000000001s");
        assert_eq!(f(Duration::ZERO), "0s");
        assert_eq!(GoDuration(-1_000_000_000).to_string(), "-1s");
        assert_eq!(GoDuration(-90_000_000_000).to_string(), "-1m30s");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    const UNITS: &[(&str, i128)] = &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("m", 60_000_000_000),
        ("h", 3_600_000_000_000),
    ];

    proptest! {
        #![proptest_config(crate::prop_config(4000))]

        /// Any text: a decision, never a panic; an accepted text is accepted the same way twice.
        #[test]
        fn any_text_is_decided(text in "\\PC{0,24}") {
            let first = parse_go_duration(&text);
            prop_assert_eq!(first, parse_go_duration(&text));
        }

        /// Texts near the grammar (digits, units, signs, dots, `d`) hit the parser's edges.
        #[test]
        fn grammar_like_text_is_decided(text in "[-+]?[0-9.]{0,6}(d|h|m|s|ms|us|µs|ns|x|e)?[0-9.]{0,4}(h|m|s|ms|ns)?") {
            let _ = parse_go_duration(&text);
        }

        /// Go's `Duration.String()` output reads back to the same nanoseconds, for every i64.
        #[test]
        fn display_round_trips(ns in any::<i64>()) {
            let text = GoDuration(ns).to_string();
            prop_assert_eq!(parse_go_duration(&text), Ok(GoDuration(ns)), "{}", text);
        }

        /// A sequence of whole `<n><unit>` terms is their sum (Go's model), or refused exactly
        /// when the sum passes 2^63 ns.
        #[test]
        fn unit_terms_sum(terms in prop::collection::vec((0u32..100_000, 0usize..UNITS.len()), 1..5), neg in any::<bool>()) {
            let mut text = String::from(if neg { "-" } else { "" });
            let mut sum: i128 = 0;
            for (n, u) in &terms {
                text.push_str(&format!("{n}{}", UNITS[*u].0));
                sum += i128::from(*n) * UNITS[*u].1;
            }
            let want = if neg { -sum } else { sum };
            prop_assert_eq!(parse_go_duration(&text), Ok(GoDuration(want as i64)), "{}", text);
        }

        /// `<n>d<go duration>` is n days plus the rest; the rest's sign cannot be given.
        #[test]
        fn days_prefix(days in 0i64..10_000, secs in 1i64..86_400) {
            let text = format!("{days}d{secs}s");
            let want = days * 86_400_000_000_000 + secs * 1_000_000_000;
            prop_assert_eq!(parse_go_duration(&text), Ok(GoDuration(want)));
            let signed_rest = format!("{days}d-{secs}s");
            prop_assert!(parse_go_duration(&signed_rest).is_err());
        }

        /// A bare number is milliseconds (k6 tries Go's ParseFloat first).
        #[test]
        fn numbers_are_millis(ms in -1_000_000_000i64..1_000_000_000) {
            prop_assert_eq!(parse_go_duration(&ms.to_string()), Ok(GoDuration(ms * 1_000_000)));
        }

        /// A longer duration never parses to fewer nanoseconds (monotonic in each term).
        #[test]
        fn monotonic_in_seconds(a in 0u32..1_000_000, b in 0u32..1_000_000) {
            let (lo, hi) = (a.min(b), a.max(b));
            let p = |s: u32| parse_go_duration(&format!("{s}s")).unwrap();
            prop_assert!(p(lo) <= p(hi));
        }
    }
}
