//! The `█ THRESHOLDS` block: one entry per metric with thresholds, each threshold's mark,
//! source and the value it shows, by k6's rules for what that value is.

use std::fmt::Write as _;

use rk6_metrics::{MetricSummary, MetricType, ThresholdResult};

use super::format;
use super::paint::Paint;

const INDENT: &str = "    ";
/// A sub-metric listed under its parent is indented one level (two spaces) more.
const NESTED: &str = "      ";

/// Appends the block (title included) when some metric has thresholds.
pub(crate) fn render_thresholds(
    out: &mut String,
    metrics: &[MetricSummary],
    unit: Option<&str>,
    paint: Paint,
) {
    let mut with: Vec<&MetricSummary> = metrics
        .iter()
        .filter(|m| !m.thresholds.is_empty())
        .collect();
    if with.is_empty() {
        return;
    }
    // k6 sorts by parent name, then keeps a parent's sub-metrics right after it.
    with.sort_by(|a, b| split_name(&a.name).cmp(&split_name(&b.name)));
    out.push_str("  █ THRESHOLDS \n\n");
    for m in &with {
        let (parent, selector) = split_name(&m.name);
        let nested = !selector.is_empty() && with.iter().any(|p| p.name == parent);
        let (pad, label) = if nested {
            (NESTED, selector)
        } else {
            (INDENT, m.name.as_str())
        };
        let _ = writeln!(out, "{pad}{label}");
        for t in &m.thresholds {
            let (agg, value) = shown_value(m, t, unit);
            let _ = writeln!(
                out,
                "{pad}{} '{}' {agg}={value}",
                paint.mark(t.ok),
                js_trim(&t.source)
            );
        }
        out.push('\n');
    }
    out.push('\n');
}

/// JavaScript's `String.prototype.trim` (k6 renders the summary in JS): Unicode spaces and
/// line terminators and U+FEFF, but not U+0085, which Rust's `trim` also removes.
fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

/// `(parent, "{selector}")`: the name before the first `{` and the rest.
fn split_name(name: &str) -> (&str, &str) {
    name.split_at(name.find('{').unwrap_or(name.len()))
}

/// What k6 prints after the source: the text before the first `=`, `>` or `<` (so
/// `count!=1` shows as `count!=…`), and the metric's value for it — a Trend's summary column
/// of that name or the percentile of a `p(digits)` threshold (else nothing), a Counter's count
/// for `count` and its rate for anything else, a Gauge's value, a Rate's share.
fn shown_value(m: &MetricSummary, t: &ThresholdResult, unit: Option<&str>) -> (String, String) {
    let agg = js_trim(t.source.split(['=', '>', '<']).next().unwrap_or("")).to_owned();
    let fmt = |v: f64| format::value(v, m.kind, m.contains, unit);
    let value = match m.kind {
        MetricType::Trend => {
            let column = m.value(&agg);
            let percentile = || {
                m.thresholds
                    .iter()
                    .find(|other| percentile_key(&other.source).as_deref() == Some(agg.as_str()))
                    .map(|other| other.value.unwrap_or(0.0))
            };
            match column.or_else(percentile) {
                Some(v) if agg == "count" => format::number(v),
                Some(v) => fmt(v),
                None => String::new(),
            }
        }
        MetricType::Counter if agg == "count" => fmt(m.value("count").unwrap_or(0.0)),
        MetricType::Counter => format!("{}/s", fmt(m.value("rate").unwrap_or(0.0))),
        MetricType::Gauge => fmt(m.value("value").unwrap_or(0.0)),
        MetricType::Rate => format::percent(m.value("rate").unwrap_or(0.0)),
    };
    (agg, value)
}

