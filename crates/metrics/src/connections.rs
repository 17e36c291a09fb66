//! How many connections the VUs' HTTP clients opened against how many requests they
//! carried, by protocol: the summary's `http connections:` line. HTTP/2 multiplexes many
//! requests (streams) over one connection, so its ratio is kept apart.

use crate::builtin;
use crate::sample::Sample;

/// Connections opened and requests sent, HTTP/2 apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ConnectionTally {
    /// Connections opened by requests answered over HTTP/1.x or not answered at all.
    pub http1_opened: u64,
    /// Requests answered over HTTP/1.x or not answered at all.
    pub http1_requests: u64,
    /// Connections opened by requests answered over HTTP/2.
    pub http2_opened: u64,
    /// Requests answered over HTTP/2: its streams.
    pub http2_requests: u64,
}

impl ConnectionTally {
    /// Counts an `http_reqs` or `http_conns_opened` sample; other metrics are ignored.
    pub fn add(&mut self, s: &Sample) {
        let opened = s.metric == builtin::HTTP_CONNS_OPENED;
        if !opened && s.metric != builtin::HTTP_REQS {
            return;
        }
        let h2 = s.tags.get("proto") == Some("HTTP/2.0");
        let n = s.value as u64;
        let slot = match (h2, opened) {
            (false, true) => &mut self.http1_opened,
            (false, false) => &mut self.http1_requests,
            (true, true) => &mut self.http2_opened,
            (true, false) => &mut self.http2_requests,
        };
        *slot += n;
    }

    /// Adds another tally (a runner's, in a distributed test).
    pub fn absorb(&mut self, other: &ConnectionTally) {
        self.http1_opened += other.http1_opened;
        self.http1_requests += other.http1_requests;
        self.http2_opened += other.http2_opened;
        self.http2_requests += other.http2_requests;
    }

    /// Whether any HTTP request was made.
    pub fn any(&self) -> bool {
        self.http1_requests + self.http2_requests > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::TagSet;
    use std::time::SystemTime;

    fn sample(metric: crate::MetricId, proto: &str) -> Sample {
        Sample {
            metric,
            tags: TagSet::from_pairs([("proto", proto), ("url", "u")]),
            value: 1.0,
            time: SystemTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn splits_http2_from_the_rest() {
        let mut t = ConnectionTally::default();
        for s in [
            sample(builtin::HTTP_CONNS_OPENED, "HTTP/1.1"),
            sample(builtin::HTTP_REQS, "HTTP/1.1"),
            sample(builtin::HTTP_REQS, "HTTP/1.1"),
            sample(builtin::HTTP_CONNS_OPENED, "HTTP/2.0"),
            sample(builtin::HTTP_REQS, "HTTP/2.0"),
            sample(builtin::HTTP_REQS, "HTTP/2.0"),
            sample(builtin::HTTP_REQS, "HTTP/2.0"),
            sample(builtin::HTTP_REQ_DURATION, "HTTP/2.0"),
        ] {
            t.add(&s);
        }
        assert_eq!(
            t,
            ConnectionTally {
                http1_opened: 1,
                http1_requests: 2,
                http2_opened: 1,
                http2_requests: 3,
            }
        );
        assert!(t.any());
        assert!(!ConnectionTally::default().any());
    }
}
