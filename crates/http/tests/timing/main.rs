//! Phase-timing tests of rk6-http. They are a binary of their own because cargo runs test
//! binaries one after another: their bounds are a few percent of an injected delay, and the
//! other integration tests competing for the cores (one CI run on 2 cores) exceeded that.
//! Within this binary they still run one at a time ([`support::TIMING`]).

mod delays;
mod phases;
#[path = "../support/mod.rs"]
mod support;
