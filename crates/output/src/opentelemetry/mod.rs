//! The `opentelemetry` output (`experimental-opentelemetry` before k6 1.4): k6's OTLP
//! metrics output.
//!
//! Samples are folded into per-stream state on the metrics thread as they arrive
//! ([`streams`]); every export interval the state of all streams is encoded as one
//! `ExportMetricsServiceRequest` (the official OTLP protobufs of `opentelemetry-proto`)
//! and handed to a background thread ([`pusher`]) that sends it over gRPC or HTTP
//! ([`transport`]). Unlike k6, which drops the samples of its last flush period at
//! shutdown, `finish` exports the final state, so the collector ends with the values of
//! the end-of-test summary. Export failures are logged once per kind and never stop the
//! test.

pub mod config;
mod log;
pub mod pusher;
pub mod streams;
mod transport;

use std::io;
use std::time::{Duration, Instant, SystemTime};

use prost::Message;
use rk6_metrics::{Registry, Sample};

use crate::outputs::{Output, OutputError};
use config::{OtelConfig, OtelName};
use log::{log_line, log_warning};
use pusher::Pusher;
use streams::Streams;
use transport::Transport;

/// Per-request timeout (the OTLP exporters' default).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long `finish` waits for the final export.
const FINISH_TIMEOUT: Duration = Duration::from_secs(15);

/// Exports k6 metrics to an OpenTelemetry collector.
pub struct OtelOutput {
    config: OtelConfig,
    streams: Streams,
    pusher: Pusher,
    next_export: Instant,
}

/// What k6 (1.4 on) logs when the output is asked for by its experimental name.
const GRADUATED: &str = "OpenTelemetry output has been graduated as a stable output. You can now use just \"opentelemetry\" instead of \"experimental-opentelemetry\". The experimental version will be removed in future versions.";

impl OtelOutput {
    /// The output asked for as `name`, its settings read through `env`: k6's warning for
    /// the experimental name, then the deprecation lines of the settings, then
    /// [`OtelOutput::new`].
    pub fn open(
        name: OtelName,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<OtelOutput, OutputError> {
        if name == OtelName::Experimental {
            log_line(GRADUATED);
        }
        let config = OtelConfig::from_env(env, name)?;
        for line in &config.deprecations {
            log_line(line);
        }
        OtelOutput::new(config)
    }

    /// Builds the client for `config` and starts the pusher thread.
    pub fn new(config: OtelConfig) -> Result<OtelOutput, OutputError> {
        let transport = Transport::new(
            &config.exporter,
            &config.headers,
            &config.tls,
            REQUEST_TIMEOUT,
        )
        .map_err(|e| {
            OutputError::InvalidArgument(format!("failed to create OpenTelemetry exporter: {e}"))
        })?;
        let pusher = Pusher::start(transport).map_err(|source| OutputError::Create {
            kind: config.name.as_str(),
            source,
        })?;
        Ok(OtelOutput {
            streams: Streams::new(
                &config.metric_prefix,
                &config.service_name,
                &config.service_version,
                &config.resource_attributes,
                config.rates,
            ),
            next_export: Instant::now() + config.export_interval,
            config,
            pusher,
        })
    }

    fn maybe_export(&mut self) {
        let now = Instant::now();
        if now < self.next_export {
            return;
        }
        self.next_export = now + self.config.export_interval;
        if !self.streams.is_empty() {
            let req = self.streams.request(SystemTime::now());
            // A replaced export is no loss: the newer one holds all it held.
            self.pusher.offer(req.encode_to_vec());
        }
    }
}

impl Output for OtelOutput {
    fn description(&self) -> String {
        format!("opentelemetry ({})", self.config.describe())
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        for s in batch {
            self.streams.add(registry, s);
        }
        self.maybe_export();
    }

    fn flush(&mut self) {
        self.maybe_export();
    }

    fn finish(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + FINISH_TIMEOUT;
        if !self.streams.is_empty() {
            let req = self.streams.request(SystemTime::now());
            self.pusher.offer(req.encode_to_vec());
        }
        match self.pusher.close(deadline) {
            Some(stats) => {
                if stats.failed > 0 {
                    log_warning(
                        "Some metrics did not reach the OpenTelemetry collector",
                        &format!(
                            "{} of {} exports failed",
                            stats.failed,
                            stats.failed + stats.ok
                        ),
                    );
                }
                Ok(())
            }
            None => Err(io::Error::other(format!(
                "the final export to {} did not complete within {}s",
                self.config.exporter.url(),
                FINISH_TIMEOUT.as_secs()
            ))),
        }
    }
}
