//! The request-body timeout: [`BodyTimeout`] gives the inner service each request with its
//! body wrapped in a [`TimedBody`], which fails with [`BodyTimedOut`] once the body has
//! taken longer than the limit to arrive. Whatever the inner service answered then (a
//! body-read error of its own making) is replaced by the server's own `408`, built by the
//! caller so that it has that server's error envelope, and the connection is closed (the
//! rest of the body is never read).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONNECTION, HeaderValue};
use http::{HeaderMap, Request, Response};
use hyper::body::{Body, Frame, SizeHint};

/// The error a [`TimedBody`] reads as once its time is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyTimedOut {
    pub limit: Duration,
}

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body took longer than {} ms to arrive",
            self.limit.as_millis()
        )
    }
}

impl std::error::Error for BodyTimedOut {}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

pin_project_lite::pin_project! {
    /// A request body with a deadline, counted from the request head.
    pub struct TimedBody<B> {
        #[pin]
        inner: B,
        #[pin]
        deadline: tokio::time::Sleep,
        limit: Duration,
        timed_out: Arc<AtomicBool>,
        done: bool,
    }
}

impl<B> Body for TimedBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.project();
        if *this.done {
            return match this.timed_out.load(Ordering::Acquire) {
                true => Poll::Ready(Some(Err(BodyTimedOut { limit: *this.limit }.into()))),
                false => this.inner.poll_frame(cx).map_err(Into::into),
            };
        }
        match this.inner.poll_frame(cx) {
            Poll::Ready(None) => {
                *this.done = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(frame)) => Poll::Ready(Some(frame.map_err(Into::into))),
            Poll::Pending => {
                if this.deadline.poll(cx).is_pending() {
                    return Poll::Pending;
                }
                *this.done = true;
                this.timed_out.store(true, Ordering::Release);
                Poll::Ready(Some(Err(BodyTimedOut { limit: *this.limit }.into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Builds the `408` answer; it gets the headers of what the inner service answered (a
/// request id, say) to carry over.
pub type TimeoutAnswer<B> = Arc<dyn Fn(&HeaderMap) -> Response<B> + Send + Sync>;

/// A service adapter that puts a deadline on every request body (see the module docs).
pub struct BodyTimeout<S, B> {
    inner: S,
    limit: Duration,
    answer: TimeoutAnswer<B>,
}

impl<S: Clone, B> Clone for BodyTimeout<S, B> {
    fn clone(&self) -> Self {
        BodyTimeout {
            inner: self.inner.clone(),
            limit: self.limit,
            answer: self.answer.clone(),
        }
    }
}

impl<S, B> std::fmt::Debug for BodyTimeout<S, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyTimeout")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl<S, B> BodyTimeout<S, B> {
    /// `inner` with bodies limited to `limit`; `answer` builds the 408.
    pub fn new(
        inner: S,
        limit: Duration,
        answer: impl Fn(&HeaderMap) -> Response<B> + Send + Sync + 'static,
    ) -> Self {
        BodyTimeout {
            inner,
            limit,
            answer: Arc::new(answer),
        }
    }
}

impl<S, ReqBody, B> hyper::service::Service<Request<ReqBody>> for BodyTimeout<S, B>
where
    S: hyper::service::Service<Request<TimedBody<ReqBody>>, Response = Response<B>>,
{
    type Response = Response<B>;
    type Error = S::Error;
    type Future = BodyTimeoutFuture<S::Future, B>;

    fn call(&self, req: Request<ReqBody>) -> Self::Future {
        let timed_out = Arc::new(AtomicBool::new(false));
        let req = req.map(|inner| TimedBody {
            inner,
            deadline: tokio::time::sleep(self.limit),
            limit: self.limit,
            timed_out: timed_out.clone(),
            done: false,
        });
        BodyTimeoutFuture {
            inner: self.inner.call(req),
            timed_out,
            answer: self.answer.clone(),
        }
    }
}

pin_project_lite::pin_project! {
    /// The inner service's future; its answer is swapped for the 408 if the body timed out.
    pub struct BodyTimeoutFuture<F, B> {
        #[pin]
        inner: F,
        timed_out: Arc<AtomicBool>,
        answer: TimeoutAnswer<B>,
    }
}

impl<F, B, E> Future for BodyTimeoutFuture<F, B>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let res = match this.inner.poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(res)) => res,
        };
        if !this.timed_out.load(Ordering::Acquire) {
            return Poll::Ready(Ok(res));
        }
        let mut answer = (this.answer)(res.headers());
        answer
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        Poll::Ready(Ok(answer))
    }
}
