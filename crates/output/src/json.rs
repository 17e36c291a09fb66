//! JSON number helper shared by the JSON outputs.

use serde_json::Value;

/// A JSON number the way Go and JavaScript print it: integral values without `.0`,
/// non-finite values as `null`.
pub fn num(v: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if v.is_finite() && v.fract() == 0.0 && v.abs() < EXACT {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_without_fraction() {
        assert_eq!(num(40.0).to_string(), "40");
        assert_eq!(num(-3.0).to_string(), "-3");
        assert_eq!(num(0.375).to_string(), "0.375");
        assert_eq!(num(19.527335417617326).to_string(), "19.527335417617326");
        assert_eq!(num(f64::NAN), Value::Null);
        assert_eq!(num(1e300), serde_json::json!(1e300));
    }
}
