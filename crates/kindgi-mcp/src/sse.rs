//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp no longer ships: GET the
//! event stream, wait for the `endpoint` event naming where to POST, then POST each
//! client message there and read every server message from `message` events.

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, oneshot};
use url::Url;

use crate::diag::Diagnostics;
use crate::stdio::{MessageSink, MessageStream};

/// The largest single SSE event accepted.
const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

fn shared_client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .build()
                .map_err(|e| format!("the HTTP client could not be set up: {e}"))
        })
        .clone()
}

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

/// An incremental `text/event-stream` parser (lines end in `\n` or `\r\n`).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds bytes; returns the events completed by them, or an error if one is too large.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, String> {
        // What is left from earlier chunks holds no newline: search only the new bytes, so
        // a long line arriving in small chunks costs linear, not quadratic, time.
        let mut from = self.buf.len();
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(pos) = self.buf[from..].iter().position(|b| *b == b'\n') {
            let end = from + pos;
            let line_bytes = self.buf[start..end]
                .strip_suffix(b"\r")
                .unwrap_or(&self.buf[start..end]);
            let line = String::from_utf8_lossy(line_bytes).into_owned();
            start = end + 1;
            from = start;
            if line.is_empty() {
                if self.has_data {
                    let event = if self.event.is_empty() {
                        "message".to_owned()
                    } else {
                        std::mem::take(&mut self.event)
                    };
                    events.push(SseEvent {
                        event,
                        data: std::mem::take(&mut self.data),
                    });
                }
                self.event.clear();
                self.data.clear();
                self.has_data = false;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => self.event = value.to_owned(),
                "data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                _ => {}
            }
        }
        self.buf.drain(..start);
        if self.buf.len() + self.data.len() > MAX_EVENT_BYTES {
            return Err(format!("an event is larger than {MAX_EVENT_BYTES} bytes"));
        }
        Ok(events)
    }
}

/// An open SSE session as rmcp's (sink, stream) transport.
pub(crate) struct SseTransport {
    pub(crate) sink: MessageSink,
    pub(crate) stream: MessageStream,
    pub(crate) diagnostics: Arc<Diagnostics>,
    /// Dropping it (with the client) stops the reader task.
    pub(crate) reader: tokio::task::JoinHandle<()>,
}

