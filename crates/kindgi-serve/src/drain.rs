//! Reading out what a refused request left unread: [`DrainUnread`] gives the inner service
//! each request with its body wrapped in an [`UnreadBody`]. When the service answers
//! without reading the whole body (a `401` before the key is looked at, a `404` for an
//! unknown route, a `413` on the declared length), the body's remainder is read and
//! discarded, within a [`DrainBound`] of bytes and time, while the answer is written.
//!
//! Why: hyper closes a connection whose request body was dropped unread. A client still
//! sending (Node's `fetch`, which the official CLI uses) then meets a reset instead of
//! the answer, and prints `Error: fetch failed` where the server said `401`. Read out,
//! the client finishes sending, reads the answer, and the connection stays usable. Past
//! the bound (a body larger than [`DrainBound::max_bytes`], or one still arriving after
//! [`DrainBound::max_time`]) the remainder is dropped and the connection closed, as before:
//! a refused client cannot make the server read without end.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use hyper::body::{Body, Frame, SizeHint};

/// How much of a refused body the server reads out before it gives up and closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainBound {
    /// Bytes read out at most; a body whose declared length leaves more than this unread
    /// is not read at all. Default 16 MiB: above the API's 10 MiB body limit, so any body
    /// the API could have accepted is read out.
    pub max_bytes: u64,
    /// How long the reading out may take, from the moment the service let go of the body.
    /// Default 10 s.
    pub max_time: Duration,
}

/// 16 MiB.
pub const DEFAULT_DRAIN_BYTES: u64 = 16 * 1024 * 1024;
/// 10 s.
pub const DEFAULT_DRAIN_TIME: Duration = Duration::from_secs(10);

impl Default for DrainBound {
    fn default() -> Self {
        DrainBound {
            max_bytes: DEFAULT_DRAIN_BYTES,
            max_time: DEFAULT_DRAIN_TIME,
        }
    }
}

/// A request body that, dropped before its end, reads the rest out (see the module docs).
pub struct UnreadBody<B: Body + Unpin + Send + 'static> {
    inner: Option<B>,
    ended: bool,
    bound: DrainBound,
}

impl<B> Body for UnreadBody<B>
where
    B: Body<Data = Bytes> + Unpin + Send + 'static,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(inner).poll_frame(cx);
        match &polled {
            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => this.ended = true,
            Poll::Ready(Some(Ok(_))) | Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Body::size_hint)
    }
}

impl<B: Body + Unpin + Send + 'static> Drop for UnreadBody<B> {
    fn drop(&mut self) {
        let Some(body) = self.inner.take() else {
            return;
        };
        if self.ended || body.is_end_stream() {
            return;
        }
        // A declared length past the bound: reading it out would be the unbounded read the
        // bound exists to refuse, so the connection closes at once.
        if body.size_hint().lower() > self.bound.max_bytes {
            tracing::debug!(
                declared = body.size_hint().lower(),
                "refused body too large to read out; connection closes"
            );
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(read_out(body, self.bound));
    }
}

/// Reads `body` to its end and discards it, within `bound`; past it, drops the rest (the
/// connection then closes).
async fn read_out<B: Body + Unpin>(mut body: B, bound: DrainBound) {
    let reading = async {
        let mut read = 0u64;
        loop {
            let frame = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
            match frame {
                None | Some(Err(_)) => return,
                Some(Ok(frame)) => {
                    read += frame
                        .data_ref()
                        .map_or(0, |d| bytes::Buf::remaining(d) as u64);
                    if read > bound.max_bytes {
                        tracing::debug!(
                            read,
                            "refused body over the read-out bound; connection closes"
                        );
                        return;
                    }
                }
            }
        }
    };
    if tokio::time::timeout(bound.max_time, reading).await.is_err() {
        tracing::debug!("refused body still arriving after the read-out time; connection closes");
    }
}

/// A service adapter that reads out request bodies its service left unread (see the
/// module docs). Put it outermost, around [`crate::BodyTimeout`] too.
#[derive(Debug, Clone)]
pub struct DrainUnread<S> {
    inner: S,
    bound: DrainBound,
}

impl<S> DrainUnread<S> {
    /// `inner`, with unread bodies read out within `bound`.
    pub fn new(inner: S, bound: DrainBound) -> Self {
        DrainUnread { inner, bound }
    }
}

impl<S, B> hyper::service::Service<Request<B>> for DrainUnread<S>
where
    S: hyper::service::Service<Request<UnreadBody<B>>>,
    B: Body<Data = Bytes> + Unpin + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, req: Request<B>) -> Self::Future {
        let bound = self.bound;
        self.inner.call(req.map(|inner| UnreadBody {
            inner: Some(inner),
            ended: false,
            bound,
        }))
    }
}
