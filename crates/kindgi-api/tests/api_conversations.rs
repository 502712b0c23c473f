//! `/v1/conversations` end to end on SQLite and PostgreSQL: open (defaults, checks, the
//! agent check), list (filters, `openedAt desc`, paging), get (400 non-UUID, 404), close
//! (idempotent), unregister (501), messages (`sequence asc`, paging) after the runtime's
//! store API appended them, and the turn checks the runs route answers with.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use axum::http::StatusCode;
use kindgi_api::ApiError;
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_core::conversation::{Role, ToolCallRef};
use kindgi_store::DatabaseKind;
use kindgi_store::conversations::ConversationStore;
use serde_json::{Value, json};
use support::env;

const UNKNOWN: &str = "5f0c6a52-3b1e-4c7a-9d2e-8a41b7c9e001";

fn refused(r: &TestResponse, status: StatusCode, code: &str) -> Value {
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    assert_eq!(v["error"]["code"], code, "{v}");
    assert_eq!(r.header("x-request-id"), v["error"]["requestId"].as_str());
    v
}

async fn open_read_close(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json(
            "/v1/conversations",
            &json!({"agentId": "support", "agentVersion": "1.2.0", "metadata": {"channel": "web"}, "participantId": "p-7"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let c = r.json();
    let id = c["id"].as_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    assert_eq!(
        c["tenantId"],
        kindgi_api::routes::conversations::tenant_uuid("acme")
    );
    assert!(uuid::Uuid::parse_str(c["tenantId"].as_str().unwrap()).is_ok());
    assert_eq!(c["title"], "Untitled conversation");
    assert_eq!(c["status"], "open");
    assert_eq!(c["turnCount"], 0);
    assert_eq!(c["scope"], json!({}));
    assert_eq!(c["metadata"], json!({"channel": "web"}));
    assert_eq!(c["participantId"], "p-7");
    assert_eq!(
        c["projectId"],
        kindgi_api::projects::default_project_id("acme")
    );
    assert!(c["openedAt"].as_str().unwrap().ends_with('Z'));
    assert!(c.get("closedAt").is_none() && c.get("lastMessageAt").is_none());

    let r = e.acme.get(&format!("/v1/conversations/{id}")).await;
    assert_eq!(r.json(), c);
    let r = e.other.get(&format!("/v1/conversations/{id}")).await;
    let v = refused(&r, StatusCode::NOT_FOUND, "conversation-not-found");
    assert_eq!(v["error"]["details"]["conversationId"], id.as_str());
    let r = e.acme.get("/v1/conversations/not-a-uuid").await;
    let v = refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    assert_eq!(
        v["error"]["message"],
        "`conversationId` must be a conversation id (a UUID)"
    );
    refused(
        &e.acme.get(&format!("/v1/conversations/{UNKNOWN}")).await,
        StatusCode::NOT_FOUND,
        "conversation-not-found",
    );

    // The runtime's side: append messages, count the turn.
    let store = ConversationStore::new(e.state.db.clone());
    store
        .append_message(
            "acme",
            &id,
            Role::User,
            &json!("Where is my order?"),
            None,
            None,
        )
        .await
        .unwrap();
    let call = ToolCallRef {
        tool_id: "shop.lookup-order".into(),
        invocation_id: "inv-1".into(),
    };
    store
        .append_message(
            "acme",
            &id,
            Role::Tool,
            &json!({"status": "shipped"}),
            Some(&call),
            Some("tool"),
        )
        .await
        .unwrap();
    store
        .append_message(
            "acme",
            &id,
            Role::Assistant,
            &json!("It shipped."),
            None,
            None,
        )
        .await
        .unwrap();
    store.bump_turn("acme", &id).await.unwrap();
    let r = e
        .acme
        .get(&format!("/v1/conversations/{id}/messages"))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let page = r.json();
    assert_eq!(page["hasMore"], false);
    let data = page["data"].as_array().unwrap();
    assert_eq!(
        data.iter()
            .map(|m| m["sequence"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(data[0]["role"], "user");
    assert_eq!(data[0]["content"], "Where is my order?");
    assert_eq!(
        data[1]["toolCall"],
        json!({"toolId": "shop.lookup-order", "invocationId": "inv-1"})
    );
    assert_eq!(data[1]["actor"], "tool");
    assert!(data[0].get("toolCall").is_none());
    let first = e
        .acme
        .get(&format!("/v1/conversations/{id}/messages?limit=2"))
        .await
        .json();
    assert_eq!(first["data"].as_array().unwrap().len(), 2);
    let next = first["nextCursor"].as_str().unwrap();
    let rest = e
        .acme
        .get(&format!(
            "/v1/conversations/{id}/messages?limit=2&cursor={next}"
        ))
        .await
        .json();
    assert_eq!(rest["data"][0]["sequence"], 2);
    assert_eq!(rest["hasMore"], false);
    refused(
        &e.acme
            .get(&format!("/v1/conversations/{id}/messages?cursor=xyz"))
            .await,
        StatusCode::BAD_REQUEST,
        "bad-input",
    );
    refused(
        &e.acme
            .get(&format!("/v1/conversations/{UNKNOWN}/messages"))
            .await,
        StatusCode::NOT_FOUND,
        "conversation-not-found",
    );
    let got = e.acme.get(&format!("/v1/conversations/{id}")).await.json();
    assert_eq!(got["turnCount"], 1);
    assert!(got["lastMessageAt"].is_string());

    // Close: 200, idempotent, no timestamp bump; then a turn is refused 409.
    let r = e.acme.post(&format!("/v1/conversations/{id}/close")).await;
    assert_eq!(r.status, StatusCode::OK);
    let closed = r.json();
    assert_eq!(closed["status"], "closed");
    let again = e.acme.post(&format!("/v1/conversations/{id}/close")).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.json()["closedAt"], closed["closedAt"]);
    refused(
        &e.acme
            .post(&format!("/v1/conversations/{UNKNOWN}/close"))
            .await,
        StatusCode::NOT_FOUND,
        "conversation-not-found",
    );
    let error = ApiError::from(store.check_open("acme", &id).await.unwrap_err());
    assert_eq!(
        (error.status, error.code),
        (StatusCode::CONFLICT, "conversation-closed")
    );
    assert_eq!(error.message, format!("Conversation \"{id}\" is closed"));
    assert_eq!(error.details, Some(json!({"conversationId": id})));
    let error = ApiError::from(store.check_open("acme", UNKNOWN).await.unwrap_err());
    assert_eq!(
        (error.status, error.code),
        (StatusCode::NOT_FOUND, "conversation-not-found")
    );

    let r = e
        .acme
        .post(&format!("/v1/conversations/{id}/unregister"))
        .await;
    refused(
        &r,
        StatusCode::NOT_IMPLEMENTED,
        "conversation-unregister-unsupported",
    );
    let r = e.acme.post("/v1/conversations/nope/unregister").await;
    refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    e.db.cleanup().await.unwrap();
}

async fn bad_opens(kind: DatabaseKind) {
    let e = env(kind).await;
    let ok = json!({"agentId": "support", "agentVersion": "1.0.0"});
    let patch = |k: &str, v: Value| {
        let mut b = ok.clone();
        if v.is_null() {
            b.as_object_mut().unwrap().remove(k);
        } else {
            b[k] = v;
        }
        b
    };
    for (body, message) in [
        (
            patch("agentId", Value::Null),
            "`agentId` must be a non-empty string",
        ),
        (
            patch("agentId", json!("")),
            "`agentId` must be a non-empty string",
        ),
        (
            patch("agentVersion", json!(1)),
            "`agentVersion` must be a non-empty string",
        ),
        (
            patch("title", json!(3)),
            "`title` must be a string when supplied",
        ),
        (
            patch("scope", json!([1])),
            "`scope` must be an object when supplied",
        ),
        (
            patch("metadata", json!("m")),
            "`metadata` must be an object when supplied",
        ),
        (
            patch("participantId", json!(1)),
            "`participantId` must be a string when supplied",
        ),
        (
            patch("projectId", json!("p1")),
            "`projectId` must be a project id (a UUID) when supplied",
        ),
    ] {
        let r = e.acme.post_json("/v1/conversations", &body).await;
        let v = refused(&r, StatusCode::BAD_REQUEST, "bad-input");
        assert_eq!(v["error"]["message"], message, "{body}");
    }
    // An unknown project is 400 here, not 404.
    let r = e
        .acme
        .post_json("/v1/conversations", &patch("projectId", json!(UNKNOWN)))
        .await;
    refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    let r = e.acme.post_json("/v1/conversations", &json!("x")).await;
    refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    let r = e.anon.post_json("/v1/conversations", &ok).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = e
        .acme
        .post_json("/v1/conversations", &patch("title", json!("Billing")))
        .await;
    assert_eq!(r.json()["title"], "Billing");

    // With an agent check: only registered agent versions open.
    let mut state = e.state.clone();
    state.agent_exists = Some(Arc::new(|tenant, agent, version| {
        Box::pin(async move { Ok(tenant == "acme" && agent == "support" && version == "1.0.0") })
    }));
    let acme = TestClient::new(kindgi_api::router(state), Some(e.acme_key.clone()));
    assert_eq!(
        acme.post_json("/v1/conversations", &ok).await.status,
        StatusCode::CREATED
    );
    let r = acme
        .post_json("/v1/conversations", &patch("agentVersion", json!("2.0.0")))
        .await;
    let v = refused(&r, StatusCode::NOT_FOUND, "agent-not-found");
    assert_eq!(
        v["error"]["details"],
        json!({"agentId": "support", "version": "2.0.0"})
    );
    e.db.cleanup().await.unwrap();
}

async fn list_filters_and_pages(kind: DatabaseKind) {
    let e = env(kind).await;
    let mut ids = Vec::new();
    for agent in ["support", "sales", "support", "support"] {
        let r = e
            .acme
            .post_json(
                "/v1/conversations",
                &json!({"agentId": agent, "agentVersion": "1.0.0"}),
            )
            .await;
        ids.push(r.json()["id"].as_str().unwrap().to_owned());
    }
    e.other
        .post_json(
            "/v1/conversations",
            &json!({"agentId": "support", "agentVersion": "1.0.0"}),
        )
        .await;
    e.acme
        .post(&format!("/v1/conversations/{}/close", ids[0]))
        .await;
    let listed = |v: &Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = e.acme.get("/v1/conversations").await.json();
    assert_eq!(all["hasMore"], false);
    let all_ids = listed(&all);
    assert_eq!(all_ids.len(), 4);
    let opened: Vec<&str> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["openedAt"].as_str().unwrap())
        .collect();
    assert!(
        opened.windows(2).all(|w| w[0] >= w[1]),
        "openedAt desc: {opened:?}"
    );
    // Paging walks every conversation once.
    let mut seen = Vec::new();
    let mut uri = "/v1/conversations?limit=3".to_owned();
    loop {
        let page = e.acme.get(&uri).await.json();
        seen.extend(listed(&page));
        match page["nextCursor"].as_str() {
            Some(c) => uri = format!("/v1/conversations?limit=3&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, all_ids);
    let support = e
        .acme
        .get("/v1/conversations?agentId=support&status=open")
        .await
        .json();
    assert_eq!(listed(&support).len(), 2);
    let closed = e.acme.get("/v1/conversations?status=closed").await.json();
    assert_eq!(listed(&closed), [ids[0].clone()]);
    let project = kindgi_api::projects::default_project_id("acme");
    let in_project = e
        .acme
        .get(&format!(
            "/v1/conversations?scopeKind=project&scopeId={project}"
        ))
        .await
        .json();
    assert_eq!(listed(&in_project).len(), 4);
    let elsewhere = e
        .acme
        .get(&format!(
            "/v1/conversations?scopeKind=project&scopeId={UNKNOWN}"
        ))
        .await
        .json();
    assert_eq!(listed(&elsewhere).len(), 0);
    let mine = e.acme.get("/v1/conversations?openedBy=me").await.json();
    assert_eq!(
        mine,
        json!({"data": [], "hasMore": false, "openedBy": "me"})
    );
    for (q, code) in [
        ("status=done", "bad-input"),
        ("openedBy=you", "bad-input"),
        ("replays=all", "bad-input"),
        ("cursor=%21%21", "bad-input"),
        ("scopeKind=project&scopeId=nope", "scope-invalid"),
        ("scopeKind=tenant&scopeId=x", "scope-invalid"),
    ] {
        let r = e.acme.get(&format!("/v1/conversations?{q}")).await;
        refused(&r, StatusCode::BAD_REQUEST, code);
    }
    e.db.cleanup().await.unwrap();
}

both_stores!(open_read_close, bad_opens, list_filters_and_pages);
