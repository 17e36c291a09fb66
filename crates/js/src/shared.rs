//! Test-wide state every VU of a run reads.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, OnceLock};

use rk6_http::ClientConfig;
use rk6_metrics::{Registry, Sample};

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
}

impl Shared {
    /// Settings for the options-reading init pass, before options are known: samples go
    /// nowhere and HTTP uses defaults (requests are not allowed in init anyway).
    pub fn for_init(program: Arc<Program>, registry: Arc<Registry>, logger: Logger) -> Arc<Shared> {
        let (samples, _) = std::sync::mpsc::sync_channel(1);
        Arc::new(Shared {
            program,
            registry,
            samples,
            http: Arc::new(ClientConfig::default()),
            tags: Vec::new(),
            no_cookies_reset: false,
            no_vu_connection_reuse: false,
            logger,
            setup_data: OnceLock::new(),
            options: serde_json::Value::Null,
            execution: OnceLock::new(),
            marked_failed: AtomicBool::new(false),
            vu_stripe: rk6_scheduler::Stripe::full(),
            run: crate::RunOptions::default(),
        })
    }
}
