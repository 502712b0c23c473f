//! A server-sent-events reader for streamed model answers (OpenAI `stream:true`, Anthropic
//! message events, Gemini `alt=sse`): events (`event:` name, joined `data:` lines) read off
//! a response under a byte budget for the whole stream and an idle timeout between chunks.

use std::time::Duration;

use super::ModelError;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Reads events off a streamed answer.
pub struct SseReader {
    resp: reqwest::Response,
    buf: Vec<u8>,
    read: usize,
    limit: usize,
    idle: Duration,
    pending: SseEvent,
    has_data: bool,
    done: bool,
}

impl SseReader {
    pub fn new(resp: reqwest::Response, limit: usize, idle: Duration) -> Self {
        Self {
            resp,
            buf: Vec::new(),
            read: 0,
            limit,
            idle,
            pending: SseEvent::default(),
            has_data: false,
            done: false,
        }
    }

    /// The next event; `None` at the end of the stream.
    pub async fn next_event(&mut self) -> Result<Option<SseEvent>, ModelError> {
        loop {
            while let Some(line) = self.take_line() {
                if let Some(event) = self.feed(&line) {
                    return Ok(Some(event));
                }
            }
            if self.done {
                // A last event without its blank line still counts.
                if self.has_data {
                    self.has_data = false;
                    return Ok(Some(std::mem::take(&mut self.pending)));
                }
                return Ok(None);
            }
            let chunk = tokio::time::timeout(self.idle, self.resp.chunk())
                .await
                .map_err(|_| {
                    ModelError::Transport(format!(
                        "the streamed answer was silent for more than {} s",
                        self.idle.as_secs()
                    ))
                })?
                .map_err(|e| {
                    ModelError::Transport(format!("the streamed answer broke off: {e}"))
                })?;
            match chunk {
                None => {
                    self.done = true;
                    if !self.buf.is_empty() {
                        self.buf.push(b'\n');
                    }
                }
                Some(bytes) => {
                    self.read += bytes.len();
                    if self.read > self.limit {
                        return Err(ModelError::BadResponse(format!(
                            "the streamed body is larger than the {} byte limit",
                            self.limit
                        )));
                    }
                    self.buf.extend_from_slice(&bytes);
                }
            }
        }
    }

    fn take_line(&mut self) -> Option<String> {
        let end = self.buf.iter().position(|b| *b == b'\n')?;
        let mut line: Vec<u8> = self.buf.drain(..=end).collect();
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Some(String::from_utf8_lossy(&line).into_owned())
    }

    /// Takes one line; a blank line completes the pending event.
    fn feed(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            if !self.has_data && self.pending.event.is_none() {
                return None;
            }
            self.has_data = false;
            return Some(std::mem::take(&mut self.pending));
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.pending.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.pending.data.push('\n');
                }
                self.pending.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }
}
