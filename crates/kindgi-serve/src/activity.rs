//! Per-connection activity, for the idle timeout: a connection is busy from the moment its
//! service is called until the response body is dropped (written out, or abandoned), and
//! idle otherwise. [`Tracked`] wraps the service so that every request holds a [`Busy`]
//! guard for exactly that span. A response may carry a [`ResponseDeadline`] extension: its
//! connection is closed once that instant passes while the response is still being written,
//! whether or not the client reads.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::{Request, Response};
use hyper::body::{Body, Frame, SizeHint};

/// One connection's activity.
#[derive(Debug)]
pub(crate) struct Activity {
    opened: Instant,
    busy: AtomicUsize,
    /// Milliseconds after `opened` when the connection last went idle.
    idle_since_ms: AtomicU64,
    /// 1 + milliseconds after `opened` by when the response being written must be done; 0
    /// when it has no deadline.
    deadline_ms: AtomicU64,
}

/// A response extension: the instant by which the whole response must have been written.
/// Past it the serve loop closes the connection, even if the body is not being polled (a
/// client that stopped reading). Used for answers that are bounded in time by contract,
/// such as an event stream's documented maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseDeadline(pub Instant);

impl Activity {
    pub(crate) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            opened: Instant::now(),
            busy: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(0),
            deadline_ms: AtomicU64::new(0),
        })
    }

    /// The response deadline in force, if any.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.deadline_ms.load(Ordering::Acquire) {
            0 => None,
            ms => Some(self.opened + Duration::from_millis(ms - 1)),
        }
    }

    fn set_deadline(&self, at: Instant) {
        let ms = at.saturating_duration_since(self.opened).as_millis();
        let ms = u64::try_from(ms).unwrap_or(u64::MAX - 1);
        self.deadline_ms.store(ms + 1, Ordering::Release);
    }

    /// When to look again, or `None` when the connection has been idle for `idle`.
    pub(crate) fn next_check(&self, idle: Duration) -> Option<tokio::time::Instant> {
        let now = Instant::now();
        if self.busy.load(Ordering::Acquire) > 0 {
            return Some((now + idle).into());
        }
        let since = self.opened + Duration::from_millis(self.idle_since_ms.load(Ordering::Acquire));
        let deadline = since + idle;
        if now >= deadline {
            // A request may have begun and ended since; only a connection still idle goes.
            (self.busy.load(Ordering::Acquire) > 0).then(|| (now + idle).into())
        } else {
            Some(deadline.into())
        }
    }

    fn begin(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }
}

/// Held while a request is served; dropping it may make the connection idle.
#[derive(Debug)]
pub(crate) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let a = &self.0;
        let ms = u64::try_from(a.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        a.idle_since_ms.store(ms, Ordering::Release);
        a.deadline_ms.store(0, Ordering::Release);
        a.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A service whose requests each hold a [`Busy`] guard until their response body is gone.
#[derive(Debug, Clone)]
pub(crate) struct Tracked<S> {
    pub(crate) inner: S,
    pub(crate) activity: Arc<Activity>,
}

impl<S, ReqBody, ResBody> hyper::service::Service<Request<ReqBody>> for Tracked<S>
where
    S: hyper::service::Service<Request<ReqBody>, Response = Response<ResBody>>,
{
    type Response = Response<TrackedBody<ResBody>>;
    type Error = S::Error;
    type Future = TrackedFuture<S::Future>;

    fn call(&self, req: Request<ReqBody>) -> Self::Future {
        let busy = self.activity.begin();
        TrackedFuture {
            inner: self.inner.call(req),
            busy: Some(busy),
        }
    }
}

pin_project_lite::pin_project! {
    /// The service's future, carrying the guard into the response body.
    pub(crate) struct TrackedFuture<F> {
        #[pin]
        inner: F,
        busy: Option<Busy>,
    }
}

impl<F, B, E> Future for TrackedFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<TrackedBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let out = match this.inner.poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(out) => out,
        };
        let busy = this.busy.take();
        if let (Ok(res), Some(busy)) = (&out, &busy)
            && let Some(ResponseDeadline(at)) = res.extensions().get::<ResponseDeadline>()
        {
            busy.0.set_deadline(*at);
        }
        Poll::Ready(out.map(|res| res.map(|inner| TrackedBody { inner, _busy: busy })))
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its connection busy until dropped.
    pub(crate) struct TrackedBody<B> {
        #[pin]
        inner: B,
        _busy: Option<Busy>,
    }
}

impl<B: Body> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().inner.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
