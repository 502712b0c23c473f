//! A run on the wire (platform-api.md §3.2, §3.4, §3.8): the `OA:Run` object (only the
//! fields it allows — the input stays stored, never sent), `OA:RunProgress` and journal
//! entries as `OA:RunJournalPage` items. `waitingFor` is the runtime's
//! (`Runtime::waiting_for`), added by `GET /v1/runs/{id}`.
//!
//! A run that failed because a value failed its schema carries the schema issues
//! (`{instancePath, schemaPath, keyword, params, message}`) in `failure.details.issues`,
//! read from the failing step's `step.failed` entry — our extension: `OA:RunFailure` keeps
//! `details` for "the error's own facts", and a bare `input failed validation` hides which
//! field was wrong.

use kindgi_runtime::{JournalEntry, JournalKind, RunRecord, RunStatus};
use serde_json::{Map, Value, json};

use crate::runs_list::put;

/// `OA:Run` of `run`; `output` only when `with_output` (single-run answers, lists with
/// `include=output`). `failure {code, message}` on a failed run.
pub fn run_json(run: &RunRecord, with_output: bool) -> Value {
    let m = &run.meta;
    let mut o = Map::new();
    o.insert("id".into(), json!(run.id));
    o.insert(
        "tenantId".into(),
        json!(crate::projects::tenant_uuid(&run.tenant_id)),
    );
    put(&mut o, "projectId", m.project_id.as_ref().map(|p| json!(p)));
    o.insert("flowId".into(), json!(run.flow_id));
    o.insert("flowVersion".into(), json!(run.flow_version));
    o.insert("status".into(), json!(run.status.as_str()));
    o.insert("dryRun".into(), json!(run.dry_run));
    o.insert("createdAt".into(), json!(run.created_at));
    o.insert("updatedAt".into(), json!(run.updated_at));
    put(
        &mut o,
        "completedAt",
        run.completed_at.as_ref().map(|t| json!(t)),
    );
    if run.status == RunStatus::Failed {
        put(
            &mut o,
            "failureMessage",
            run.failure_message.as_ref().map(|f| json!(f)),
        );
        put(
            &mut o,
            "failure",
            run.failure()
                .map(|f| json!({"code": f.code, "message": f.message})),
        );
    }
    if with_output {
        put(&mut o, "output", run.output.clone());
    }
    put(
        &mut o,
        "parentRunId",
        run.parent_run_id.as_ref().map(|p| json!(p)),
    );
    put(
        &mut o,
        "parentNodeId",
        run.parent_node_id.as_ref().map(|p| json!(p)),
    );
    put(
        &mut o,
        "agent",
        m.agent.as_ref().and_then(|a| serde_json::to_value(a).ok()),
    );
    put(
        &mut o,
        "trigger",
        m.trigger
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok()),
    );
    put(&mut o, "startedBy", m.started_by.map(|s| json!(s.as_str())));
    put(&mut o, "replayOf", m.replay_of.as_ref().map(|s| json!(s)));
    put(
        &mut o,
        "evalRunId",
        m.eval_run_id.as_ref().map(|s| json!(s)),
    );
    if !m.segments.is_empty() {
        o.insert("segments".into(), json!(m.segments));
    }
    put(&mut o, "traceId", m.trace_id.as_ref().map(|s| json!(s)));
    Value::Object(o)
}

/// `OA:RunProgress` of `run`: status and timing only.
pub fn progress_json(run: &RunRecord) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(run.id));
    o.insert("flowId".into(), json!(run.flow_id));
    o.insert("flowVersion".into(), json!(run.flow_version));
    o.insert("status".into(), json!(run.status.as_str()));
    o.insert("createdAt".into(), json!(run.created_at));
    o.insert("updatedAt".into(), json!(run.updated_at));
    put(
        &mut o,
        "completedAt",
        run.completed_at.as_ref().map(|t| json!(t)),
    );
    put(
        &mut o,
        "parentRunId",
        run.parent_run_id.as_ref().map(|p| json!(p)),
    );
    Value::Object(o)
}

/// A journal entry as the wire has it: `{sequence, kind, nodeId?, payload?, timestamp}`.
pub fn entry_json(e: &JournalEntry) -> Value {
    let mut o = Map::new();
    o.insert("sequence".into(), json!(e.sequence));
    o.insert("kind".into(), json!(e.kind.as_str()));
    put(&mut o, "nodeId", e.node_id.as_ref().map(|n| json!(n)));
    put(&mut o, "payload", e.payload.clone());
    o.insert("timestamp".into(), json!(e.timestamp));
    Value::Object(o)
}

/// Adds the schema issues of a failed run's last `step.failed` entry (when it has any) to
/// the run's `failure` as `details.issues`.
pub fn add_failure_issues(body: &mut Value, journal: &[JournalEntry]) {
    let Some(issues) = journal
        .iter()
        .rev()
        .find(|e| e.kind == JournalKind::StepFailed)
        .and_then(|e| e.payload.as_ref())
        .and_then(|p| p.get("issues"))
        .filter(|i| i.as_array().is_some_and(|a| !a.is_empty()))
    else {
        return;
    };
    if let Some(Value::Object(failure)) = body.get_mut("failure") {
        failure.insert("details".into(), json!({"issues": issues}));
    }
}
