//! The k6 JavaScript runtime of rk6, the only crate that links Boa.
//!
//! How the pieces fit: a [`Program`] is the script and the files it reads. [`read_init`]
//! evaluates the init context once to learn the options. A [`Shared`] holds what all VUs of
//! a run share (metric channel, HTTP settings, setup data). [`JsVuFactory`] builds [`JsVu`]s
//! for the scheduler: each VU is a Boa context with k6's globals and modules, living inside a
//! stackful coroutine on a worker thread, so a synchronous `http.get` or `sleep` suspends only
//! that VU (see `docs/design/001-vu-execution-model.md`). [`Lifecycle`] runs `setup`,
//! `teardown` and `handleSummary` on a VU of its own.
//!
//! Folders, from the top: `vu` builds and runs VUs, `script` is the script as files,
//! `modules` holds k6's modules, `host` is one VU as its natives see it (Host, event loop,
//! tag context, sample buffer), `json` turns JSON text into JS values; the files here are
//! leaves. They import downward only (`tests/layering` checks; `docs/architecture.md` lists
//! the edges).

mod host;
mod json;
pub mod log;
mod modules;
mod run_options;
mod run_scoped;
mod script;
pub mod secrets;
mod shared;
#[cfg(test)]
mod test_js;
mod value;
mod vu;

pub use host::stack::{stack_guards_split, STACKS_PER_MAPPING};
pub use run_options::{RunOptions, SystemTags, DEFAULT_BATCH, DEFAULT_BATCH_PER_HOST};
pub use script::archive;
pub use script::archive::{Archive, ArchiveError, Metadata as ArchiveMetadata};
pub use script::deps;
pub use script::files::Entry;
pub use script::program::{Program, ScriptError, ScriptErrorKind, MODULE_CACHE_ENV};
pub use shared::Shared;
pub use vu::lifecycle::{read_init, InitInfo, Lifecycle, SummaryOutputs};
pub use vu::{JsVu, JsVuFactory, STACK_FAILURE};
