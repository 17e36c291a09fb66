//! Parsers for threshold keys (`metric{tag:value}`) and expressions (`p(95)<500`).

use std::fmt;

use crate::stat::Stat;

/// Comparison of a threshold expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `>`
    Greater,
    /// `>=`
    GreaterEqual,
    /// `<`
    Less,
    /// `<=`
    LessEqual,
    /// `==`
    Equal,
    /// `===` (same as `==`; k6 accepts it for JS habits)
    StrictEqual,
    /// `!=`
    NotEqual,
}

impl Operator {
    /// Whether `left <op> right` holds.
    pub fn holds(self, left: f64, right: f64) -> bool {
        match self {
            Operator::Greater => left > right,
            Operator::GreaterEqual => left >= right,
            Operator::Less => left < right,
            Operator::LessEqual => left <= right,
            Operator::Equal | Operator::StrictEqual => left == right,
            Operator::NotEqual => left != right,
        }
    }

    /// Whether `left op right` holds, given only how `left` compares with `right`.
    pub fn holds_ordering(self, left_vs_right: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Operator::Greater => left_vs_right == Greater,
            Operator::GreaterEqual => left_vs_right != Less,
            Operator::Less => left_vs_right == Less,
            Operator::LessEqual => left_vs_right != Greater,
            Operator::Equal | Operator::StrictEqual => left_vs_right == Equal,
            Operator::NotEqual => left_vs_right != Equal,
        }
    }

    /// The operator's source text.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Greater => ">",
            Operator::GreaterEqual => ">=",
            Operator::Less => "<",
            Operator::LessEqual => "<=",
            Operator::Equal => "==",
            Operator::StrictEqual => "===",
            Operator::NotEqual => "!=",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed `aggregation_method ws* operator ws* float`.
#[derive(Clone, Debug, PartialEq)]
pub struct Expression {
    /// The aggregation method.
    pub stat: Stat,
    /// The aggregation method as written, e.g. `p(99.9)`; used in the summary line.
    pub stat_text: String,
    /// The comparison.
    pub op: Operator,
    /// The right-hand side.
    pub value: f64,
}

/// Why an expression did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpressionError {
    /// No operator was found.
    MissingOperator,
    /// Nothing before the operator.
    MissingMethod,
    /// The aggregation method is not one k6 knows; holds its text.
    UnknownMethod(String),
    /// The right-hand side is not a number; holds its text.
    BadValue(String),
}

impl fmt::Display for ExpressionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpressionError::MissingOperator => f.write_str(
                "malformed threshold expression: expected an operator (one of >, >=, <, <=, ==, ===, !=)",
            ),
            ExpressionError::MissingMethod => {
                f.write_str("malformed threshold expression: missing aggregation method")
            }
            ExpressionError::UnknownMethod(m) if m.starts_with("p(") => write!(
                f,
                "malformed percentile {m}: expected p(N) with N a number between 0 and 100"
            ),
            ExpressionError::UnknownMethod(m) => write!(f, "unknown aggregation method {m}"),
            ExpressionError::BadValue(v) => {
                write!(f, "malformed threshold expression: {v:?} is not a number")
            }
        }
    }
}

/// Parses a threshold expression; surrounding whitespace is ignored.
pub fn parse_expression(input: &str) -> Result<Expression, ExpressionError> {
    let input = input.trim();
    let at = input
        .find(['<', '>', '=', '!'])
        .ok_or(ExpressionError::MissingOperator)?;
    let (method, rest) = input.split_at(at);
    let method = method.trim_end();
    // Longest operators first so ">=" is not read as ">" followed by "=...".
    let op = [
        Operator::StrictEqual,
        Operator::Equal,
        Operator::NotEqual,
        Operator::GreaterEqual,
        Operator::LessEqual,
        Operator::Greater,
        Operator::Less,
    ]
    .into_iter()
    .find(|op| rest.starts_with(op.as_str()))
    .ok_or(ExpressionError::MissingOperator)?;
    if method.is_empty() {
        return Err(ExpressionError::MissingMethod);
    }
    let stat = Stat::parse(method)
        .filter(|s| !matches!(s, Stat::Passes | Stat::Fails))
        .ok_or_else(|| ExpressionError::UnknownMethod(method.to_owned()))?;
    let value_text = rest[op.as_str().len()..].trim();
    let value =
        parse_number(value_text).ok_or_else(|| ExpressionError::BadValue(value_text.to_owned()))?;
    Ok(Expression {
        stat,
        stat_text: method.to_owned(),
        op,
        value,
    })
}

