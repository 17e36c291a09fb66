//! The HTTP client's configuration, built in one place from the typed options: the plain
//! HTTP options, TLS (`tls_options`) and the network rules (`net_options`).

use rk6_js::log::{Level, Logger};
use rk6_js::RunOptions;
use rk6_options::{Options, OptionsError};

/// The User-Agent rk6 sends unless told otherwise (k6's format, rk6's name).
pub const USER_AGENT: &str = concat!("rk6/", env!("CARGO_PKG_VERSION"));

/// Builds the client config; TLS warnings (what rk6 honours differently) are logged here.
pub fn build(
    options: &Options,
    run: &RunOptions,
    logger: &Logger,
    env: impl Fn(&str) -> Option<String>,
) -> Result<rk6_http::ClientConfig, OptionsError> {
    let tls = crate::tls_options::from_options(options, env).map_err(OptionsError::invalid)?;
    for w in &tls.warnings {
        logger.log(Level::Warning, w, &[]);
    }
    let defaults = rk6_http::ClientConfig::default();
    let flag = |v: Option<bool>| v.unwrap_or(false);
    let mut http = tls.apply(rk6_http::ClientConfig {
        insecure_skip_tls_verify: flag(options.insecure_skip_tls_verify),
        user_agent: match options.user_agent.as_deref() {
            Some("") => None,
            Some(s) => Some(s.to_string()),
            None => Some(USER_AGENT.to_string()),
        },
        // A negative limit follows no redirect.
        max_redirects: options.max_redirects.map_or(defaults.max_redirects, |n| {
            u32::try_from(n.max(0)).unwrap_or(u32::MAX)
        }),
        no_connection_reuse: flag(options.no_connection_reuse),
        http_debug: match options.http_debug.as_deref() {
            None | Some("") => rk6_http::HttpDebug::Off,
            Some("full") => rk6_http::HttpDebug::Full,
            Some(_) => rk6_http::HttpDebug::Headers,
        },
        // k6 sizes the idle pool by batchPerHost.
        max_idle_per_host: run.batch_per_host,
        h2c: flag(options.h2c),
        tls_aia_fetch: flag(options.tls_aia_fetch),
        ..defaults
    });
    crate::net_options::apply(options, &mut http)?;
    Ok(http)
}
