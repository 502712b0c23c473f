//! The session approval gate (`conversationPolicy.hitl.afterTurns`, legacy
//! `hitlAfterTurns`; runtime.md §4, case 54): once a conversation has had that many turns,
//! each new turn waits for a reviewer before its model is called.
//!
//! - Decided once per turn and recorded (`session-hitl-gate`, the reference's key): a turn
//!   that parked resumes on the gate it parked on, whatever the rules or the count say then.
//! - The turns counted are the conversation's before this one (the conversation log counts
//!   the running turn too). No conversation log, or none for the run: no gate.
//! - Parks on an `agent-turn:session-hitl-gate` approval (`subjectRef {conversationId,
//!   agentId, agentVersion, turnCount, threshold}`), token 40 hex of SHA-256 of
//!   `agent-turn:session-hitl-gate:<runId>:<turnCount>`. Only exactly `{decided:
//!   "approve"}` lets the turn go on; a rejection fails it `hitl-rejected: Reviewer rejected
//!   the session-HITL gate[: <rationale>]`, a withdrawal `hitl-withdrawn`, a timeout at
//!   admin `hitl-cancelled: Session-HITL gate cancelled: timeout`.

use serde_json::{Map, Value, json};

use super::gate::{Verdict, verdict};
use super::hitl::{self, EffectiveHitl};
use crate::catalogue::AgentSpec;
use crate::engine::ctx::RunCtx;
use crate::engine::failure::Failure;
use crate::engine::journal::WaitOutcome;
use crate::steps::wait::{WaitPurpose, WaitRequest};
use kindgi_core::approval::{NewApproval, ReviewerRole};

/// The approval subject of the session gate.
pub const SESSION_SUBJECT: &str = "agent-turn:session-hitl-gate";
/// The recorded-value key of the turn's session gate.
const SESSION_KEY: &str = "session-hitl-gate";

/// The session gate of this turn: returns once the turn may go on.
pub(super) async fn pass(
    ctx: &RunCtx,
    agent: &AgentSpec,
    hitl: &EffectiveHitl,
    node_id: &str,
    value_scope: &str,
) -> Result<(), Failure> {
    let recorded_before = ctx
        .replay
        .values
        .contains_key(&(value_scope.to_owned(), SESSION_KEY.to_owned()));
    if hitl.agent.after_turns.is_none() && !recorded_before {
        return Ok(());
    }
    let conversation = ctx
        .run
        .meta
        .agent
        .as_ref()
        .and_then(|a| a.conversation_id.clone());
    let decided = ctx
        .recorded(value_scope, SESSION_KEY, async {
            let (Some(threshold), Some(id)) = (hitl.agent.after_turns, &conversation) else {
                return Ok(json!("none"));
            };
            let Some(count) = turns_before(ctx, id).await? else {
                return Ok(json!("none"));
            };
            if count < threshold {
                return Ok(json!("none"));
            }
            Ok(json!({
                "waitTokenId": hitl::session_gate_token(&ctx.run.id, count),
                "turnCount": count,
                "threshold": threshold,
                "requiredRole": hitl.default_role(),
                "timeoutMs": hitl.timeout_ms(),
            }))
        })
        .await?;
    let Some(gate) = decided.as_object() else {
        return Ok(());
    };
    let read = |k: &str| gate.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (count, threshold, timeout_ms) = (read("turnCount"), read("threshold"), read("timeoutMs"));
    let role = gate
        .get("requiredRole")
        .and_then(Value::as_str)
        .and_then(ReviewerRole::parse)
        .unwrap_or(ReviewerRole::Standard);
    let mut subject = Map::new();
    if let Some(c) = &conversation {
        subject.insert("conversationId".into(), json!(c));
    }
    subject.insert("agentId".into(), json!(agent.id));
    subject.insert("agentVersion".into(), json!(agent.version));
    subject.insert("turnCount".into(), json!(count));
    subject.insert("threshold".into(), json!(threshold));
    let request = WaitRequest {
        token_id: gate
            .get("waitTokenId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        node_id: Some(node_id.to_owned()),
        timeout_ms,
        purpose: WaitPurpose::Approval(NewApproval {
            subject_kind: SESSION_SUBJECT.to_owned(),
            subject_ref: Value::Object(subject),
            required_role: role,
            title: format!("HITL review required for {}", agent.id),
            description: format!(
                "Conversation reached HITL threshold: {count} turns >= {threshold}"
            ),
            timeout_ms,
            separate_approver: hitl.agent.separate_approver.default,
        }),
    };
    match ctx.wait(value_scope, request).await? {
        WaitOutcome::Resumed(answer) => match verdict(&answer) {
            Verdict::Approve => Ok(()),
            Verdict::Reject(rationale) => Err(Failure::fatal(format!(
                "hitl-rejected: Reviewer rejected the session-HITL gate{}",
                rationale.map(|r| format!(": {r}")).unwrap_or_default()
            ))),
        },
        WaitOutcome::Cancelled { reason } => {
            let message = if reason == "withdrawn" || reason == "approval-withdrawn" {
                "hitl-withdrawn: The approval for the session-HITL gate was withdrawn".to_owned()
            } else {
                format!("hitl-cancelled: Session-HITL gate cancelled: {reason}")
            };
            let mut extra = Map::new();
            extra.insert("reason".into(), json!(reason));
            Err(Failure::fatal(message).with_extra(extra))
        }
    }
}

/// The turns the conversation had before this one (`None`: not known).
async fn turns_before(ctx: &RunCtx, conversation_id: &str) -> Result<Option<u64>, Failure> {
    let Some(log) = ctx.shared.conversations.as_ref() else {
        return Ok(None);
    };
    let count = log
        .turn_count(&ctx.run.tenant_id, conversation_id)
        .await
        .map_err(|e| Failure::new(format!("persistence-error: {e}")))?;
    Ok(count.map(|n| n.saturating_sub(1)))
}
