//! `kindgi runs resume <id>`: says what a run waits for, as the official CLI does
//! (platform-api.md §12.3); it never POSTs `/resume` (the API has no way to answer a wait
//! from outside). It reads the run; a suspended run without `waitingFor` has its journal's
//! open waits read, and the approvals linked to them (`GET /v1/approvals?waitTokenId=…`).
//! Prints `{kind: not-waiting|approval|runtime, runId, status, approvals[] | waits[]}` and
//! exits 0 (not waiting), 3 (an open approval) or 4 (the runtime: queued, a child run, a
//! retry, a lease, an unattributed wait, no open wait).

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::api::{ApiClient, CliError, Output, segment};

const OPEN_APPROVAL: [&str; 4] = ["pending", "assigned", "in_review", "escalated"];

fn exit_for(answer: &Value) -> ExitCode {
    match answer.get("kind").and_then(Value::as_str) {
        Some("approval") => ExitCode::from(3),
        Some("runtime") => ExitCode::from(4),
        _ => ExitCode::SUCCESS,
    }
}

pub async fn resume(client: &ApiClient, id: &str, out: &Output) -> Result<ExitCode, CliError> {
    let answer = answer(client, id).await?;
    out.json(&answer);
    Ok(exit_for(&answer))
}

async fn answer(client: &ApiClient, id: &str) -> Result<Value, CliError> {
    let run = client
        .get(&format!("/v1/runs/{}", segment(id)), vec![])
        .await?;
    let status = run
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let base = |kind: &str| json!({"kind": kind, "runId": id, "status": status});
    let with = |mut v: Value, k: &str, x: Value| {
        if let Some(o) = v.as_object_mut() {
            o.insert(k.into(), x);
        }
        v
    };
    match status.as_str() {
        "completed" | "failed" | "cancelled" => return Ok(base("not-waiting")),
        "pending" => return Ok(with(base("runtime"), "waits", json!([{"what": "queued"}]))),
        _ => {}
    }
    if status == "suspended"
        && let Some(w) = run.get("waitingFor")
    {
        let other = w.get("other").cloned().unwrap_or(json!([]));
        let approvals: Vec<Value> = w
            .get("approvals")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(approval_of_waiting_for).collect())
            .unwrap_or_default();
        if approvals.is_empty() {
            return Ok(with(base("runtime"), "waits", other));
        }
        let v = with(base("approval"), "approvals", Value::Array(approvals));
        return Ok(with(v, "alsoWaitsOn", other));
    }
    let journal = super::runs_journal::journal(client, id, None, None, None).await?;
    let entries = journal
        .get("data")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if status != "suspended" {
        let waits = runtime_waits(&entries);
        return Ok(if waits.is_empty() {
            base("not-waiting")
        } else {
            with(base("runtime"), "waits", Value::Array(waits))
        });
    }
    let open = open_waits(&entries);
    if open.is_empty() {
        return Ok(with(
            base("runtime"),
            "waits",
            json!([{"what": "no-open-wait"}]),
        ));
    }
    let mut waits = Vec::new();
    let mut tokens = Vec::new();
    for token in open {
        match token
            .strip_prefix("child:")
            .and_then(|r| r.rsplit_once(':'))
            .map(|(c, _)| c.to_owned())
        {
            Some(child) => {
                let got = client
                    .get(&format!("/v1/runs/{}", segment(&child)), vec![])
                    .await
                    .ok();
                let mut w = json!({"what": "child-run", "childRunId": child});
                if let (Some(s), Some(o)) = (
                    got.as_ref().and_then(|g| g.get("status")),
                    w.as_object_mut(),
                ) {
                    o.insert("childStatus".into(), s.clone());
                }
                waits.push(w);
            }
            None => tokens.push(token),
        }
    }
    if tokens.is_empty() {
        return Ok(with(base("runtime"), "waits", Value::Array(waits)));
    }
    let mut q: Vec<(&'static str, String)> =
        tokens.iter().map(|t| ("waitTokenId", t.clone())).collect();
    q.push(("limit", "100".into()));
    let linked: Vec<Value> = match client.get("/v1/approvals", q).await {
        Ok(page) => page
            .get("data")
            .and_then(Value::as_array)
            .map(|d| {
                d.iter()
                    .filter(|a| {
                        a.get("waitTokenId")
                            .and_then(Value::as_str)
                            .is_some_and(|t| tokens.iter().any(|x| x == t))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let is_open = |a: &Value| {
        a.get("status")
            .and_then(Value::as_str)
            .is_some_and(|s| OPEN_APPROVAL.contains(&s))
    };
    for a in linked.iter().filter(|a| !is_open(a)) {
        waits.push(json!({"what": "decided-approval", "approvalId": a.get("id"), "approvalStatus": a.get("status")}));
    }
    for t in &tokens {
        if !linked
            .iter()
            .any(|a| a.get("waitTokenId").and_then(Value::as_str) == Some(t))
        {
            waits.push(json!({"what": "unattributed", "tokenId": t}));
        }
    }
    let open: Vec<Value> = linked.into_iter().filter(|a| is_open(a)).collect();
    if open.is_empty() {
        return Ok(with(base("runtime"), "waits", Value::Array(waits)));
    }
    let v = with(base("approval"), "approvals", Value::Array(open));
    Ok(with(v, "alsoWaitsOn", Value::Array(waits)))
}

fn approval_of_waiting_for(a: &Value) -> Value {
    let mut o = serde_json::Map::new();
    o.insert(
        "id".into(),
        a.get("approvalId").cloned().unwrap_or(Value::Null),
    );
    for k in ["title", "requiredRole", "status", "tool"] {
        if let Some(v) = a.get(k) {
            o.insert(k.into(), v.clone());
        }
    }
    Value::Object(o)
}

/// Tokens of `wait.suspended` entries with no later `wait.resumed`/`wait.cancelled`.
fn open_waits(entries: &[Value]) -> Vec<String> {
    let token = |e: &Value| {
        e.pointer("/payload/tokenId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut open: Vec<String> = Vec::new();
    for e in entries {
        match (e.get("kind").and_then(Value::as_str), token(e)) {
            (Some("wait.suspended"), Some(t)) if !open.contains(&t) => open.push(t),
            (Some("wait.resumed" | "wait.cancelled"), Some(t)) => open.retain(|o| *o != t),
            _ => {}
        }
    }
    open
}

/// A running run's retries and leases still pending: the last `step.retry-scheduled` /
/// `step.concurrency-deferred` of a node with no later entry for that node.
fn runtime_waits(entries: &[Value]) -> Vec<Value> {
    let mut waits: Vec<(String, Value)> = Vec::new();
    for e in entries {
        let Some(node) = e.get("nodeId").and_then(Value::as_str) else {
            continue;
        };
        waits.retain(|(n, _)| n != node);
        match e.get("kind").and_then(Value::as_str) {
            Some("step.retry-scheduled") => {
                waits.push((node.into(), json!({"what": "retry", "nodeId": node})))
            }
            Some("step.concurrency-deferred") => {
                waits.push((node.into(), json!({"what": "lease", "nodeId": node})))
            }
            _ => {}
        }
    }
    waits.into_iter().map(|(_, w)| w).collect()
}
