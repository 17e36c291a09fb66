//! HTTP/1.1 without hyper: the scripted client's connections ([`conn`]) and the response
//! framing they share with the `rk6 bench` engine ([`framing`]).
//!
//! A scripted HTTP/1 request is strictly one exchange at a time on a connection the VU
//! holds exclusively, so the connection needs no driver task, dispatch channel or buffers of
//! its own while idle: the request is written and the response read by the VU's own task,
//! in a buffer borrowed from the worker thread for the length of the exchange.

pub(crate) mod conn;
pub(crate) mod framing;
