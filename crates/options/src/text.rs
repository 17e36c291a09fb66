//! k6's rules for option values given as text (`K6_*` environment variables): one function
//! per kind of value.
//!
//! k6 reads its environment with envconfig into `null.Bool`, `null.Int` and its duration
//! type, whose text forms are narrower than JSON's: a boolean is exactly `true` or `false`,
//! an integer is Go's `strconv.ParseInt` (no spaces), and an empty value (or `null`, for
//! booleans and integers) leaves the option unset.

use crate::duration::{parse_go_duration, parse_go_int, DurationError, GoDuration};

/// A text that is not a value of the kind asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{text}\" is not {expected}")]
pub struct TextError {
    /// The text given.
    pub text: String,
    /// What was expected (`an integer`, `true or false`).
    pub expected: &'static str,
}

fn unset(text: &str) -> bool {
    text.is_empty() || text == "null"
}

/// k6's boolean option text: `true` or `false`; empty or `null` is unset. (k6 refuses `1`,
/// `yes`, `True` for its own options.)
pub fn boolean(text: &str) -> Result<Option<bool>, TextError> {
    match text {
        t if unset(t) => Ok(None),
        "true" => Ok(Some(true)),
        "false" => Ok(Some(false)),
        _ => Err(TextError {
            text: text.to_string(),
            expected: "true or false",
        }),
    }
}

/// Go's `strconv.ParseBool`, which k6's outputs use for their own variables: `1`, `t`,
/// `T`, `TRUE`, `true`, `True` and their `false` counterparts.
pub fn go_bool(text: &str) -> Result<bool, TextError> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(TextError {
            text: text.to_string(),
            expected: "true or false",
        }),
    }
}

/// An integer (Go's `int64`, decimal, optional sign, nothing else).
pub fn int(text: &str) -> Result<i64, TextError> {
    parse_go_int(text).ok_or_else(|| TextError {
        text: text.to_string(),
        expected: "an integer",
    })
}

/// Go's `strconv.ParseInt(text, 10, 64)` with Go's error text, as k6's integer flags report
/// it: `strconv.ParseInt: parsing "x": invalid syntax` (or `value out of range`).
pub fn go_int(text: &str) -> Result<i64, String> {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseInt: parsing {quoted}: invalid syntax"
        ));
    }
    parse_go_int(text)
        .ok_or_else(|| format!("strconv.ParseInt: parsing {quoted}: value out of range"))
}

/// An integer option's text: empty or `null` is unset.
pub fn opt_int(text: &str) -> Result<Option<i64>, TextError> {
    if unset(text) {
        return Ok(None);
    }
    int(text).map(Some)
}

/// A duration option's text (see [`parse_go_duration`]); empty is unset.
pub fn duration(text: &str) -> Result<Option<GoDuration>, DurationError> {
    if text.is_empty() {
        return Ok(None);
    }
    parse_go_duration(text).map(Some)
}

/// A string option's text: empty is unset (as k6's `null.String` reads text).
pub fn string(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

/// `a,b,c` as its trimmed, non-empty parts.
pub fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_take_k6s_spellings_only() {
        assert_eq!(boolean("true"), Ok(Some(true)));
        assert_eq!(boolean("false"), Ok(Some(false)));
        assert_eq!(boolean(""), Ok(None));
        assert_eq!(boolean("null"), Ok(None));
        for bad in ["1", "0", "t", "TRUE", "True", "yes", "x"] {
            assert!(boolean(bad).is_err(), "{bad}");
        }
        for (t, v) in [
            ("1", true),
            ("T", true),
            ("True", true),
            ("0", false),
            ("F", false),
        ] {
            assert_eq!(go_bool(t), Ok(v));
        }
        assert!(go_bool("yes").is_err());
    }

    #[test]
    fn integers_are_go_parse_int() {
        assert_eq!(opt_int("42"), Ok(Some(42)));
        assert_eq!(opt_int("-3"), Ok(Some(-3)));
        assert_eq!(opt_int("+3"), Ok(Some(3)));
        assert_eq!(opt_int(""), Ok(None));
        for bad in [" 2", "1.5", "1e3", "x", "99999999999999999999", "1_000"] {
            assert_eq!(
                opt_int(bad).unwrap_err().to_string(),
                format!("\"{bad}\" is not an integer")
            );
        }
    }

    #[test]
    fn durations_lists_and_strings() {
        assert_eq!(duration("1d"), Ok(Some(GoDuration::from_secs(86_400))));
        assert_eq!(duration(""), Ok(None));
        assert!(duration("x").is_err());
        assert_eq!(list(" a, b,,c "), ["a", "b", "c"]);
        assert_eq!(string(""), None);
        assert_eq!(string("x").as_deref(), Some("x"));
    }
}
