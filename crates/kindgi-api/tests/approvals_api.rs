//! `/v1/approvals` over a loopback socket, on SQLite and PostgreSQL (platform-api.md §4,
//! cases 42–55): a gated agent turn parks on its approval, which is listed, read and
//! decided through the API; every refusal (not a reviewer, no person behind the key,
//! unknown / malformed / other tenant's id, a bad body, a `value`, already decided, the
//! run ended) is the documented status and envelope and changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_store::DatabaseKind;
use serde_json::{Value, json};
use support::gated::{GATED_TOOL, server};

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

async fn listed_read_and_approved(kind: DatabaseKind) {
    let s = server(kind).await;
    let (run, approval) = s.gated_turn().await;
    assert_eq!(s.writes(), 0, "the gated call waits");

    // The run says what it waits for: the approval, with its call, never its arguments.
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    let waiting = &got["waitingFor"]["approvals"][0];
    assert_eq!(waiting["subjectKind"], "tool-call:pending");
    assert_eq!(waiting["tool"]["id"], GATED_TOOL);
    assert_eq!(waiting["tool"]["callId"], "c1");
    assert!(!got["waitingFor"].to_string().contains("\"hi\""), "{got}");

    // Listed and read.
    let (status, page) = s.get("/v1/approvals").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["order"], "desc");
    assert_eq!(page["hasMore"], false);
    let row = &page["data"][0];
    assert_eq!(row["id"], approval.as_str());
    assert_eq!(row["status"], "pending");
    assert_eq!(row["provenanceRef"], json!({"runId": run}));
    assert_eq!(
        row["tenantId"],
        json!(kindgi_api::projects::tenant_uuid("acme"))
    );
    assert_eq!(row["subjectRef"]["arguments"], json!({"note": "hi"}));
    let token = row["waitTokenId"].as_str().unwrap().to_owned();
    for (q, n) in [
        (format!("runId={run}&status=pending"), 1),
        ("status=approved".to_owned(), 0),
        (format!("waitTokenId={token}"), 1),
        ("waitTokenId=nope".to_owned(), 0),
        ("order=asc".to_owned(), 1),
    ] {
        let (status, page) = s.get(&format!("/v1/approvals?{q}")).await;
        assert_eq!(status, 200, "{q}: {page}");
        assert_eq!(page["data"].as_array().unwrap().len(), n, "{q}: {page}");
    }
    let (status, one) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(status, 200);
    assert_eq!(one, *row);

    // Resuming the run through /resume points at the approval instead.
    let (status, e) = s
        .post(
            &format!("/v1/runs/{run}/resume"),
            json!({"waitpointId": token}),
        )
        .await;
    assert_eq!((status, code(&e)), (409, "approval-required"), "{e}");
    assert_eq!(e["error"]["details"]["approvalId"], approval.as_str());

    // Approved: the call runs once, the run completes, the journal names the decider.
    let (status, done) = s
        .post(
            &format!("/v1/approvals/{approval}/complete"),
            json!({"decision": "approve", "rationale": "fine"}),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["kind"], "terminal");
    assert_eq!(done["approval"]["status"], "approved");
    assert_eq!(done["decision"]["decision"], "approve");
    assert_eq!(done["decision"]["rationale"], "fine");
    assert_eq!(done["decision"]["approvalId"], approval.as_str());
    assert!(uuid::Uuid::parse_str(done["decision"]["reviewerId"].as_str().unwrap()).is_ok());
    assert_eq!(done["waitpointResolved"], true);
    assert_eq!(done["resume"], json!({"kind": "ok"}));
    assert_eq!(s.writes(), 1);
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    assert_eq!(got["status"], "completed", "{got}");
    assert!(got.get("waitingFor").is_none());
    let (_, journal) = s.get(&format!("/v1/runs/{run}/journal")).await;
    let resumed = journal["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "wait.resumed")
        .cloned()
        .unwrap();
    assert_eq!(
        resumed["payload"]["value"]["decidedBy"],
        format!("user:{}", kindgi_store::tokens::operator_user_id("acme"))
    );
    let (_, one) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(
        one["decision"]["decidedBy"],
        format!("user:{}", kindgi_store::tokens::operator_user_id("acme"))
    );

    // Decided: it can't be decided again, and nothing runs again.
    let (status, e) = s
        .post(
            &format!("/v1/approvals/{approval}/complete"),
            json!({"decision": "reject"}),
        )
        .await;
    assert_eq!(status, 409, "{e}");
    assert!(
        ["approval-already-decided", "approval-terminal"].contains(&code(&e)),
        "{e}"
    );
    assert_eq!(s.writes(), 1);
    let (_, after) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(after, one);
    let (status, e) = s
        .post(
            &format!("/v1/runs/{run}/resume"),
            json!({"waitpointId": token}),
        )
        .await;
    assert_eq!((status, code(&e)), (409, "run-already-terminal"), "{e}");

    // Filters that say what they did.
    let (_, mine) = s.get("/v1/approvals?decidedBy=me").await;
    assert_eq!(mine["decidedBy"], "me");
    assert_eq!(mine["data"].as_array().unwrap().len(), 1, "{mine}");
    let (_, none) = s.get("/v1/approvals?assignedTo=me").await;
    assert_eq!(none["data"], json!([]));

    // The run's stream tells the approval's story.
    let text = s
        .http
        .get(format!("{}/v1/runs/{run}/stream", s.url))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for kind in [
        "run.approval-requested",
        "run.wait-suspended",
        "run.approval-completed",
        "run.wait-resumed",
        "run.completed",
    ] {
        assert!(text.contains(&format!("event: {kind}\n")), "{kind}: {text}");
    }
}

