//! The stdio transport: a child process speaking newline-delimited JSON-RPC on
//! stdin/stdout. Its stderr is drained and its tail kept for error messages. A line on
//! stdout that is not a JSON-RPC message ends the connection at once (the MCP spec forbids
//! anything else there), so a garbage-printing server fails fast instead of hanging calls.

use futures::{Sink, Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
use tokio_util::sync::CancellationToken;

use crate::diag::Diagnostics;

/// The longest stdout line accepted (a tool result with images can be large).
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

pub(crate) type MessageSink =
    Pin<Box<dyn Sink<ClientJsonRpcMessage, Error = std::io::Error> + Send>>;
pub(crate) type MessageStream = Pin<Box<dyn Stream<Item = ServerJsonRpcMessage> + Send>>;

/// A running server process, as rmcp's (sink, stream) transport plus what we watch.
pub(crate) struct ChildTransport {
    pub(crate) sink: MessageSink,
    pub(crate) stream: MessageStream,
    pub(crate) diagnostics: Arc<Diagnostics>,
    /// Cancel to kill the process.
    pub(crate) kill: CancellationToken,
}

/// Spawns `command args…` with piped stdio.
pub(crate) fn spawn(command: &str, args: &[String]) -> Result<ChildTransport, String> {
    let mut child = tokio::process::Command::new(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{command}: {e}"))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(format!(
            "{command}: the process has no piped stdin, stdout or stderr"
        ));
    };
    let diagnostics = Arc::new(Diagnostics::new());
    let kill = CancellationToken::new();

    let diag = diagnostics.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            diag.stderr_line(&line);
        }
    });

    let (tx, rx) = mpsc::channel::<ServerJsonRpcMessage>(64);
    let diag = diagnostics.clone();
    let kill_on_garbage = kill.clone();
    tokio::spawn(async move {
        let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE_BYTES));
        while let Some(line) = lines.next().await {
            let line = match line {
                Ok(line) => line,
                Err(LinesCodecError::MaxLineLengthExceeded) => {
                    diag.garbage("<a line over 64 MiB>", "too long");
                    break;
                }
                Err(LinesCodecError::Io(e)) => {
                    diag.closed(format!("reading its stdout failed: {e}"));
                    break;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<ServerJsonRpcMessage>(&line) {
                Ok(message) => {
                    if tx.send(message).await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    diag.garbage(&line, &e.to_string());
                    kill_on_garbage.cancel();
                    break;
                }
            }
        }
    });

    let diag = diagnostics.clone();
    let killed = kill.clone();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            () = killed.cancelled() => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        diag.exited(match status {
            Ok(s) => s.to_string(),
            Err(e) => format!("an unknown status ({e})"),
        });
    });

    let sink = futures::sink::unfold(
        stdin,
        |mut stdin, message: ClientJsonRpcMessage| async move {
            let mut bytes = serde_json::to_vec(&message).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            stdin.write_all(&bytes).await?;
            stdin.flush().await?;
            Ok::<_, std::io::Error>(stdin)
        },
    );
    let stream =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
    Ok(ChildTransport {
        sink: Box::pin(sink),
        stream: Box::pin(stream),
        diagnostics,
        kill,
    })
}
