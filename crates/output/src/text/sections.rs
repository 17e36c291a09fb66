//! The full summary's `█ GROUP` and `█ SCENARIO` sections, after TOTAL RESULTS.

use std::fmt::Write as _;
use std::time::Duration;

use rk6_metrics::{SectionSummary, Sections};

use super::blocks::{render_check_block, render_metrics, SECTION_INDENT};
use super::options::SummaryMode;
use super::paint::Paint;

/// Top-level groups (samples outside named scenarios) first, then one section per
/// scenario; each ends with a blank line.
pub(crate) fn render_sections(
    out: &mut String,
    sections: &Sections,
    duration: Duration,
    unit: Option<&str>,
    paint: Paint,
) {
    let top = SECTION_INDENT - 2;
    for g in &sections.groups {
        heading(out, top, "█", "GROUP", &g.name);
        body(out, g, SECTION_INDENT, duration, unit, paint);
        out.push('\n');
    }
    for s in &sections.scenarios {
        heading(out, top, "█", "SCENARIO", &s.name);
        body(out, s, SECTION_INDENT, duration, unit, paint);
        out.push('\n');
    }
}

/// `█ TITLE: name ` (with k6's trailing space) and a blank line.
fn heading(out: &mut String, indent: usize, mark: &str, title: &str, name: &str) {
    let _ = writeln!(out, "{:indent$}{mark} {title}: {name} \n", "");
}

