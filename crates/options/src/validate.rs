//! Checks of the consolidated options that need nothing but the options themselves.

use crate::error::OptionsError;
use crate::options::Options;

/// The summary layouts (`summaryMode`, `--summary-mode`).
/// `disabled` came in k6 1.3; `legacy`, which k6 2.0 removed, is kept for 1.x scripts.
const SUMMARY_MODES: &[&str] = &["compact", "full", "disabled", "legacy"];

impl Options {
    /// Refuses what k6 refuses once the layers are merged (the scheduler, the metrics and
    /// the HTTP client check their own parts).
    pub fn validate(&self) -> Result<(), OptionsError> {
        if self.setup_timeout.is_some_and(|d| d.as_nanos() <= 0) {
            return Err(OptionsError::invalid("setupTimeout must be positive"));
        }
        if self
            .handle_summary_timeout
            .is_some_and(|d| d.as_nanos() <= 0)
        {
            return Err(OptionsError::invalid(
                "handleSummaryTimeout must be positive",
            ));
        }
        // k6 reads each metric's thresholds as a list (of expressions or objects); null is
        // an empty list.
        for (metric, list) in self.thresholds.iter().flatten() {
            if !list.is_array() && !list.is_null() {
                return Err(OptionsError::invalid(format!(
                    "thresholds.{metric} must be an array of thresholds, got {list}"
                )));
            }
        }
        if let Some(mode) = self
            .summary_mode
            .as_deref()
            .filter(|m| !SUMMARY_MODES.contains(m))
        {
            return Err(OptionsError::invalid(format!(
                "invalid summary mode \"{mode}\": use compact, full or disabled"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GoDuration;

    #[test]
    fn setup_timeout_must_be_positive_and_modes_known() {
        let mut o = Options {
            setup_timeout: Some(GoDuration::from_secs(1)),
            summary_mode: Some("full".into()),
            ..Options::default()
        };
        assert!(o.validate().is_ok());
        for bad in [0, -1] {
            o.setup_timeout = Some(GoDuration::from_secs(bad));
            assert_eq!(
                o.validate().unwrap_err().message,
                "setupTimeout must be positive"
            );
        }
        o.setup_timeout = None;
        o.thresholds = Some(
            serde_json::json!({"http_reqs": "count>0"})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(
            o.validate().unwrap_err().message,
            "thresholds.http_reqs must be an array of thresholds, got \"count>0\""
        );
        o.thresholds = None;
        o.summary_mode = Some("x".into());
        assert_eq!(
            o.validate().unwrap_err().message,
            "invalid summary mode \"x\": use compact, full or disabled"
        );
    }
}
