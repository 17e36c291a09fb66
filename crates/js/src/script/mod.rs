//! The test script as files: loading and caching them (local and remote), TypeScript, the
//! nesting check that runs before any parser, and k6's ES-module-or-CommonJS decision.
//! Nothing here knows about a VU or a JS context.

pub(crate) mod classify;
mod fetch;
pub(crate) mod location;
mod nesting;
pub(crate) mod program;
pub(crate) mod typescript;
