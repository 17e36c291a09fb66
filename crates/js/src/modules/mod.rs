//! k6's built-in modules. Each is a synthetic ES module whose default export is an object
//! holding the same functions as its named exports.

mod args;
pub(crate) mod crypto;
mod data;
mod encoding;
mod execution;
pub(crate) mod html;
pub(crate) mod http;
mod k6;
mod metrics;
mod synthetic;
pub(crate) mod timers;
pub(crate) mod webcrypto;

use boa_engine::{Context, JsNativeError, JsResult, Module};

use synthetic::synthetic;

/// Modules k6 1.1 has that rk6 does not implement yet: importing one fails loudly.
const NOT_YET: &[&str] = &[
    "k6/crypto/x509",
    "k6/ws",
    "k6/net/grpc",
    "k6/browser",
    "k6/secrets",
    "k6/experimental/csv",
    "k6/experimental/fs",
    "k6/experimental/redis",
    "k6/experimental/streams",
    "k6/experimental/websockets",
];

/// Modules k6 removed, with the replacement k6 names in its error.
const REMOVED: &[(&str, &str)] = &[
    ("k6/experimental/browser", "k6/browser"),
    ("k6/experimental/grpc", "k6/net/grpc"),
    (
        "k6/experimental/timers",
        "the global timer functions or k6/timers",
    ),
    (
        "k6/experimental/tracing",
        "the jslib http-instrumentation-tempo module",
    ),
    ("k6/experimental/webcrypto", "the global crypto object"),
];

/// Builds the module `spec` ("k6", "k6/http", ...) in `ctx`.
pub(crate) fn create(spec: &str, ctx: &mut Context) -> JsResult<Module> {
    match spec {
        "k6" => Ok(synthetic(k6::functions(ctx), ctx)),
        "k6/http" => Ok(http::module(ctx)),
        "k6/encoding" => Ok(synthetic(encoding::functions(), ctx)),
        "k6/crypto" => Ok(synthetic(crypto::functions(), ctx)),
        "k6/metrics" => Ok(metrics::module(ctx)),
        "k6/data" => Ok(data::module(ctx)),
        "k6/execution" => Ok(execution::module(ctx)),
        "k6/timers" => Ok(synthetic(timers::functions(ctx), ctx)),
        "k6/html" => Ok(html::module(ctx)),
        _ => {
            if let Some((_, instead)) = REMOVED.iter().find(|(m, _)| *m == spec) {
                return Err(JsNativeError::typ()
                    .with_message(format!("{spec} has been removed; use {instead} instead"))
                    .into());
            }
            if NOT_YET.contains(&spec) {
                return Err(JsNativeError::typ()
                    .with_message(format!(
                        "the module {spec} is not supported by rk6 yet (see docs/compatibility.md)"
                    ))
                    .into());
            }
            Err(JsNativeError::typ()
                .with_message(format!("unknown module: {spec}"))
                .into())
        }
    }
}
