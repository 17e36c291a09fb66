//! The comparison as a terminal table (optionally coloured) or as Markdown for a CI
//! comment. Both show every row, then each limit's verdict.

use std::fmt::Write as _;

use super::diff::{Comparison, Row, Verdict};
use super::limit::Direction;

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const RESET: &str = "\x1b[0m";

/// What the two sides are called in the heading (file names, or `this run`).
#[derive(Debug, Clone, Copy)]
pub struct Labels<'a> {
    /// BASE's name.
    pub base: &'a str,
    /// NEW's name.
    pub new: &'a str,
}

/// The table for a terminal: columns aligned, changes red when worse and green when
/// better (where the direction is known) if `color`.
pub fn render_comparison_text(c: &Comparison, labels: Labels, color: bool) -> String {
    let paint = |text: String, good: Option<bool>| match (color, good) {
        (true, Some(true)) => format!("{GREEN}{text}{RESET}"),
        (true, Some(false)) => format!("{RED}{text}{RESET}"),
        _ => text,
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n  █ COMPARISON  BASE {} → NEW {}\n",
        labels.base, labels.new
    );
    let cells: Vec<[String; 5]> = c
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let first = i == 0 || c.rows[i - 1].metric != r.metric;
            [
                if first {
                    r.metric.clone()
                } else {
                    String::new()
                },
                r.stat.clone(),
                r.base.map_or("—".into(), number),
                r.new.map_or("—".into(), number),
                change_text(r),
            ]
        })
        .collect();
    let head = ["metric", "stat", "base", "new", "change"].map(String::from);
    let mut width = [0usize; 5];
    for row in std::iter::once(&head).chain(&cells) {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, row: &[String; 5], good: Option<bool>| {
        let pad = |s: &str, w: usize| " ".repeat(w.saturating_sub(s.chars().count()));
        let _ = writeln!(
            out,
            "    {}{}  {}{}  {}{}  {}{}  {}{}",
            row[0],
            pad(&row[0], width[0]),
            row[1],
            pad(&row[1], width[1]),
            pad(&row[2], width[2]),
            row[2],
            pad(&row[3], width[3]),
            row[3],
            pad(&row[4], width[4]),
            paint(row[4].clone(), good),
        );
    };
    line(&mut out, &head, None);
    for (row, r) in cells.iter().zip(&c.rows) {
        line(&mut out, row, better(r));
    }
    if !c.verdicts.is_empty() {
        out.push('\n');
        for v in &c.verdicts {
            let mark = if v.exceeded { "✗" } else { "✓" };
            let _ = writeln!(
                out,
                "    {} {}: {} ({} → {}), allowed {}",
                paint(mark.into(), Some(!v.exceeded)),
                v.limit.source,
                percent(v.change),
                number(v.base),
                number(v.new),
                v.limit.allowed()
            );
        }
        let _ = writeln!(out, "\n    {}", tally(&c.verdicts));
    }
    out.push('\n');
    out
}

/// The comparison as GitHub-flavoured Markdown: a heading, the verdicts, the table — folded
/// in a `<details>` block under verdicts, so a CI comment shows the gate's outcome first.
pub fn render_comparison_markdown(c: &Comparison, labels: Labels) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### rk6 run comparison\n\nBASE `{}` → NEW `{}`\n",
        labels.base.replace('`', "'"),
        labels.new.replace('`', "'")
    );
    if !c.verdicts.is_empty() {
        let _ = writeln!(out, "**{}**\n", tally(&c.verdicts));
        out.push_str("| | limit | change | base → new | allowed |\n|---|---|---:|---|---:|\n");
        for v in &c.verdicts {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} → {} | {} |",
                if v.exceeded { "❌" } else { "✅" },
                cell(&v.limit.source),
                percent(v.change),
                number(v.base),
                number(v.new),
                v.limit.allowed()
            );
        }
        out.push('\n');
    }
    let folded = !c.verdicts.is_empty();
    if folded {
        let _ = writeln!(
            out,
            "<details><summary>All {} stats</summary>\n",
            c.rows.len()
        );
    }
    out.push_str("| metric | stat | base | new | change |\n|---|---|---:|---:|---:|\n");
    for r in &c.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&r.metric),
            cell(&r.stat),
            r.base.map_or("—".into(), number),
            r.new.map_or("—".into(), number),
            change_text(r)
        );
    }
    if folded {
        out.push_str("\n</details>\n");
    }
    out
}

/// `N of M limits exceeded` or `all M limits held`.
fn tally(verdicts: &[Verdict]) -> String {
    let exceeded = verdicts.iter().filter(|v| v.exceeded).count();
    let s = if verdicts.len() == 1 { "" } else { "s" };
    if exceeded == 0 {
        format!("{} limit{s} held", verdicts.len())
    } else {
        format!("{exceeded} of {} limit{s} exceeded", verdicts.len())
    }
}

/// Whether a row's change is an improvement (`None`: unknown direction, or no change).
fn better(r: &Row) -> Option<bool> {
    let change = r.change()?;
    if change == 0.0 {
        return None;
    }
    match r.worse? {
        Direction::Rise => Some(change < 0.0),
        Direction::Drop => Some(change > 0.0),
    }
}

fn change_text(r: &Row) -> String {
    r.change().map_or("—".into(), percent)
}

