//! Parsers for threshold keys (`metric{tag:value}`) and expressions (`p(95)<500`).

use std::fmt;

use rk6_options::go_float::{parse_go_float, GoFloatError};

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
    /// The aggregation method as written, e.g. `p(99.9)`.
    pub stat_text: String,
    /// The comparison.
    pub op: Operator,
    /// The right-hand side (may be NaN or infinite, as Go's ParseFloat reads them).
    pub value: f64,
}

/// Why an expression did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpressionError {
    /// No operator with something after it.
    Malformed,
    /// The left-hand side is not an aggregation method k6 knows; holds its text.
    UnknownMethod(String),
    /// `p(...)` holds something Go's ParseFloat refuses; holds the inside and the reason.
    BadPercentile(String, GoFloatError),
    /// `p(N)` with N outside `0..=100` (or NaN): k6 accepts it and then panics (exit 109)
    /// once the Trend holds two values; rk6 refuses it up front. Holds the inside.
    PercentileOutOfRange(String),
    /// The right-hand side is not a number for Go's ParseFloat; holds its text and why.
    BadValue(String, GoFloatError),
}

impl fmt::Display for ExpressionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpressionError::Malformed => f.write_str(
                "malformed threshold expression: expected `method operator number` with an operator among <=, <, >=, >, ===, ==, !=",
            ),
            ExpressionError::UnknownMethod(m) => write!(
                f,
                "unknown aggregation method {m:?} (one of count, rate, value, avg, min, med, max, p(N))"
            ),
            ExpressionError::BadPercentile(inner, e) => write!(
                f,
                "malformed percentile value; reason: strconv.ParseFloat: parsing {inner:?}: {e}"
            ),
            ExpressionError::PercentileOutOfRange(inner) => write!(
                f,
                "malformed percentile value p({inner}): it needs to be a number between 0 and 100 (as k6 2.1 checks it)"
            ),
            ExpressionError::BadValue(v, e) => write!(
                f,
                "malformed right-hand side; reason: strconv.ParseFloat: parsing {v:?}: {e}"
            ),
        }
    }
}

/// The operators in the order k6 looks for them: the first whose first occurrence has
/// something after it splits the expression (so `count<=1` is `<=`, `a>b<c` splits at `<`).
const SCAN_ORDER: [Operator; 7] = [
    Operator::LessEqual,
    Operator::Less,
    Operator::GreaterEqual,
    Operator::Greater,
    Operator::StrictEqual,
    Operator::Equal,
    Operator::NotEqual,
];

/// Parses a threshold expression with k6's rules: split at the first operator (in k6's
/// order) that has text after it, trim both sides, read the method and Go's float.
pub fn parse_expression(input: &str) -> Result<Expression, ExpressionError> {
    let (method, op, value_text) = SCAN_ORDER
        .into_iter()
        .find_map(|op| {
            let (left, right) = input.split_once(op.as_str())?;
            (!right.is_empty()).then(|| (left.trim(), op, right.trim()))
        })
        .ok_or(ExpressionError::Malformed)?;
    let stat = parse_method(method)?;
    let value = parse_go_float(value_text)
        .map_err(|e| ExpressionError::BadValue(value_text.to_owned(), e))?;
    Ok(Expression {
        stat,
        stat_text: method.to_owned(),
        op,
        value,
    })
}

/// An aggregation method: a keyword, `p` alone (k6 reads it as `p(0)`) or `p(N)` with N a
/// Go float in `0..=100`.
fn parse_method(method: &str) -> Result<Stat, ExpressionError> {
    Ok(match method {
        "value" => Stat::Value,
        "count" => Stat::Count,
        "rate" => Stat::Rate,
        "avg" => Stat::Avg,
        "min" => Stat::Min,
        "med" => Stat::Med,
        "max" => Stat::Max,
        "p" => Stat::Percentile(0.0),
        _ => {
            let inner = method
                .strip_prefix("p(")
                .and_then(|m| m.strip_suffix(')'))
                .ok_or_else(|| ExpressionError::UnknownMethod(method.to_owned()))?;
            let p = parse_go_float(inner)
                .map_err(|e| ExpressionError::BadPercentile(inner.to_owned(), e))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(ExpressionError::PercentileOutOfRange(inner.to_owned()));
            }
            // -0 is a valid percentile; keep arithmetic on it plain.
            Stat::Percentile(p + 0.0)
        }
    })
}