/// A float the way Go's ParseFloat reads one, minus NaN.
fn parse_number(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

/// A parsed threshold key: the metric name and an optional sub-metric selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricKey<'a> {
    /// The metric name before any `{`.
    pub name: &'a str,
    /// The trimmed text inside the braces; the sub-metric's name is `name{inner}`.
    pub inner: Option<&'a str>,
    /// The selector's `(tag, value)` pairs in written order.
    pub tags: Vec<(String, String)>,
}

/// Parses `name` or `name{tag:value,tag2:value2}`; returns the reason on failure.
pub fn parse_metric_key(key: &str) -> Result<MetricKey<'_>, String> {
    let Some(open) = key.find('{') else {
        if key.contains('}') {
            return Err("parsing metric name failed: unexpected closing curly brace".into());
        }
        return Ok(MetricKey {
            name: key,
            inner: None,
            tags: Vec::new(),
        });
    };
    let name = &key[..open];
    let body = key[open + 1..]
        .strip_suffix('}')
        .ok_or("parsing metric name failed: missing closing curly brace")?;
    if body.contains(['{', '}']) {
        return Err("parsing metric name failed: misplaced curly brace".into());
    }
    if name.is_empty() {
        return Err(
            "parsing metric name failed: missing metric name before the tag selector".into(),
        );
    }
    let inner = body.trim();
    if inner.is_empty() {
        return Err(format!(
            "submetric criteria for metric '{name}' cannot be empty"
        ));
    }
    let mut tags = Vec::new();
    for item in inner.split(',') {
        let item = item.trim();
        let Some((k, v)) = item.split_once(':') else {
            return Err(format!(
                "parsing metric name failed: expected a tag:value pair, got {item:?}"
            ));
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(format!(
                "parsing metric name failed: empty tag name in {item:?}"
            ));
        }
        if v.is_empty() {
            return Err(format!(
                "parsing metric name failed: empty value for tag {k:?}"
            ));
        }
        tags.push((k.to_owned(), v.to_owned()));
    }
    Ok(MetricKey {
        name,
        inner: Some(inner),
        tags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> Expression {
        parse_expression(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn every_operator() {
        for (src, op) in [
            ("avg>1", Operator::Greater),
            ("avg>=1", Operator::GreaterEqual),
            ("avg<1", Operator::Less),
            ("avg<=1", Operator::LessEqual),
            ("avg==1", Operator::Equal),
            ("avg===1", Operator::StrictEqual),
            ("avg!=1", Operator::NotEqual),
        ] {
            let e = expr(src);
            assert_eq!(e.op, op, "{src}");
            assert_eq!(e.value, 1.0);
            assert_eq!(e.stat, Stat::Avg);
        }
    }

    #[test]
    fn operator_semantics() {
        assert!(Operator::Greater.holds(2.0, 1.0));
        assert!(!Operator::Greater.holds(1.0, 1.0));
        assert!(Operator::GreaterEqual.holds(1.0, 1.0));
        assert!(Operator::Less.holds(0.0, 1.0));
        assert!(!Operator::LessEqual.holds(1.5, 1.0));
        assert!(Operator::Equal.holds(1.0, 1.0));
        assert!(Operator::StrictEqual.holds(1.0, 1.0));
        assert!(Operator::NotEqual.holds(1.0, 2.0));
        assert!(!Operator::Less.holds(f64::NAN, 1.0));
    }

    #[test]
    fn percentiles_whitespace_and_numbers() {
        let e = expr("p(99.9) < 250.5");
        assert_eq!(e.stat, Stat::Percentile(99.9));
        assert_eq!(e.stat_text, "p(99.9)");
        assert_eq!(e.op, Operator::Less);
        assert_eq!(e.value, 250.5);
        let e = expr("  rate\t<=\t0.01 ");
        assert_eq!(
            (e.stat, e.op, e.value),
            (Stat::Rate, Operator::LessEqual, 0.01)
        );
        assert_eq!(expr("count>-5").value, -5.0);
        assert_eq!(expr("value==1e3").value, 1000.0);
        assert_eq!(expr("med!=0").stat, Stat::Med);
        assert_eq!(expr("p(0)>=0").stat, Stat::Percentile(0.0));
    }

    #[test]
    fn bad_expressions() {
        assert_eq!(
            parse_expression("p(95)"),
            Err(ExpressionError::MissingOperator)
        );
        assert_eq!(parse_expression(""), Err(ExpressionError::MissingOperator));
        assert_eq!(parse_expression("<5"), Err(ExpressionError::MissingMethod));
        assert_eq!(
            parse_expression("avg=5"),
            Err(ExpressionError::MissingOperator)
        );
        assert_eq!(
            parse_expression("avg<<5"),
            Err(ExpressionError::BadValue("<5".into()))
        );
        assert_eq!(
            parse_expression("avg<"),
            Err(ExpressionError::BadValue(String::new()))
        );
        assert_eq!(
            parse_expression("avg<abc"),
            Err(ExpressionError::BadValue("abc".into()))
        );
        assert_eq!(
            parse_expression("avg<NaN"),
            Err(ExpressionError::BadValue("NaN".into()))
        );
        assert_eq!(
            parse_expression("mean<5"),
            Err(ExpressionError::UnknownMethod("mean".into()))
        );
        assert_eq!(
            parse_expression("passes>1"),
            Err(ExpressionError::UnknownMethod("passes".into()))
        );
        assert_eq!(
            parse_expression("p(101)<5"),
            Err(ExpressionError::UnknownMethod("p(101)".into()))
        );
        assert_eq!(
            parse_expression("p (95)<5"),
            Err(ExpressionError::UnknownMethod("p (95)".into()))
        );
        assert!(ExpressionError::UnknownMethod("p(101)".into())
            .to_string()
            .contains("between 0 and 100"));
    }

    #[test]
    fn metric_keys() {
        let k = parse_metric_key("http_req_duration").unwrap();
        assert_eq!((k.name, k.inner), ("http_req_duration", None));
        let k = parse_metric_key("http_req_duration{ status : 200 , method:GET }").unwrap();
        assert_eq!(k.name, "http_req_duration");
        assert_eq!(k.inner, Some("status : 200 , method:GET"));
        assert_eq!(
            k.tags,
            vec![
                ("status".into(), "200".into()),
                ("method".into(), "GET".into())
            ]
        );
        let k = parse_metric_key("http_req_duration{url:http://x:80/a}").unwrap();
        assert_eq!(
            k.tags,
            vec![("url".into(), "http://x:80/a".into())],
            "value keeps later colons"
        );
    }

    #[test]
    fn bad_metric_keys() {
        for bad in [
            "m{status:200",
            "m}",
            "m{a:1}}",
            "m{a:{1}}",
            "m{}",
            "m{  }",
            "m{a}",
            "m{a:}",
            "m{:1}",
            "m{a:1,}",
            "{a:1}",
            "m{a:1}x",
        ] {
            assert!(parse_metric_key(bad).is_err(), "{bad} should fail");
        }
    }
}