/// A change in percent with its sign, one decimal: `+12.5%`, `-3.0%`, `0.0%`, `+∞%`.
fn percent(change: f64) -> String {
    if change == 0.0 {
        "0.0%".into()
    } else if change.is_infinite() {
        format!("{}∞%", if change > 0.0 { '+' } else { '-' })
    } else {
        format!("{change:+.1}%")
    }
}

/// A stat's value, short: whole numbers as they are, others with the decimals their
/// size needs (summary files hold milliseconds, bytes, counts, shares).
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let decimals = match v.abs() {
        a if a >= 1000.0 => 1,
        a if a >= 1.0 => 3,
        _ => 4,
    };
    let s = format!("{v:.decimals$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" || s == "-0" {
        "0".into()
    } else {
        s.to_owned()
    }
}

/// A Markdown table cell: `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::super::diff::compare;
    use super::super::limit::Limit;
    use super::super::summary_file::RunStats;
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn sample() -> Comparison {
        let base = RunStats::from_export(&json!({"metrics": {
            "http_req_duration": {"avg": 10, "p(95)": 20},
            "checks": {"passes": 99, "fails": 1, "value": 0.99},
            "my|metric": {"count": 0, "rate": 0}
        }}))
        .unwrap();
        let new = RunStats::from_export(&json!({"metrics": {
            "http_req_duration": {"avg": 9.5, "p(95)": 23},
            "checks": {"passes": 99, "fails": 1, "value": 0.99},
            "my|metric": {"count": 3, "rate": 1.5}
        }}))
        .unwrap();
        let limits = [
            Limit::parse("http_req_duration:p(95)=10%").unwrap(),
            Limit::parse("checks:rate=-1%").unwrap(),
        ];
        compare(&base, &new, &limits, (Path::new("b"), Path::new("n"))).unwrap()
    }

    const LABELS: Labels = Labels {
        base: "base.json",
        new: "new.json",
    };

    #[test]
    fn numbers_and_percentages() {
        assert_eq!(number(40.0), "40");
        assert_eq!(number(1.2823619999999998), "1.282");
        assert_eq!(number(0.04241315), "0.0424");
        assert_eq!(number(511334.07802019344), "511334.1");
        assert_eq!(number(0.00001), "0");
        assert_eq!(number(-2.5), "-2.5");
        assert_eq!(percent(15.0), "+15.0%");
        assert_eq!(percent(-9.09), "-9.1%");
        assert_eq!(percent(0.0), "0.0%");
        assert_eq!(percent(f64::INFINITY), "+∞%");
    }

    #[test]
    fn text_table_is_aligned_and_lists_verdicts() {
        let text = render_comparison_text(&sample(), LABELS, false);
        let expected = "
  █ COMPARISON  BASE base.json → NEW new.json

    metric             stat    base   new  change
    checks             rate    0.99  0.99    0.0%
                       passes    99    99    0.0%
                       fails      1     1    0.0%
    http_req_duration  avg       10   9.5   -5.0%
                       p(95)     20    23  +15.0%
    my|metric          count      0     3     +∞%
                       rate       0   1.5     +∞%

    ✗ http_req_duration:p(95)=10%: +15.0% (20 → 23), allowed +10%
    ✓ checks:rate=-1%: 0.0% (0.99 → 0.99), allowed -1%

    1 of 2 limits exceeded

";
        assert_eq!(text, expected);
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn colours_say_better_or_worse_when_asked() {
        let text = render_comparison_text(&sample(), LABELS, true);
        assert!(text.contains(&format!("{GREEN}-5.0%{RESET}")), "{text}");
        assert!(text.contains(&format!("{RED}+15.0%{RESET}")));
        assert!(text.contains(&format!("{RED}✗{RESET}")));
        assert!(text.contains(&format!("{GREEN}✓{RESET}")));
        // A custom metric has no known direction; an unchanged stat no colour.
        assert!(text.contains("    +∞%\n"));
        assert!(text.contains("    0.0%\n"));
    }

    #[test]
    fn markdown_for_ci_comments() {
        let md = render_comparison_markdown(&sample(), LABELS);
        let expected = "### rk6 run comparison

BASE `base.json` → NEW `new.json`

**1 of 2 limits exceeded**

| | limit | change | base → new | allowed |
|---|---|---:|---|---:|
| ❌ | `http_req_duration:p(95)=10%` | +15.0% | 20 → 23 | +10% |
| ✅ | `checks:rate=-1%` | 0.0% | 0.99 → 0.99 | -1% |

<details><summary>All 7 stats</summary>

| metric | stat | base | new | change |
|---|---|---:|---:|---:|
| checks | rate | 0.99 | 0.99 | 0.0% |
| checks | passes | 99 | 99 | 0.0% |
| checks | fails | 1 | 1 | 0.0% |
| http_req_duration | avg | 10 | 9.5 | -5.0% |
| http_req_duration | p(95) | 20 | 23 | +15.0% |
| my\\|metric | count | 0 | 3 | +∞% |
| my\\|metric | rate | 0 | 1.5 | +∞% |

</details>
";
        assert_eq!(md, expected);
        // Without limits there is nothing to fold the table under.
        let mut bare = sample();
        bare.verdicts.clear();
        let md = render_comparison_markdown(&bare, LABELS);
        assert!(
            !md.contains("details") && md.contains("| checks | rate |"),
            "{md}"
        );
    }
}