async fn refusals_change_nothing(kind: DatabaseKind) {
    let s = server(kind).await;
    let (run, approval) = s.gated_turn().await;
    let path = format!("/v1/approvals/{approval}/complete");
    let resource = format!("tenant:{}", kindgi_api::projects::tenant_uuid("acme"));

    // Not a reviewer: a member's key.
    let (status, e) = s.call(&s.member, "GET", "/v1/approvals", None).await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    assert_eq!(e["error"]["details"]["action"], "read");
    assert_eq!(e["error"]["details"]["resource"], resource.as_str());
    assert_eq!(
        e["error"]["message"],
        "The caller isn't a reviewer: its token carries no reviewer role, and its user isn't registered as one (`kindgi reviewers register`). The approvals surface is reviewer-only."
    );
    let (status, e) = s
        .call(
            &s.member,
            "POST",
            &path,
            Some(json!({"decision": "approve"})),
        )
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"));
    assert_eq!(e["error"]["details"]["action"], "admin");

    // A key with no person reads, but can't decide.
    let (status, _) = s
        .call(&s.nobody, "GET", &format!("/v1/approvals/{approval}"), None)
        .await;
    assert_eq!(status, 200);
    let (status, e) = s
        .call(
            &s.nobody,
            "POST",
            &path,
            Some(json!({"decision": "approve"})),
        )
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    assert_eq!(
        e["error"]["message"],
        "Token has a reviewer role but no user identity — cannot resolve reviewer for decision."
    );

    // Unknown, malformed, another tenant's: not found, as the reference words it.
    let unknown = "00000000-0000-4000-8000-000000000000";
    for (key, id) in [
        (&s.admin, unknown),
        (&s.admin, "nope"),
        (&s.other, approval.as_str()),
    ] {
        for (method, p, body) in [
            ("GET", format!("/v1/approvals/{id}"), None),
            (
                "POST",
                format!("/v1/approvals/{id}/complete"),
                Some(json!({"decision": "approve"})),
            ),
        ] {
            let (status, e) = s.call(key, method, &p, body).await;
            assert_eq!((status, code(&e)), (404, "approval-not-found"), "{p}: {e}");
            assert_eq!(e["error"]["message"], format!("No approval with id {id}"));
            assert_eq!(e["error"]["details"]["approvalId"], id);
        }
    }
    // The static `reviewers` segment is the roster, never an approval id (reviewers_api.rs).
    let (status, e) = s.get("/v1/approvals/reviewers").await;
    assert_eq!(status, 200, "{e}");
    assert!(e["data"].is_array(), "{e}");
    let (_, theirs) = s.call(&s.other, "GET", "/v1/approvals", None).await;
    assert_eq!(theirs["data"], json!([]));

    // Bad bodies and a value.
    for (body, message) in [
        (
            json!({"decision": "ok"}),
            "`decision` must be one of: approve, reject, escalate, withdraw",
        ),
        (
            json!({}),
            "`decision` must be one of: approve, reject, escalate, withdraw",
        ),
        (
            json!({"decision": "approve", "rationale": 5}),
            "`rationale` must be a string when supplied",
        ),
    ] {
        let (status, e) = s.post(&path, body).await;
        assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
        assert_eq!(e["error"]["message"], message);
    }
    let (status, e) = s
        .post(&path, json!({"decision": "approve", "value": 1}))
        .await;
    assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tool call")
    );

    // Bad list queries.
    for q in [
        "status=open",
        "assignedTo=you",
        "decidedBy=someone",
        "order=sideways",
        "runId=x",
        "includeDescendants=true",
        "createdAfter=yesterday",
        "cursor=zzz",
        "requiredRole=boss",
    ] {
        let (status, e) = s.get(&format!("/v1/approvals?{q}")).await;
        assert_eq!((status, code(&e)), (400, "bad-input"), "{q}: {e}");
    }
    let (_, e) = s.get("/v1/approvals?status=open").await;
    assert_eq!(
        e["error"]["message"],
        "Unknown `status` value: open. Expected one or more of: pending, assigned, in_review, approved, rejected, escalated, expired, withdrawn"
    );
    let many: Vec<String> = (0..51).map(|i| format!("waitTokenId=t{i}")).collect();
    let (status, _) = s.get(&format!("/v1/approvals?{}", many.join("&"))).await;
    assert_eq!(status, 400);

    // Nothing of that changed the approval or ran the call.
    let (_, one) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(one["status"], "pending");
    assert!(one.get("decision").is_none());
    assert_eq!(s.writes(), 0);

    // The run ends (cancelled): its approval is withdrawn; deciding it now is a 409 and
    // records nothing.
    let (status, _) = s.post(&format!("/v1/runs/{run}/cancel"), json!({})).await;
    assert_eq!(status, 200);
    let (_, one) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(one["status"], "withdrawn", "{one}");
    assert_eq!(one["withdrawnBecause"], "run-cancelled");
    let (status, e) = s.post(&path, json!({"decision": "approve"})).await;
    assert_eq!(status, 409, "{e}");
    assert!(
        ["run-already-terminal", "approval-terminal"].contains(&code(&e)),
        "{e}"
    );
    let (_, after) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(after, one);
    assert!(after.get("decision").is_none(), "{after}");
    assert_eq!(s.writes(), 0);
}