/// A section's checks, metrics by category, then its sub-groups two columns deeper.
fn body(
    out: &mut String,
    s: &SectionSummary,
    indent: usize,
    duration: Duration,
    unit: Option<&str>,
    paint: Paint,
) {
    let list: Vec<(&str, u64, u64)> = s
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.passes, c.fails))
        .collect();
    let passes: u64 = s.checks.iter().map(|c| c.passes).sum();
    let fails: u64 = s.checks.iter().map(|c| c.fails).sum();
    render_check_block(
        out,
        indent,
        passes as f64,
        fails as f64,
        &list,
        duration,
        paint,
    );
    render_metrics(
        out,
        &s.metrics,
        SummaryMode::Full,
        unit,
        paint,
        indent,
        None,
    );
    for g in &s.groups {
        heading(out, indent, "↳", "GROUP", &g.name);
        body(out, g, indent + 2, duration, unit, paint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{group, metric};
    use crate::{render_text, TextOptions};
    use rk6_metrics::{MetricType::*, SummaryData, ValueType::*};

    fn section(
        name: &str,
        metrics: Vec<rk6_metrics::MetricSummary>,
        checks: &[(&str, u64, u64)],
        groups: Vec<SectionSummary>,
    ) -> SectionSummary {
        SectionSummary {
            name: name.into(),
            metrics,
            checks: group(checks).checks,
            groups,
        }
    }

    /// The `zz` scenario of a real k6 1.1.0 run (two scenarios, groups nested three deep).
    fn two_scenarios() -> SummaryData {
        let us = |avg, min, med, max, p90, p95| {
            [
                ("avg", avg),
                ("min", min),
                ("med", med),
                ("max", max),
                ("p(90)", p90),
                ("p(95)", p95),
            ]
        };
        let gd = || {
            metric(
                "group_duration",
                Trend,
                Time,
                &us(0.1, 0.1, 0.1, 0.1, 0.1, 0.1),
            )
        };
        let checks = |p: f64, f: f64| {
            metric(
                "checks",
                Rate,
                Default,
                &[("rate", p / (p + f)), ("passes", p), ("fails", f)],
            )
        };
        let g3 = section(
            "g3",
            vec![checks(0.0, 2.0), gd()],
            &[("g3 fail", 0, 2)],
            vec![],
        );
        let g2 = section("g2", vec![gd()], &[], vec![g3]);
        let g1 = section(
            "g1",
            vec![checks(2.0, 2.0), gd()],
            &[("g1 fail", 0, 2), ("g1 ok", 2, 0)],
            vec![g2],
        );
        let zz = section(
            "zz",
            vec![
                checks(2.0, 6.0),
                metric(
                    "data_received",
                    Counter,
                    Data,
                    &[("count", 0.0), ("rate", 0.0)],
                ),
                metric("data_sent", Counter, Data, &[("count", 0.0), ("rate", 0.0)]),
                gd(),
                metric(
                    "iteration_duration",
                    Trend,
                    Time,
                    &us(0.12627, 0.04279, 0.12627, 0.20976, 0.19306, 0.20141),
                ),
                metric(
                    "iterations",
                    Counter,
                    Default,
                    &[("count", 2.0), ("rate", 8.354_873_4)],
                ),
            ],
            &[
                ("top fail", 0, 2),
                ("g1 fail", 0, 2),
                ("g1 ok", 2, 0),
                ("g3 fail", 0, 2),
            ],
            vec![g1],
        );
        let aa = section(
            "aa",
            vec![metric(
                "http_reqs",
                Counter,
                Default,
                &[("count", 1.0), ("rate", 4.177_437)],
            )],
            &[],
            vec![],
        );
        let top = section("g", vec![checks(1.0, 0.0)], &[("main check", 1, 0)], vec![]);
        SummaryData {
            metrics: vec![metric(
                "iterations",
                Counter,
                Default,
                &[("count", 3.0), ("rate", 12.532_31)],
            )],
            root_group: group(&[]),
            checks: Vec::new(),
            duration: Duration::from_secs_f64(8.0 / 33.419_494),
            sections: Some(Sections {
                groups: vec![top],
                scenarios: vec![aa, zz],
            }),
            connections: rk6_metrics::ConnectionTally::default(),
        }
    }

    fn full() -> TextOptions {
        TextOptions {
            mode: SummaryMode::Full,
            ..TextOptions::default()
        }
    }

    #[test]
    fn scenario_and_nested_group_sections_match_k6() {
        let got = render_text(&two_scenarios(), &full());
        let want = [
            "  █ TOTAL RESULTS ",
            "",
            "    EXECUTION",
            "    iterations.............: 3 12.53231/s",
            "",
            "",
            "  █ GROUP: g ",
            "",
            "    checks_total.......................: 1       4.177437/s",
            "    checks_succeeded...................: 100.00% 1 out of 1",
            "    checks_failed......................: 0.00%   0 out of 1",
            "",
            "    ✓ main check",
            "",
            "",
            "  █ SCENARIO: aa ",
            "",
            "    HTTP",
            "    http_reqs............: 1 4.177437/s",
            "",
            "",
            "  █ SCENARIO: zz ",
            "",
            "    checks_total.......................: 8      33.419494/s",
            "    checks_succeeded...................: 25.00% 2 out of 8",
            "    checks_failed......................: 75.00% 6 out of 8",
            "",
            "    ✗ top fail",
            "      ↳  0% — ✓ 0 / ✗ 2",
            "    ✗ g1 fail",
            "      ↳  0% — ✓ 0 / ✗ 2",
            "    ✓ g1 ok",
            "    ✗ g3 fail",
            "      ↳  0% — ✓ 0 / ✗ 2",
            "",
            "    EXECUTION",
            "    iteration_duration.....................: avg=126.27µs min=42.79µs med=126.27µs max=209.76µs p(90)=193.06µs p(95)=201.41µs",
            "    iterations.............................: 2   8.354873/s",
            "",
            "    NETWORK",
            "    data_received..........................: 0 B 0 B/s",
            "    data_sent..............................: 0 B 0 B/s",
            "",
            "    ↳ GROUP: g1 ",
            "",
            "      checks_total.......................: 4      16.709747/s",
            "      checks_succeeded...................: 50.00% 2 out of 4",
            "      checks_failed......................: 50.00% 2 out of 4",
            "",
            "      ✗ g1 fail",
            "          ↳  0% — ✓ 0 / ✗ 2",
            "      ✓ g1 ok",
            "",
            "      ↳ GROUP: g2 ",
            "",
            "        ↳ GROUP: g3 ",
            "",
            "          checks_total.......................: 2       8.354873/s",
            "          checks_succeeded...................: 0.00%   0 out of 2",
            "          checks_failed......................: 100.00% 2 out of 2",
            "",
            "          ✗ g3 fail",
            "                  ↳  0% — ✓ 0 / ✗ 2",
            "",
            "",
            "",
            "",
        ]
        .join("\n");
        let got = got
            .strip_prefix("\n\n")
            .expect("starts with two blank lines");
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "line {i}");
        }
        assert_eq!(got, want);
    }

    #[test]
    fn only_full_mode_prints_sections() {
        let data = two_scenarios();
        let compact = render_text(&data, &TextOptions::default());
        assert!(!compact.contains("SCENARIO") && !compact.contains("GROUP"));
        let without = SummaryData {
            sections: None,
            ..data
        };
        let full_without = render_text(&without, &full());
        assert_eq!(full_without, compact, "nothing kept, nothing added");
    }
}
