//! The scriptless wrk-style mode (`rk6 bench`), through the real binary.

#[allow(unused_imports)]
use crate::{rk6, Dir};
