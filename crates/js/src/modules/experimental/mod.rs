//! k6's `k6/experimental/*` modules that rk6 implements: `fs`, `csv` (which reads `fs`
//! files) and `websockets` (the WebSocket API, over `k6/ws`'s handshake).

pub(crate) mod csv;
pub(crate) mod fs;
pub(crate) mod websockets;
