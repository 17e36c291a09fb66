//! `name....: values` lines and their column alignment.

use rk6_metrics::{MetricSummary, MetricType};

use super::format;
use super::paint::Paint;

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