/// Opens the event stream and waits for the `endpoint` event, over `client` (one built
/// under the host's egress policy, carrying the endpoint's sign-in headers) or the shared one.
pub(crate) async fn connect(
    url: &Url,
    client: Option<reqwest::Client>,
) -> Result<SseTransport, String> {
    let client = match client {
        Some(c) => c,
        None => shared_client()?,
    };
    let response = client
        .get(url.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| format!("GET {url} failed: {}", describe(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("GET {url} answered {status}, not an event stream"));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if !content_type.starts_with("text/event-stream") {
        return Err(format!(
            "GET {url} answered with content type \"{content_type}\", not text/event-stream"
        ));
    }

    let diagnostics = Arc::new(Diagnostics::new());
    let (endpoint_tx, endpoint_rx) = oneshot::channel::<Result<String, String>>();
    let (tx, rx) = mpsc::channel::<ServerJsonRpcMessage>(64);
    let diag = diagnostics.clone();
    let reader = tokio::spawn(async move {
        let mut endpoint_tx = Some(endpoint_tx);
        let mut parser = SseParser::default();
        let mut body = response.bytes_stream();
        let why = loop {
            let chunk = match body.next().await {
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => break format!("the event stream broke: {}", describe(&e)),
                None => break "the server ended the event stream".to_owned(),
            };
            let events = match parser.feed(&chunk) {
                Ok(events) => events,
                Err(e) => break e,
            };
            for event in events {
                match event.event.as_str() {
                    "endpoint" => {
                        if let Some(done) = endpoint_tx.take() {
                            let _ = done.send(Ok(event.data));
                        }
                    }
                    "message" => match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
                        Ok(message) => {
                            if tx.send(message).await.is_err() {
                                return;
                            }
                        }
                        Err(e) => {
                            diag.garbage(&event.data, &e.to_string());
                            return;
                        }
                    },
                    _ => {}
                }
            }
        };
        if let Some(done) = endpoint_tx.take() {
            let _ = done.send(Err(why.clone()));
        }
        diag.closed(why);
    });

    let announced = match endpoint_rx.await {
        Ok(Ok(announced)) => announced,
        Ok(Err(why)) => return Err(format!("no endpoint event arrived: {why}")),
        Err(_) => return Err("no endpoint event arrived".to_owned()),
    };
    let post_url = url
        .join(announced.trim())
        .map_err(|e| format!("the endpoint event \"{announced}\" is not a usable URL: {e}"))?;
    if post_url.origin() != url.origin() {
        reader.abort();
        return Err(format!(
            "the endpoint event points at another origin ({post_url}); refusing to send messages there"
        ));
    }

    let sink = futures::sink::unfold(
        (client, post_url),
        |(client, post_url), message: ClientJsonRpcMessage| async move {
            let response = client
                .post(post_url.clone())
                .json(&message)
                .send()
                .await
                .map_err(|e| {
                    std::io::Error::other(format!("POST {post_url} failed: {}", describe(&e)))
                })?;
            let status = response.status();
            if !status.is_success() {
                let text = body_prefix(response, ERROR_BODY_CHARS).await;
                return Err(std::io::Error::other(format!(
                    "POST {post_url} answered {status}: {text}"
                )));
            }
            Ok((client, post_url))
        },
    );
    let stream =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
    Ok(SseTransport {
        sink: Box::pin(sink),
        stream: Box::pin(stream),
        diagnostics,
        reader,
    })
}

/// Characters of a failed POST's body quoted in the error.
const ERROR_BODY_CHARS: usize = 300;

/// The first `chars` characters of a response body, reading no more than it takes (a
/// misbehaving server's error page may be endless).
async fn body_prefix(mut response: reqwest::Response, chars: usize) -> String {
    let limit = chars * 4;
    let mut bytes = Vec::new();
    while bytes.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                bytes.extend_from_slice(&chunk[..chunk.len().min(limit - bytes.len())])
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&bytes)
        .chars()
        .take(chars)
        .collect()
}

pub(crate) fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_split_over_many_chunks_is_one_line() {
        let mut p = SseParser::default();
        let data = "x".repeat(10_000);
        let text = format!("event: message\ndata: {data}\r\n\r\n");
        let mut events = Vec::new();
        for piece in text.as_bytes().chunks(7) {
            events.extend(p.feed(piece).unwrap());
        }
        assert_eq!(
            events,
            vec![SseEvent {
                event: "message".into(),
                data
            }]
        );
    }

    #[test]
    fn an_event_over_the_cap_is_an_error() {
        let mut p = SseParser::default();
        p.feed(b"data: ").unwrap();
        let err = p.feed(&vec![b'x'; MAX_EVENT_BYTES + 1]).unwrap_err();
        assert!(err.contains("larger than"), "{err}");
    }

    #[test]
    fn parses_events_across_chunks_and_line_endings() {
        let mut p = SseParser::default();
        assert!(
            p.feed(b"event: endpoint\r\ndata: /messages?s")
                .unwrap()
                .is_empty()
        );
        let ev = p
            .feed(b"=1\r\n\r\n: comment\n\ndata: {\"a\":\ndata: 1}\n\n")
            .unwrap();
        assert_eq!(
            ev,
            vec![
                SseEvent {
                    event: "endpoint".into(),
                    data: "/messages?s=1".into()
                },
                SseEvent {
                    event: "message".into(),
                    data: "{\"a\":\n1}".into()
                },
            ]
        );
    }
}
