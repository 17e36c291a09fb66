//! Server-sent events: framing, and the fan-out from the metrics thread to the clients.
//!
//! The metrics thread publishes; each client's response body drains its own bounded
//! queue. A [`Stream`] keeps a replay log, so a client that connects mid-run first gets
//! every event so far (k6's stream does the same), or only the latest one for the page's
//! own feed.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use tokio::sync::mpsc;

/// k6's `retry:` on the `stop` event (JavaScript's largest safe integer): a client that
/// lost the connection after the end does not come back.
pub(crate) const STOP_RETRY: u64 = 9_007_199_254_740_991;

/// Events a slow client may have queued before it is dropped.
const CLIENT_QUEUE: usize = 4096;

/// Bytes of replay log kept. k6's period rule already bounds the number of events; this
/// bounds their size when many sub-metrics make each one large. Past it the oldest
/// periodic events go; the opening ones (`config`, `param`, `metric`, `start`) stay, so a
/// late client still learns every metric before the arrays that use it.
const MAX_LOG_BYTES: usize = 32 << 20;

/// Events every replay keeps.
const PINNED: [&str; 4] = ["config", "param", "metric", "start"];

/// One event in k6's field order: `id`, `data`, `event`, then `retry` when given.
pub(crate) fn frame(id: u64, event: &str, data: &str, retry: Option<u64>) -> Bytes {
    let mut s = String::with_capacity(data.len() + event.len() + 40);
    s.push_str("id: ");
    s.push_str(&id.to_string());
    s.push('\n');
    // A newline inside the data would end the field; JSON from serde has none, but a
    // multi-line payload still arrives whole as several `data:` lines.
    for line in data.split('\n') {
        s.push_str("data: ");
        s.push_str(line);
        s.push('\n');
    }
    s.push_str("event: ");
    s.push_str(event);
    s.push('\n');
    if let Some(r) = retry {
        s.push_str("retry: ");
        s.push_str(&r.to_string());
        s.push('\n');
    }
    s.push('\n');
    Bytes::from(s)
}

/// How much of the past a new client is sent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replay {
    /// Every event since the start.
    All,
    /// Only the most recent event.
    Latest,
}

struct State {
    /// Each event with whether it is pinned.
    log: VecDeque<(Bytes, bool)>,
    log_bytes: usize,
    clients: Vec<mpsc::Sender<Bytes>>,
    next_id: u64,
    closed: bool,
}

/// One event stream with its replay log and connected clients.
#[derive(Clone)]
pub(crate) struct Stream {
    replay: Replay,
    state: Arc<Mutex<State>>,
}

impl Stream {
    /// A stream that replays `replay` to new clients.
    pub(crate) fn new(replay: Replay) -> Stream {
        Stream {
            replay,
            state: Arc::new(Mutex::new(State {
                log: VecDeque::new(),
                log_bytes: 0,
                clients: Vec::new(),
                next_id: 0,
                closed: false,
            })),
        }
    }

    /// Sends `event` to every client and keeps it for later ones.
    pub(crate) fn publish(&self, event: &str, data: &str, retry: Option<u64>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.closed {
            return;
        }
        let bytes = frame(st.next_id, event, data, retry);
        st.next_id += 1;
        // A full queue means a client that stopped reading: it is let go rather than
        // buffered for without bound.
        st.clients.retain(|c| c.try_send(bytes.clone()).is_ok());
        if self.replay == Replay::Latest {
            st.log.clear();
            st.log_bytes = 0;
        }
        st.log_bytes += bytes.len();
        st.log.push_back((bytes, PINNED.contains(&event)));
        while st.log_bytes > MAX_LOG_BYTES {
            let Some(i) = st.log.iter().position(|(_, pinned)| !pinned) else {
                break;
            };
            if let Some((b, _)) = st.log.remove(i) {
                st.log_bytes -= b.len();
            }
        }
    }

    /// Clients connected now.
    pub(crate) fn clients(&self) -> usize {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.clients.retain(|c| !c.is_closed());
        st.clients.len()
    }

    /// A new client's response body: the replay, then live events until [`Stream::close`].
    pub(crate) fn subscribe(&self) -> EventBody {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let backlog: VecDeque<Bytes> = st.log.iter().map(|(b, _)| b.clone()).collect();
        if st.closed {
            return EventBody { backlog, rx: None };
        }
        let (tx, rx) = mpsc::channel(CLIENT_QUEUE);
        st.clients.push(tx);
        EventBody {
            backlog,
            rx: Some(rx),
        }
    }

    /// Ends every client's body (after what it has queued); later clients get the replay
    /// and an immediate end.
    pub(crate) fn close(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.closed = true;
        st.clients.clear();
    }
}

/// The body of one `text/event-stream` response.
pub(crate) struct EventBody {
    backlog: VecDeque<Bytes>,
    rx: Option<mpsc::Receiver<Bytes>>,
}

impl Body for EventBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(b) = self.backlog.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(None) => {
                self.rx = None;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn frames_in_k6_field_order() {
        assert_eq!(
            &frame(15, "stop", "[[1]]", Some(STOP_RETRY))[..],
            b"id: 15\ndata: [[1]]\nevent: stop\nretry: 9007199254740991\n\n"
        );
        assert_eq!(
            &frame(0, "x", "a\nb", None)[..],
            b"id: 0\ndata: a\ndata: b\nevent: x\n\n"
        );
    }

    #[test]
    fn late_clients_get_the_replay_then_live_events() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let s = Stream::new(Replay::All);
        s.publish("config", "{}", None);
        s.publish("start", "[[1]]", None);
        let body = s.subscribe();
        assert_eq!(s.clients(), 1);
        s.publish("stop", "[[2]]", Some(STOP_RETRY));
        s.close();
        s.publish("ignored", "1", None);
        let all = rt.block_on(body.collect()).unwrap().to_bytes();
        let text = String::from_utf8(all.to_vec()).unwrap();
        let events: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(events, vec!["config", "start", "stop"]);
        assert!(text.starts_with("id: 0\n"));

        let latest = Stream::new(Replay::Latest);
        latest.publish("report", "1", None);
        latest.publish("report", "2", None);
        latest.close();
        let all = rt
            .block_on(latest.subscribe().collect())
            .unwrap()
            .to_bytes();
        assert_eq!(&all[..], b"id: 1\ndata: 2\nevent: report\n\n");
    }
}
