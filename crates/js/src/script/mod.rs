//! The test script as files: loading and caching them, TypeScript, and the nesting check
//! that runs before any parser. Nothing here knows about a VU or a JS context.

mod nesting;
pub(crate) mod program;
mod typescript;
