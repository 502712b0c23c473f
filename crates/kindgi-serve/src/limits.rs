//! [`Limits`]: every bound the serve loop enforces, with the defaults and why they are what
//! they are.

use std::time::Duration;

/// The bounds of one server. [`Limits::default`] is the workspace's standard; tests and
/// operators shorten or widen single fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// From the moment the server waits for a request head (a new connection, or the
    /// previous response written) until the whole head has arrived. Past it the
    /// connection is closed without an answer (slowloris). Default 10 s.
    pub header_read_timeout: Duration,
    /// How long a connection may go without a request in progress (no head being served,
    /// no response being written) before it is closed. Default 10 s.
    pub idle_timeout: Duration,
    /// From the request head until its whole body has arrived; past it the request is
    /// answered `408` (see [`crate::BodyTimeout`]) and the connection closed. `None`: the
    /// service enforces its own. Default 60 s.
    pub body_timeout: Option<Duration>,
    /// Connections open at once, over all clients. A connection accepted over the cap is
    /// closed at once, without reading from it. Default 512.
    pub max_connections: usize,
    /// Connections open at once from one IP address (loopback clients count as one).
    /// Default 256.
    pub max_connections_per_ip: usize,
    /// How long a write to the client may stay blocked (the client reads nothing, the
    /// kernel's send buffer is full) before the connection is closed, whatever the response.
    /// Checked every half of it, so a stalled connection goes between 1 and 1.5 × this after
    /// its last write. Default 30 s.
    pub write_timeout: Duration,
    /// After a stop: how long open connections get to finish the request they are serving;
    /// then every connection still open is dropped. Default 10 s.
    pub shutdown_grace: Duration,
}

/// 10 s, the pack service's header and idle timeouts.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// 10 s.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// 60 s, the pack service's body timeout.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// 30 s: far above what a reading client on any link needs to take a send buffer's worth,
/// low enough that a stalled reader frees its connection and buffers soon.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Half the usual 1024 soft limit on open files, leaving the rest for database files, the
/// pack service's sockets and outgoing HTTP, so the cap is reached before `EMFILE` is.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Half the global cap, so one address cannot hold every slot.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;
/// 10 s: under the 30 s a supervisor (systemd, Kubernetes) usually waits before SIGKILL.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            body_timeout: Some(DEFAULT_BODY_TIMEOUT),
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
}
