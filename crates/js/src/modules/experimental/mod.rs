//! k6's `k6/experimental/*` modules that rk6 implements: `fs`, `csv` (which reads `fs`
//! files), `streams` (the Streams standard, in JavaScript) and `websockets` (the WebSocket
//! API, over `k6/ws`'s handshake; also `k6/websockets`, its stable path since k6 1.6).

pub(crate) mod csv;
pub(crate) mod fs;
pub(crate) mod streams;
pub(crate) mod websockets;