/// Cases 52, 53, 56: escalate, withdraw, expire.
async fn escalated_withdrawn_and_expired(kind: DatabaseKind) {
    let s = server(kind).await;
    let (run, approval) = s.gated_turn().await;
    let path = |id: &str| format!("/v1/approvals/{id}/complete");
    let (status, done) = s
        .post(&path(&approval), json!({"decision": "escalate"}))
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["kind"], "escalated");
    assert_eq!(done["approval"]["status"], "escalated");
    assert_eq!(done["waitpointResolved"], false);
    let next = done["nextApproval"]["id"].as_str().unwrap().to_owned();
    assert_eq!(done["nextApproval"]["requiredRole"], "senior");
    assert_eq!(done["nextApproval"]["escalatedFrom"], approval.as_str());
    assert_eq!(
        done["nextApproval"]["waitTokenId"],
        done["approval"]["waitTokenId"]
    );
    let (status, e) = s
        .post(&path(&approval), json!({"decision": "approve"}))
        .await;
    assert_eq!((status, code(&e)), (409, "approval-terminal"), "{e}");
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    assert_eq!(got["status"], "suspended");
    assert_eq!(
        got["waitingFor"]["approvals"][0]["approvalId"],
        next.as_str()
    );

    let (status, done) = s.post(&path(&next), json!({"decision": "withdraw"})).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["approval"]["status"], "withdrawn");
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    assert_eq!(got["status"], "failed", "{got}");
    assert_eq!(got["failure"]["code"], "hitl-withdrawn", "{got}");
    assert_eq!(s.writes(), 0);

    // A 1 ms deadline per tier: standard → senior → admin, then expired; the turn fails.
    let (run, first) = s.turn_of(support::gated::HASTY_AGENT).await;
    let got = s.expire(&run).await;
    assert_eq!(got["status"], "failed", "{got}");
    assert_eq!(got["failure"]["code"], "hitl-cancelled", "{got}");
    let (_, page) = s.get(&format!("/v1/approvals?runId={run}&order=asc")).await;
    let statuses: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["escalated", "escalated", "expired"], "{page}");
    let last = page["data"][2]["id"].as_str().unwrap();
    assert_eq!(page["data"][2]["requiredRole"], "admin");
    for id in [first.as_str(), last] {
        let (status, e) = s.post(&path(id), json!({"decision": "approve"})).await;
        assert_eq!(status, 409, "{e}");
        assert!(
            ["approval-terminal", "run-already-terminal"].contains(&code(&e)),
            "{e}"
        );
    }
    assert_eq!(s.writes(), 0);
}

