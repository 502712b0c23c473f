//! [`Shutdown`]: the process's stop request. Created first thing in a server's runtime, it
//! installs the SIGTERM/SIGINT handlers at once — before anything binds or prints
//! `listening` — so a signal that arrives right after `listening` starts a drain instead of
//! killing the process. A second signal while draining exits at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// The process's stop request: a cancellation token that a signal (or [`Shutdown::trigger`])
/// cancels. Cheap to clone; every clone sees the same request.
#[derive(Debug, Clone)]
pub struct Shutdown {
    token: CancellationToken,
    /// The signal number that asked to stop, 0 until one did.
    signal: Arc<AtomicI32>,
}

/// SIGINT's number, for [`Shutdown::signal`].
pub const SIGINT: i32 = 2;
/// SIGTERM's number, for [`Shutdown::signal`].
pub const SIGTERM: i32 = 15;

impl Shutdown {
    /// Installs the SIGTERM and SIGINT handlers now and returns the stop request they
    /// cancel. The first signal cancels the token (the drain begins); a second one exits
    /// the process at once with status 128 + the signal number, for an operator who does
    /// not want to wait for the grace period.
    ///
    /// Call it inside a tokio runtime (with the signal driver, as `enable_all` gives),
    /// before binding. Errors only when the handlers cannot be installed.
    pub fn install() -> std::io::Result<Shutdown> {
        let shutdown = Shutdown::manual();
        let signals = Signals::install()?;
        let this = shutdown.clone();
        tokio::spawn(async move {
            let mut signals = signals;
            let first = signals.next().await;
            this.signal.store(first, Ordering::Release);
            tracing::info!(signal = first, "stop requested: draining");
            this.token.cancel();
            let second = signals.next().await;
            eprintln!("second stop signal: exiting without waiting for the drain");
            std::process::exit(128 + second);
        });
        Ok(shutdown)
    }

    /// A stop request that only [`Shutdown::trigger`] cancels (tests, embedded servers).
    pub fn manual() -> Shutdown {
        Shutdown {
            token: CancellationToken::new(),
            signal: Arc::new(AtomicI32::new(0)),
        }
    }

    /// Asks to stop, as a signal would.
    pub fn trigger(&self) {
        self.token.cancel();
    }

    /// Whether a stop was asked for.
    pub fn is_requested(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Completes once a stop is asked for.
    pub fn requested(&self) -> WaitForCancellationFutureOwned {
        self.token.clone().cancelled_owned()
    }

    /// A token cancelled when a stop is asked for (a child: cancelling it stops only its
    /// holder, not the process).
    pub fn token(&self) -> CancellationToken {
        self.token.child_token()
    }

    /// The signal that asked to stop ([`SIGTERM`], [`SIGINT`]), if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::Acquire) {
            0 => None,
            n => Some(n),
        }
    }
}

/// The installed signal streams.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> std::io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Signals {})
        }
    }

    /// The next signal's number (waits forever if the streams end).
    async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            tokio::select! {
                Some(()) = self.term.recv() => SIGTERM,
                Some(()) = self.int.recv() => SIGINT,
                else => std::future::pending().await,
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            SIGINT
        }
    }
}
