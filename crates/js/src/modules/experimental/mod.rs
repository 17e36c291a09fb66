//! k6's `k6/experimental/*` modules that rk6 implements: `fs` and `csv` (which reads
//! `fs` files).

pub(crate) mod csv;
pub(crate) mod fs;
