//! Evaluating guardrails over a trace (`@kindgi/guardrails` `engine.ts` and the agents'
//! `guardrails-gate.ts`, runtime.md §7): every guardrail at once, each to an outcome —
//! `ok` (with its check's result), `skip` (scope mismatch) or `err` (its check could not
//! run) — then sorted by action: a failed `halt` blocks, `log-only` is a warning, any other
//! action is recorded and not acted on; an error of a `halt` guardrail blocks too (fail
//! closed).
//!
//! Outcomes are plain JSON so a step records them once (`value.recorded`) and a resumed
//! step reads them back instead of judging again.

use futures::future::join_all;
use kindgi_spec::pack_protocol::CheckResult;
use serde_json::{Value, json};
use std::sync::Arc;

use super::checks::{BUILT_IN_CHECKS, run_built_in};
use super::spec::GuardrailSpec;
use super::{CheckError, CheckRequest};
use crate::engine::ctx::RunCtx;
use crate::record::JournalKind;

/// Evaluates every guardrail over `trace` concurrently; one outcome each, in order.
pub(crate) async fn evaluate_all(
    ctx: &RunCtx,
    guardrails: &[Arc<GuardrailSpec>],
    agent_id: &str,
    trace: &Value,
) -> Vec<Value> {
    join_all(guardrails.iter().map(|g| evaluate(ctx, g, agent_id, trace))).await
}

async fn evaluate(ctx: &RunCtx, g: &GuardrailSpec, agent_id: &str, trace: &Value) -> Value {
    let flow = super::trace::flow_of_turn(ctx);
    if let Some(reason) = g.scope_mismatch(&ctx.run.tenant_id, agent_id, flow) {
        return json!({"guardrailId": g.id, "outcome": "skip", "reason": reason});
    }
    match run_check(ctx, g, trace).await {
        Ok(result) => {
            let action = if result.passed {
                "noop"
            } else {
                g.on_violation.as_str()
            };
            json!({
                "guardrailId": g.id,
                "outcome": "ok",
                "result": result,
                "action": action,
                "severity": g.severity,
            })
        }
        Err(e) => json!({
            "guardrailId": g.id,
            "outcome": "err",
            "code": e.code,
            "message": e.message,
            "action": g.on_violation,
            "severity": g.severity,
        }),
    }
}

fn err(code: &str, message: String) -> CheckError {
    CheckError {
        code: code.to_owned(),
        message,
    }
}

/// Runs the guardrail's check by its kind: `zero-llm` a built-in or a pack's check (through
/// the runtime's [`super::GuardrailChecks`]); `llm-judge` has no judge bound here; any
/// other kind has no strategy.
async fn run_check(
    ctx: &RunCtx,
    g: &GuardrailSpec,
    trace: &Value,
) -> Result<CheckResult, CheckError> {
    match g.kind.as_str() {
        "zero-llm" => {}
        "llm-judge" if !g.has_judge_capabilities => {
            return Err(err(
                "invalid-guardrail",
                format!("llm-judge guardrail \"{}\" missing judgeCapabilities", g.id),
            ));
        }
        "llm-judge" => {
            return Err(err(
                "judge-missing",
                "llm-judge guardrail evaluated without providerRegistry or judgeProvider in bindings".into(),
            ));
        }
        "external" => {
            return Err(err(
                "invalid-guardrail",
                "external-kind guardrails are evaluated outside the engine — register an execution strategy for kind `external`".into(),
            ));
        }
        other => {
            return Err(err(
                "invalid-guardrail",
                format!(
                    "Guardrail \"{}\" declares unknown kind \"{other}\" — no execution strategy registered",
                    g.id
                ),
            ));
        }
    }
    if BUILT_IN_CHECKS.contains(&g.check.as_str()) {
        return run_built_in(&g.id, &g.check, &g.config, trace).map_err(|(c, m)| err(c, m));
    }
    let unknown = || {
        err(
            "unknown-check",
            format!(
                "Guardrail \"{}\" references unregistered check \"{}\"",
                g.id, g.check
            ),
        )
    };
    let Some(checks) = ctx.shared.guardrail_checks.clone() else {
        return Err(unknown());
    };
    let request = CheckRequest {
        tenant: &ctx.run.tenant_id,
        run_id: &ctx.run.id,
        guardrail_id: &g.id,
        check_id: &g.check,
        config: &g.config,
        trace,
        cancel: ctx.cancel.child_token(),
    };
    tokio::select! {
        r = checks.run_check(request) => r,
        () = ctx.cancel.cancelled() => Err(err("cancelled", "the run was cancelled while its check ran".into())),
    }
}

