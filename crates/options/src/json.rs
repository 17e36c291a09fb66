//! k6's rules for option values in JSON (a script's `options`, a `--config` file): one
//! function per kind of value, used by every option and scenario field of that kind.
//!
//! k6 reads options with Go's `encoding/json` into `null.Bool`, `null.Int`, `null.String`
//! and its own duration type: `null` leaves an option unset, an integer may also be given as
//! a decimal string (`""` is unset), and any other type is refused.

use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::{Number, Value};

use crate::duration::{duration_from_json, GoDuration};

/// A JSON value of the wrong kind. The text is a template in which `{option}` stands for
/// the option's name (`{option} must be a boolean (true or false), got "x"`), see
/// [`describe`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KindError(pub String);

impl KindError {
    /// The message naming the option.
    pub fn naming(&self, option: &str) -> String {
        describe(option, &self.0)
    }
}

/// An error text naming `option`: its `{option}` filled in, or `option: ` put before it.
pub fn describe(option: &str, error: &str) -> String {
    if error.contains(OPTION) {
        error.replace(OPTION, option)
    } else {
        format!("{option}: {error}")
    }
}

const OPTION: &str = "{option}";

/// A number as Go's JSON encoder writes it (`1e+21`, `100000000000000000000`, `1.5`), the
/// form k6's messages show a script's number in.
pub fn go_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let e = format!("{f:e}");
        return match e.split_once('e') {
            Some((m, exp)) if !exp.starts_with('-') => format!("{m}e+{exp}"),
            _ => e,
        };
    }
    format!("{f}")
}

/// The value as a message shows it.
fn shown(v: &Value) -> String {
    match v {
        Value::Number(n) => go_number(n),
        other => other.to_string(),
    }
}

/// `true`, `false` or `null`.
pub fn boolean(v: &Value) -> Result<Option<bool>, KindError> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        other => Err(KindError(format!(
            "{{option}} must be a boolean (true or false), got {}",
            shown(other)
        ))),
    }
}

/// A string or `null` (an empty string is set, and empty).
pub fn string(v: &Value) -> Result<Option<String>, KindError> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(KindError(format!(
            "{{option}} must be a string, got {}",
            shown(other)
        ))),
    }
}

/// k6's integers (Go's `int64`): a whole number in range, or a decimal string of one;
/// `null` and `""` are unset. A fraction or a number out of range is refused as Go refuses
/// it, never clamped.
pub fn int(v: &Value) -> Result<Option<i64>, KindError> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Ok(Some(i));
            }
            // A script's numbers may arrive as floats: whole ones in range are integers.
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f >= -(2f64.powi(63)) && f < 2f64.powi(63) => {
                    Ok(Some(f as i64))
                }
                _ => Err(KindError(format!(
                    "{{option}}: json: cannot unmarshal number {} into an integer (int64)",
                    go_number(n)
                ))),
            }
        }
        Value::String(s) if s.is_empty() => Ok(None),
        Value::String(s) => crate::text::int(s)
            .map(Some)
            .map_err(|_| KindError(format!("{{option}} must be an integer, got {}", shown(v)))),
        Value::Object(o) => struct_int(o),
        other => Err(KindError(format!(
            "{{option}} must be an integer, got {}",
            shown(other)
        ))),
    }
}

/// An object where k6 wants an integer: Go decodes it into the option's `null.Int` as the
/// struct under it (`{Int64, Valid}`, names matched case-insensitively, other keys
/// ignored), so `{}` is 0 and `{Int64: 3}` is 3 — k6 starts the test with that value.
fn struct_int(o: &serde_json::Map<String, Value>) -> Result<Option<i64>, KindError> {
    let mut n = 0;
    for (k, v) in o {
        match k.to_ascii_lowercase().as_str() {
            "int64" => match v {
                Value::Null => {}
                Value::Number(num) => match num.as_i64() {
                    Some(i) => n = i,
                    None => {
                        return Err(KindError(format!(
                            "{{option}}: json: cannot unmarshal number {} into Go struct field of type int64",
                            go_number(num)
                        )))
                    }
                },
                other => {
                    return Err(KindError(format!(
                        "{{option}}: json: cannot unmarshal {} into Go struct field of type int64",
                        json_kind(other)
                    )))
                }
            },
            "valid" if !(v.is_boolean() || v.is_null()) => {
                return Err(KindError(format!(
                    "{{option}}: json: cannot unmarshal {} into Go struct field of type bool",
                    json_kind(v)
                )))
            }
            _ => {}
        }
    }
    Ok(Some(n))
}

