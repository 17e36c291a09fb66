//! The end-of-test text summary in k6 1.x layout: THRESHOLDS and TOTAL RESULTS here, the
//! full mode's group and scenario sections in [`sections`], k6's pre-1.0 layout in
//! [`legacy`]; [`format`] holds the number, duration and byte rules and [`category`] the
//! section a metric is listed under.

mod blocks;
mod category;
mod connections;
mod format;
mod legacy;
mod options;
mod paint;
mod rows;
mod sections;
mod thresholds;

use rk6_metrics::SummaryData;

use blocks::{render_check_block, render_metrics, SECTION_INDENT};
pub use options::{SummaryMode, TextOptions};
use paint::Paint;

/// Renders the end-of-test summary exactly as k6 1.x prints it: a `█ THRESHOLDS` block
/// when any threshold exists, then `█ TOTAL RESULTS` with the checks and the metrics by
/// category. The text starts with two blank lines and ends with three, as k6 writes it to
/// stdout; print it verbatim. Full mode adds the `█ GROUP` and `█ SCENARIO` sections
/// when `data.sections` holds them; legacy mode prints k6's pre-1.0 layout instead.
pub fn render_text(data: &SummaryData, opts: &TextOptions) -> String {
    let paint = Paint { on: opts.color };
    if opts.mode == SummaryMode::Legacy {
        return legacy::render_legacy(data, opts.time_unit.as_deref(), paint);
    }
    let unit = opts.time_unit.as_deref();
    let mut out = String::from("\n\n");

    thresholds::render_thresholds(&mut out, &data.metrics, unit, paint);

    out.push_str("  █ TOTAL RESULTS \n\n");
    render_checks(&mut out, data, paint);
    render_metrics(
        &mut out,
        &data.metrics,
        opts.mode,
        unit,
        paint,
        SECTION_INDENT,
        connections::line(&data.connections).as_deref(),
    );
    out.push('\n');
    if opts.mode == SummaryMode::Full {
        if let Some(sections) = &data.sections {
            sections::render_sections(&mut out, sections, data.duration, unit, paint);
        }
    }
    out.push('\n');
    out
}

