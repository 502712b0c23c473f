//! A run on the wire (platform-api.md §3.2, §3.4, §3.8): the `OA:Run` object (only the
//! fields it allows — the input stays stored, never sent), `OA:RunProgress`, journal entries
//! as `OA:RunJournalPage` items, and `waitingFor` derived from the journal.

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
    put(&mut o, "trigger", m.trigger.clone());
    put(&mut o, "startedBy", m.started_by.as_ref().map(|s| json!(s)));
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

/// An open wait: a `wait.suspended` with no later `wait.resumed|wait.cancelled` for its
/// token.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenWait {
    pub token_id: String,
    /// Entry time + `timeoutMs`, RFC 3339.
    pub times_out_at: Option<String>,
}

/// The open waits of a journal, in the order they opened.
pub fn open_waits(journal: &[JournalEntry]) -> Vec<OpenWait> {
    let mut open: Vec<OpenWait> = Vec::new();
    for e in journal {
        let Some(token) = e
            .payload
            .as_ref()
            .and_then(|p| p.get("tokenId"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        match e.kind {
            JournalKind::WaitSuspended => {
                let times_out_at = e
                    .payload
                    .as_ref()
                    .and_then(|p| p.get("timeoutMs"))
                    .and_then(Value::as_i64)
                    .map(|ms| {
                        kindgi_runtime::record::format_millis(
                            kindgi_runtime::record::parse_millis(&e.timestamp).saturating_add(ms),
                        )
                    });
                open.retain(|w| w.token_id != token);
                open.push(OpenWait {
                    token_id: token.to_owned(),
                    times_out_at,
                });
            }
            JournalKind::WaitResumed | JournalKind::WaitCancelled => {
                open.retain(|w| w.token_id != token);
            }
            _ => {}
        }
    }
    open
}

/// `waitingFor {approvals, other}` of a suspended run (§3.8). This runtime links no
/// approvals to waits yet, so `approvals` is empty; a `child:<runId>:<seq>` token is a
/// `child-run` wait (with the child's status when `child_status` knows it), any other open
/// token `unattributed`, and no open wait `no-open-wait`.
pub fn waiting_for(
    journal: &[JournalEntry],
    child_status: impl Fn(&str) -> Option<RunStatus>,
) -> Value {
    let mut other = Vec::new();
    for w in open_waits(journal) {
        let mut o = Map::new();
        if let Some(child) = w
            .token_id
            .strip_prefix("child:")
            .and_then(|rest| rest.rsplit_once(':'))
            .map(|(id, _)| id.to_owned())
        {
            o.insert("what".into(), json!("child-run"));
            put(
                &mut o,
                "childStatus",
                child_status(&child).map(|s| json!(s.as_str())),
            );
            o.insert("childRunId".into(), json!(child));
        } else {
            o.insert("what".into(), json!("unattributed"));
            o.insert("tokenId".into(), json!(w.token_id));
        }
        put(&mut o, "timesOutAt", w.times_out_at.map(|t| json!(t)));
        other.push(Value::Object(o));
    }
    if other.is_empty() {
        other.push(json!({"what": "no-open-wait"}));
    }
    json!({"approvals": [], "other": other})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sequence: u64, kind: JournalKind, payload: Value) -> JournalEntry {
        JournalEntry {
            sequence,
            kind,
            node_id: None,
            scope: None,
            payload: Some(payload),
            timestamp: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    #[test]
    fn open_waits_follow_the_journal() {
        let j = vec![
            entry(
                1,
                JournalKind::WaitSuspended,
                json!({"tokenId": "t1", "timeoutMs": 1000}),
            ),
            entry(2, JournalKind::WaitSuspended, json!({"tokenId": "t2"})),
            entry(
                3,
                JournalKind::WaitResumed,
                json!({"tokenId": "t2", "value": 1}),
            ),
        ];
        let w = waiting_for(&j, |_| None);
        assert_eq!(
            w,
            json!({"approvals": [], "other": [{"what": "unattributed", "tokenId": "t1", "timesOutAt": "2026-01-01T00:00:01.000Z"}]})
        );
        let none = waiting_for(&j[..0], |_| None);
        assert_eq!(none["other"], json!([{"what": "no-open-wait"}]));
        let child = vec![entry(
            1,
            JournalKind::WaitSuspended,
            json!({"tokenId": "child:abc:4"}),
        )];
        let w = waiting_for(&child, |_| Some(RunStatus::Running));
        assert_eq!(
            w["other"],
            json!([{"what": "child-run", "childRunId": "abc", "childStatus": "running"}])
        );
    }
}
