//! What can go wrong starting Chromium or talking to it.

/// Chromium could not be found or started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// No executable at the configured path, or none of the known names on `PATH`.
    #[error("finding browser executable: k6 couldn't detect google chrome or a chromium-supported browser on the given path: {0}")]
    NotFound(String),
    /// The executable was found but did not start or did not answer in time.
    #[error("launching browser: {0}")]
    Start(String),
    /// A `K6_BROWSER_*` setting has a value k6 refuses.
    #[error("{0}")]
    Setting(String),
}

/// A command that did not get a result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CdpError {
    /// The browser answered with a protocol error.
    #[error("{message}")]
    Protocol {
        /// CDP's error code.
        code: i64,
        /// CDP's error message.
        message: String,
    },
    /// The connection is gone (the browser exited or crashed).
    #[error("browser has been closed")]
    Closed,
}
