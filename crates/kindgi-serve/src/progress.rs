//! Write progress, for the write timeout: [`Watched`] wraps a connection's socket and
//! records when a write last could not go out (the client stopped reading and the kernel's
//! send buffer is full). The connection's task closes the connection once a write has been
//! blocked for [`crate::Limits::write_timeout`], whatever the response is (a whole JSON
//! answer, a paged one, a stream), so a client that never reads holds its slot, and what the
//! server had buffered for it, for a bounded time only.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// One connection's write state.
#[derive(Debug)]
pub(crate) struct WriteProgress {
    opened: Instant,
    /// 1 + milliseconds after `opened` when a write began to be blocked; 0 when none is.
    blocked_since: AtomicU64,
}

impl WriteProgress {
    pub(crate) fn new() -> Arc<WriteProgress> {
        Arc::new(WriteProgress {
            opened: Instant::now(),
            blocked_since: AtomicU64::new(0),
        })
    }

    fn blocked(&self) {
        if self.blocked_since.load(Ordering::Acquire) == 0 {
            let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX - 1);
            self.blocked_since.store(ms + 1, Ordering::Release);
        }
    }

    fn wrote(&self) {
        self.blocked_since.store(0, Ordering::Release);
    }

    /// When to look again, or `None` when a write has been blocked for `timeout`. Not
    /// blocked: look again in half the timeout, so a block is caught at most 1.5 × the
    /// timeout after it began.
    pub(crate) fn next_check(&self, timeout: Duration) -> Option<Instant> {
        let now = Instant::now();
        match self.blocked_since.load(Ordering::Acquire) {
            0 => Some(now + timeout / 2),
            ms => {
                let deadline = self.opened + Duration::from_millis(ms - 1) + timeout;
                (now < deadline).then_some(deadline)
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// A socket whose blocked writes are recorded in a [`WriteProgress`].
    pub(crate) struct Watched<S> {
        #[pin]
        inner: S,
        progress: Arc<WriteProgress>,
    }
}

impl<S> Watched<S> {
    pub(crate) fn new(inner: S, progress: Arc<WriteProgress>) -> Self {
        Watched { inner, progress }
    }
}

impl<S: AsyncRead> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.project().inner.poll_read(cx, buf)
    }
}

impl<S: AsyncWrite> Watched<S> {
    fn track(progress: &WriteProgress, r: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match &r {
            Poll::Pending => progress.blocked(),
            Poll::Ready(Ok(n)) if *n > 0 => progress.wrote(),
            Poll::Ready(_) => {}
        }
        r
    }
}

impl<S: AsyncWrite> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        Self::track(this.progress, this.inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        Self::track(this.progress, this.inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_shutdown(cx)
    }
}
