//! Server-sent events of a run (platform-api.md §3.6): `GET /v1/runs/{id}/stream`
//! (`OA:RunEvent` frames) and `…/progress/stream` (`OA:RunProgressEvent`: no `tenantId`, no
//! `payload`).
//!
//! A frame is `id: <runId>:<sequence>\nevent: <kind>\ndata: <json>\n\n`. Journal kinds map
//! to wire kinds (`step.started` → `run.step-started`, `wait.suspended` →
//! `run.wait-suspended`, `approval.requested` → `run.approval-requested`,
//! `guardrail.violated` → `run.guardrail-violated`, …); kinds the wire has no name for
//! (`edge.evaluated`, `value.recorded`, fan-out and sub-graph entries…) are dropped. `Last-Event-Id:
//! <runId>:<seq>` replays from `sequence > seq`. The journal is read a page ([`PAGE`]
//! entries) at a time and each page is sent as one chunk; a full page is followed at once by
//! the next (catching up on a long journal runs at the store's pace), and once caught up the
//! journal is polled every [`POLL_INTERVAL`]. Only the page being sent is held (and charged
//! to the server's [`crate::body_budget`]), so a client that stops reading pins one page. The stream closes after a terminal event or
//! [`MAX_STREAM`]; the response carries a [`kindgi_serve::ResponseDeadline`] just past it, so
//! the connection is closed then even if the client stopped reading. Streams are capped per
//! key, per tenant and in all ([`crate::stream_caps`]). A journal
//! that cannot be read sends `id: <runId>:error`, `event: error`, `data {code:
//! "journal-error", message, requestId}` and closes.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use kindgi_runtime::{JournalEntry, JournalKind, Runtime};
use serde_json::{Map, Value, json};

use crate::body_budget::BodyBudget;
use crate::stream_caps::StreamSlot;

/// How often the journal is read for new entries.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// The longest a stream stays open.
pub const MAX_STREAM: Duration = Duration::from_secs(300);
/// Entries read per journal query.
pub const PAGE: u32 = 100;
/// How long past [`MAX_STREAM`] the connection of a stream that has not ended by itself
/// (its client stopped reading) is closed.
const DEADLINE_GRACE: Duration = Duration::from_secs(1);

/// The wire kind of a journal kind, or `None` when the stream drops it. Beyond the
/// reference (which lists them but never emits them), the approval and guardrail entries
/// are sent as the spec's `run.approval-requested` / `run.approval-completed` /
/// `run.guardrail-violated`.
pub fn wire_kind(kind: JournalKind) -> Option<&'static str> {
    use JournalKind as K;
    Some(match kind {
        K::RunStarted => "run.started",
        K::StepStarted => "run.step-started",
        K::StepCompleted => "run.step-completed",
        K::StepFailed => "run.step-failed",
        K::StepRetryScheduled => "run.step-retry-scheduled",
        K::IterationStarted => "run.iteration-started",
        K::IterationCompleted => "run.iteration-completed",
        K::WaitSuspended => "run.wait-suspended",
        K::WaitResumed => "run.wait-resumed",
        K::RunCompleted => "run.completed",
        K::RunFailed => "run.failed",
        K::RunCancelled => "run.cancelled",
        K::ApprovalRequested => "run.approval-requested",
        K::ApprovalCompleted => "run.approval-completed",
        K::GuardrailViolated => "run.guardrail-violated",
        _ => return None,
    })
}

/// The sequence of a `Last-Event-Id` (`<runId>:<seq>`: the integer after the last `:`).
pub fn last_event_sequence(v: &str) -> Option<u64> {
    v.rsplit(':').next()?.trim().parse().ok()
}

/// Which stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Events,
    Progress,
}

/// One frame of `entry`, or `None` for a dropped kind.
pub fn frame(flavour: Flavour, run_id: &str, tenant: &str, e: &JournalEntry) -> Option<String> {
    let kind = wire_kind(e.kind)?;
    let id = format!("{run_id}:{}", e.sequence);
    let mut o = Map::new();
    o.insert("eventId".into(), json!(id));
    o.insert("runId".into(), json!(run_id));
    if flavour == Flavour::Events {
        o.insert(
            "tenantId".into(),
            json!(crate::projects::tenant_uuid(tenant)),
        );
    }
    o.insert("timestamp".into(), json!(e.timestamp));
    o.insert("kind".into(), json!(kind));
    o.insert("sequence".into(), json!(e.sequence));
    if let Some(n) = &e.node_id {
        o.insert("nodeId".into(), json!(n));
    }
    if flavour == Flavour::Events
        && let Some(p) = &e.payload
    {
        o.insert("payload".into(), p.clone());
    }
    Some(format!(
        "id: {id}\nevent: {kind}\ndata: {}\n\n",
        Value::Object(o)
    ))
}