async fn rejected_calls_do_not_run(kind: DatabaseKind) {
    let s = server(kind).await;
    let (run, approval) = s.gated_turn().await;
    let (status, done) = s
        .post(
            &format!("/v1/approvals/{approval}/complete"),
            json!({"decision": "reject", "rationale": "not now"}),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["approval"]["status"], "rejected");
    assert_eq!(done["waitpointResolved"], true);
    assert_eq!(s.writes(), 0);
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    assert_eq!(got["status"], "completed", "{got}");
    // The model was told the call was rejected, and why.
    let output = got["output"].to_string();
    assert!(
        output.contains("rejected") && output.contains("not now"),
        "{got}"
    );
}

/// `runId` alone lists the run's own approvals; with `includeDescendants=true` also its
/// sub-flow runs'.
async fn a_runs_descendants_approvals(kind: DatabaseKind) {
    let s = server(kind).await;
    let (status, run) = s
        .post(
            "/v1/runs",
            json!({"flow": support::gated::OUTER_FLOW, "input": {"userMessage": "write it"}}),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["status"], "suspended", "{run}");
    let outer = run["id"].as_str().unwrap();
    let (_, own) = s.get(&format!("/v1/approvals?runId={outer}")).await;
    assert_eq!(own["data"], json!([]), "{own}");
    let (status, all) = s
        .get(&format!(
            "/v1/approvals?runId={outer}&includeDescendants=true"
        ))
        .await;
    assert_eq!(status, 200, "{all}");
    let rows = all["data"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{all}");
    let child = rows[0]["provenanceRef"]["runId"].as_str().unwrap();
    assert_ne!(child, outer);
    let (_, got) = s.get(&format!("/v1/runs/{child}")).await;
    assert_eq!(got["parentRunId"], outer, "{got}");
}

both_stores!(
    a_runs_descendants_approvals,
    listed_read_and_approved,
    refusals_change_nothing,
    rejected_calls_do_not_run,
    escalated_withdrawn_and_expired
);
