//! The `ws_*` samples of one WebSocket: one tag set per session (the VU's tags, the
//! script's `tags`, then `url`, `status`, `subproto` and, for the WebSocket API, `name`),
//! interned once so each message costs a push into the VU's sample buffer.

use std::time::{Duration, SystemTime};

use rk6_metrics::{MetricId, TagSet};

use super::handshake::Answer;
use crate::host::Host;

/// The tags of one session's samples.
pub(crate) struct SessionSamples {
    tags: TagSet,
}

impl SessionSamples {
    /// Tags for a session to `url` that got `answer` (none when the connection failed
    /// before an HTTP answer: then there is no `status` or `subproto`, as in k6). `name`:
    /// the WebSocket API also tags `name` (the URL, or the script's `name` tag, which then
    /// is the `url` too).
    pub(crate) fn new(
        host: &Host,
        user: &[(String, String)],
        url: &str,
        answer: Option<&Answer>,
        with_name: bool,
    ) -> Self {
        let status = answer.map(|a| a.status.to_string());
        let user_name = user
            .iter()
            .rev()
            .find(|(k, _)| k == "name")
            .map(|(_, v)| v.as_str());
        let url = match (with_name, user_name) {
            (true, Some(name)) => name,
            _ => url,
        };
        let mut system: smallvec::SmallVec<[(&str, &str); 4]> = smallvec::smallvec![("url", url)];
        if with_name && user_name.is_none() {
            system.push(("name", url));
        }
        if let (Some(a), Some(status)) = (answer, status.as_deref()) {
            system.push(("status", status));
            system.push(("subproto", a.subprotocol.as_str()));
        }
        SessionSamples {
            tags: host.tag_set(user, &system),
        }
    }

    /// Buffers one sample of `metric`.
    pub(crate) fn push(&self, host: &Host, metric: MetricId, value: f64, time: SystemTime) {
        host.samples
            .borrow_mut()
            .push(metric, self.tags.clone(), value, time);
    }
}

/// A duration in k6's unit for time metrics (milliseconds).
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Go's (gorilla's) text of a close error: `websocket: close 1011 (internal server error):
/// reason`.
pub(crate) fn close_text(code: u16, reason: &str) -> String {
    let name = match code {
        1000 => " (normal)",
        1001 => " (going away)",
        1002 => " (protocol error)",
        1003 => " (unsupported data)",
        1005 => " (no status)",
        1006 => " (abnormal closure)",
        1007 => " (invalid payload data)",
        1008 => " (policy violation)",
        1009 => " (message too big)",
        1010 => " (mandatory extension missing)",
        1011 => " (internal server error)",
        1015 => " (TLS handshake error)",
        _ => "",
    };
    if reason.is_empty() {
        format!("websocket: close {code}{name}")
    } else {
        format!("websocket: close {code}{name}: {reason}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags_of(
        user: &[(String, String)],
        answer: Option<&Answer>,
        with_name: bool,
    ) -> Vec<(String, String)> {
        let host = Host::new(1, crate::test_js::shared());
        let s = SessionSamples::new(&host, user, "ws://h/p", answer, with_name);
        let mut out: Vec<(String, String)> = s
            .tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        out.sort();
        out
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn session_tags_follow_k6() {
        let answer = Answer {
            status: 101,
            subprotocol: "chat".into(),
            ..Answer::default()
        };
        assert_eq!(
            tags_of(&[], Some(&answer), false),
            pairs(&[("status", "101"), ("subproto", "chat"), ("url", "ws://h/p")]),
            "k6/ws: url, status, subproto"
        );
        assert_eq!(
            tags_of(&[], None, false),
            pairs(&[("url", "ws://h/p")]),
            "a failed connection has no status or subproto"
        );
        assert_eq!(
            tags_of(&[], None, true),
            pairs(&[("name", "ws://h/p"), ("url", "ws://h/p")]),
            "the WebSocket API names the URL"
        );
        assert_eq!(
            tags_of(&pairs(&[("name", "n")]), None, true),
            pairs(&[("name", "n"), ("url", "n")]),
            "a name given is the url too"
        );
    }

    #[test]
    fn close_errors_read_as_go_words_them() {
        assert_eq!(close_text(4001, "bye"), "websocket: close 4001: bye");
        assert_eq!(close_text(1005, ""), "websocket: close 1005 (no status)");
        assert_eq!(
            close_text(1011, "oops"),
            "websocket: close 1011 (internal server error): oops"
        );
    }
}
