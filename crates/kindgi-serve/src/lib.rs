//! The one way Kindgi serves HTTP, and the one shutdown helper: `kindgi server`, `kindgi dev`
//! and every Rust pack service run on this crate.
//!
//! # Design
//!
//! * [`Shutdown::install`] is the first thing a server does in its runtime: it installs the
//!   SIGTERM/SIGINT handlers before anything binds or prints `listening`, so a signal at any
//!   moment after that starts a drain (never the default "die at once"). A second signal
//!   exits at once. Its [`Shutdown::token`]s are what serve loops and watch loops stop on.
//! * [`serve`] runs any hyper service (an axum `Router` through
//!   `hyper_util::service::TowerToHyperService`, or a plain `service_fn`) on a listener as
//!   HTTP/1.1, under [`Limits`]:
//!   - **header read timeout** (hyper's timer: from the moment the server waits for a head
//!     until the head is in) — a slowloris client is cut off;
//!   - **idle timeout** — a connection with no request in progress (none being served, no
//!     response body being written) is closed, whatever the client is trickling;
//!   - **body timeout** — [`BodyTimeout`] wraps the service: a body that has not fully
//!     arrived within the limit fails to read, and the server's own `408` (built by the
//!     caller, in that server's error envelope) replaces whatever the service answered;
//!   - **refused bodies read out** — [`DrainUnread`] wraps the service: a body the service
//!     answered without reading (an early `401`, `404`, `413`) is read and discarded within
//!     a [`DrainBound`] (bytes and time) while the answer is written, so the client sees the
//!     answer instead of a reset; past the bound the connection closes;
//!   - **write timeout** — a write to the client that stays blocked (the client stopped
//!     reading) for [`Limits::write_timeout`] closes the connection, whatever the response;
//!     a response carrying a [`ResponseDeadline`] extension is cut off at that instant even
//!     if its body is never polled again;
//!   - **connection caps**, global and per IP address: a connection over either cap is
//!     closed at once, unread (reading a request to answer 503 would spend what the cap
//!     protects). Under the cap, every new connection is served, so `/health` stays
//!     reachable while up to the cap's worth of slow sockets are held; the timeouts above
//!     free their slots;
//!   - **bounded drain**: once the stop token is cancelled the listener closes, idle
//!     connections close, in-flight requests finish, and after [`Limits::shutdown_grace`]
//!     every connection still open (a half-sent request, a stalled reader) is dropped. The
//!     loop then returns, so the process can exit.
//! * No per-request allocation is added: the idle tracking is a counter and a timestamp per
//!   connection, carried through the response future and body by pinned wrappers.
//!
//! Defaults and why: see [`Limits`]. Budgets: `docs/serve.md`.

mod activity;
mod admission;
pub mod body;
pub mod drain;
pub mod limits;
mod progress;
mod server;
pub mod shutdown;

pub use activity::ResponseDeadline;
pub use body::{BodyTimedOut, BodyTimeout, TimedBody};
pub use drain::{DrainBound, DrainUnread, UnreadBody};
pub use limits::Limits;
pub use server::{Drained, serve};
pub use shutdown::Shutdown;
pub use tokio_util::sync::CancellationToken;
