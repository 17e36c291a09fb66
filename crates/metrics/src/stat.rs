//! Names of the aggregated values a sink can report (`avg`, `p(95)`, `count`, ...).

use std::fmt;

/// One aggregated value of a sink: the left-hand side of a threshold and a summary column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stat {
    /// Counter sum, or number of Trend samples.
    Count,
    /// Counter per second, or Rate share of non-zero samples.
    Rate,
    /// Gauge last value.
    Value,
    /// Trend mean.
    Avg,
    /// Trend or Gauge minimum.
    Min,
    /// Trend or Gauge maximum.
    Max,
    /// Trend median, `p(50)`.
    Med,
    /// Trend percentile; the field is the percentage `0..=100`.
    Percentile(f64),
    /// Rate non-zero samples.
    Passes,
    /// Rate zero samples.
    Fails,
}

impl Stat {
    /// Parses a stat name: `count`, `rate`, `value`, `avg`, `min`, `max`, `med`, `passes`,
    /// `fails` or `p(N)` with `0 <= N <= 100`.
    pub fn parse(s: &str) -> Option<Stat> {
        Some(match s {
            "count" => Stat::Count,
            "rate" => Stat::Rate,
            "value" => Stat::Value,
            "avg" => Stat::Avg,
            "min" => Stat::Min,
            "max" => Stat::Max,
            "med" => Stat::Med,
            "passes" => Stat::Passes,
            "fails" => Stat::Fails,
            _ => {
                let inner = s.strip_prefix("p(")?.strip_suffix(')')?;
                Stat::Percentile(parse_percentage(inner)?)
            }
        })
    }

    /// Parses one entry of `summaryTrendStats`: `avg`, `min`, `med`, `max`, `count` or `p(N)`.
    pub fn parse_trend_stat(s: &str) -> Option<Stat> {
        match Stat::parse(s)? {
            st @ (Stat::Avg
            | Stat::Min
            | Stat::Med
            | Stat::Max
            | Stat::Count
            | Stat::Percentile(_)) => Some(st),
            _ => None,
        }
    }
}

/// Parses the number inside `p(...)`: a plain finite decimal in `0..=100`.
fn parse_percentage(s: &str) -> Option<f64> {
    // Rust's float parser also takes "inf" and "NaN"; k6 only means numbers here.
    if s.is_empty()
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    (0.0..=100.0).contains(&v).then_some(v)
}

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stat::Count => f.write_str("count"),
            Stat::Rate => f.write_str("rate"),
            Stat::Value => f.write_str("value"),
            Stat::Avg => f.write_str("avg"),
            Stat::Min => f.write_str("min"),
            Stat::Max => f.write_str("max"),
            Stat::Med => f.write_str("med"),
            Stat::Passes => f.write_str("passes"),
            Stat::Fails => f.write_str("fails"),
            Stat::Percentile(p) => write!(f, "p({p})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_percentiles() {
        assert_eq!(Stat::parse("avg"), Some(Stat::Avg));
        assert_eq!(Stat::parse("p(95)"), Some(Stat::Percentile(95.0)));
        assert_eq!(Stat::parse("p(99.9)"), Some(Stat::Percentile(99.9)));
        assert_eq!(Stat::parse("p(0)"), Some(Stat::Percentile(0.0)));
        assert_eq!(Stat::parse("p(100)"), Some(Stat::Percentile(100.0)));
        for bad in [
            "p(101)", "p()", "p(x)", "p(95", "p95", "p(-1)", "p(inf)", "p(NaN)", "P(95)", "mean",
            "",
        ] {
            assert_eq!(Stat::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn trend_stats_are_a_subset() {
        assert_eq!(Stat::parse_trend_stat("count"), Some(Stat::Count));
        assert_eq!(
            Stat::parse_trend_stat("p(90)"),
            Some(Stat::Percentile(90.0))
        );
        assert_eq!(Stat::parse_trend_stat("rate"), None);
        assert_eq!(Stat::parse_trend_stat("value"), None);
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "count", "rate", "value", "avg", "min", "max", "med", "passes", "fails", "p(95)",
            "p(99.9)",
        ] {
            assert_eq!(Stat::parse(s).unwrap().to_string(), s);
        }
    }
}
