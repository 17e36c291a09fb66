//! Chromium for rk6's `k6/browser`: where the browser is and how it starts ([`launch`]),
//! and one Chrome DevTools Protocol connection to it over `--remote-debugging-pipe`
//! ([`Browser`]): commands answered through one-shot channels, events routed by session to
//! whoever subscribed, from any thread or runtime.
//!
//! The pipe rather than a WebSocket: no port to find or guard, no HTTP handshake, and the
//! browser exits when the pipe closes, so it cannot outlive the process that holds it.

mod browser;
mod error;
pub mod launch;

pub use browser::{Browser, Event, Subscription};
pub use error::{CdpError, LaunchError};
pub use launch::LaunchOptions;
