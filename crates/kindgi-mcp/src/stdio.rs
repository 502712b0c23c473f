//! The stdio transport: a child process speaking newline-delimited JSON-RPC on
//! stdin/stdout. Its stderr is drained and its tail kept for error messages. A line on
//! stdout that is not a JSON-RPC message ends the connection at once (the MCP spec forbids
//! anything else there), so a garbage-printing server fails fast instead of hanging calls.

use futures::{Sink, Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
use tokio_util::sync::CancellationToken;

use crate::diag::Diagnostics;

/// The longest stdout line accepted (a tool result with images can be large).
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// Bytes of one stderr line kept (the diagnostics quote far less than this).
const KEPT_STDERR_LINE_BYTES: usize = 4096;

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
    tokio::spawn(drain_lines(stderr, move |line| diag.stderr_line(line)));

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

/// Reads `reader` to its end, handing each line to `on_line` (decoded lossily, `\r\n` or
/// `\n` ended, at most [`KEPT_STDERR_LINE_BYTES`] of it kept). It stops only at end of file
/// or a read error, never at bytes that are not UTF-8 or at an overlong line: a child whose
/// stderr pipe is no longer drained blocks once the pipe fills, and its calls would hang.
async fn drain_lines<R: AsyncRead + Unpin>(reader: R, mut on_line: impl FnMut(&str)) {
    let mut reader = BufReader::new(reader);
    let mut line: Vec<u8> = Vec::new();
    let mut emit = |line: &mut Vec<u8>| {
        let bytes = line.strip_suffix(b"\r").unwrap_or(line);
        on_line(&String::from_utf8_lossy(bytes));
        line.clear();
    };
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => buf,
        };
        let newline = buf.iter().position(|b| *b == b'\n');
        let content = &buf[..newline.unwrap_or(buf.len())];
        let room = KEPT_STDERR_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&content[..content.len().min(room)]);
        let used = newline.map_or(buf.len(), |i| i + 1);
        reader.consume(used);
        if newline.is_some() {
            emit(&mut line);
        }
    }
    if !line.is_empty() {
        emit(&mut line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn drained(bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        drain_lines(bytes, |l| lines.push(l.to_owned())).await;
        lines
    }

    #[tokio::test]
    async fn stderr_draining_survives_bytes_that_are_not_utf8() {
        // `lines()` stopped at the first invalid line, leaving the pipe undrained.
        let got = drained(b"one\r\n\xff\xfe bad\nthree").await;
        assert_eq!(got, vec!["one", "\u{fffd}\u{fffd} bad", "three"]);
    }

    #[tokio::test]
    async fn stderr_draining_keeps_a_bounded_prefix_of_an_overlong_line() {
        let mut input = vec![b'x'; KEPT_STDERR_LINE_BYTES * 3];
        input.extend_from_slice(b"\nafter\n");
        let got = drained(&input).await;
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), KEPT_STDERR_LINE_BYTES);
        assert_eq!(got[1], "after");
    }
}
