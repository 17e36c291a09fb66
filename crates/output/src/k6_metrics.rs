//! k6's metrics only: rk6 records metrics of its own (`iteration_start_delay`,
//! `http_conns_opened`) that k6
//! has not, and the k6-format machine outputs leave them out unless asked, so a pipeline
//! reading `--summary-export`, `-o json`, `-o csv` or Prometheus sees what k6 would write.

use std::io;

use rk6_metrics::{builtin, MetricId, Registry, Sample, SummaryData};

use crate::outputs::Output;

/// Built-in metrics k6 does not have.
const RK6_ONLY: [MetricId; 5] = [
    builtin::ITERATION_START_DELAY,
    builtin::HTTP_CONNS_OPENED,
    builtin::ITERATION_DURATION_CORRECTED,
    builtin::FIRST_RESPONSE_CORRECTED,
    builtin::ITERATIONS_UNSERVED,
];

/// Whether `name` (a metric or a `metric{tags}` sub-metric) is one of rk6's own metrics.
pub fn is_rk6_only(name: &str) -> bool {
    let base = name.split('{').next().unwrap_or(name);
    RK6_ONLY
        .iter()
        .any(|&id| builtin::ALL.get(id.0 as usize).is_some_and(|m| m.0 == base))
}

/// The summary without rk6's own metrics, for `--summary-export`; a metric a threshold
/// names stays, as the user asked for it.
pub fn k6_summary(data: &SummaryData) -> SummaryData {
    let mut data = data.clone();
    data.metrics
        .retain(|m| !is_rk6_only(&m.name) || !m.thresholds.is_empty());
    data
}

/// An output that never sees samples of rk6's own metrics.
pub struct K6MetricsOnly {
    inner: Box<dyn Output>,
    /// Reused for batches that hold rk6-only samples, so filtering allocates once.
    kept: Vec<Sample>,
}

impl K6MetricsOnly {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn Output>) -> K6MetricsOnly {
        K6MetricsOnly {
            inner,
            kept: Vec::new(),
        }
    }
}

impl Output for K6MetricsOnly {
    fn description(&self) -> String {
        self.inner.description()
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        if !batch.iter().any(|s| RK6_ONLY.contains(&s.metric)) {
            return self.inner.add(registry, batch);
        }
        self.kept.clear();
        self.kept.extend(
            batch
                .iter()
                .filter(|s| !RK6_ONLY.contains(&s.metric))
                .cloned(),
        );
        if !self.kept.is_empty() {
            self.inner.add(registry, &self.kept);
        }
    }

    fn flush(&mut self) {
        self.inner.flush();
    }

    fn end_of_test(&mut self, summary: &SummaryData) {
        // The web-dashboard report lists the summary's metrics too.
        self.inner.end_of_test(&k6_summary(summary));
    }

    fn finish(&mut self) -> io::Result<()> {
        self.inner.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::TagSet;
    use std::sync::{Arc, Mutex};
    use std::time::SystemTime;

    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<MetricId>>>, Arc<Mutex<Vec<String>>>);

    impl Output for Seen {
        fn description(&self) -> String {
            "seen".into()
        }
        fn add(&mut self, _: &Registry, batch: &[Sample]) {
            self.0
                .lock()
                .unwrap()
                .extend(batch.iter().map(|s| s.metric));
        }
        fn flush(&mut self) {}
        fn end_of_test(&mut self, summary: &SummaryData) {
            self.1
                .lock()
                .unwrap()
                .extend(summary.metrics.iter().map(|m| m.name.clone()));
        }
        fn finish(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn sample(metric: MetricId) -> Sample {
        Sample {
            metric,
            tags: TagSet::default(),
            value: 1.0,
            time: SystemTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn rk6_only_samples_are_left_out() {
        let seen = Seen::default();
        let mut out = K6MetricsOnly::new(Box::new(seen.clone()));
        let registry = Registry::new();
        out.add(&registry, &[sample(builtin::ITERATIONS)]);
        out.add(
            &registry,
            &[
                sample(builtin::ITERATION_START_DELAY),
                sample(builtin::ITERATION_DURATION),
            ],
        );
        out.add(&registry, &[sample(builtin::ITERATION_START_DELAY)]);
        assert_eq!(
            *seen.0.lock().unwrap(),
            [builtin::ITERATIONS, builtin::ITERATION_DURATION]
        );
    }

    #[test]
    fn the_end_of_test_summary_holds_k6s_metrics_only() {
        let seen = Seen::default();
        let mut out = K6MetricsOnly::new(Box::new(seen.clone()));
        let mut data = crate::fixtures::basic_run();
        let mut conns = data.metrics[0].clone();
        conns.name = "http_conns_opened".into();
        conns.thresholds.clear();
        data.metrics.push(conns);
        out.end_of_test(&data);
        let names = seen.1.lock().unwrap().clone();
        assert!(names.contains(&"http_reqs".to_owned()), "{names:?}");
        assert!(
            !names.contains(&"http_conns_opened".to_owned()),
            "{names:?}"
        );
    }

    #[test]
    fn names_rk6_only_metrics_and_their_submetrics() {
        assert!(is_rk6_only("http_conns_opened"));
        assert!(is_rk6_only("http_conns_opened{proto:HTTP/2.0}"));
        assert!(is_rk6_only("iteration_start_delay"));
        assert!(is_rk6_only("iteration_start_delay{scenario:a}"));
        assert!(!is_rk6_only("iteration_duration"));
        assert!(!is_rk6_only("iteration_start_delayed"));
    }
}
