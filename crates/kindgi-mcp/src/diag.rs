//! What we learn about a connection going wrong (exit status, stderr tail, a line that was
//! not JSON-RPC), so a failed call can say why instead of just "closed".

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;

/// Lines of the server's stderr kept for error messages.
const STDERR_LINES: usize = 20;
/// Characters of one stderr line or garbage line kept.
const LINE_CHARS: usize = 400;

#[derive(Debug, Default)]
struct State {
    garbage: Option<String>,
    stderr: VecDeque<String>,
    closed: Option<String>,
}

/// Shared by the transport tasks (writers) and the client (reader).
#[derive(Debug)]
pub(crate) struct Diagnostics {
    state: Mutex<State>,
    exit: watch::Sender<Option<String>>,
}

fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(LINE_CHARS).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

impl Diagnostics {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State::default()),
            exit: watch::channel(None).0,
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// Records the first thing the server sent that is not a JSON-RPC message.
    pub(crate) fn garbage(&self, line: &str, why: &str) {
        self.with(|s| {
            s.garbage
                .get_or_insert_with(|| format!("\"{}\" ({why})", clip(line.trim_end())));
        });
    }

    pub(crate) fn stderr_line(&self, line: &str) {
        self.with(|s| {
            if s.stderr.len() == STDERR_LINES {
                s.stderr.pop_front();
            }
            s.stderr.push_back(clip(line));
        });
    }

    /// Records why the stream ended (for transports without a process).
    pub(crate) fn closed(&self, why: String) {
        self.with(|s| {
            s.closed.get_or_insert(why);
        });
    }

    pub(crate) fn exited(&self, status: String) {
        self.exit.send_replace(Some(status));
    }

    /// A suffix for a "closed" error: `: it exited with …; its stderr ends with: …`.
    /// Waits briefly for the exit status, which may trail the closed stream.
    pub(crate) async fn detail(&self, await_exit: bool) -> String {
        let mut rx = self.exit.subscribe();
        if await_exit {
            let _ = tokio::time::timeout(Duration::from_millis(500), rx.wait_for(Option::is_some))
                .await;
        }
        let exit = rx.borrow().clone();
        let mut parts = Vec::new();
        self.with(|s| {
            if let Some(g) = &s.garbage {
                parts.push(format!(
                    "it wrote something that is not a JSON-RPC message: {g}"
                ));
            }
            if let Some(c) = &s.closed {
                parts.push(c.clone());
            }
            if let Some(e) = &exit {
                parts.push(format!("it exited with {e}"));
            }
            if !s.stderr.is_empty() {
                parts.push(format!(
                    "its stderr ends with: {}",
                    Vec::from(s.stderr.clone()).join(" | ")
                ));
            }
        });
        if parts.is_empty() {
            String::new()
        } else {
            format!(": {}", parts.join("; "))
        }
    }
}