/// A parsed threshold key: the metric name and an optional sub-metric selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricKey<'a> {
    /// The metric name before the first `{`.
    pub name: &'a str,
    /// The trimmed text inside the outer braces; the sub-metric's name is `name{inner}`.
    pub inner: Option<&'a str>,
    /// The selector's tags, one value per key (a later `key:` wins, as in k6), in the order
    /// each key first appears; quotes around keys and values are dropped.
    pub tags: Vec<(String, String)>,
}

/// Parses `name` or `name{tag:value,...}` with k6's rules: the braces are the first `{` and
/// the last `}`, which must end the key; every comma-separated part holds a `:` with text
/// after it; keys and values are trimmed of whitespace, then of `"` and `'`. Returns the
/// reason on failure.
pub fn parse_metric_key(key: &str) -> Result<MetricKey<'_>, String> {
    let open = key.find('{');
    let close = key.rfind('}');
    let (open, close) = match (open, close) {
        (None, None) => {
            return Ok(MetricKey {
                name: key,
                inner: None,
                tags: Vec::new(),
            })
        }
        (Some(o), Some(c)) => (o, c),
        _ => {
            return Err(format!(
                "parsing metric name failed, metric {key:?} has unmatched opening/close curly brace"
            ))
        }
    };
    if close < open {
        return Err(format!(
            "parsing metric name failed, metric {key:?} closing curly brace appears before opening one"
        ));
    }
    if close != key.len() - 1 {
        return Err(format!(
            "parsing metric name failed, metric {key:?} lacks a closing curly brace in its last position"
        ));
    }
    let body = &key[open + 1..close];
    for part in body.split(',') {
        if part.split_once(':').is_none_or(|(_, v)| v.is_empty()) {
            return Err(format!(
                "parsing metric name failed, metric {part:?} tag expression is malformed"
            ));
        }
    }
    let inner = body.trim();
    let mut tags: Vec<(String, String)> = Vec::new();
    for part in inner.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once(':').unwrap_or((part, ""));
        let k = unquote(k);
        if k.is_empty() {
            // k6 builds a tag with an empty name here and overflows its stack.
            return Err(format!(
                "parsing metric name failed, tag expression {:?} has an empty tag name",
                part.trim()
            ));
        }
        let v = unquote(v);
        match tags.iter_mut().find(|(name, _)| name == k) {
            Some(tag) => tag.1 = v.to_owned(),
            None => tags.push((k.to_owned(), v.to_owned())),
        }
    }
    Ok(MetricKey {
        name: &key[..open],
        inner: Some(inner),
        tags,
    })
}

