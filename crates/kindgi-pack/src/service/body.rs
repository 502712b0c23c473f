//! Receiving a call's body: the 10 MiB rule (exactly 10 MiB is fine; past it the rest is
//! read and thrown away, bounded, so the caller gets to read its 413 instead of a reset),
//! the read time, and the reading budget: a body larger than `Limits::small_body` takes its
//! whole size (`content-length`, or 10 MiB when chunked) from the budget once it passes that
//! size, all at once, and holds it until the call's parsed form is accounted for.

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use kindgi_spec::pack_protocol::MAX_BODY_BYTES;
use std::time::Duration;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, timeout_at};

use super::state::State;

pub(crate) enum BodyError {
    /// Past 10 MiB (→ 413).
    TooLarge,
    /// The connection failed mid-body (→ 400).
    Aborted,
    /// The body did not arrive in time (→ 408).
    TimedOut,
    /// No room in the reading budget in time (→ 503 `overloaded`: the call did not run).
    Busy,
}

/// A body that is in, with its share of the reading budget (if it is large).
pub(crate) struct Received {
    pub bytes: Bytes,
    pub reading: Option<OwnedSemaphorePermit>,
}

/// Reads the body until `until`.
pub(crate) async fn read(
    state: &State,
    mut body: Incoming,
    hint: Option<u64>,
    until: Instant,
) -> Result<Received, BodyError> {
    const DISCARD_LIMIT: usize = 64 * 1024 * 1024;
    if hint.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        discard(&mut body, DISCARD_LIMIT).await;
        return Err(BodyError::TooLarge);
    }
    let mut reading: Option<OwnedSemaphorePermit> = None;
    let mut reserved = false;
    let mut first: Option<Bytes> = None;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let frame = match timeout_at(until, body.frame()).await {
            Err(_) => return Err(BodyError::TimedOut),
            Ok(None) => break,
            Ok(Some(frame)) => frame.map_err(|_| BodyError::Aborted)?,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let total = first.as_ref().map_or(0, Bytes::len) + buf.len() + data.len();
        if total > MAX_BODY_BYTES {
            discard(&mut body, DISCARD_LIMIT).await;
            return Err(BodyError::TooLarge);
        }
        if !reserved && total > state.limits.small_body {
            // Waiting here leaves the rest of the body in the caller's socket.
            let want = hint.map_or(MAX_BODY_BYTES, |n| n as usize);
            reading = timeout_at(until, state.reserve_reading(want))
                .await
                .map_err(|_| BodyError::Busy)?;
            reserved = true;
        }
        match first.take() {
            None if buf.is_empty() => first = Some(data),
            Some(prev) => {
                buf.reserve(hint.map_or(prev.len() + data.len(), |n| n as usize));
                buf.extend_from_slice(&prev);
                buf.extend_from_slice(&data);
            }
            None => buf.extend_from_slice(&data),
        }
    }
    Ok(Received {
        bytes: first.unwrap_or_else(|| Bytes::from(buf)),
        reading,
    })
}

/// Reads and drops the rest of a body: bounded by total bytes, total time, and a second of
/// silence.
pub(crate) async fn discard(body: &mut Incoming, limit: usize) {
    let mut seen = 0usize;
    let drain = async {
        while let Ok(Some(Ok(frame))) =
            tokio::time::timeout(Duration::from_secs(1), body.frame()).await
        {
            if let Some(data) = frame.data_ref() {
                seen += data.len();
                if seen > limit {
                    break;
                }
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), drain).await;
}
