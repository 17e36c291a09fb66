//! rk6-http integration tests: every server runs in-process on 127.0.0.1:0.
//! The phase-timing tests live in their own binary (`tests/timing`).

mod behaviour;
mod concurrency;
mod errors;
#[path = "../support/mod.rs"]
mod support;
mod tls;
