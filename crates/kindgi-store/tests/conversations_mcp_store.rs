//! The conversation and MCP-endpoint stores on SQLite and PostgreSQL: sequences, closing,
//! turn checks, paging, tenant isolation, and the register / unregister / re-register cycle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::conversation::{
    ConversationError, ConversationQuery, Message, NewConversation, Role, ToolCall, ToolCallRef,
    TurnOpening, UNTITLED,
};
use kindgi_core::ports::ConversationLog;
use kindgi_store::DatabaseKind;
use kindgi_store::conversations::ConversationStore;
use kindgi_store::mcp_endpoints::{
    McpEndpointFilter, McpEndpointRecord, McpEndpointStore, RegisterOutcome,
};
use kindgi_store::testing::TestDatabase;
use serde_json::json;

fn new_conversation(agent: &str) -> NewConversation {
    NewConversation {
        agent_id: agent.into(),
        agent_version: "1.0.0".into(),
        title: "Support".into(),
        scope: json!({"tenantId": "acme"}),
        metadata: Some(json!({"channel": "web"})),
        ..Default::default()
    }
}

async fn conversations(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ConversationStore::new(t.db.clone());
    let c = store
        .open("acme", new_conversation("support"))
        .await
        .unwrap();
    assert_eq!(c.turn_count, 0);
    assert_eq!(store.get("acme", &c.id).await.unwrap(), Some(c.clone()));
    assert_eq!(
        store.get("other", &c.id).await.unwrap(),
        None,
        "tenant-scoped"
    );

    // Concurrent appends get distinct, gap-free sequences.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (store, id) = (store.clone(), c.id.clone());
        tasks.push(tokio::spawn(async move {
            store
                .append_message("acme", &id, Role::User, &json!(format!("m{i}")), None, None)
                .await
                .unwrap()
                .sequence
        }));
    }
    let mut seqs = Vec::new();
    for t in tasks {
        seqs.push(t.await.unwrap());
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (0..8).collect::<Vec<i64>>());
    let call = ToolCallRef {
        tool_id: "acme.lookup".into(),
        invocation_id: "inv-1".into(),
    };
    let m = store
        .append_message(
            "acme",
            &c.id,
            Role::Tool,
            &json!({"ok": true}),
            Some(&call),
            Some("tool:acme.lookup"),
        )
        .await
        .unwrap();
    assert_eq!(m.sequence, 8);
    let history = store.history("acme", &c.id).await.unwrap();
    assert_eq!(history.len(), 9);
    assert_eq!(history[8].tool_call.as_ref(), Some(&call));
    assert_eq!(history[8].content, json!({"ok": true}));
    let page = store.messages("acme", &c.id, 3, 2).await.unwrap();
    assert_eq!(page.iter().map(|m| m.sequence).collect::<Vec<_>>(), [3, 4]);
    assert!(matches!(
        store.history("other", &c.id).await,
        Err(ConversationError::NotFound { .. })
    ));
    assert!(matches!(
        store
            .append_message("other", &c.id, Role::User, &json!("x"), None, None)
            .await,
        Err(ConversationError::NotFound { .. })
    ));

    assert_eq!(store.bump_turn("acme", &c.id).await.unwrap(), 1);
    assert_eq!(store.bump_turn("acme", &c.id).await.unwrap(), 2);
    let got = store.check_open("acme", &c.id).await.unwrap();
    assert_eq!(got.turn_count, 2);
    assert!(got.last_message_at.is_some());

    let closed = store.close("acme", &c.id).await.unwrap();
    let at = closed.closed_at.unwrap();
    let again = store.close("acme", &c.id).await.unwrap();
    assert_eq!(
        again.closed_at,
        Some(at),
        "closing twice keeps the first time"
    );
    let e = store.check_open("acme", &c.id).await.unwrap_err();
    assert_eq!((e.code(), e.status()), ("conversation-closed", 409));
    let e = store
        .check_open("acme", "00000000-0000-4000-8000-000000000000")
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), ("conversation-not-found", 404));
    assert_eq!(
        e.details(),
        Some(json!({"conversationId": "00000000-0000-4000-8000-000000000000"}))
    );

    // Listing: newest first, filters, keyset paging.
    let mut opened = vec![c.id.clone()];
    for agent in ["support", "sales", "support"] {
        opened.push(
            store
                .open("acme", new_conversation(agent))
                .await
                .unwrap()
                .id,
        );
    }
    store
        .open("other", new_conversation("support"))
        .await
        .unwrap();
    let all = store
        .list(
            "acme",
            &ConversationQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    assert!(
        all.windows(2)
            .all(|w| (w[0].opened_at, &w[0].id) > (w[1].opened_at, &w[1].id))
    );
    let support = store
        .list(
            "acme",
            &ConversationQuery {
                agent_id: Some("support".into()),
                open: Some(true),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(support.len(), 2);
    let first = store
        .list(
            "acme",
            &ConversationQuery {
                limit: 2,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let last = first.last().unwrap();
    let rest = store
        .list(
            "acme",
            &ConversationQuery {
                before: Some((last.opened_at, last.id.clone())),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(first.len() + rest.len(), 4);
    assert!(rest.iter().all(|r| !first.iter().any(|f| f.id == r.id)));
    let closed_only = store
        .list(
            "acme",
            &ConversationQuery {
                open: Some(false),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(closed_only.len(), 1);
    assert_eq!(closed_only[0].id, c.id);
    t.cleanup().await.unwrap();
}

fn endpoint(tenant: &str, id: &str, transport: &str, scope: (&str, &str)) -> McpEndpointRecord {
    McpEndpointRecord {
        tenant_id: tenant.into(),
        endpoint_id: id.into(),
        name: format!("{id} server"),
        transport: transport.into(),
        body: json!({"endpointId": id, "name": format!("{id} server"), "transport": transport,
                     "config": {"transport": transport, "url": "http://127.0.0.1:1/mcp"}}),
        scope_kind: scope.0.into(),
        scope_id: scope.1.into(),
        tool_ids: vec![],
        sync_error: None,
        created_at: 0,
        unregistered_at: None,
    }
}

async fn mcp_endpoints(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = McpEndpointStore::new(t.db.clone());
    let inv = endpoint("acme", "inventory", "streamable-http", ("tenant", ""));
    assert_eq!(
        store.register(&inv).await.unwrap(),
        RegisterOutcome::Registered
    );
    assert_eq!(
        store.register(&inv).await.unwrap(),
        RegisterOutcome::AlreadyRegistered
    );
    // Another tenant may use the same id.
    assert_eq!(
        store
            .register(&endpoint("other", "inventory", "stdio", ("tenant", "")))
            .await
            .unwrap(),
        RegisterOutcome::Registered
    );
    let tools = vec!["inventory.stock-level".to_owned()];
    assert!(
        store
            .record_sync("acme", "inventory", &tools, None)
            .await
            .unwrap()
    );
    let got = store.get("acme", "inventory").await.unwrap().unwrap();
    assert_eq!(got.tool_ids, tools);
    assert_eq!(got.body, inv.body);
    assert!(got.created_at > 0);

    let gone = store
        .unregister("acme", "inventory")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        gone.tool_ids, tools,
        "unregister hands back the tools to retire"
    );
    assert!(store.get("acme", "inventory").await.unwrap().is_none());
    assert!(
        store
            .unregister("acme", "inventory")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        !store
            .record_sync("acme", "inventory", &tools, None)
            .await
            .unwrap()
    );
    // Registering again replaces the tombstone, with a clean sync state.
    assert_eq!(
        store.register(&inv).await.unwrap(),
        RegisterOutcome::Registered
    );
    let back = store.get("acme", "inventory").await.unwrap().unwrap();
    assert!(back.tool_ids.is_empty());

    let project = "7f3c2a9e-0000-4000-8000-000000000001";
    store
        .register(&endpoint("acme", "files", "stdio", ("project", project)))
        .await
        .unwrap();
    store
        .register(&endpoint("acme", "search", "http-sse", ("tenant", "")))
        .await
        .unwrap();
    let page = |filter: McpEndpointFilter| {
        let store = store.clone();
        async move {
            store
                .list("acme", &filter)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.endpoint_id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        page(McpEndpointFilter {
            limit: 10,
            ..Default::default()
        })
        .await,
        ["files", "inventory", "search"]
    );
    assert_eq!(
        page(McpEndpointFilter {
            transport: Some("stdio".into()),
            limit: 10,
            ..Default::default()
        })
        .await,
        ["files"]
    );
    assert_eq!(
        page(McpEndpointFilter {
            scopes: vec![("project".into(), project.into())],
            limit: 10,
            ..Default::default()
        })
        .await,
        ["files"]
    );
    let first = store
        .list(
            "acme",
            &McpEndpointFilter {
                limit: 1,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let after = first[0].endpoint_id.clone();
    assert_eq!(
        page(McpEndpointFilter {
            after: Some(after),
            limit: 10,
            ..Default::default()
        })
        .await,
        ["inventory", "search"]
    );
    assert_eq!(store.all_active().await.unwrap().len(), 4);
    t.cleanup().await.unwrap();
}

fn opening(agent: &str) -> TurnOpening {
    TurnOpening {
        agent_id: agent.into(),
        agent_version: "1.0.0".into(),
        project_id: None,
        user_message: "hello".into(),
    }
}

/// What a turn does, through core's `ConversationLog` port: opens its conversation (once,
/// whatever the retries), appends its messages together, reads the newest as history.
async fn turns(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ConversationStore::new(t.db.clone());
    let log: &dyn ConversationLog = &store;
    let id = uuid::Uuid::new_v4().to_string();
    let id = id.as_str();
    log.open("acme", id, opening("support")).await.unwrap();
    // Opening again (a recovered turn) changes nothing.
    log.open("acme", id, opening("sales")).await.unwrap();
    let c = store.require("acme", id).await.unwrap();
    assert_eq!((c.agent_id.as_str(), c.turn_count), ("support", 1));
    assert_eq!(c.title, UNTITLED);
    assert!(c.last_message_at.is_some());
    assert_eq!(log.turn_count("acme", id).await.unwrap(), Some(1));
    assert_eq!(log.turn_count("other", id).await.unwrap(), None);
    let kept = store.history("acme", id).await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (kept[0].role, &kept[0].content),
        (Role::User, &json!("hello"))
    );
    assert_eq!(store.get("other", id).await.unwrap(), None);

    let asked = ToolCall {
        id: "c1".into(),
        name: "acme.lookup".into(),
        arguments: json!({}),
    };
    let turn = [
        Message::assistant("", vec![asked.clone()]),
        Message::tool("c1", "shipped"),
        Message::assistant("It shipped.", Vec::new()),
    ];
    log.append("acme", id, &turn).await.unwrap();
    // Appends after it continue the sequence.
    let m = store
        .append_message("acme", id, Role::User, &json!("thanks"), None, None)
        .await
        .unwrap();
    assert_eq!(m.sequence, 4);
    let all = store.history("acme", id).await.unwrap();
    assert_eq!(
        all.iter().map(|m| m.sequence).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    // The model's call is kept as `{text, toolCalls}`; its result names the tool it answers.
    assert_eq!(all[1].role, Role::Assistant);
    assert_eq!(all[1].content, json!({"text": "", "toolCalls": [asked]}));
    let call = ToolCallRef {
        tool_id: "acme.lookup".into(),
        invocation_id: "c1".into(),
    };
    assert_eq!(all[2].tool_call.as_ref(), Some(&call));
    assert_eq!(all[2].content, json!("shipped"));
    let recent = store.recent_messages("acme", id, 2).await.unwrap();
    assert_eq!(
        recent.iter().map(|m| m.content.clone()).collect::<Vec<_>>(),
        [json!("It shipped."), json!("thanks")]
    );
    // Read back as the model reads it.
    assert_eq!(
        log.history("acme", id, 4).await.unwrap(),
        [
            turn[0].clone(),
            turn[1].clone(),
            turn[2].clone(),
            Message::user("thanks")
        ]
    );
    // Another tenant's turn finds no conversation: it appends nothing and reads no history.
    log.append("other", id, &turn).await.unwrap();
    assert_eq!(log.history("other", id, 2).await.unwrap(), []);
    assert!(matches!(
        store.recent_messages("other", id, 2).await,
        Err(ConversationError::NotFound { .. })
    ));
    assert_eq!(
        store.history("acme", id).await.unwrap().len(),
        5,
        "nothing changed"
    );
    t.cleanup().await.unwrap();
}

mod sqlite {
    #[tokio::test]
    async fn turns() {
        super::turns(kindgi_store::DatabaseKind::Sqlite).await
    }
    #[tokio::test]
    async fn conversations() {
        super::conversations(kindgi_store::DatabaseKind::Sqlite).await
    }
    #[tokio::test]
    async fn mcp_endpoints() {
        super::mcp_endpoints(kindgi_store::DatabaseKind::Sqlite).await
    }
}

mod postgres {
    #[tokio::test]
    async fn turns() {
        super::turns(kindgi_store::DatabaseKind::Postgres).await
    }
    #[tokio::test]
    async fn conversations() {
        super::conversations(kindgi_store::DatabaseKind::Postgres).await
    }
    #[tokio::test]
    async fn mcp_endpoints() {
        super::mcp_endpoints(kindgi_store::DatabaseKind::Postgres).await
    }
}
