//! The approval gate of one tool call (runtime.md §4).
//!
//! - The gate is decided once per call and recorded (`tool-hitl-gate:<callId>`, the
//!   reference's key): a step resumed after a park reads back the gate it parked on, so a
//!   policy relaxed meanwhile cannot skip the reviewer's answer, while a call whose gate
//!   was not reached before the park follows the rules in force when it is.
//! - `ask_on_first_use` asks unless this conversation already approved a call of the same
//!   tool with the same arguments (`argsHash`); `always_ask` asks every time. (The
//!   reference asks every time for both; see docs/approvals.md.)
//! - A gated call parks the run on its wait token with a `tool-call:pending` approval. The
//!   answer is read fail-closed: only exactly `{decided: "approve"}` lets the call run, and
//!   only with the arguments that were approved; a rejection (or anything that is not a
//!   decision) reaches the model as `{status: "rejected", rationale?}`.
//! - In a run no person started, a call the unattended rule covers ([`crate::unattended`])
//!   is `always_ask` whatever the agent's and tenant's rules say; its approval's title,
//!   description and `subjectRef.unattended {rule, startedBy}` name the rule.
//! - A withdrawn approval fails the turn `hitl-withdrawn`; one that timed out at admin
//!   fails it `hitl-cancelled` (`Tool-call HITL cancelled for <tool>: timeout`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::hitl::{self, EffectiveHitl, HitlMode, TenantHitlPolicy};
use super::step::Step;
use crate::catalogue::AgentSpec;
use crate::dispatch::ToolDispatcher;
use crate::engine::ctx::RunCtx;
use crate::engine::failure::Failure;
use crate::engine::journal::WaitOutcome;
use crate::model::ToolCall;
use crate::steps::wait::{WaitPurpose, WaitRequest};
use kindgi_core::approval::{NewApproval, ReviewerRole};

/// The recorded-value key of a call's gate, before its call id.
pub const GATE_KEY_PREFIX: &str = "tool-hitl-gate:";
/// The approval subject of a tool-call gate.
pub const TOOL_CALL_SUBJECT: &str = "tool-call:pending";
/// Why an answer that is not a decision blocks (the reference's words).
pub const UNREADABLE_DECISION: &str =
    "the approval's answer wasn't a decision (approve or reject), so it counts as a rejection";

/// A gate that asks, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GateRecord {
    pub mode: String,
    pub args_hash: String,
    pub wait_token_id: String,
    pub required_role: ReviewerRole,
    pub timeout_ms: u64,
    /// The unattended rule that holds for the call, if one does (it makes the gate
    /// `always_ask`, and the approval says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unattended: Option<UnattendedNote>,
}

/// The unattended rule behind a gate, as recorded: its name and its words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UnattendedNote {
    pub rule: String,
    pub why: String,
    /// The run's `startedBy` (absent on a run stored before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
}

/// What the reviewer's answer lets a gated call do.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Review {
    Approved,
    /// The result the model gets instead (`{status: "rejected", rationale?}`).
    Rejected(String),
}

/// The approval rules of a turn: the agent's (a malformed policy fails the turn rather than
/// running ungated) held to the tenant's, asked for now (failing closed).
pub(super) async fn turn_rules(
    ctx: &RunCtx,
    agent: &AgentSpec,
    tenant_policy: Option<&dyn TenantHitlPolicy>,
) -> Result<EffectiveHitl, Failure> {
    let parsed = agent.hitl().map_err(|issues| {
        let text: Vec<String> = issues.iter().map(ToString::to_string).collect();
        Failure::fatal(format!(
            "hitl-policy-invalid: agent \"{}\" has approval settings this runtime cannot apply: {}",
            agent.id,
            text.join("; ")
        ))
    })?;
    let tenant = match tenant_policy {
        None => None,
        Some(p) => p.hitl_policy(&ctx.run.tenant_id).await.map_err(|e| {
            let cause: String = e.to_string().replace('\n', " ").chars().take(500).collect();
            Failure::new(format!(
                "tenant-policy-unavailable: The tenant's hitl policy could not be applied: {cause}"
            ))
        })?,
    };
    Ok(EffectiveHitl {
        agent: parsed,
        tenant,
    })
}

