//! The request body type, which on HTTP/2 also reports when hyper took the request.
//!
//! On a multiplexed HTTP/2 connection the socket is shared, so socket timestamps cannot tell
//! one stream's request from another's. What hyper does tell, per request, is when its
//! connection task opens the stream (it asks the body for its size right then) and when it
//! has pulled the last body chunk into the stream. [`StreamMarks`] records those two
//! instants; HTTP/1 requests carry no marks and cost nothing extra.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// Per-request instants observed through the body on HTTP/2.
#[derive(Debug, Default)]
pub(crate) struct StreamMarks {
    /// hyper's connection task picked the request up to open its stream.
    opened: OnceLock<Instant>,
    /// The whole body was handed to the stream (same as `opened` without a body).
    handed: OnceLock<Instant>,
}

impl StreamMarks {
    /// Marks set to the given instants (tests of the phase arithmetic).
    #[cfg(test)]
    pub(crate) fn at(opened: Instant, handed: Instant) -> StreamMarks {
        let marks = StreamMarks::default();
        let _ = marks.opened.set(opened);
        let _ = marks.handed.set(handed);
        marks
    }

    /// When the stream was opened.
    pub(crate) fn opened(&self) -> Option<Instant> {
        self.opened.get().copied()
    }

    /// When the request was fully handed to hyper.
    pub(crate) fn handed(&self) -> Option<Instant> {
        self.handed.get().copied()
    }

    fn open(&self) {
        let _ = self.opened.set(Instant::now());
    }

    fn hand(&self) {
        let now = Instant::now();
        let _ = self.opened.set(now);
        let _ = self.handed.set(now);
    }
}

/// A request body: the bytes once, plus optional [`StreamMarks`].
#[derive(Debug)]
pub(crate) struct ReqBody {
    data: Option<Bytes>,
    marks: Option<Arc<StreamMarks>>,
}

impl ReqBody {
    /// A body of `data`; `marks` records HTTP/2 stream instants.
    pub(crate) fn new(data: Bytes, marks: Option<Arc<StreamMarks>>) -> Self {
        Self {
            data: (!data.is_empty()).then_some(data),
            marks,
        }
    }
}

impl Body for ReqBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        let data = this.data.take();
        if let Some(m) = &this.marks {
            // hyper pulls the single chunk once the stream has flow-control capacity for it.
            m.hand();
        }
        Poll::Ready(data.map(|d| Ok(Frame::data(d))))
    }

    fn is_end_stream(&self) -> bool {
        let end = self.data.is_none();
        if let Some(m) = &self.marks {
            // hyper's HTTP/2 dispatcher asks this right when it opens the stream.
            if end {
                m.hand();
            } else {
                m.open();
            }
        }
        end
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn marks_open_then_handed() {
        let marks = Arc::new(StreamMarks::default());
        let mut body = ReqBody::new(Bytes::from_static(b"abc"), Some(marks.clone()));
        assert_eq!(body.size_hint().exact(), Some(3));
        assert!(!body.is_end_stream());
        assert!(marks.opened().is_some() && marks.handed().is_none());
        let frame = body.frame().await.unwrap().unwrap();
        assert_eq!(frame.into_data().unwrap(), Bytes::from_static(b"abc"));
        assert!(marks.handed().unwrap() >= marks.opened().unwrap());
        assert!(body.is_end_stream());
        assert!(body.frame().await.is_none());

        let marks = Arc::new(StreamMarks::default());
        let empty = ReqBody::new(Bytes::new(), Some(marks.clone()));
        assert!(empty.is_end_stream());
        assert_eq!(marks.opened(), marks.handed());
        assert!(marks.handed().is_some());
    }
}
