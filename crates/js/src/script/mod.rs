//! The test script as files: loading and caching them (from the disk or an archive, local and
//! remote), k6's archive format, TypeScript, the nesting check that runs before any parser,
//! and k6's ES-module-or-CommonJS decision.
//! Nothing here knows about a VU or a JS context.

pub mod archive;
pub(crate) mod classify;
pub mod deps;
mod fetch;
pub(crate) mod files;
pub(crate) mod location;
mod nesting;
pub(crate) mod program;
pub(crate) mod typescript;
