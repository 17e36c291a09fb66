//! The end-of-test text summary in k6 1.x layout.

use std::fmt::Write as _;

use rk6_metrics::{MetricSummary, MetricType, SummaryData};

use crate::category;
use crate::format;

/// Which metrics the summary lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryMode {
    /// k6's default: hides the HTTP timing phases besides `http_req_duration`.
    Compact,
    /// Lists every metric, then a section per top-level group and per named scenario.
    Full,
    /// k6's pre-1.0 layout: the group tree with its checks, then one flat sorted list.
    Legacy,
}

/// How to render the text summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextOptions {
    /// Compact, full or legacy.
    pub mode: SummaryMode,
    /// Emit ANSI colours (stdout is a TTY and `--no-color` is off).
    pub color: bool,
    /// `summaryTimeUnit`: `s`, `ms`, `us`, or `None` for automatic units.
    pub time_unit: Option<String>,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            mode: SummaryMode::Compact,
            color: false,
            time_unit: None,
        }
    }
}

const INDENT: &str = "    ";

/// Indentation of a top-level section's lines.
pub(crate) const SECTION_INDENT: usize = 4;

/// Renders the end-of-test summary exactly as k6 1.x prints it: a `█ THRESHOLDS` block
/// when any threshold exists, then `█ TOTAL RESULTS` with the checks and the metrics by
/// category. The text starts with two blank lines and ends with three, as k6 writes it to
/// stdout; print it verbatim. Full mode adds the `█ GROUP` and `█ SCENARIO` sections
/// when `data.sections` holds them; legacy mode prints k6's pre-1.0 layout instead.
pub fn render_text(data: &SummaryData, opts: &TextOptions) -> String {
    let paint = Paint { on: opts.color };
    if opts.mode == SummaryMode::Legacy {
        return crate::text_legacy::render_legacy(data, opts.time_unit.as_deref(), paint);
    }
    let unit = opts.time_unit.as_deref();
    let mut out = String::from("\n\n");

    let with_thresholds: Vec<&MetricSummary> = data
        .metrics
        .iter()
        .filter(|m| !m.thresholds.is_empty())
        .collect();
    if !with_thresholds.is_empty() {
        out.push_str("  █ THRESHOLDS \n\n");
        for m in with_thresholds {
            let _ = writeln!(out, "{INDENT}{}", m.name);
            for t in &m.thresholds {
                let v = t.value.unwrap_or(0.0);
                let shown = if t.stat == "count" && m.kind == MetricType::Trend {
                    format::number(v)
                } else {
                    format::value(v, m.kind, m.contains, unit)
                };
                let _ = writeln!(
                    out,
                    "{INDENT}{} '{}' {}={shown}",
                    paint.mark(t.ok),
                    t.source,
                    t.stat
                );
            }
            out.push('\n');
        }
        out.push('\n');
    }

    out.push_str("  █ TOTAL RESULTS \n\n");
    render_checks(&mut out, data, paint);
    render_metrics(
        &mut out,
        &data.metrics,
        opts.mode,
        unit,
        paint,
        SECTION_INDENT,
    );
    out.push('\n');
    if opts.mode == SummaryMode::Full {
        if let Some(sections) = &data.sections {
            crate::text_sections::render_sections(&mut out, sections, data.duration, unit, paint);
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

/// The checks block of a section indented by `indent`: totals, a blank line, one line per
/// `(name, passes, fails)` check (failures followed by their tally), a blank line.
/// Nothing when no check ran.
pub(crate) fn render_check_block(
    out: &mut String,
    indent: usize,
    passes: f64,
    fails: f64,
    list: &[(&str, u64, u64)],
    duration: std::time::Duration,
    paint: Paint,
) {
    let total = passes + fails;
    if total == 0.0 {
        return;
    }
    let secs = duration.as_secs_f64();
    let per_sec = if secs > 0.0 { total / secs } else { 0.0 };
    let rows = [
        Row::plain(
            "checks_total",
            vec![
                format::number(total),
                format!("{}/s", format::number(per_sec)),
            ],
        ),
        Row::plain(
            "checks_succeeded",
            vec![
                format::percent(passes / total),
                format!("{passes} out of {total}"),
            ],
        ),
        Row::plain(
            "checks_failed",
            vec![
                format::percent(fails / total),
                format!("{fails} out of {total}"),
            ],
        ),
    ];
    let layout = Layout::of(&rows);
    for row in &rows {
        layout.line(out, indent, row, paint);
    }
    out.push('\n');
    let pad = " ".repeat(indent);
    // k6 indents a failed check's tally by twice the section indent minus two, which is
    // 6 columns at the top level but grows faster than the section in nested groups.
    let tally_pad = " ".repeat((2 * indent).saturating_sub(2));
    for &(name, passes, fails) in list {
        let _ = writeln!(out, "{pad}{} {name}", paint.mark(fails == 0));
        if fails > 0 {
            let pct = 100 * passes / (passes + fails);
            let _ = writeln!(
                out,
                "{tally_pad}↳  {pct}% — {} {passes} / {} {fails}",
                paint.mark(true),
                paint.mark(false),
            );
        }
    }
    out.push('\n');
}

/// The metric lines under their category titles, indented by `indent`; `metrics` are
/// sorted by name and may include sub-metrics.
pub(crate) fn render_metrics(
    out: &mut String,
    metrics: &[MetricSummary],
    mode: SummaryMode,
    unit: Option<&str>,
    paint: Paint,
    indent: usize,
) {
    let pad = " ".repeat(indent);
    let parents = metrics
        .iter()
        .filter(|m| m.parent.is_none() && !category::hidden(&m.name, mode));
    // Rows per category, each parent followed by its sub-metrics.
    let mut by_category: Vec<(&str, Vec<Row>)> =
        category::ORDER.iter().map(|c| (*c, Vec::new())).collect();
    for parent in parents {
        let cat = category::of(&parent.name);
        let rows = &mut by_category
            .iter_mut()
            .find(|(c, _)| *c == cat)
            .expect("category::of returns a listed category")
            .1;
        rows.push(Row::metric(parent, unit));
        for sub in metrics
            .iter()
            .filter(|m| m.parent.as_deref() == Some(parent.name.as_str()))
        {
            rows.push(Row::metric(sub, unit));
        }
    }
    let all: Vec<&Row> = by_category.iter().flat_map(|(_, rows)| rows).collect();
    let layout = Layout::of(all.iter().copied());
    for (title, rows) in &by_category {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{pad}{title}");
        for row in rows {
            layout.line(out, indent, row, paint);
        }
        out.push('\n');
    }
}

/// One `name....: values` line before alignment.
pub(crate) struct Row {
    /// What is printed before the dots (`  { tag:value }` for sub-metrics).
    pub(crate) label: String,
    /// k6 sizes the name column by `indent + name + display name`, not by the label.
    width_key: usize,
    /// Trend lines align per stat column; others by value and extras.
    trend: bool,
    values: Vec<String>,
}

impl Row {
    pub(crate) fn plain(name: &str, values: Vec<String>) -> Row {
        Row {
            label: name.to_owned(),
            width_key: 2 * name.chars().count(),
            trend: false,
            values,
        }
    }

    pub(crate) fn metric(m: &MetricSummary, unit: Option<&str>) -> Row {
        let (label, width_key) = match m.parent {
            Some(_) => {
                let inner = m
                    .name
                    .find('{')
                    .map_or("", |i| &m.name[i + 1..m.name.len() - 1]);
                let display = format!("{{ {inner} }}");
                let key = 2 + m.name.chars().count() + display.chars().count();
                (format!("  {display}"), key)
            }
            None => (m.name.clone(), 2 * m.name.chars().count()),
        };
        let fmt = |v: f64| format::value(v, m.kind, m.contains, unit);
        let get = |k: &str| m.value(k).unwrap_or(0.0);
        let (trend, values) = match m.kind {
            MetricType::Trend => (
                true,
                m.values
                    .iter()
                    .map(|(k, v)| {
                        let shown = if k == "count" {
                            format::number(*v)
                        } else {
                            fmt(*v)
                        };
                        format!("{k}={shown}")
                    })
                    .collect(),
            ),
            MetricType::Counter => (
                false,
                vec![fmt(get("count")), format!("{}/s", fmt(get("rate")))],
            ),
            MetricType::Gauge => (
                false,
                vec![
                    fmt(get("value")),
                    format!("min={}", fmt(get("min"))),
                    format!("max={}", fmt(get("max"))),
                ],
            ),
            MetricType::Rate => {
                let passes = get("passes");
                let total = passes + get("fails");
                (
                    false,
                    vec![
                        format::percent(get("rate")),
                        format!("{passes} out of {total}"),
                    ],
                )
            }
        };
        Row {
            label,
            width_key,
            trend,
            values,
        }
    }
}

/// Column widths shared by all lines of a block.
pub(crate) struct Layout {
    /// Width of the label plus dots.
    pub(crate) name: usize,
    trend: Vec<usize>,
    other: Vec<usize>,
}

impl Layout {
    pub(crate) fn of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Layout {
        let mut l = Layout {
            name: 0,
            trend: Vec::new(),
            other: Vec::new(),
        };
        for r in rows {
            l.name = l.name.max(r.width_key + 3);
            let cols = if r.trend { &mut l.trend } else { &mut l.other };
            for (i, v) in r.values.iter().enumerate() {
                if cols.len() <= i {
                    cols.push(0);
                }
                cols[i] = cols[i].max(v.chars().count());
            }
        }
        l
    }

    pub(crate) fn line(&self, out: &mut String, indent: usize, row: &Row, paint: Paint) {
        self.line_with(out, &" ".repeat(indent), row, paint);
    }

    /// A line whose text before the dots is `prefix` + the row's label.
    pub(crate) fn line_with(&self, out: &mut String, prefix: &str, row: &Row, paint: Paint) {
        let dots = self.name.saturating_sub(row.label.chars().count());
        out.push_str(prefix);
        out.push_str(&row.label);
        self.write_values(out, dots, row, paint);
    }

    /// `dots` dots, the colon and the aligned values, then the newline.
    pub(crate) fn write_values(&self, out: &mut String, dots: usize, row: &Row, paint: Paint) {
        out.push_str(&paint.faint(&format!("{}:", ".".repeat(dots))));
        out.push(' ');
        let last = row.values.len().saturating_sub(1);
        for (i, v) in row.values.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(v);
            // Trend columns are all padded (k6 leaves trailing spaces); other lines pad
            // every column but the last.
            let pad = if row.trend || i < last {
                let widths = if row.trend { &self.trend } else { &self.other };
                widths[i].saturating_sub(v.chars().count())
            } else {
                0
            };
            out.extend(std::iter::repeat_n(' ', pad));
        }
        out.push('\n');
    }
}

/// ANSI decoration, a no-op when colours are off.
#[derive(Clone, Copy)]
pub(crate) struct Paint {
    pub(crate) on: bool,
}

impl Paint {
    pub(crate) fn mark(self, ok: bool) -> String {
        match (ok, self.on) {
            (true, true) => "\x1b[32m✓\x1b[0m".into(),
            (false, true) => "\x1b[31m✗\x1b[0m".into(),
            (true, false) => "✓".into(),
            (false, false) => "✗".into(),
        }
    }

    pub(crate) fn faint(self, s: &str) -> String {
        if self.on {
            format!("\x1b[2m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rk6_metrics::{md5_hex, CheckSummary, GroupSummary, ThresholdResult, ValueType};
    use std::time::Duration;

    pub(crate) fn metric(
        name: &str,
        kind: MetricType,
        contains: ValueType,
        values: &[(&str, f64)],
    ) -> MetricSummary {
        let parent = name.find('{').map(|i| name[..i].to_owned());
        MetricSummary {
            name: name.into(),
            kind,
            contains,
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            thresholds: Vec::new(),
            submetric_tags: Vec::new(),
            parent,
        }
    }

    pub(crate) fn threshold(source: &str, stat: &str, value: f64, ok: bool) -> ThresholdResult {
        ThresholdResult {
            source: source.into(),
            ok,
            stat: stat.into(),
            value: Some(value),
        }
    }

    pub(crate) fn group(checks: &[(&str, u64, u64)]) -> GroupSummary {
        GroupSummary {
            name: String::new(),
            path: String::new(),
            id: md5_hex(""),
            groups: Vec::new(),
            checks: checks
                .iter()
                .map(|(n, p, f)| CheckSummary {
                    name: n.to_string(),
                    path: format!("::{n}"),
                    id: md5_hex(&format!("::{n}")),
                    passes: *p,
                    fails: *f,
                })
                .collect(),
        }
    }

    /// The numbers of the 2-second k6 run in the reference (§7.1), full-mode trends added.
    pub(crate) fn basic_run() -> SummaryData {
        use MetricType::*;
        use ValueType::*;
        let dur = |avg, min, med, max, p90, p95| {
            vec![
                ("avg", avg),
                ("min", min),
                ("med", med),
                ("max", max),
                ("p(90)", p90),
                ("p(95)", p95),
            ]
        };
        let http = dur(2.5512, 0.7022, 1.4405, 15.661, 4.2301, 5.4102);
        let mut duration = metric("http_req_duration", Trend, Time, &http);
        duration.thresholds = vec![threshold("p(95)<500", "p(95)", 5.4102, true)];
        let mut expected = metric(
            "http_req_duration{expected_response:true}",
            Trend,
            Time,
            &http,
        );
        expected.submetric_tags = vec![("expected_response".into(), "true".into())];
        let mut failed = metric(
            "http_req_failed",
            Rate,
            Default,
            &[("rate", 0.0), ("passes", 0.0), ("fails", 40.0)],
        );
        failed.thresholds = vec![threshold("rate<0.01", "rate", 0.0, true)];
        let rate = 19.297_569_4;
        SummaryData {
            metrics: vec![
                metric(
                    "checks",
                    Rate,
                    Default,
                    &[("rate", 1.0), ("passes", 40.0), ("fails", 0.0)],
                ),
                metric(
                    "data_received",
                    Counter,
                    Data,
                    &[("count", 10160.0), ("rate", 4901.5)],
                ),
                metric(
                    "data_sent",
                    Counter,
                    Data,
                    &[("count", 3000.0), ("rate", 1449.0)],
                ),
                metric(
                    "http_req_blocked",
                    Trend,
                    Time,
                    &dur(0.03315, 0.00284, 0.00971, 0.73199, 0.01408, 0.06108),
                ),
                duration,
                expected,
                failed,
                metric(
                    "http_req_waiting",
                    Trend,
                    Time,
                    &dur(1.12, 0.64033, 0.98912, 2.81, 1.65, 1.93),
                ),
                metric(
                    "http_reqs",
                    Counter,
                    Default,
                    &[("count", 40.0), ("rate", rate)],
                ),
                metric(
                    "iteration_duration",
                    Trend,
                    Time,
                    &dur(103.51, 101.19, 102.42, 117.54, 105.05, 109.22),
                ),
                metric(
                    "iterations",
                    Counter,
                    Default,
                    &[("count", 40.0), ("rate", rate)],
                ),
                metric(
                    "vus",
                    Gauge,
                    Default,
                    &[("value", 2.0), ("min", 2.0), ("max", 2.0)],
                ),
                metric(
                    "vus_max",
                    Gauge,
                    Default,
                    &[("value", 2.0), ("min", 2.0), ("max", 2.0)],
                ),
            ],
            root_group: group(&[("status is 200", 40, 0)]),
            checks: group(&[("status is 200", 40, 0)]).checks,
            duration: Duration::from_secs_f64(40.0 / rate),
            sections: None,
        }
    }

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
