//! `--summary-mode=legacy`: k6's pre-1.0 summary. The group tree with its checks, then
//! every metric (including `checks` and `group_duration`) in one alphabetical list where
//! `✓`/`✗` marks the metrics that have thresholds. rk6's `http_conns_opened` and its
//! `http connections:` line are left out, so the layout stays k6's.

use std::fmt::Write as _;

use rk6_metrics::{GroupSummary, MetricSummary, SummaryData};

use super::paint::Paint;
use super::rows::{Layout, Row};

/// Indentation of the root group's checks and of the metric names.
const INDENT: usize = 5;

/// The whole legacy summary: a blank line, the groups, the metrics, a blank line.
pub(crate) fn render_legacy(data: &SummaryData, unit: Option<&str>, paint: Paint) -> String {
    let mut out = String::from("\n");
    group(&mut out, &data.root_group, INDENT, paint);
    metrics(&mut out, &data.metrics, unit, paint);
    out.push('\n');
    out
}

/// A group's checks (then a blank line if any), then each sub-group as `█ name`, a
/// blank line and its contents two columns deeper.
fn group(out: &mut String, g: &GroupSummary, indent: usize, paint: Paint) {
    for c in &g.checks {
        let _ = writeln!(out, "{:indent$}{} {}", "", paint.mark(c.fails == 0), c.name);
        if c.fails > 0 {
            let pct = 100 * c.passes / (c.passes + c.fails);
            let _ = writeln!(
                out,
                "{:w$}↳  {pct}% — {} {} / {} {}",
                "",
                paint.mark(true),
                c.passes,
                paint.mark(false),
                c.fails,
                w = indent + 1
            );
        }
    }
    if !g.checks.is_empty() {
        out.push('\n');
    }
    for sub in &g.groups {
        let _ = writeln!(out, "{:indent$}█ {}\n", "", sub.name);
        group(out, sub, indent + 2, paint);
    }
}

