//! `POST /v1/guardrails` with Kindgi's additions (docs/guardrails.md): `stage` and
//! `scope.tools` are checked (`400 validation-failed` naming the field and what to do),
//! stored, and served back; the rest of the body is still judged by the reference schema.
//! On SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::http::StatusCode;
use kindgi_store::DatabaseKind;
use serde_json::{Value, json};
use support::openapi::{check, check_error};
use support::{acme_project, env};

fn guardrail(id: &str, check: &str, extra: Value) -> Value {
    let mut g = json!({
        "projectId": acme_project(),
        "id": id,
        "kind": "zero-llm",
        "check": check,
        "config": {"tools": ["acme.refund"]},
        "action": {"on-violation": "halt"},
    });
    if let (Some(m), Value::Object(extra)) = (g.as_object_mut(), extra) {
        m.extend(extra);
    }
    g
}

async fn stage_and_tools(kind: DatabaseKind) {
    let e = env(kind).await;
    let body = guardrail(
        "acme.no-refunds",
        "never-call-tool",
        json!({"stage": "before-tool", "scope": {"tools": ["acme.refund"], "when": "always"}}),
    );
    let r = e.acme.post_json("/v1/guardrails", &body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.json());
    let r = e.acme.get("/v1/guardrails/acme.no-refunds").await;
    let mut v = r.json();
    assert_eq!(v["stage"], "before-tool", "{v}");
    assert_eq!(v["scope"]["tools"], json!(["acme.refund"]), "{v}");
    // Without the additions, the rest is the reference's `Guardrail`.
    v.as_object_mut().unwrap().remove("stage");
    v["scope"].as_object_mut().unwrap().remove("tools");
    check("Guardrail", &v);

    let refused = [
        (
            json!({"stage": "before-call"}),
            "/stage",
            "must be \"after-turn\" (the default) or \"before-tool\"",
        ),
        (
            json!({"scope": {"tools": ["acme.refund"]}}),
            "/scope/tools",
            "applies to before-tool guardrails only; set \"stage\": \"before-tool\" or remove it",
        ),
        (
            json!({"stage": "before-tool", "scope": {"tools": []}}),
            "/scope/tools",
            "must be a non-empty list of tool ids",
        ),
    ];
    for (i, (extra, path, message)) in refused.into_iter().enumerate() {
        let body = guardrail(&format!("acme.bad-{i}"), "never-call-tool", extra);
        let r = e.acme.post_json("/v1/guardrails", &body).await;
        let v = r.json();
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["error"]["code"], "validation-failed", "{v}");
        check_error(&v);
        let issues = v["error"]["details"]["issues"].as_array().unwrap();
        assert!(
            issues
                .iter()
                .any(|x| x["path"] == path && x["message"] == message),
            "{v}"
        );
        // Nothing was stored.
        let r = e.acme.get(&format!("/v1/guardrails/acme.bad-{i}")).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }
    // A check of the final answer has nothing to judge before a call.
    let mut cite = guardrail("acme.cite", "must-cite", json!({"stage": "before-tool"}));
    cite["config"] = json!({});
    let r = e.acme.post_json("/v1/guardrails", &cite).await;
    let v = r.json();
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"]["details"]["issues"][0]["path"], "/check", "{v}");
    // An after-turn guardrail may say so.
    let body = guardrail(
        "acme.after",
        "never-call-tool",
        json!({"stage": "after-turn"}),
    );
    let r = e.acme.post_json("/v1/guardrails", &body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.json());
    e.db.cleanup().await.unwrap();
}

#[tokio::test]
async fn stage_and_scope_tools_on_sqlite() {
    stage_and_tools(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn stage_and_scope_tools_on_postgres() {
    stage_and_tools(DatabaseKind::Postgres).await;
}