struct Follow {
    rt: Runtime,
    flavour: Flavour,
    run_id: String,
    tenant: String,
    request_id: String,
    after: Option<u64>,
    /// The frames of the page read last, sent as one chunk.
    queued: String,
    done: bool,
    /// The last page was full: read the next one at once, without waiting.
    behind: bool,
    deadline: tokio::time::Instant,
    _slot: StreamSlot,
    budget: BodyBudget,
}

impl Follow {
    /// Reads the next page of the journal into `queued`.
    async fn poll(&mut self) {
        match self.rt.journal(&self.run_id, self.after, Some(PAGE)).await {
            Ok(entries) => {
                self.behind = entries.len() >= PAGE as usize;
                for e in &entries {
                    self.after = Some(e.sequence);
                    if let Some(f) = frame(self.flavour, &self.run_id, &self.tenant, e) {
                        self.queued.push_str(&f);
                    }
                    if matches!(
                        e.kind,
                        JournalKind::RunCompleted
                            | JournalKind::RunFailed
                            | JournalKind::RunCancelled
                    ) {
                        self.done = true;
                        break;
                    }
                }
            }
            Err(e) => {
                tracing::error!(run = %self.run_id, error = %e, "cannot read a run's journal for its stream");
                let data = json!({
                    "code": "journal-error",
                    "message": "The run's journal could not be read",
                    "requestId": self.request_id,
                });
                self.queued.push_str(&format!(
                    "id: {}:error\nevent: error\ndata: {data}\n\n",
                    self.run_id
                ));
                self.done = true;
            }
        }
    }

    async fn next(mut self) -> Option<(Result<Bytes, std::convert::Infallible>, Follow)> {
        loop {
            if !self.queued.is_empty() {
                let page = std::mem::take(&mut self.queued).into_bytes();
                let chunk = self.budget.charge(page).await;
                return Some((Ok(chunk), self));
            }
            if self.done || tokio::time::Instant::now() >= self.deadline {
                return None;
            }
            if !self.behind {
                tokio::time::sleep_until(
                    (tokio::time::Instant::now() + POLL_INTERVAL).min(self.deadline),
                )
                .await;
            }
            self.poll().await;
        }
    }
}

/// What a stream holds while open: its place under the stream caps, and the budget its
/// pages are charged to.
#[derive(Debug)]
pub struct Allowance {
    pub slot: StreamSlot,
    pub budget: BodyBudget,
}

/// The streaming answer for a run that exists (the caller checked it); `slot` is its place
/// under the stream caps, held until the stream ends; each page it sends is charged to
/// `budget`.
pub fn stream(
    rt: Runtime,
    flavour: Flavour,
    run_id: String,
    tenant: String,
    request_id: String,
    after: Option<u64>,
    held: Allowance,
) -> Response {
    let Allowance { slot, budget } = held;
    let follow = Follow {
        rt,
        flavour,
        run_id,
        tenant,
        request_id,
        after,
        queued: String::new(),
        done: false,
        behind: true,
        deadline: tokio::time::Instant::now() + MAX_STREAM,
        _slot: slot,
        budget,
    };
    let body = Body::from_stream(futures::stream::unfold(follow, Follow::next));
    let mut response = Response::new(body);
    let cut_off = std::time::Instant::now() + MAX_STREAM + DEADLINE_GRACE;
    response
        .extensions_mut()
        .insert(kindgi_serve::ResponseDeadline(cut_off));
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_event_ids_and_kinds() {
        assert_eq!(last_event_sequence("abc-1:7"), Some(7));
        assert_eq!(last_event_sequence("x"), None);
        assert_eq!(wire_kind(JournalKind::EdgeEvaluated), None);
        assert_eq!(
            wire_kind(JournalKind::StepStarted),
            Some("run.step-started")
        );
        assert_eq!(
            wire_kind(JournalKind::ApprovalRequested),
            Some("run.approval-requested")
        );
        assert_eq!(
            wire_kind(JournalKind::ApprovalCompleted),
            Some("run.approval-completed")
        );
        assert_eq!(
            wire_kind(JournalKind::GuardrailViolated),
            Some("run.guardrail-violated")
        );
        assert_eq!(wire_kind(JournalKind::WaitCancelled), None);
    }
}
