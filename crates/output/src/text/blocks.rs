//! The checks and metrics blocks that TOTAL RESULTS and every full-mode section print.

use std::fmt::Write as _;

use rk6_metrics::MetricSummary;

use super::category;
use super::format;
use super::options::SummaryMode;
use super::paint::Paint;
use super::rows::{Layout, Row};

/// Indentation of a top-level section's lines.
pub(crate) const SECTION_INDENT: usize = 4;

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
/// sorted by name and may include sub-metrics. `http_note` ends the HTTP block (rk6's
/// `http connections:` line).
pub(crate) fn render_metrics(
    out: &mut String,
    metrics: &[MetricSummary],
    mode: SummaryMode,
    unit: Option<&str>,
    paint: Paint,
    indent: usize,
    http_note: Option<&str>,
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
        if let Some(note) = http_note.filter(|_| *title == "HTTP") {
            let _ = writeln!(out, "{pad}{note}");
        }
        out.push('\n');
    }
}