/// Go's name of a JSON value's kind in its unmarshalling errors.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// An integer that may not be negative (the option's own rule on top of [`int`]).
pub fn count(v: &Value) -> Result<Option<u64>, KindError> {
    let n = int(v).map_err(|_| non_negative(v))?;
    n.map(|n| u64::try_from(n).map_err(|_| non_negative(v)))
        .transpose()
}

fn non_negative(v: &Value) -> KindError {
    KindError(format!(
        "{{option}} must be a non-negative integer, got {}",
        shown(v)
    ))
}

/// A duration: a Go duration string (with k6's days), or a number of milliseconds.
pub fn duration(v: &Value) -> Result<Option<GoDuration>, KindError> {
    duration_from_json(v).map_err(|_| match v {
        Value::String(t) => KindError(format!("invalid {OPTION} {}", Value::from(t.as_str()))),
        other => KindError(format!(
            "{{option}} must be a duration (a string like \"1m30s\" or a number of milliseconds), got {}",
            shown(other)
        )),
    })
}

/// An array of strings, or `null`.
pub fn strings(v: &Value) -> Result<Option<Vec<String>>, KindError> {
    match v {
        Value::Null => Ok(None),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                other => Err(KindError(format!(
                    "{{option}} must be an array of strings, got {}",
                    shown(other)
                ))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        other => Err(KindError(format!(
            "{{option}} must be an array of strings, got {}",
            shown(other)
        ))),
    }
}

/// An object of strings (`{"name": "value"}`), or `null`.
pub fn string_map(v: &Value) -> Result<Option<BTreeMap<String, String>>, KindError> {
    match v {
        Value::Null => Ok(None),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(KindError(format!(
                    "{{option}} must be an object of strings, got {} for \"{k}\"",
                    shown(other)
                ))),
            })
            .collect::<Result<BTreeMap<_, _>, _>>()
            .map(Some),
        other => Err(KindError(format!(
            "{{option}} must be an object of strings, got {}",
            shown(other)
        ))),
    }
}

/// An object of anything (`scenarios`, `thresholds`, `ext`), or `null`.
pub fn object(v: &Value) -> Result<Option<serde_json::Map<String, Value>>, KindError> {
    match v {
        Value::Null => Ok(None),
        Value::Object(m) => Ok(Some(m.clone())),
        other => Err(KindError(format!(
            "{{option}} must be an object, got {}",
            shown(other)
        ))),
    }
}

/// serde adaptors of the kinds above, for `#[serde(deserialize_with = "...")]`.
pub(crate) mod de {
    use super::*;

    macro_rules! adaptor {
        ($name:ident, $kind:path, $t:ty) => {
            pub(crate) fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
                let v = Value::deserialize(d)?;
                $kind(&v).map_err(|e| D::Error::custom(e.0))
            }
        };
    }

    adaptor!(boolean, super::boolean, bool);
    adaptor!(string, super::string, String);
    adaptor!(int, super::int, i64);
    adaptor!(duration, super::duration, GoDuration);
    adaptor!(strings, super::strings, Vec<String>);
    adaptor!(string_map, super::string_map, BTreeMap<String, String>);
    adaptor!(object, super::object, serde_json::Map<String, Value>);
}

/// serde adaptors that write values back in k6's JSON shape.
pub(crate) mod ser {
    use serde::Serializer;

    use crate::duration::GoDuration;