/// The `checks_total/succeeded/failed` lines and the check list of TOTAL RESULTS.
fn render_checks(out: &mut String, data: &SummaryData, paint: Paint) {
    let Some(checks) = data.metric("checks") else {
        return;
    };
    let list: Vec<(&str, u64, u64)> = data
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.passes, c.fails))
        .collect();
    render_check_block(
        out,
        SECTION_INDENT,
        checks.value("passes").unwrap_or(0.0),
        checks.value("fails").unwrap_or(0.0),
        &list,
        data.duration,
        paint,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{basic_run, group, metric, threshold};
    use rk6_metrics::{MetricType, ValueType};
    use std::time::Duration;

    fn compact() -> TextOptions {
        TextOptions::default()
    }

    #[test]
    fn compact_matches_k6_run_verbatim() {
        let want = [
            "",
            "",
            "  █ THRESHOLDS ",
            "",
            "    http_req_duration",
            "    ✓ 'p(95)<500' p(95)=5.41ms",
            "",
            "    http_req_failed",
            "    ✓ 'rate<0.01' rate=0.00%",
            "",
            "",
            "  █ TOTAL RESULTS ",
            "",
            "    checks_total.......................: 40      19.297569/s",
            "    checks_succeeded...................: 100.00% 40 out of 40",
            "    checks_failed......................: 0.00%   0 out of 40",
            "",
            "    ✓ status is 200",
            "",
            "    HTTP",
            "    http_req_duration.......................................................: avg=2.55ms   min=702.2µs  med=1.44ms   max=15.66ms  p(90)=4.23ms   p(95)=5.41ms  ",
            "      { expected_response:true }............................................: avg=2.55ms   min=702.2µs  med=1.44ms   max=15.66ms  p(90)=4.23ms   p(95)=5.41ms  ",
            "    http_req_failed.........................................................: 0.00%  0 out of 40",
            "    http_reqs...............................................................: 40     19.297569/s",
            "",
            "    EXECUTION",
            "    iteration_duration......................................................: avg=103.51ms min=101.19ms med=102.42ms max=117.54ms p(90)=105.05ms p(95)=109.22ms",
            "    iterations..............................................................: 40     19.297569/s",
            "    vus.....................................................................: 2      min=2       max=2",
            "    vus_max.................................................................: 2      min=2       max=2",
            "",
            "    NETWORK",
            "    data_received...........................................................: 10 kB  4.9 kB/s",
            "    data_sent...............................................................: 3.0 kB 1.4 kB/s",
            "",
            "",
            "",
            "",
        ]
        .join("\n");
        let got = render_text(&basic_run(), &compact());
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "line {i}");
        }
        assert_eq!(got, want);
    }

    #[test]
    fn full_mode_adds_http_phases() {
        let got = render_text(
            &basic_run(),
            &TextOptions {
                mode: SummaryMode::Full,
                ..compact()
            },
        );
        let lines: Vec<&str> = got.lines().collect();
        let at = |name: &str| {
            let prefix = format!("    {name}.");
            lines
                .iter()
                .position(|l| l.starts_with(&prefix))
                .unwrap_or(usize::MAX)
        };
        assert!(lines.contains(
            &"    http_req_blocked........................................................: avg=33.15µs  min=2.84µs   med=9.71µs   max=731.99µs p(90)=14.08µs  p(95)=61.08µs "
        ));
        assert!(at("http_req_blocked") < at("http_req_duration"));
        assert!(at("http_req_failed") < at("http_req_waiting"));
        assert!(at("http_req_waiting") < at("http_reqs"));
        assert!(at("http_reqs") < usize::MAX);
        assert!(!got.contains("group_duration"));
        assert!(
            !got.contains("    checks...."),
            "the checks metric is replaced by checks_*"
        );
    }

    #[test]
    fn compact_hides_phases() {
        let got = render_text(&basic_run(), &compact());
        assert!(!got.contains("http_req_blocked"));
        assert!(!got.contains("http_req_waiting"));
    }

    #[test]
    fn failing_checks_and_thresholds() {
        use MetricType::*;
        let mut d = metric(
            "http_req_duration",
            Trend,
            ValueType::Time,
            &[("avg", 35.28), ("p(95)", 43.92)],
        );
        d.thresholds = vec![
            threshold("p(95)<0.001", "p(95)", 43.92, false),
            threshold("avg<100", "avg", 35.28, true),
        ];
        let data = SummaryData {
            metrics: vec![
                metric(
                    "checks",
                    Rate,
                    ValueType::Default,
                    &[("rate", 0.75), ("passes", 6.0), ("fails", 2.0)],
                ),
                d,
            ],
            root_group: group(&[("is 200", 4, 0), ("iter even", 2, 2)]),
            checks: group(&[("is 200", 4, 0), ("iter even", 2, 2)]).checks,
            duration: Duration::from_secs_f64(8.0 / 59.2262),
            sections: None,
            connections: rk6_metrics::ConnectionTally::default(),
        };
        let got = render_text(&data, &compact());
        let want_thresholds = "\n\n  █ THRESHOLDS \n\n    http_req_duration\n    ✗ 'p(95)<0.001' p(95)=43.92ms\n    ✓ 'avg<100' avg=35.28ms\n\n\n  █ TOTAL RESULTS \n\n";
        assert!(got.starts_with(want_thresholds), "{got}");
        let checks = [
            "    checks_total.......................: 8      59.2262/s",
            "    checks_succeeded...................: 75.00% 6 out of 8",
            "    checks_failed......................: 25.00% 2 out of 8",
            "",
            "    ✓ is 200",
            "    ✗ iter even",
            "      ↳  50% — ✓ 2 / ✗ 2",
            "",
        ]
        .join("\n");
        assert!(got.contains(&checks), "{got}");
    }

    #[test]
    fn no_thresholds_no_checks() {
        use MetricType::*;
        let data = SummaryData {
            metrics: vec![
                metric(
                    "iterations",
                    Counter,
                    ValueType::Default,
                    &[("count", 1.0), ("rate", 0.5)],
                ),
                metric(
                    "my_counter",
                    Counter,
                    ValueType::Default,
                    &[("count", 3.0), ("rate", 1.5)],
                ),
            ],
            root_group: group(&[]),
            checks: Vec::new(),
            duration: Duration::from_secs(2),
            sections: None,
            connections: rk6_metrics::ConnectionTally::default(),
        };
        let got = render_text(&data, &compact());
        // The widest name is "iterations": 2·10 + 3 = 23 columns; CUSTOM comes first.
        let want = [
            "",
            "",
            "  █ TOTAL RESULTS ",
            "",
            "    CUSTOM",
            "    my_counter.............: 3 1.5/s",
            "",
            "    EXECUTION",
            "    iterations.............: 1 0.5/s",
            "",
            "",
            "",
            "",
        ]
        .join("\n");
        assert_eq!(got, want);
    }

    #[test]
    fn colours_only_when_asked() {
        let plain = render_text(&basic_run(), &compact());
        assert!(!plain.contains('\x1b'));
        let coloured = render_text(
            &basic_run(),
            &TextOptions {
                color: true,
                ..compact()
            },
        );
        assert!(coloured.contains("\x1b[32m✓\x1b[0m 'p(95)<500'"));
        assert!(coloured.contains("    http_reqs\x1b[2m......"));
        // Stripping the escapes gives back the plain text: alignment ignores colour.
        let mut stripped = String::new();
        let mut in_esc = false;
        for ch in coloured.chars() {
            match (in_esc, ch) {
                (false, '\x1b') => in_esc = true,
                (true, 'm') => in_esc = false,
                (false, c) => stripped.push(c),
                _ => {}
            }
        }
        assert_eq!(stripped, plain);
    }

    #[test]
    fn fixed_time_unit() {
        let got = render_text(
            &basic_run(),
            &TextOptions {
                time_unit: Some("ms".into()),
                ..compact()
            },
        );
        assert!(got.contains("    ✓ 'p(95)<500' p(95)=5.41ms"));
        assert!(
            got.contains(
                "avg=2.55ms   min=0.70ms   med=1.44ms   max=15.66ms  p(90)=4.23ms   p(95)=5.41ms  "
            ),
            "{got}"
        );
    }
}