/// One line per metric, sub-metrics (`{ tag:value }`, two columns in) after their parent.
/// The name column is the longest such label plus three dots.
fn metrics(out: &mut String, all: &[MetricSummary], unit: Option<&str>, paint: Paint) {
    let mut lines: Vec<(&MetricSummary, Row)> = Vec::new();
    // rk6's connection counter is not listed: the legacy layout stays k6's, line for line.
    let listed = |m: &&MetricSummary| m.parent.is_none() && m.name != "http_conns_opened";
    for parent in all.iter().filter(listed) {
        lines.push((parent, Row::metric(parent, unit)));
        for sub in all
            .iter()
            .filter(|m| m.parent.as_deref() == Some(parent.name.as_str()))
        {
            lines.push((sub, Row::metric(sub, unit)));
        }
    }
    let mut layout = Layout::of(lines.iter().map(|(_, r)| r));
    layout.name = lines
        .iter()
        .map(|(_, r)| r.label.chars().count() + 3)
        .max()
        .unwrap_or(0);
    for (m, row) in &lines {
        // The mark takes the two columns before the name, after a sub-metric's indent.
        let mark = if m.thresholds.is_empty() {
            "  ".to_owned()
        } else {
            format!("{} ", paint.mark(m.thresholds.iter().all(|t| t.ok)))
        };
        let (sub_indent, label) = match row.label.strip_prefix("  ") {
            Some(rest) if m.parent.is_some() => ("  ", rest),
            _ => ("", row.label.as_str()),
        };
        let dots = layout
            .name
            .saturating_sub(sub_indent.len() + label.chars().count());
        let _ = write!(out, "{:w$}{sub_indent}{mark}{label}", "", w = INDENT - 2);
        layout.write_values(out, dots, row, paint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{basic_run, group, metric, threshold};
    use crate::{render_text, SummaryMode, TextOptions};
    use rk6_metrics::{MetricType::*, ValueType::*};
    use std::time::Duration;

    fn legacy() -> TextOptions {
        TextOptions {
            mode: SummaryMode::Legacy,
            ..TextOptions::default()
        }
    }

    fn ms(v: f64) -> Vec<(&'static str, f64)> {
        ["avg", "min", "med", "max", "p(90)", "p(95)"]
            .into_iter()
            .map(|k| (k, v))
            .collect()
    }

    /// Numbers and group tree of a real k6 1.1.0 `--summary-mode=legacy` run.
    fn nested_run() -> SummaryData {
        let mut root = group(&[("top fail", 0, 2)]);
        let mut g1 = group(&[("g1 fail", 0, 2), ("g1 ok", 2, 0)]);
        g1.name = "g1".into();
        let mut g2 = group(&[]);
        g2.name = "g2".into();
        let mut g3 = group(&[("g3 fail", 0, 2)]);
        g3.name = "g3".into();
        g2.groups.push(g3);
        g1.groups.push(g2);
        root.groups.push(g1);
        let mut duration = metric("http_req_duration", Trend, Time, &ms(26.65));
        duration.thresholds = vec![threshold("p(95)<500", "p(95)", 26.65, true)];
        let mut scenario_aa = metric("http_req_duration{scenario:aa}", Trend, Time, &ms(26.65));
        scenario_aa.thresholds = vec![threshold("max<1", "max", 26.65, false)];
        let mut iterations = metric(
            "iterations",
            Counter,
            Default,
            &[("count", 3.0), ("rate", 13.142_992)],
        );
        iterations.thresholds = vec![threshold("count>5", "count", 3.0, false)];
        SummaryData {
            metrics: vec![
                metric(
                    "checks",
                    Rate,
                    Default,
                    &[("rate", 0.25), ("passes", 2.0), ("fails", 6.0)],
                ),
                metric(
                    "data_received",
                    Counter,
                    Data,
                    &[("count", 190.0), ("rate", 832.0)],
                ),
                metric(
                    "data_sent",
                    Counter,
                    Data,
                    &[("count", 71.0), ("rate", 311.0)],
                ),
                metric(
                    "group_duration",
                    Trend,
                    Time,
                    &[
                        ("avg", 0.10581),
                        ("min", 0.01448),
                        ("med", 0.10024),
                        ("max", 0.24381),
                        ("p(90)", 0.19759),
                        ("p(95)", 0.2207),
                    ],
                ),
                duration,
                metric(
                    "http_req_duration{expected_response:true}",
                    Trend,
                    Time,
                    &ms(26.65),
                ),
                scenario_aa,
                metric(
                    "http_reqs",
                    Counter,
                    Default,
                    &[("count", 1.0), ("rate", 4.380_997)],
                ),
                iterations,
            ],
            root_group: root,
            checks: Vec::new(),
            duration: Duration::from_secs_f64(3.0 / 13.142_992),
            sections: None,
            connections: rk6_metrics::ConnectionTally::default(),
        }
    }

    #[test]
    fn groups_checks_and_flat_metrics_match_k6() {
        let want = [
            "",
            "     ✗ top fail",
            "      ↳  0% — ✓ 0 / ✗ 2",
            "",
            "     █ g1",
            "",
            "       ✗ g1 fail",
            "        ↳  0% — ✓ 0 / ✗ 2",
            "       ✓ g1 ok",
            "",
            "       █ g2",
            "",
            "         █ g3",
            "",
            "           ✗ g3 fail",
            "            ↳  0% — ✓ 0 / ✗ 2",
            "",
            "     checks.........................: 25.00% 2 out of 8",
            "     data_received..................: 190 B  832 B/s",
            "     data_sent......................: 71 B   311 B/s",
            "     group_duration.................: avg=105.81µs min=14.48µs med=100.24µs max=243.81µs p(90)=197.59µs p(95)=220.7µs",
            "   ✓ http_req_duration..............: avg=26.65ms  min=26.65ms med=26.65ms  max=26.65ms  p(90)=26.65ms  p(95)=26.65ms",
            "       { expected_response:true }...: avg=26.65ms  min=26.65ms med=26.65ms  max=26.65ms  p(90)=26.65ms  p(95)=26.65ms",
            "     ✗ { scenario:aa }..............: avg=26.65ms  min=26.65ms med=26.65ms  max=26.65ms  p(90)=26.65ms  p(95)=26.65ms",
            "     http_reqs......................: 1      4.380997/s",
            "   ✗ iterations.....................: 3      13.142992/s",
            "",
            "",
        ]
        .join("\n");
        let got = render_text(&nested_run(), &legacy());
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "line {i}");
        }
        assert_eq!(got, want);
    }

    #[test]
    fn reference_run_in_legacy_layout() {
        // §7.3 of the reference: checks first, no THRESHOLDS block, name column sized by
        // the widest label (the indented sub-metric) plus three dots.
        let got = render_text(&basic_run(), &legacy());
        assert!(got.starts_with("\n     ✓ status is 200\n\n     checks.........................: 100.00% 40 out of 40\n"), "{got}");
        assert!(got.contains("\n   ✓ http_req_failed................: 0.00%   0 out of 40\n"));
        assert!(
            got.contains("\n     vus............................: 2       min=2        max=2\n")
        );
        assert!(!got.contains("THRESHOLDS") && !got.contains("TOTAL RESULTS"));
        assert!(got.ends_with(" max=2\n\n"));
    }

    #[test]
    fn no_checks_no_groups() {
        let mut it = metric(
            "iterations",
            Counter,
            Default,
            &[("count", 1.0), ("rate", 2.0)],
        );
        it.thresholds = vec![threshold("count>5", "count", 1.0, false)];
        let data = SummaryData {
            metrics: vec![it],
            root_group: group(&[]),
            checks: Vec::new(),
            duration: Duration::from_millis(500),
            sections: None,
            connections: rk6_metrics::ConnectionTally::default(),
        };
        assert_eq!(
            render_text(&data, &legacy()),
            "\n   ✗ iterations...: 1 2/s\n\n"
        );
    }
}
