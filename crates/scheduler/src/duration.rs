//! k6-style durations: `"1m30s"`, `"500ms"`, `"2h"`, bare numbers as milliseconds.

use std::time::Duration;

/// A duration string that k6 would not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration \"{0}\"")]
pub struct DurationError(pub String);

/// Parses a k6 duration: Go-style units (`h`, `m`, `s`, `ms`, `us`/`µs`, `ns`), possibly
/// combined (`1m30s`) and fractional (`1.5s`); a bare number means milliseconds.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let s = text.trim();
    let err = || DurationError(text.to_string());
    if s.is_empty() {
        return Err(err());
    }
    if let Ok(ms) = s.parse::<f64>() {
        return if ms >= 0.0 && ms.is_finite() {
            Ok(Duration::from_secs_f64(ms / 1000.0))
        } else {
            Err(err())
        };
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        if num_len == 0 {
            return Err(err());
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let secs_per_unit = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" | "μs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(err()),
        };
        total += value * secs_per_unit;
        rest = &rest[unit_len..];
    }
    Ok(Duration::from_secs_f64(total))
}

/// Parses a JSON option value that k6 treats as a duration (string, or number of ms).
pub fn duration_from_json(value: &serde_json::Value) -> Result<Duration, DurationError> {
    match value {
        serde_json::Value::String(s) => parse_duration(s),
        serde_json::Value::Number(n) => {
            let ms = n.as_f64().unwrap_or(-1.0);
            if ms >= 0.0 {
                Ok(Duration::from_secs_f64(ms / 1000.0))
            } else {
                Err(DurationError(n.to_string()))
            }
        }
        other => Err(DurationError(other.to_string())),
    }
}

/// Formats like Go's `time.Duration.String()` as k6 prints it in banners: `30s`, `10m0s`,
/// `1h0m0s`, `1.5s`, `500ms`.
pub fn format_duration(d: Duration) -> String {
    let total = d.as_secs_f64();
    if total == 0.0 {
        return "0s".into();
    }
    if total < 1.0 {
        let ms = total * 1000.0;
        return format!("{}ms", trim_float(ms));
    }
    let hours = (total / 3600.0).floor();
    let minutes = ((total - hours * 3600.0) / 60.0).floor();
    let seconds = total - hours * 3600.0 - minutes * 60.0;
    let secs = format!("{}s", trim_float(seconds));
    if hours > 0.0 {
        format!("{}h{}m{}", hours as u64, minutes as u64, secs)
    } else if minutes > 0.0 {
        format!("{}m{}", minutes as u64, secs)
    } else {
        secs
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{:.9}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k6_forms() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("250").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn formats_like_go() {
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_secs(600)), "10m0s");
        assert_eq!(format_duration(Duration::from_secs(632)), "10m32s");
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_millis(100)), "100ms");
        assert_eq!(format_duration(Duration::ZERO), "0s");
    }
}
