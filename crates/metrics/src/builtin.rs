//! Ids of k6's built-in metrics; `Registry::new()` registers them in exactly this order.

use crate::metric::{MetricId, MetricType, ValueType};

/// `vus`: Gauge of active VUs.
pub const VUS: MetricId = MetricId(0);
/// `vus_max`: Gauge of initialised VUs.
pub const VUS_MAX: MetricId = MetricId(1);
/// `iterations`: Counter of completed iterations.
pub const ITERATIONS: MetricId = MetricId(2);
/// `iteration_duration`: Trend (time) of iteration wall time.
pub const ITERATION_DURATION: MetricId = MetricId(3);
/// `dropped_iterations`: Counter of iterations that could not start.
pub const DROPPED_ITERATIONS: MetricId = MetricId(4);
/// `data_sent`: Counter (data) of bytes written.
pub const DATA_SENT: MetricId = MetricId(5);
/// `data_received`: Counter (data) of bytes read.
pub const DATA_RECEIVED: MetricId = MetricId(6);
/// `checks`: Rate of passing `check()` predicates.
pub const CHECKS: MetricId = MetricId(7);
/// `group_duration`: Trend (time) per `group()` call.
pub const GROUP_DURATION: MetricId = MetricId(8);
/// `http_reqs`: Counter of requests, one per redirect hop.
pub const HTTP_REQS: MetricId = MetricId(9);
/// `http_req_duration`: Trend (time) = sending + waiting + receiving.
pub const HTTP_REQ_DURATION: MetricId = MetricId(10);
/// `http_req_blocked`: Trend (time) waiting for a connection.
pub const HTTP_REQ_BLOCKED: MetricId = MetricId(11);
/// `http_req_connecting`: Trend (time) of TCP connect.
pub const HTTP_REQ_CONNECTING: MetricId = MetricId(12);
/// `http_req_tls_handshaking`: Trend (time) of the TLS handshake.
pub const HTTP_REQ_TLS_HANDSHAKING: MetricId = MetricId(13);
/// `http_req_sending`: Trend (time) writing the request.
pub const HTTP_REQ_SENDING: MetricId = MetricId(14);
/// `http_req_waiting`: Trend (time) to first response byte.
pub const HTTP_REQ_WAITING: MetricId = MetricId(15);
/// `http_req_receiving`: Trend (time) reading the response.
pub const HTTP_REQ_RECEIVING: MetricId = MetricId(16);
/// `http_req_failed`: Rate of unexpected responses.
pub const HTTP_REQ_FAILED: MetricId = MetricId(17);

/// `iteration_start_delay` (rk6 only): Trend (time) of how late arrival-rate iterations
/// started after their planned instant — queueing that latency figures alone would hide.
pub const ITERATION_START_DELAY: MetricId = MetricId(18);

/// `ws_sessions`: Counter of WebSocket connection attempts (failed ones included).
pub const WS_SESSIONS: MetricId = MetricId(19);
/// `ws_msgs_sent`: Counter of WebSocket messages sent.
pub const WS_MSGS_SENT: MetricId = MetricId(20);
/// `ws_msgs_received`: Counter of WebSocket messages received.
pub const WS_MSGS_RECEIVED: MetricId = MetricId(21);
/// `ws_ping`: Trend (time) from a ping sent to its pong.
pub const WS_PING: MetricId = MetricId(22);
/// `ws_session_duration`: Trend (time) from the connection attempt to the close.
pub const WS_SESSION_DURATION: MetricId = MetricId(23);
/// `ws_connecting`: Trend (time) of the connection and upgrade handshake.
pub const WS_CONNECTING: MetricId = MetricId(24);

/// `http_conns_opened` (rk6 only): Counter of TCP connections the VUs' HTTP clients
/// opened, tagged as the request that opened it.
pub const HTTP_CONNS_OPENED: MetricId = MetricId(25);

/// `iteration_duration_corrected` (rk6 only): Trend (time) of open-model iterations
/// measured from their scheduled start, so a late start counts as the wait it was; every
/// arrival that found no VU counts as unserved (see [`ITERATIONS_UNSERVED`]).
pub const ITERATION_DURATION_CORRECTED: MetricId = MetricId(26);
/// `first_response_corrected` (rk6 only): Trend (time) from an open-model iteration's
/// scheduled start to the end of its first HTTP response; unserved arrivals as above.
pub const FIRST_RESPONSE_CORRECTED: MetricId = MetricId(27);
/// `iterations_unserved` (rk6 only): Counter of open-model arrivals dropped for want of a
/// VU; each counts as an unserved value in the two corrected Trends.
pub const ITERATIONS_UNSERVED: MetricId = MetricId(28);

/// The corrected Trends an unserved arrival counts in.
pub const CORRECTED: [MetricId; 2] = [ITERATION_DURATION_CORRECTED, FIRST_RESPONSE_CORRECTED];

/// Name, type and value type of every built-in metric, indexed by its id.
pub const ALL: [(&str, MetricType, ValueType); 29] = [
    ("vus", MetricType::Gauge, ValueType::Default),
    ("vus_max", MetricType::Gauge, ValueType::Default),
    ("iterations", MetricType::Counter, ValueType::Default),
    ("iteration_duration", MetricType::Trend, ValueType::Time),
    (
        "dropped_iterations",
        MetricType::Counter,
        ValueType::Default,
    ),
    ("data_sent", MetricType::Counter, ValueType::Data),
    ("data_received", MetricType::Counter, ValueType::Data),
    ("checks", MetricType::Rate, ValueType::Default),
    ("group_duration", MetricType::Trend, ValueType::Time),
    ("http_reqs", MetricType::Counter, ValueType::Default),
    ("http_req_duration", MetricType::Trend, ValueType::Time),
    ("http_req_blocked", MetricType::Trend, ValueType::Time),
    ("http_req_connecting", MetricType::Trend, ValueType::Time),
    (
        "http_req_tls_handshaking",
        MetricType::Trend,
        ValueType::Time,
    ),
    ("http_req_sending", MetricType::Trend, ValueType::Time),
    ("http_req_waiting", MetricType::Trend, ValueType::Time),
    ("http_req_receiving", MetricType::Trend, ValueType::Time),
    ("http_req_failed", MetricType::Rate, ValueType::Default),
    ("iteration_start_delay", MetricType::Trend, ValueType::Time),
    ("ws_sessions", MetricType::Counter, ValueType::Default),
    ("ws_msgs_sent", MetricType::Counter, ValueType::Default),
    ("ws_msgs_received", MetricType::Counter, ValueType::Default),
    ("ws_ping", MetricType::Trend, ValueType::Time),
    ("ws_session_duration", MetricType::Trend, ValueType::Time),
    ("ws_connecting", MetricType::Trend, ValueType::Time),
    ("http_conns_opened", MetricType::Counter, ValueType::Default),
    (
        "iteration_duration_corrected",
        MetricType::Trend,
        ValueType::Time,
    ),
    (
        "first_response_corrected",
        MetricType::Trend,
        ValueType::Time,
    ),
    (
        "iterations_unserved",
        MetricType::Counter,
        ValueType::Default,
    ),
];