    /// A duration as Go prints it (`"1m30s"`).
    pub(crate) fn duration<S: Serializer>(d: &Option<GoDuration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.collect_str(d),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err<T: std::fmt::Debug>(r: Result<T, KindError>) -> String {
        r.unwrap_err().naming("o")
    }

    #[test]
    fn integers_follow_go_int64() {
        assert_eq!(int(&json!(5)).unwrap(), Some(5));
        assert_eq!(int(&json!(5.0)).unwrap(), Some(5));
        assert_eq!(int(&json!(-3)).unwrap(), Some(-3));
        assert_eq!(int(&json!("7")).unwrap(), Some(7));
        assert_eq!(int(&json!("")).unwrap(), None);
        assert_eq!(int(&json!(null)).unwrap(), None);
        assert_eq!(
            err(int(&json!(1e20))),
            "o: json: cannot unmarshal number 100000000000000000000 into an integer (int64)"
        );
        assert_eq!(
            err(int(&json!(1e21))),
            "o: json: cannot unmarshal number 1e+21 into an integer (int64)"
        );
        assert_eq!(
            err(int(&json!(1.5))),
            "o: json: cannot unmarshal number 1.5 into an integer (int64)"
        );
        assert_eq!(
            err(int(&json!(u64::MAX))),
            "o: json: cannot unmarshal number 18446744073709551615 into an integer (int64)"
        );
        assert_eq!(err(int(&json!(true))), "o must be an integer, got true");
        assert_eq!(err(int(&json!("x"))), "o must be an integer, got \"x\"");
        assert_eq!(err(int(&json!(" 1"))), "o must be an integer, got \" 1\"");
        // k6 1.1.0 reads an object as Go's `NullInt64` struct (checked: `vus: {}` is 0 VUs,
        // `{Int64: 3}` 3 VUs, `{Int64: 'x'}` refused).
        assert_eq!(int(&json!({})).unwrap(), Some(0));
        assert_eq!(int(&json!({"Int64": 3, "Valid": false})).unwrap(), Some(3));
        assert_eq!(int(&json!({"int64": 2, "other": [1]})).unwrap(), Some(2));
        assert_eq!(
            err(int(&json!({"Int64": "x"}))),
            "o: json: cannot unmarshal string into Go struct field of type int64"
        );
        assert_eq!(
            err(int(&json!({"valid": 1}))),
            "o: json: cannot unmarshal number into Go struct field of type bool"
        );
        assert_eq!(count(&json!(3)).unwrap(), Some(3));
        assert_eq!(
            err(count(&json!(-1))),
            "o must be a non-negative integer, got -1"
        );
        assert_eq!(
            err(count(&json!("x"))),
            "o must be a non-negative integer, got \"x\""
        );
    }

    #[test]
    fn booleans_strings_and_lists_refuse_other_types() {
        assert_eq!(boolean(&json!(true)).unwrap(), Some(true));
        assert_eq!(boolean(&json!(null)).unwrap(), None);
        assert_eq!(
            err(boolean(&json!("x"))),
            "o must be a boolean (true or false), got \"x\""
        );
        assert_eq!(
            err(boolean(&json!(1))),
            "o must be a boolean (true or false), got 1"
        );
        assert_eq!(string(&json!("")).unwrap(), Some(String::new()));
        assert_eq!(err(string(&json!(1))), "o must be a string, got 1");
        assert_eq!(strings(&json!(["a"])).unwrap(), Some(vec!["a".to_string()]));
        assert_eq!(
            err(strings(&json!("a"))),
            "o must be an array of strings, got \"a\""
        );
        assert_eq!(
            err(strings(&json!([1]))),
            "o must be an array of strings, got 1"
        );
        assert_eq!(
            err(string_map(&json!({"a": 1}))),
            "o must be an object of strings, got 1 for \"a\""
        );
        assert_eq!(err(object(&json!("x"))), "o must be an object, got \"x\"");
        assert_eq!(
            err(duration(&json!(true))),
            "o must be a duration (a string like \"1m30s\" or a number of milliseconds), got true"
        );
        assert_eq!(err(duration(&json!("soon"))), "invalid o \"soon\"");
    }

    #[test]
    fn messages_name_the_option() {
        assert_eq!(
            boolean(&json!("yes")).unwrap_err().naming("h2c"),
            "h2c must be a boolean (true or false), got \"yes\""
        );
        assert_eq!(
            duration(&json!("soon")).unwrap_err().naming("setupTimeout"),
            "invalid setupTimeout \"soon\""
        );
        assert_eq!(
            describe("stages[0]", "unknown field `x`"),
            "stages[0]: unknown field `x`"
        );
    }
}
