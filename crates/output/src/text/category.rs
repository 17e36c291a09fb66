//! Which summary section a metric is listed under, and which metrics a mode hides.

use super::options::SummaryMode;

/// Summary categories in display order: custom metrics first.
pub const ORDER: [&str; 8] = [
    "CUSTOM",
    "HTTP",
    "EXECUTION",
    "NETWORK",
    "BROWSER",
    "WEB_VITALS",
    "GRPC",
    "WEBSOCKET",
];

/// The category title for a (parent) metric name; unknown names are custom metrics.
pub fn of(name: &str) -> &'static str {
    match name {
        "http_reqs"
        | "http_req_duration"
        | "http_req_blocked"
        | "http_req_connecting"
        | "http_req_tls_handshaking"
        | "http_req_sending"
        | "http_req_waiting"
        | "http_req_receiving"
        | "http_req_failed" => "HTTP",
        "vus"
        | "vus_max"
        | "iterations"
        | "iteration_duration"
        | "dropped_iterations"
        | "iteration_start_delay"
        | "iteration_duration_corrected"
        | "first_response_corrected"
        | "iterations_unserved" => "EXECUTION",
        "data_sent" | "data_received" => "NETWORK",
        "browser_data_sent"
        | "browser_data_received"
        | "browser_http_req_duration"
        | "browser_http_req_failed" => "BROWSER",
        "grpc_req_duration"
        | "grpc_streams"
        | "grpc_streams_msgs_sent"
        | "grpc_streams_msgs_received" => "GRPC",
        "ws_sessions"
        | "ws_msgs_sent"
        | "ws_msgs_received"
        | "ws_connecting"
        | "ws_session_duration"
        | "ws_ping" => "WEBSOCKET",
        n if n.starts_with("browser_web_vital_") => "WEB_VITALS",
        _ => "CUSTOM",
    }
}

/// Whether `mode` leaves the (parent) metric out of the metric list.
pub fn hidden(name: &str, mode: SummaryMode) -> bool {
    match name {
        // `checks` is shown as checks_total/succeeded/failed instead, `http_conns_opened`
        // as the `http connections:` line.
        "checks" | "group_duration" | "http_conns_opened" => true,
        "http_req_blocked"
        | "http_req_connecting"
        | "http_req_receiving"
        | "http_req_sending"
        | "http_req_tls_handshaking"
        | "http_req_waiting" => mode == SummaryMode::Compact,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories() {
        assert_eq!(of("http_req_failed"), "HTTP");
        assert_eq!(of("vus_max"), "EXECUTION");
        assert_eq!(of("data_received"), "NETWORK");
        assert_eq!(of("browser_web_vital_lcp"), "WEB_VITALS");
        assert_eq!(of("ws_ping"), "WEBSOCKET");
        assert_eq!(of("my_trend"), "CUSTOM");
        assert_eq!(of("http_custom"), "CUSTOM");
        assert_eq!(ORDER[0], "CUSTOM");
    }

    #[test]
    fn modes_hide() {
        assert!(hidden("checks", SummaryMode::Full));
        assert!(hidden("group_duration", SummaryMode::Full));
        assert!(hidden("http_req_waiting", SummaryMode::Compact));
        assert!(!hidden("http_req_waiting", SummaryMode::Full));
        assert!(!hidden("http_req_duration", SummaryMode::Compact));
    }
}
