//! Test-wide state every VU of a run reads.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, OnceLock};

use rk6_http::ClientConfig;
use rk6_metrics::{Registry, Sample};
use rk6_options::Options;

use crate::log::Logger;
use crate::script::program::Program;

/// Settings and channels shared by all VUs of one test run.
pub struct Shared {
    /// The script.
    pub program: Arc<Program>,
    /// Metric registry (custom metrics are added during init).
    pub registry: Arc<Registry>,
    /// Where each VU sends its batch of samples once per iteration.
    pub samples: SyncSender<Vec<Sample>>,
    /// HTTP client settings from the options.
    pub http: Arc<ClientConfig>,
    /// Test-wide tags (`tags` option).
    pub tags: Vec<(String, String)>,
    /// Keep cookies across iterations (`noCookiesReset`).
    pub no_cookies_reset: bool,
    /// Close connections between iterations (`noVUConnectionReuse`).
    pub no_vu_connection_reuse: bool,
    /// Log sink.
    pub logger: Logger,
    /// JSON text returned by `setup()`, set once before VUs start iterating.
    pub setup_data: OnceLock<Option<String>>,
    /// The consolidated options (`exec.test.options`).
    pub options: serde_json::Value,
    /// Live counters of the run, set once the scheduler state exists (`k6/execution`).
    pub execution: OnceLock<Arc<rk6_scheduler::ExecutionState>>,
    /// Set by `exec.test.fail()`: the run ends with exit code 110.
    pub marked_failed: AtomicBool,
    /// Maps this instance's VU ids to ids in the whole test (`--execution-segment`).
    pub vu_stripe: rk6_scheduler::Stripe,
    /// `throw`, `discardResponseBodies`, `minIterationDuration`, `systemTags`.
    pub run: crate::RunOptions,
    /// The garbage-collection pauses of the threads VUs run on.
    pub gc_pauses: Arc<rk6_scheduler::LagMonitor>,
}

impl Shared {
    /// The state of one run: what the caller built (the HTTP client settings, `run` and
    /// `options`, the JSON of the consolidated options), with the test-wide tags and the
    /// cookie and connection reuse switches read from `typed`, and nothing set yet.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        program: Arc<Program>,
        registry: Arc<Registry>,
        samples: SyncSender<Vec<Sample>>,
        http: ClientConfig,
        typed: &Options,
        logger: Logger,
        options: serde_json::Value,
        vu_stripe: rk6_scheduler::Stripe,
        run: crate::RunOptions,
    ) -> Arc<Shared> {
        Arc::new(Shared {
            program,
            registry,
            samples,
            http: Arc::new(http),
            tags: typed.tags.clone().unwrap_or_default().into_iter().collect(),
            no_cookies_reset: typed.no_cookies_reset.unwrap_or(false),
            no_vu_connection_reuse: typed.no_vu_connection_reuse.unwrap_or(false),
            logger,
            setup_data: OnceLock::new(),
            options,
            execution: OnceLock::new(),
            marked_failed: AtomicBool::new(false),
            vu_stripe,
            run,
            gc_pauses: Arc::default(),
        })
    }

    /// Settings for the options-reading init pass, before options are known: samples go
    /// nowhere and HTTP uses defaults (requests are not allowed in init anyway).
    pub fn for_init(program: Arc<Program>, registry: Arc<Registry>, logger: Logger) -> Arc<Shared> {
        let (samples, _) = std::sync::mpsc::sync_channel(1);
        Self::new(
            program,
            registry,
            samples,
            ClientConfig::default(),
            &Options::default(),
            logger,
            serde_json::Value::Null,
            rk6_scheduler::Stripe::full(),
            crate::RunOptions::default(),
        )
    }
}
