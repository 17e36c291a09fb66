//! `--threshold` verdicts on the latency histogram (`http_req_duration`, ms).

use hdrhistogram::Histogram;
use rk6_metrics::stat::Stat;
use rk6_metrics::threshold_parser::Expression;

use crate::stats::Stats;

/// One evaluated `--threshold`.
pub(crate) struct Verdict {
    pub(crate) text: String,
    pub(crate) ok: bool,
    /// The measured value in ms (count for `count`); `None` when there were no samples.
    pub(crate) value: Option<f64>,
}

fn stat_value(hist: &Histogram<u64>, stat: Stat) -> Option<f64> {
    if hist.is_empty() {
        return None;
    }
    let ms = |us: f64| us / 1000.0;
    Some(match stat {
        Stat::Avg => ms(hist.mean()),
        Stat::Min => ms(hist.min() as f64),
        Stat::Max => ms(hist.max() as f64),
        Stat::Med => ms(hist.value_at_quantile(0.5) as f64),
        Stat::Percentile(p) => ms(hist.value_at_quantile(p / 100.0) as f64),
        Stat::Count => hist.len() as f64,
        _ => return None,
    })
}

/// Each threshold's verdict, in the order given.
pub(crate) fn evaluate(thresholds: &[(String, Expression)], stats: &Stats) -> Vec<Verdict> {
    thresholds
        .iter()
        .map(|(text, expr)| {
            let value = stat_value(&stats.latency, expr.stat);
            Verdict {
                text: text.clone(),
                // As k6: a threshold on a metric without samples passes.
                ok: value.is_none_or(|v| expr.op.holds(v, expr.value)),
                value,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use rk6_metrics::threshold_parser::parse_expression;

    use super::*;

    #[test]
    fn thresholds_on_histogram() {
        let mut stats = Stats::new();
        for us in [1000, 2000, 3000, 4000] {
            stats.latency.record(us).unwrap();
        }
        let exprs: Vec<(String, Expression)> = ["p(99)<10", "avg>5", "max<=4.01", "count==4"]
            .iter()
            .map(|t| (t.to_string(), parse_expression(t).unwrap()))
            .collect();
        let verdicts = evaluate(&exprs, &stats);
        let oks: Vec<bool> = verdicts.iter().map(|v| v.ok).collect();
        assert_eq!(oks, [true, false, true, true]);
        // No samples: passes, as in k6.
        let empty = evaluate(&exprs[..1], &Stats::new());
        assert!(empty[0].ok && empty[0].value.is_none());
    }
}
