//! The k6 JavaScript runtime of rk6, the only crate that links Boa.
//!
//! How the pieces fit: a [`Program`] is the script and the files it reads. [`read_init`]
//! evaluates the init context once to learn the options. A [`Shared`] holds what all VUs of
//! a run share (metric channel, HTTP settings, setup data). [`JsVuFactory`] builds [`JsVu`]s
//! for the scheduler: each VU is a Boa context with k6's globals and modules, living inside a
//! stackful coroutine on a worker thread, so a synchronous `http.get` or `sleep` suspends only
//! that VU (see `docs/design/001-vu-execution-model.md`). [`Lifecycle`] runs `setup`,
//! `teardown` and `handleSummary` on a VU of its own.

mod coroutine;
mod event_loop;
mod gc_pacing;
mod globals;
mod host;
mod json_parse;
mod json_path;
mod lifecycle;
mod loader;
pub mod log;
mod modules;
mod nesting;
mod program;
mod require;
mod run_options;
mod runtime;
mod samples;
mod shared;
#[cfg(test)]
mod test_js;
mod typescript;
mod vu;

pub use lifecycle::{read_init, InitInfo, Lifecycle, SummaryOutputs};
pub use program::{Program, ScriptError, ScriptErrorKind, MODULE_CACHE_ENV};
pub use run_options::{RunOptions, SystemTags, DEFAULT_BATCH, DEFAULT_BATCH_PER_HOST};
pub use shared::Shared;
pub use vu::{JsVu, JsVuFactory};
