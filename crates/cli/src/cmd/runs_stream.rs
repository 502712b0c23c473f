//! `kindgi runs stream <id>`: follows `GET /v1/runs/{id}/stream` (SSE) until a terminal
//! event (`run.completed`, `run.failed`, `run.cancelled`), reconnecting with `Last-Event-Id`
//! when the stream closes early (500 ms doubling, at most 10 tries, never after a 4xx), and
//! prints each event's `data` as one JSON line at the end. Budgets: at most
//! [`MAX_EVENTS`] events and [`MAX_LINE`] bytes per line.

use std::process::ExitCode;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use crate::api::client::Call;
use crate::api::{ApiClient, CliError, Output, segment};

pub const MAX_EVENTS: usize = 100_000;
pub const MAX_LINE: usize = 4 * 1024 * 1024;
const MAX_RECONNECTS: u32 = 10;
const TERMINAL: [&str; 3] = ["run.completed", "run.failed", "run.cancelled"];

pub async fn stream(client: &ApiClient, id: &str, out: &Output) -> Result<ExitCode, CliError> {
    let path = format!("/v1/runs/{}/stream", segment(id));
    let mut events: Vec<Value> = Vec::new();
    let mut last_id: Option<String> = None;
    let mut tries = 0u32;
    let mut pause = Duration::from_millis(500);
    loop {
        let mut req = client
            .builder(Method::GET, &path, &Call::default())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .timeout(Duration::from_secs(6 * 60));
        if let Some(l) = &last_id {
            req = req.header("Last-Event-Id", l);
        }
        let ended = match req.send().await {
            Ok(resp) if resp.status().is_success() => {
                read_events(resp, &mut events, &mut last_id).await
            }
            Ok(resp) => {
                let status = resp.status().as_u16();
                let body = resp.json::<Value>().await.unwrap_or(Value::Null);
                return Err(CliError::from_answer(status, &body));
            }
            Err(e) => Err(e.to_string()),
        };
        if matches!(ended, Ok(true)) {
            break;
        }
        tries += 1;
        if tries > MAX_RECONNECTS {
            let why = ended
                .err()
                .unwrap_or_else(|| "the stream kept closing".into());
            return Err(CliError::Network(format!(
                "the event stream of run {id} ended before the run did: {why}"
            )));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(30));
    }
    for e in &events {
        if !out.quiet {
            println!("{}", serde_json::to_string(e).unwrap_or_default());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads frames until the stream ends; `Ok(true)` after a terminal event.
async fn read_events(
    mut resp: reqwest::Response,
    events: &mut Vec<Value>,
    last_id: &mut Option<String>,
) -> Result<bool, String> {
    let mut buf: Vec<u8> = Vec::new();
    let mut data = String::new();
    let mut frame_id: Option<String> = None;
    while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
        buf.extend_from_slice(&chunk);
        while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line)
                .trim_end_matches(['\r', '\n'])
                .to_owned();
            if line.is_empty() {
                if !data.is_empty() {
                    let v: Value =
                        serde_json::from_str(&data).unwrap_or(Value::String(data.clone()));
                    let kind = v
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    if events.len() >= MAX_EVENTS {
                        return Err(format!("more than {MAX_EVENTS} events"));
                    }
                    events.push(v);
                    if frame_id.is_some() {
                        *last_id = frame_id.take();
                    }
                    data.clear();
                    if TERMINAL.contains(&kind.as_str()) {
                        return Ok(true);
                    }
                }
            } else if let Some(d) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            } else if let Some(i) = line.strip_prefix("id:") {
                frame_id = Some(i.trim().to_owned());
            }
        }
        if buf.len() > MAX_LINE || data.len() > MAX_LINE {
            return Err(format!("an event is over {MAX_LINE} bytes"));
        }
    }
    Ok(false)
}