/// A selector key or value as k6 reads it: whitespace trimmed, then quotes.
fn unquote(s: &str) -> &str {
    s.trim().trim_matches(['"', '\''])
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
        // Go's ParseFloat on both sides.
        assert_eq!(expr("count<1_0").value, 10.0);
        assert_eq!(expr("count<0x1p4").value, 16.0);
        assert!(expr("count<NaN").value.is_nan());
        assert_eq!(expr("count<-inf").value, f64::NEG_INFINITY);
        assert_eq!(expr("p(1_0)<1").stat, Stat::Percentile(10.0));
        assert_eq!(expr("p(.5)<1").stat, Stat::Percentile(0.5));
        assert_eq!(expr("p(-0)<1").stat, Stat::Percentile(0.0));
        assert_eq!(
            expr("p<1").stat,
            Stat::Percentile(0.0),
            "k6 reads a bare p as p(0)"
        );
        assert_eq!(expr("\u{a0}avg<1").stat_text, "avg", "Unicode spaces trim");
    }

    #[test]
    fn operators_split_in_k6_order() {
        assert_eq!(expr("count>=1").op, Operator::GreaterEqual);
        assert_eq!(expr("count===1").op, Operator::StrictEqual);
        // `<` is looked for before `>`: the method is then "count>1", unknown.
        assert_eq!(
            parse_expression("count>1<2"),
            Err(ExpressionError::UnknownMethod("count>1".into()))
        );
        // An operator with nothing after it does not count: `>` is tried next.
        assert_eq!(
            parse_expression("count>5<"),
            Err(ExpressionError::BadValue("5<".into(), GoFloatError::Syntax))
        );
        assert_eq!(
            parse_expression("count=<1"),
            Err(ExpressionError::UnknownMethod("count=".into()))
        );
    }

    #[test]
    fn bad_expressions() {
        use ExpressionError::*;
        assert_eq!(parse_expression("p(95)"), Err(Malformed));
        assert_eq!(parse_expression(""), Err(Malformed));
        assert_eq!(parse_expression("avg<"), Err(Malformed));
        assert_eq!(parse_expression("avg=5"), Err(Malformed));
        assert_eq!(parse_expression("<5"), Err(UnknownMethod(String::new())));
        assert_eq!(
            parse_expression("avg<<5"),
            Err(BadValue("<5".into(), GoFloatError::Syntax))
        );
        assert_eq!(
            parse_expression("avg<abc"),
            Err(BadValue("abc".into(), GoFloatError::Syntax))
        );
        assert_eq!(
            parse_expression("count<1e400"),
            Err(BadValue("1e400".into(), GoFloatError::Range))
        );
        assert_eq!(
            parse_expression("count<0x10"),
            Err(BadValue("0x10".into(), GoFloatError::Syntax))
        );
        assert_eq!(
            parse_expression("mean<5"),
            Err(UnknownMethod("mean".into()))
        );
        assert_eq!(
            parse_expression("COUNT<5"),
            Err(UnknownMethod("COUNT".into()))
        );
        assert_eq!(
            parse_expression("passes>1"),
            Err(UnknownMethod("passes".into()))
        );
        assert_eq!(
            parse_expression("p (95)<5"),
            Err(UnknownMethod("p (95)".into()))
        );
        assert_eq!(
            parse_expression("p( 95 )<5"),
            Err(BadPercentile(" 95 ".into(), GoFloatError::Syntax))
        );
        assert_eq!(
            parse_expression("p()<5"),
            Err(BadPercentile(String::new(), GoFloatError::Syntax))
        );
        for out in ["101", "-1", "NaN", "Inf", "100.0000001"] {
            assert_eq!(
                parse_expression(&format!("p({out})<5")),
                Err(PercentileOutOfRange(out.into())),
                "{out}"
            );
        }
        // k6 2.1 refuses these too (release notes v2.1.0, #6013).
        assert!(PercentileOutOfRange("101".into())
            .to_string()
            .contains("a number between 0 and 100"));
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
        let tags = |key: &str| parse_metric_key(key).unwrap().tags;
        let pairs = |p: &[(&str, &str)]| {
            p.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            tags(r#"m{a:"x y"}"#),
            pairs(&[("a", "x y")]),
            "quotes dropped"
        );
        assert_eq!(tags(r#"m{"a":'x'}"#), pairs(&[("a", "x")]));
        assert_eq!(
            tags(r#"m{a:" x"}"#),
            pairs(&[("a", " x")]),
            "no trim after quotes"
        );
        assert_eq!(
            tags("m{a:x,a:z}"),
            pairs(&[("a", "z")]),
            "the last value wins"
        );
        assert_eq!(tags("m{a: }"), pairs(&[("a", "")]));
        assert_eq!(tags("m{a::x}"), pairs(&[("a", ":x")]));
        // The braces are the first `{` and the last `}`: inner braces are tag text.
        assert_eq!(tags("m{a:x}}"), pairs(&[("a", "x}")]));
        assert_eq!(tags("m{{a:x}"), pairs(&[("{a", "x")]));
    }

    #[test]
    fn bad_metric_keys() {
        for bad in [
            "m{status:200",
            "m}",
            "m}{",
            "m{}",
            "m{  }",
            "m{a}",
            "m{a:}",
            "m{:1}",
            "m{\"\":1}",
            "m{a:1,}",
            "m{,a:1}",
            "m{a:1,,b:2}",
            "m{a:1}x",
            "m{a:1} ",
        ] {
            assert!(parse_metric_key(bad).is_err(), "{bad} should fail");
        }
        // No name before the selector parses; the registry then has no metric "".
        assert_eq!(parse_metric_key("{a:1}").unwrap().name, "");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    const KEYWORDS: &[(&str, Stat)] = &[
        ("value", Stat::Value),
        ("count", Stat::Count),
        ("rate", Stat::Rate),
        ("avg", Stat::Avg),
        ("min", Stat::Min),
        ("med", Stat::Med),
        ("max", Stat::Max),
    ];

    fn operator() -> impl Strategy<Value = Operator> {
        prop::sample::select(SCAN_ORDER.to_vec())
    }

    fn spaces() -> impl Strategy<Value = String> {
        "[ \t]{0,2}"
    }

    proptest! {
        #![proptest_config(crate::prop_config(4000))]

        /// Any text: parsed or refused with a typed error, never a panic.
        #[test]
        fn any_expression_is_decided(text in "\\PC{0,24}") {
            let _ = parse_expression(&text);
        }

        /// Texts of the expression alphabet, where operators overlap and nest.
        #[test]
        fn operator_soup_is_decided(text in "[pa-z()0-9.<>=! _-]{0,20}") {
            let _ = parse_expression(&text);
        }

        /// `<keyword> <op> <float>` with any spacing reads back to its parts.
        #[test]
        fn keyword_expressions_round_trip(
            (name, stat) in prop::sample::select(KEYWORDS),
            op in operator(),
            value in any::<f64>().prop_filter("finite", |v| v.is_finite()),
            (a, b, c, d) in (spaces(), spaces(), spaces(), spaces()),
        ) {
            let text = format!("{a}{name}{b}{}{c}{value}{d}", op.as_str());
            let e = parse_expression(&text).unwrap();
            prop_assert_eq!(e.stat, stat);
            prop_assert_eq!(e.op, op);
            prop_assert_eq!(e.value.to_bits(), value.to_bits());
        }

        /// `p(N)` is accepted exactly for N in 0..=100 (k6's range), as that percentile.
        #[test]
        fn percentiles_in_range(p in -50.0f64..150.0, op in operator()) {
            let text = format!("p({p}){}1", op.as_str());
            match parse_expression(&text) {
                Ok(e) => {
                    prop_assert!((0.0..=100.0).contains(&p));
                    prop_assert_eq!(e.stat, Stat::Percentile(p));
                }
                Err(err) => {
                    prop_assert!(!(0.0..=100.0).contains(&p));
                    prop_assert_eq!(err, ExpressionError::PercentileOutOfRange(p.to_string()));
                }
            }
        }

        /// Any metric key: a decision, never a panic; an accepted selector's tags are a
        /// last-wins map of its parts.
        #[test]
        fn any_metric_key_is_decided(key in "[a-z_]{0,4}[{}]?\\PC{0,12}[{}:,]?") {
            let _ = parse_metric_key(&key);
        }

        /// `name{k:v,...}` with plain keys and values yields those tags, later keys winning.
        #[test]
        fn selectors_round_trip(
            name in "[a-z_]{1,8}",
            tags in prop::collection::vec(("[a-c]{1,2}", "[a-z0-9/.]{1,5}"), 1..5),
            quote in prop::sample::select(&["", "\"", "'"][..]),
        ) {
            let body: Vec<String> = tags.iter().map(|(k, v)| format!("{quote}{k}{quote}: {quote}{v}{quote}")).collect();
            let key = format!("{name}{{{}}}", body.join(","));
            let parsed = parse_metric_key(&key).unwrap();
            prop_assert_eq!(parsed.name, name.as_str());
            let mut want: Vec<(String, String)> = Vec::new();
            for (k, v) in tags {
                match want.iter_mut().find(|(n, _)| *n == k) {
                    Some(t) => t.1 = v,
                    None => want.push((k, v)),
                }
            }
            prop_assert_eq!(parsed.tags, want);
        }
    }
}
