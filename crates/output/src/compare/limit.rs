//! `--max-regression METRIC:STAT=P%`: how far one stat may move from BASE to NEW.
//!
//! The sign says which way is a regression, so the user decides and no table of
//! metrics has to guess: `P%` (or `+P%`) fails when NEW is more than P % *above* BASE
//! (latencies, error rates), `-P%` when NEW is more than P % *below* BASE (request
//! rates, check rates). The stat names are those of k6's thresholds: `avg`, `min`,
//! `med`, `max`, `p(N)` and `count` of a Trend, `count` and `rate` of a Counter, `value`,
//! `min`, `max` of a Gauge, `rate` (also `value`), `passes`, `fails` of a Rate.

use super::error::CompareError;

/// Which move of a stat is a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Higher is worse: the limit caps the rise.
    Rise,
    /// Lower is worse: the limit caps the drop.
    Drop,
}

/// One parsed `--max-regression` value.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// The value as given, for messages.
    pub source: String,
    /// Metric or `metric{tag:value}` sub-metric, as the summary file names it.
    pub metric: String,
    /// Stat name, as k6's thresholds name it.
    pub stat: String,
    /// Allowed relative change in percent (not negative).
    pub percent: f64,
    /// Which way the change is limited.
    pub direction: Direction,
}

impl Limit {
    /// Parses `METRIC:STAT=P%` (`P` a decimal number, `-P` for a limit on drops).
    pub fn parse(text: &str) -> Result<Limit, CompareError> {
        let bad = |why: &str| CompareError::Limit {
            limit: text.to_owned(),
            why: why.to_owned(),
        };
        let (target, amount) = text
            .rsplit_once('=')
            .ok_or_else(|| bad("expected METRIC:STAT=P%, e.g. http_req_duration:p(95)=10%"))?;
        // A sub-metric's selector holds colons too: the stat's is the last one after it.
        let tail_from = target.rfind('}').map_or(0, |i| i + 1);
        let colon = target[tail_from..]
            .rfind(':')
            .map(|i| tail_from + i)
            .ok_or_else(|| bad("no stat: expected METRIC:STAT, e.g. http_req_duration:p(95)"))?;
        let (metric, stat) = (target[..colon].trim(), target[colon + 1..].trim());
        if metric.is_empty() {
            return Err(bad("no metric name before ':'"));
        }
        if metric.contains('{') != metric.ends_with('}') {
            return Err(bad("unbalanced '{' in the metric's tag selector"));
        }
        if !valid_stat(stat) {
            return Err(bad(&format!(
                "unknown stat {stat:?}: use avg, min, med, max, p(N), count, rate, value, passes or fails"
            )));
        }
        let amount = amount.trim();
        let number = amount
            .strip_suffix('%')
            .ok_or_else(|| bad("the limit must be a percentage such as 10% or -5%"))?
            .trim();
        let (direction, digits) = match number.strip_prefix('-') {
            Some(rest) => (Direction::Drop, rest),
            None => (Direction::Rise, number.strip_prefix('+').unwrap_or(number)),
        };
        // Plain decimals only: `inf`, `nan` and exponents are no percentages a user writes.
        let plain = !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
            && digits.chars().filter(|&c| c == '.').count() <= 1
            && digits != ".";
        let percent = plain
            .then(|| digits.parse::<f64>().ok())
            .flatten()
            .ok_or_else(|| {
                bad(&format!(
                    "{amount:?} is not a percentage such as 10% or -5%"
                ))
            })?;
        Ok(Limit {
            source: text.to_owned(),
            metric: metric.to_owned(),
            stat: stat.to_owned(),
            percent,
            direction,
        })
    }

    /// Whether a relative change (in percent, NEW against BASE) breaks this limit.
    pub fn exceeded_by(&self, change: f64) -> bool {
        match self.direction {
            Direction::Rise => change > self.percent,
            Direction::Drop => change < -self.percent,
        }
    }

    /// The allowed change as a signed text: `+10%`, `-5%`.
    pub fn allowed(&self) -> String {
        let sign = match self.direction {
            Direction::Rise => '+',
            Direction::Drop => '-',
        };
        format!("{sign}{}%", self.percent)
    }
}

/// Stat names a summary export can hold.
fn valid_stat(stat: &str) -> bool {
    match stat {
        "avg" | "min" | "med" | "max" | "count" | "rate" | "value" | "passes" | "fails" => true,
        _ => stat
            .strip_prefix("p(")
            .and_then(|s| s.strip_suffix(')'))
            .and_then(|p| p.parse::<f64>().ok())
            .is_some_and(|p| (0.0..=100.0).contains(&p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Limit {
        Limit::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn why(text: &str) -> String {
        match Limit::parse(text) {
            Err(CompareError::Limit { limit, why }) => {
                assert_eq!(limit, text);
                why
            }
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn parses_metric_stat_and_signed_percent() {
        let l = ok("http_req_duration:p(95)=10%");
        assert_eq!(
            (l.metric.as_str(), l.stat.as_str(), l.percent, l.direction),
            ("http_req_duration", "p(95)", 10.0, Direction::Rise)
        );
        let l = ok("http_reqs:rate=-5%");
        assert_eq!((l.percent, l.direction), (5.0, Direction::Drop));
        let l = ok("checks:rate=+2.5%");
        assert_eq!((l.percent, l.direction), (2.5, Direction::Rise));
        assert_eq!(ok("x:avg=0%").percent, 0.0);
        assert_eq!(ok("x:p(99.9)= 1 %").stat, "p(99.9)");
    }

    #[test]
    fn submetric_selectors_keep_their_colons() {
        let l = ok("http_req_duration{expected_response:true}:p(90)=3%");
        assert_eq!(l.metric, "http_req_duration{expected_response:true}");
        assert_eq!(l.stat, "p(90)");
        assert!(why("http_req_duration{expected_response:true}=3%").contains("no stat"));
    }

    #[test]
    fn malformed_limits_say_what_is_wrong() {
        assert!(why("http_req_duration:p(95)").contains("METRIC:STAT=P%"));
        assert!(why("http_req_duration=10%").contains("no stat"));
        assert!(why(":avg=10%").contains("no metric"));
        assert!(why("x:p95=10%").contains("unknown stat \"p95\""));
        assert!(why("x:p(101)=10%").contains("unknown stat"));
        assert!(why("x:avg=10").contains("percentage"));
        assert!(why("x:avg=ten%").contains("\"ten%\""));
        assert!(why("x:avg=--5%").contains("percentage"));
        assert!(why("x:avg=1e2%").contains("percentage"));
        assert!(why("x:avg=inf%").contains("percentage"));
        assert!(why("x{a:b:avg=1%").contains("unbalanced"));
    }

    #[test]
    fn the_sign_picks_the_direction_that_fails() {
        let rise = ok("x:p(95)=10%");
        assert!(!rise.exceeded_by(10.0));
        assert!(rise.exceeded_by(10.01));
        assert!(!rise.exceeded_by(-90.0));
        let drop = ok("x:rate=-5%");
        assert!(!drop.exceeded_by(-5.0));
        assert!(drop.exceeded_by(-5.01));
        assert!(!drop.exceeded_by(300.0));
        assert!(ok("x:avg=0%").exceeded_by(f64::INFINITY));
        assert_eq!(rise.allowed(), "+10%");
        assert_eq!(drop.allowed(), "-5%");
    }
}