/// The outcomes sorted by what they do to the turn (or call).
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// Failed `halt` guardrails.
    pub blocking: Vec<Value>,
    /// Failed `log-only` guardrails.
    pub warnings: Vec<Value>,
    /// Failed guardrails of any other action (recorded, not acted on).
    pub other: Vec<Value>,
    /// `halt` guardrails whose check could not run.
    pub blocking_errors: Vec<Value>,
}

fn text<'a>(o: &'a Value, key: &str) -> &'a str {
    o.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn failed(o: &Value) -> bool {
    o.get("outcome").and_then(Value::as_str) == Some("ok")
        && o.pointer("/result/passed").and_then(Value::as_bool) == Some(false)
}

pub(crate) fn categorize(outcomes: &[Value]) -> Verdict {
    let mut v = Verdict::default();
    for o in outcomes {
        match text(o, "outcome") {
            "err" if text(o, "action") == "halt" => v.blocking_errors.push(o.clone()),
            "ok" if failed(o) => match text(o, "action") {
                "halt" => v.blocking.push(o.clone()),
                "log-only" | "noop" => v.warnings.push(o.clone()),
                _ => v.other.push(o.clone()),
            },
            _ => {}
        }
    }
    v
}

/// The check's reason, trimmed, when it gave one.
fn reason_of(o: &Value) -> Option<&str> {
    o.pointer("/result/reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
}

fn could_not_run(e: &Value) -> String {
    format!(
        "'{}' couldn't run its check ({}: {})",
        text(e, "guardrailId"),
        text(e, "code"),
        text(e, "message")
    )
}

impl Verdict {
    /// What stops the turn, worded as the reference words it (`None`: nothing blocks).
    pub(crate) fn blocked_message(&self) -> Option<String> {
        match (self.blocking.as_slice(), self.blocking_errors.as_slice()) {
            ([], []) => None,
            ([only], []) => Some(match reason_of(only) {
                Some(r) => format!(
                    "Turn blocked by guardrail '{}': {r}",
                    text(only, "guardrailId")
                ),
                None => format!("Turn blocked by guardrail '{}'", text(only, "guardrailId")),
            }),
            ([], [only]) => Some(format!("Turn blocked: guardrail {}", could_not_run(only))),
            (blocking, errors) => {
                let named: Vec<String> = blocking
                    .iter()
                    .map(|v| match reason_of(v) {
                        Some(r) => format!("'{}' ({r})", text(v, "guardrailId")),
                        None => format!("'{}'", text(v, "guardrailId")),
                    })
                    .chain(errors.iter().map(could_not_run))
                    .collect();
                Some(format!(
                    "Turn blocked by {} guardrails: {}",
                    named.len(),
                    named.join("; ")
                ))
            }
        }
    }

    /// The first guardrail that blocks, and why (for a refused call).
    pub(crate) fn first_block(&self) -> Option<(String, String)> {
        if let Some(v) = self.blocking.first() {
            let reason = reason_of(v).unwrap_or("its check failed").to_owned();
            return Some((text(v, "guardrailId").to_owned(), reason));
        }
        self.blocking_errors.first().map(|e| {
            (
                text(e, "guardrailId").to_owned(),
                format!(
                    "couldn't run its check ({}: {})",
                    text(e, "code"),
                    text(e, "message")
                ),
            )
        })
    }

    /// The violations that did not block: `{guardrailId, action, severity, result}`.
    pub(crate) fn non_blocking(&self) -> Vec<Value> {
        self.warnings
            .iter()
            .chain(&self.other)
            .map(|o| {
                json!({
                    "guardrailId": o["guardrailId"],
                    "action": o["action"],
                    "severity": o["severity"],
                    "result": o["result"],
                })
            })
            .collect()
    }
}

/// Journals a `guardrail.violated` entry per failed guardrail (blocking or not), for the
/// run's event stream. A check that could not run is no violation (the reference emits no
/// `guardrail.violated` for it); when it blocks, the failure says why.
pub(crate) async fn journal_violations(
    ctx: &RunCtx,
    node_id: Option<&str>,
    scope: &str,
    stage: &str,
    call_id: Option<&str>,
    outcomes: &[Value],
) -> Result<(), crate::store::RunStoreError> {
    for o in outcomes {
        if !failed(o) {
            continue;
        }
        let mut p = json!({
            "guardrailId": o["guardrailId"],
            "action": o["action"],
            "severity": o["severity"],
            "stage": stage,
        });
        if let Some(m) = p.as_object_mut() {
            if let Some(r) = reason_of(o) {
                m.insert("reason".into(), json!(r));
            }
            if let Some(c) = call_id {
                m.insert("callId".into(), json!(c));
            }
        }
        ctx.journal
            .write(JournalKind::GuardrailViolated, node_id, scope, Some(p))
            .await?;
    }
    Ok(())
}
