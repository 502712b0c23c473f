//! The serve loop: accept, admit under the caps, serve each connection as HTTP/1.1 under
//! the header, idle and write timeouts (and a response's own deadline), and on a stop, drain within the grace period.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::Limits;
use crate::activity::{Activity, Tracked};
use crate::admission::{Admission, Slot};
use crate::progress::{Watched, WriteProgress};

/// The longest between two looks at a connection's writes and deadline: a response's
/// [`crate::ResponseDeadline`] is enforced at most this late.
const WATCH_TICK: Duration = Duration::from_secs(1);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How a serve loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Connections still open when the grace period ran out, and so dropped.
    pub dropped: usize,
}

/// Serves `service` on `listener` under `limits` until `stop` is cancelled; then stops
/// accepting, lets every connection finish the request it is serving (idle ones close at
/// once), and after [`Limits::shutdown_grace`] drops whatever is still open.
///
/// `service` is cloned for each connection. Wrap it in [`crate::BodyTimeout`] to apply
/// [`Limits::body_timeout`]; this loop does not read bodies itself.
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    limits: Limits,
    stop: CancellationToken,
) -> Drained
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let builder = Arc::new(builder);
    let admission = Admission::new(limits.max_connections, limits.max_connections_per_ip);
    let connections = TaskTracker::new();
    let force = CancellationToken::new();
    loop {
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(conn) => conn,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let slot = match admission.admit(peer.ip()) {
            Ok(slot) => slot,
            Err(why) => {
                // Closed unread: answering would mean reading a request, which is the very
                // resource the cap protects.
                tracing::debug!(%peer, ?why, "connection over the cap closed");
                drop(stream);
                continue;
            }
        };
        let connection = Connection {
            builder: builder.clone(),
            idle_timeout: limits.idle_timeout,
            write_timeout: limits.write_timeout,
            stop: stop.clone(),
            force: force.clone(),
            slot,
        };
        connections.spawn(connection.run(stream, peer, service.clone()));
    }
    drop(listener);
    connections.close();
    let dropped = match tokio::time::timeout(limits.shutdown_grace, connections.wait()).await {
        Ok(()) => 0,
        Err(_) => {
            let open = admission.open();
            force.cancel();
            connections.wait().await;
            open
        }
    };
    if dropped > 0 {
        tracing::warn!(dropped, "grace period over: open connections dropped");
    }
    Drained { dropped }
}

/// One admitted connection and what it needs to run.
struct Connection {
    builder: Arc<http1::Builder>,
    idle_timeout: Duration,
    write_timeout: Duration,
    stop: CancellationToken,
    force: CancellationToken,
    slot: Slot,
}

impl Connection {
    async fn run<S, B>(self, stream: TcpStream, peer: SocketAddr, service: S)
    where
        S: hyper::service::Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let _ = stream.set_nodelay(true);
        let activity = Activity::new();
        let service = Tracked {
            inner: service,
            activity: activity.clone(),
        };
        let progress = WriteProgress::new();
        let io = TokioIo::new(Watched::new(stream, progress.clone()));
        let conn = self.builder.serve_connection(io, service);
        tokio::pin!(conn);
        let idle = tokio::time::sleep(self.idle_timeout);
        tokio::pin!(idle);
        let watch = tokio::time::sleep(WATCH_TICK.min(self.write_timeout / 2));
        tokio::pin!(watch);
        let mut draining = false;
        loop {
            tokio::select! {
                done = conn.as_mut() => {
                    if let Err(e) = done {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                    break;
                }
                () = self.stop.cancelled(), if !draining => {
                    draining = true;
                    conn.as_mut().graceful_shutdown();
                }
                () = self.force.cancelled() => break,
                () = &mut idle => match activity.next_check(self.idle_timeout) {
                    Some(at) => idle.as_mut().reset(at),
                    None => {
                        tracing::debug!(%peer, "idle connection closed");
                        break;
                    }
                },
                () = &mut watch => match self.next_watch(&progress, &activity) {
                    Ok(at) => watch.as_mut().reset(at.into()),
                    Err(why) => {
                        tracing::debug!(%peer, why, "stalled connection closed");
                        break;
                    }
                },
            }
        }
        drop(self.slot);
    }

    /// When to look at the writes again, or why the connection must close now: a write
    /// blocked for the write timeout, or a response past its [`crate::ResponseDeadline`].
    fn next_watch(
        &self,
        progress: &WriteProgress,
        activity: &Activity,
    ) -> Result<std::time::Instant, &'static str> {
        let Some(at) = progress.next_check(self.write_timeout) else {
            return Err("a write made no progress within the write timeout");
        };
        match activity.deadline() {
            Some(deadline) if deadline <= std::time::Instant::now() => {
                Err("the response's deadline passed")
            }
            Some(deadline) => Ok(at.min(deadline)),
            // A deadline may come with the next response: look at least once a tick.
            None => Ok(at.min(std::time::Instant::now() + WATCH_TICK)),
        }
    }
}