/// The gate of `call` (`None`: it runs without asking), decided once and recorded.
pub(super) async fn decide(
    ctx: &RunCtx,
    step: &Step<'_>,
    call: &ToolCall,
    tool: &dyn ToolDispatcher,
) -> Result<Option<GateRecord>, Failure> {
    let key = format!("{GATE_KEY_PREFIX}{}", call.id);
    let m = tool.manifest();
    let unattended = crate::unattended::approval_required(&ctx.run.meta, m);
    let recorded_before = ctx
        .replay
        .values
        .contains_key(&(step.value_scope.to_owned(), key.clone()));
    if !recorded_before && unattended.is_none() && !step.hitl.gates_anything() {
        return Ok(None);
    }
    let rule = step.hitl.tool_rule(&m.id, m.mutating, unattended.is_some());
    let note = unattended.map(|r| UnattendedNote {
        rule: r.rule().to_owned(),
        why: r.explain(),
        started_by: ctx.run.meta.started_by.map(|b| b.as_str().to_owned()),
    });
    let decided = ctx
        .recorded(step.value_scope, &key, async {
            if rule.mode == HitlMode::NeverAsk {
                return Ok(json!("none"));
            }
            let args_hash = hitl::args_hash(&call.arguments);
            if rule.mode == HitlMode::AskOnFirstUse
                && ctx.approved_before(&m.id, &args_hash).await?
            {
                return Ok(json!({"mode": rule.mode.as_str(), "argsHash": args_hash, "approvedBefore": true}));
            }
            let record = GateRecord {
                mode: rule.mode.as_str().to_owned(),
                wait_token_id: hitl::tool_call_token(&ctx.run.id, &call.id, &args_hash),
                args_hash,
                required_role: rule.required_role,
                timeout_ms: rule.timeout_ms,
                unattended: note,
            };
            serde_json::to_value(record).map_err(|e| Failure::fatal(e.to_string()))
        })
        .await?;
    if decided == json!("none") || decided.get("approvedBefore") == Some(&json!(true)) {
        return Ok(None);
    }
    serde_json::from_value(decided).map(Some).map_err(|e| {
        Failure::fatal(format!(
            "journal-unavailable: the recorded gate of call {} is unreadable: {e}",
            call.id
        ))
    })
}

/// Parks on the gate's approval until a reviewer answers; what the answer allows.
pub(super) async fn review(
    ctx: &RunCtx,
    step: &Step<'_>,
    call: &ToolCall,
    tool: &dyn ToolDispatcher,
    gate: &GateRecord,
) -> Result<Review, Failure> {
    let m = tool.manifest();
    let mut subject = Map::new();
    if let Some(c) = ctx
        .run
        .meta
        .agent
        .as_ref()
        .and_then(|a| a.conversation_id.as_ref())
    {
        subject.insert("conversationId".into(), json!(c));
    }
    for (k, v) in [
        ("agentId", json!(step.agent.id)),
        ("agentVersion", json!(step.agent.version)),
        ("toolId", json!(m.id)),
        ("toolVersion", json!(m.version)),
        ("callId", json!(call.id)),
        ("argsHash", json!(gate.args_hash)),
        ("arguments", call.arguments.clone()),
    ] {
        subject.insert(k.into(), v);
    }
    let (title, description) = approval_words(&call.name, gate.unattended.as_ref());
    if let Some(u) = &gate.unattended {
        subject.insert(
            "unattended".into(),
            json!({"rule": u.rule, "startedBy": u.started_by}),
        );
    }
    let request = WaitRequest {
        token_id: gate.wait_token_id.clone(),
        node_id: Some(step.node_id.to_owned()),
        timeout_ms: gate.timeout_ms,
        purpose: WaitPurpose::Approval(NewApproval {
            subject_kind: TOOL_CALL_SUBJECT.to_owned(),
            subject_ref: Value::Object(subject),
            required_role: gate.required_role,
            title,
            description,
            timeout_ms: gate.timeout_ms,
            separate_approver: step.hitl.agent.separate_approver.for_tool(&call.name),
        }),
    };
    match ctx.wait(step.value_scope, request).await? {
        WaitOutcome::Resumed(answer) => {
            let review = read_decision(&answer);
            if review == Review::Approved {
                let now = hitl::args_hash(&call.arguments);
                if now != gate.args_hash {
                    return Err(Failure::fatal(format!(
                        "hitl-arguments-changed: call {} of tool {} has arguments (argsHash {now}) other than the approved ones (argsHash {}), so it does not run",
                        call.id, call.name, gate.args_hash
                    )));
                }
            }
            Ok(review)
        }
        WaitOutcome::Cancelled { reason } => Err(cancelled(&call.name, &reason)),
    }
}

