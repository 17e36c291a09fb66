//! k6's built-in modules. Each is a synthetic ES module whose default export is an object
//! holding the same functions as its named exports.

pub(crate) mod args;
mod browser;
pub(crate) mod crypto;
mod data;
pub(crate) mod encoding;
mod execution;
mod experimental;
pub(crate) mod go_error;
mod grpc;
pub(crate) mod html;
pub(crate) mod http;
mod k6;
mod metrics;
mod secrets;
mod synthetic;
pub(crate) mod text_encoding;
pub(crate) mod timers;
pub(crate) mod webcrypto;
mod ws;

use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsString, Module};

use synthetic::synthetic;

/// Modules k6 1.1 has that rk6 does not implement, with what to do instead: importing one
/// fails loudly (exit 107), never half-works.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "k6/crypto/x509",
        "certificate parsing is not planned yet; run such scripts with k6",
    ),
    ("k6/experimental/redis", "Redis tests need k6"),
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

/// The default export object and export names of `spec`, for the modules whose exports hold
/// nothing of a VU (their functions find the calling VU's state through its context), so
/// that the VUs of a thread share one (`vu::builtins`); `None` for the others.
pub(crate) fn shareable_exports(
    spec: &str,
    ctx: &mut Context,
) -> Option<(JsObject, Vec<JsString>)> {
    match spec {
        "k6" => Some(synthetic::exports_object(&[], k6::functions(), ctx)),
        "k6/http" => Some(http::exports(ctx)),
        "k6/encoding" => Some(synthetic::exports_object(&[], encoding::functions(), ctx)),
        "k6/crypto" => Some(synthetic::exports_object(&[], crypto::functions(), ctx)),
        "k6/timers" => Some(synthetic::exports_object(&[], timers::functions(), ctx)),
        _ => None,
    }
}

/// A module whose exports are `exports` (a shared default export object) and its `names`.
pub(crate) fn from_exports(exports: JsObject, names: Vec<JsString>, ctx: &mut Context) -> Module {
    synthetic::from_object(exports, names, ctx)
}

/// Whether the run warned that `k6/experimental/websockets` is deprecated.
#[derive(Default)]
struct WebsocketsWarned(std::sync::atomic::AtomicBool);

/// k6's warning (k6 1.6 deprecated the experimental path for `k6/websockets`, release notes
/// v1.6.0, #5586; it still works in k6 2.x), logged once per run as k6 logs it once per
/// process.
fn warn_deprecated_websockets(ctx: &Context) {
    let host = crate::host::Host::of(ctx);
    let warned = host.shared.program.run_scoped().get::<WebsocketsWarned>();
    if !warned.0.swap(true, std::sync::atomic::Ordering::Relaxed) {
        host.shared.logger.log(
            crate::log::Level::Warning,
            "k6/experimental/websockets is deprecated and will be removed in a future release. Please use k6/websockets instead.",
            &[],
        );
    }
}

/// Builds the module `spec` ("k6", "k6/http", ...) in `ctx`.
pub(crate) fn create(spec: &str, ctx: &mut Context) -> JsResult<Module> {
    match spec {
        "k6" => Ok(synthetic(k6::functions(), ctx)),
        "k6/http" => Ok(http::module(ctx)),
        "k6/encoding" => Ok(synthetic(encoding::functions(), ctx)),
        "k6/crypto" => Ok(synthetic(crypto::functions(), ctx)),
        "k6/metrics" => Ok(metrics::module(ctx)),
        "k6/data" => Ok(data::module(ctx)),
        "k6/execution" => Ok(execution::module(ctx)),
        "k6/timers" => Ok(synthetic(timers::functions(), ctx)),
        "k6/html" => Ok(html::module(ctx)),
        "k6/experimental/fs" => Ok(experimental::fs::module(ctx)),
        "k6/experimental/csv" => Ok(experimental::csv::module(ctx)),
        "k6/experimental/streams" => experimental::streams::module(ctx),
        "k6/secrets" => Ok(secrets::module(ctx)),
        "k6/ws" => Ok(ws::module(ctx)),
        "k6/websockets" => experimental::websockets::module(ctx),
        "k6/experimental/websockets" => {
            warn_deprecated_websockets(ctx);
            experimental::websockets::module(ctx)
        }
        "k6/net/grpc" => Ok(grpc::module(ctx)),
        "k6/browser" => browser::module(ctx),
        _ => {
            if let Some((_, instead)) = REMOVED.iter().find(|(m, _)| *m == spec) {
                return Err(JsNativeError::typ()
                    .with_message(format!("{spec} has been removed; use {instead} instead"))
                    .into());
            }
            if let Some((_, instead)) = UNSUPPORTED.iter().find(|(m, _)| *m == spec) {
                return Err(JsNativeError::typ()
                    .with_message(format!(
                        "the module {spec} is not supported by rk6: {instead} (see docs/compatibility.md)"
                    ))
                    .into());
            }
            if spec.starts_with("k6/x/") {
                return Err(JsNativeError::typ()
                    .with_message(format!(
                        "unknown module: {spec} (rk6 has no k6 extensions; an xk6 build of k6 is needed)"
                    ))
                    .into());
            }
            Err(JsNativeError::typ()
                .with_message(format!("unknown module: {spec}"))
                .into())
        }
    }
}
