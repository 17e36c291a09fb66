//! `k6/ws`: k6's callback WebSocket API (`ws.connect`), and what the WebSocket API of
//! `k6/experimental/websockets` shares with it: the handshake over the VU's connect rules
//! (`handshake`), permessage-deflate (`deflate`), the params (`params`) and the `ws_*` samples (`samples`).

pub(crate) mod deflate;
pub(crate) mod handshake;
pub(crate) mod params;
pub(crate) mod samples;
mod session;

use boa_engine::{Context, Module, NativeFunction};

use crate::modules::synthetic::synthetic;

/// The `k6/ws` module: its one export, `connect`.
pub(crate) fn module(ctx: &mut Context) -> Module {
    synthetic(
        vec![("connect", 3, NativeFunction::from_fn_ptr(session::connect))],
        ctx,
    )
}