/// A gate approval's title and description: the reference's words, and, when the
/// unattended rule gates the call, why.
fn approval_words(tool: &str, unattended: Option<&UnattendedNote>) -> (String, String) {
    let Some(u) = unattended else {
        return (
            format!("HITL review: {tool}"),
            format!("Tool call {tool} awaiting reviewer approval before dispatch."),
        );
    };
    let by = u.started_by.as_deref().unwrap_or("nobody recorded");
    (
        format!("HITL review: {tool} (unattended run: {})", u.rule),
        format!(
            "Tool call {tool} awaiting reviewer approval before dispatch: no person started this run (started by {by}), and then the tool needs a person's yes ({}).",
            u.why
        ),
    )
}

/// What a reviewer's answer decides.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Verdict {
    Approve,
    /// With the reviewer's rationale, or why an answer that is not a decision blocks.
    Reject(Option<String>),
}

/// The reviewer's answer, fail-closed: only exactly `decided: "approve"` approves.
pub(super) fn verdict(answer: &Value) -> Verdict {
    let unreadable = || Verdict::Reject(Some(UNREADABLE_DECISION.to_owned()));
    let Value::Object(m) = answer else {
        return unreadable();
    };
    match m.get("decided").and_then(Value::as_str) {
        Some("approve") => Verdict::Approve,
        Some("reject") => Verdict::Reject(
            m.get("rationale")
                .and_then(Value::as_str)
                .map(str::to_owned),
        ),
        _ => unreadable(),
    }
}

/// What a tool call's gate does with the answer: a rejection is the call's result.
pub(super) fn read_decision(answer: &Value) -> Review {
    match verdict(answer) {
        Verdict::Approve => Review::Approved,
        Verdict::Reject(rationale) => {
            let mut r = json!({"status": "rejected"});
            if let (Some(text), Value::Object(m)) = (rationale, &mut r) {
                m.insert("rationale".into(), json!(text));
            }
            Review::Rejected(r.to_string())
        }
    }
}

/// The turn failure for a gate's wait that was cancelled.
fn cancelled(tool: &str, reason: &str) -> Failure {
    let message = if reason == "withdrawn" || reason == "approval-withdrawn" {
        format!("hitl-withdrawn: The approval for tool call {tool} was withdrawn")
    } else {
        format!("hitl-cancelled: Tool-call HITL cancelled for {tool}: {reason}")
    };
    let mut extra = Map::new();
    extra.insert("reason".into(), json!(reason));
    Failure::fatal(message).with_extra(extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_exact_approve_approves() {
        assert_eq!(
            read_decision(&json!({"decided": "approve"})),
            Review::Approved
        );
        let unreadable = Review::Rejected(
            json!({"status": "rejected", "rationale": UNREADABLE_DECISION}).to_string(),
        );
        for v in [
            Value::Null,
            json!({"decided": "Approve"}),
            json!({"maxCostUsd": 1.5}),
            json!("approve"),
        ] {
            assert_eq!(read_decision(&v), unreadable, "{v}");
        }
        assert_eq!(
            read_decision(&json!({"decided": "reject", "rationale": "no"})),
            Review::Rejected(r#"{"status":"rejected","rationale":"no"}"#.into())
        );
        assert_eq!(
            read_decision(&json!({"decided": "reject"})),
            Review::Rejected(r#"{"status":"rejected"}"#.into())
        );
    }
}
