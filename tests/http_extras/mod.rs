//! k6/http features beyond the basics: callbacks, batch, url, file uploads, cookie jars.

#[allow(unused_imports)]
use crate::{count, metric, rk6, run_export, Dir};
