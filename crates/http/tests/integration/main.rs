//! rk6-http integration tests: every server runs in-process on 127.0.0.1:0.

mod behaviour;
mod concurrency;
mod delays;
mod errors;
mod phases;
mod support;
mod tls;