/// `p(N)` when a threshold's source (trimmed) starts with `p(` decimal
/// digits, an optional `.digits`, `)`, optional ASCII whitespace and one of `<`, `>`, `=`:
/// the percentiles k6 adds to a Trend's values for this block.
fn percentile_key(source: &str) -> Option<String> {
    let s = source.trim();
    let inner = s.strip_prefix("p(")?;
    let close = inner.find(')')?;
    let number = &inner[..close];
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (number, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    let rest = inner[close + 1..].trim_start_matches([' ', '\t', '\n', '\r', '\x0c']);
    rest.starts_with(['<', '>', '='])
        .then(|| format!("p({number})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{metric, threshold};
    use rk6_metrics::ValueType;

    fn render(metrics: &[MetricSummary]) -> String {
        let mut out = String::new();
        render_thresholds(&mut out, metrics, None, Paint { on: false });
        out
    }

    #[test]
    fn percentile_keys_follow_k6s_pattern() {
        assert_eq!(percentile_key("p(95)<1").as_deref(), Some("p(95)"));
        assert_eq!(percentile_key(" p(99.9) >= 1").as_deref(), Some("p(99.9)"));
        assert_eq!(percentile_key("p(95.0)==1").as_deref(), Some("p(95.0)"));
        for none in [
            "p(1e1)<1", "p(.5)<1", "p(-0)<1", "p(+5)<1", "p(95)!=1", "p<1", "avg<1",
        ] {
            assert_eq!(percentile_key(none), None, "{none}");
        }
    }

    #[test]
    fn values_shown_by_type_and_aggregation() {
        use MetricType::*;
        let mut t = metric(
            "t",
            Trend,
            ValueType::Default,
            &[("avg", 6.0), ("p(95)", 6.9)],
        );
        t.thresholds = vec![
            threshold("avg<100", "avg", 6.0, true),
            threshold("p(99)<100", "p(99)", 6.98, true),
            threshold("p(95)!=100", "p(95)", 6.9, true),
            threshold("max<1", "max", 7.0, false),
            threshold(" p(1e1) < 9 ", "p(1e1)", 5.2, true),
        ];
        let mut c = metric(
            "c",
            Counter,
            ValueType::Data,
            &[("count", 0.0), ("rate", 0.0)],
        );
        c.thresholds = vec![
            threshold("rate<1", "rate", 0.0, true),
            threshold("count!=3", "count", 0.0, true),
            threshold("count>=1", "count", 0.0, false),
        ];
        let mut g = metric("g", Gauge, ValueType::Default, &[("value", 3.0)]);
        g.thresholds = vec![threshold("value!=1", "value", 3.0, true)];
        let mut r = metric("r", Rate, ValueType::Default, &[("rate", 0.0)]);
        r.thresholds = vec![ThresholdResult {
            source: "rate>0".into(),
            ok: true,
            stat: "rate".into(),
            value: None,
        }];
        let got = render(&[c, g, r, t]);
        let want = [
            "  █ THRESHOLDS ",
            "",
            "    c",
            "    ✓ 'rate<1' rate=0 B/s",
            "    ✓ 'count!=3' count!=0 B/s",
            "    ✗ 'count>=1' count=0 B",
            "",
            "    g",
            "    ✓ 'value!=1' value!=3",
            "",
            "    r",
            "    ✓ 'rate>0' rate=0.00%",
            "",
            "    t",
            "    ✓ 'avg<100' avg=6",
            "    ✓ 'p(99)<100' p(99)=6.98",
            "    ✓ 'p(95)!=100' p(95)!=",
            "    ✗ 'max<1' max=",
            "    ✓ 'p(1e1) < 9' p(1e1)=",
            "",
            "",
        ];
        assert_eq!(got, want.join("\n") + "\n");
    }

    #[test]
    fn submetrics_nest_under_a_parent_with_thresholds() {
        use MetricType::*;
        let counter = |name: &str, parent: Option<&str>| {
            let mut m = metric(
                name,
                Counter,
                ValueType::Default,
                &[("count", 0.0), ("rate", 0.0)],
            );
            m.parent = parent.map(str::to_owned);
            m.thresholds = vec![threshold("count>=1", "count", 0.0, false)];
            m
        };
        let got = render(&[
            counter("a", None),
            counter("a_b", None),
            counter("a{k:v}", Some("a")),
            counter("z{k:v}", Some("z")),
        ]);
        let want = [
            "  █ THRESHOLDS ",
            "",
            "    a",
            "    ✗ 'count>=1' count=0",
            "",
            "      {k:v}",
            "      ✗ 'count>=1' count=0",
            "",
            "    a_b",
            "    ✗ 'count>=1' count=0",
            "",
            "    z{k:v}",
            "    ✗ 'count>=1' count=0",
            "",
            "",
        ];
        assert_eq!(got, want.join("\n") + "\n");
    }
}
