//! rk6's `http connections:` line under the HTTP metrics: connections opened against the
//! requests they carried (HTTP/2's streams per connection apart), which `http_reqs` alone
//! does not tell — a test can hit a server with a hundred requests over one connection or
//! over a hundred.

use rk6_metrics::ConnectionTally;

/// The line, or `None` when the test made no HTTP request.
pub(crate) fn line(t: &ConnectionTally) -> Option<String> {
    if !t.any() {
        return None;
    }
    let h1 = t.http1_requests + t.http1_opened > 0;
    let h2 = t.http2_requests + t.http2_opened > 0;
    let ratio = |requests: u64, opened: u64, what: &str| {
        if opened == 0 {
            String::new()
        } else {
            let per = requests as f64 / opened as f64;
            format!(" ({per:.1} {what}per connection)")
        }
    };
    let text = match (h1, h2) {
        (true, false) => format!(
            "http connections: {} opened, {} requests{}",
            t.http1_opened,
            t.http1_requests,
            ratio(t.http1_requests, t.http1_opened, ""),
        ),
        (false, _) => format!(
            "http connections: {} opened, {} requests over HTTP/2{}",
            t.http2_opened,
            t.http2_requests,
            ratio(t.http2_requests, t.http2_opened, "streams "),
        ),
        (true, true) => format!(
            "http connections: {} opened; HTTP/1: {} for {} requests{}; HTTP/2: {} for {} streams{}",
            t.http1_opened + t.http2_opened,
            t.http1_opened,
            t.http1_requests,
            ratio(t.http1_requests, t.http1_opened, "requests "),
            t.http2_opened,
            t.http2_requests,
            ratio(t.http2_requests, t.http2_opened, "streams "),
        ),
    };
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(h1: (u64, u64), h2: (u64, u64)) -> ConnectionTally {
        ConnectionTally {
            http1_opened: h1.0,
            http1_requests: h1.1,
            http2_opened: h2.0,
            http2_requests: h2.1,
        }
    }

    #[test]
    fn per_protocol_lines() {
        assert_eq!(line(&tally((0, 0), (0, 0))), None);
        assert_eq!(
            line(&tally((5, 100), (0, 0))).unwrap(),
            "http connections: 5 opened, 100 requests (20.0 per connection)"
        );
        assert_eq!(
            line(&tally((0, 0), (2, 100))).unwrap(),
            "http connections: 2 opened, 100 requests over HTTP/2 (50.0 streams per connection)"
        );
        assert_eq!(
            line(&tally((3, 10), (1, 30))).unwrap(),
            "http connections: 4 opened; HTTP/1: 3 for 10 requests (3.3 requests per connection); HTTP/2: 1 for 30 streams (30.0 streams per connection)"
        );
        // Every dial refused: requests, no connection.
        assert_eq!(
            line(&tally((0, 3), (0, 0))).unwrap(),
            "http connections: 0 opened, 3 requests"
        );
    }
}
