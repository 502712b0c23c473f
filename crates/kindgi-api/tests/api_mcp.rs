//! `/v1/mcp/endpoints` end to end on SQLite and PostgreSQL, against a REAL MCP server: the
//! official Python SDK's FastMCP (crates/kindgi-mcp/tests/servers/fastmcp_server.py) over
//! streamable HTTP and stdio. Cases 69–72 of platform-api.md §15, every validation reason,
//! the host-access flag, redaction, scopes, paging, and the tool registry side (tools appear
//! as `<endpointId>.<tool>` at 1.0.0, retire on unregister, come back on re-register).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod catalog;
#[path = "../../kindgi-mcp/tests/support/mod.rs"]
mod mcp_support;
mod support;

use axum::http::StatusCode;
use kindgi_api::testing::TestResponse;
use kindgi_store::DatabaseKind;
use kindgi_store::mcp_endpoints::{McpEndpointRecord, McpEndpointStore};
use serde_json::{Value, json};
use support::env;

fn refused(r: &TestResponse, status: StatusCode, code: &str) -> Value {
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    assert_eq!(v["error"]["code"], code, "{v}");
    assert_eq!(r.header("x-request-id"), v["error"]["requestId"].as_str());
    v
}

fn http_body(id: &str, url: &str) -> Value {
    json!({"endpointId": id, "name": "Fast", "transport": "streamable-http",
           "config": {"transport": "streamable-http", "url": url}, "scopeKind": "tenant"})
}

fn with(mut base: Value, patch: Value) -> Value {
    for (k, v) in patch.as_object().unwrap() {
        if v.is_null() {
            base.as_object_mut().unwrap().remove(k);
        } else {
            base[k] = v.clone();
        }
    }
    base
}

async fn every_validation_reason(kind: DatabaseKind) {
    let e = env(kind).await;
    let ok = http_body("inv", "http://127.0.0.1:9/mcp");
    let stdio = json!({"endpointId": "local", "name": "L", "transport": "stdio",
                       "config": {"transport": "stdio", "command": "node"}, "scopeKind": "tenant"});
    let header_auth = json!({"scheme": "header", "headers": [{"name": "X-Api-Key", "secretRef": {"envName": "dev", "name": "K"}}]});
    let cases: Vec<(Value, &str)> = vec![
        (with(ok.clone(), json!({"surprise": 1})), "unknown-field"),
        (
            with(ok.clone(), json!({"endpointId": ""})),
            "empty-endpoint-id",
        ),
        (
            with(ok.clone(), json!({"endpointId": "a.b"})),
            "dot-in-endpoint-id",
        ),
        (with(ok.clone(), json!({"name": null})), "empty-name"),
        (
            with(ok.clone(), json!({"transport": "ws"})),
            "unknown-transport",
        ),
        (with(ok.clone(), json!({"config": null})), "missing-config"),
        (
            with(
                ok.clone(),
                json!({"config": {"transport": "http-sse", "url": "http://h/sse"}}),
            ),
            "config-transport-mismatch",
        ),
        (
            with(
                ok.clone(),
                json!({"config": {"transport": "streamable-http"}}),
            ),
            "invalid-streamable-http-url",
        ),
        (
            with(
                ok.clone(),
                json!({"config": {"transport": "streamable-http", "url": "http://h", "headers": {"X": 1}}}),
            ),
            "invalid-streamable-http-headers",
        ),
        (
            json!({"endpointId": "s", "name": "S", "transport": "http-sse", "config": {"transport": "http-sse"}, "scopeKind": "tenant"}),
            "invalid-http-sse-url",
        ),
        (
            json!({"endpointId": "s", "name": "S", "transport": "http-sse", "config": {"transport": "http-sse", "url": "http://h", "sseUrl": 3}, "scopeKind": "tenant"}),
            "invalid-http-sse-sse-url",
        ),
        (
            json!({"endpointId": "s", "name": "S", "transport": "http-sse", "config": {"transport": "http-sse", "url": "http://h", "headers": []}, "scopeKind": "tenant"}),
            "invalid-http-sse-headers",
        ),
        (
            with(
                stdio.clone(),
                json!({"config": {"transport": "stdio", "command": ""}}),
            ),
            "invalid-stdio-command",
        ),
        (
            with(
                stdio.clone(),
                json!({"config": {"transport": "stdio", "command": "n", "args": [1]}}),
            ),
            "invalid-stdio-args",
        ),
        (
            with(
                stdio.clone(),
                json!({"config": {"transport": "stdio", "command": "n", "env": {"A": 1}}}),
            ),
            "invalid-stdio-env",
        ),
        (
            with(
                ok.clone(),
                json!({"config": {"transport": "streamable-http", "url": "http://h", "headers": {"X-Api-Key": "s"}}}),
            ),
            "credential-in-headers",
        ),
        (
            with(
                ok.clone(),
                json!({"secretRef": {"envName": "Dev", "name": "T"}}),
            ),
            "invalid-secret-ref",
        ),
        (
            with(
                ok.clone(),
                json!({"secretRef": {"envName": "dev", "name": "T"}, "auth": header_auth}),
            ),
            "auth-with-secret-ref",
        ),
        (
            with(stdio.clone(), json!({"auth": {"scheme": "basic"}})),
            "auth-on-stdio",
        ),
        (
            with(ok.clone(), json!({"auth": {"scheme": "kerberos"}})),
            "invalid-auth",
        ),
        (
            with(
                ok.clone(),
                json!({"auth": {"scheme": "basic", "username": "u", "secretRef": {"envName": "dev", "name": "P"}},
                                   "config": {"transport": "streamable-http", "url": "http://h", "headers": {"Authorization": "x"}}}),
            ),
            "auth-with-authorization-header",
        ),
        (
            with(
                ok.clone(),
                json!({"auth": header_auth, "config": {"transport": "streamable-http", "url": "http://h", "headers": {"x-api-key": "x"}}}),
            ),
            "auth-header-in-config",
        ),
        (
            with(ok.clone(), json!({"instructions": 5})),
            "invalid-instructions",
        ),
        (
            with(ok.clone(), json!({"metadata": "m"})),
            "invalid-metadata",
        ),
        (
            with(ok.clone(), json!({"sendTraceparent": "yes"})),
            "invalid-send-traceparent",
        ),
        (
            with(stdio.clone(), json!({"sendTraceparent": true})),
            "invalid-send-traceparent",
        ),
    ];
    for (body, reason) in cases {
        let r = e.acme.post_json("/v1/mcp/endpoints", &body).await;
        let v = refused(&r, StatusCode::BAD_REQUEST, "invalid-mcp-endpoint");
        assert_eq!(v["error"]["details"]["reason"], reason, "{body}: {v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
    }
    // The credential's value is never echoed.
    let r = e
        .acme
        .post_json(
            "/v1/mcp/endpoints",
            &with(ok.clone(), json!({"config": {"transport": "streamable-http", "url": "http://h", "headers": {"X-Auth-Token": "s3cr3t-value"}}})),
        )
        .await;
    assert!(!String::from_utf8_lossy(&r.body).contains("s3cr3t-value"));
    // Scope: required, and only this tenant's project.
    let r = e
        .acme
        .post_json(
            "/v1/mcp/endpoints",
            &with(ok.clone(), json!({"scopeKind": null})),
        )
        .await;
    refused(&r, StatusCode::BAD_REQUEST, "scope-invalid");
    let r = e
        .acme
        .post_json(
            "/v1/mcp/endpoints",
            &with(
                ok.clone(),
                json!({"scopeKind": "project", "scopeId": "9b6a3c1e-0000-4000-8000-000000000000"}),
            ),
        )
        .await;
    refused(&r, StatusCode::BAD_REQUEST, "scope-invalid");
    // Not JSON / not an object.
    let r = e.acme.post_json("/v1/mcp/endpoints", &json!([1])).await;
    refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    // Case 70: stdio on a server that refuses host access.
    let r = e.acme.post_json("/v1/mcp/endpoints", &stdio).await;
    let v = refused(&r, StatusCode::FORBIDDEN, "host-access-denied");
    assert_eq!(v["error"]["details"]["resource"], "mcp_endpoint:local");
    // Nothing was stored by any of it.
    let r = e.acme.get("/v1/mcp/endpoints").await;
    assert_eq!(r.json(), json!({"data": [], "hasMore": false}));
    let r = e.anon.get("/v1/mcp/endpoints").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    e.db.cleanup().await.unwrap();
}

async fn tool_ids_of(e: &support::Env) -> Vec<String> {
    let r = e.acme.get("/v1/tools?limit=100").await;
    let mut ids: Vec<String> = r.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

async fn a_real_server_becomes_a_tool_source(kind: DatabaseKind) {
    let Some(server) = mcp_support::fastmcp_http("streamable-http") else {
        return;
    };
    let e = env(kind).await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    // Case 71.
    let body = with(
        http_body("fast", &url),
        json!({"metadata": {"team": "ops"}, "instructions": "be nice"}),
    );
    let r = e.acme.post_json("/v1/mcp/endpoints", &body).await;
    assert_eq!(
        r.status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(r.json(), json!({"endpointId": "fast"}));
    let r = e.acme.post_json("/v1/mcp/endpoints", &body).await;
    let v = refused(&r, StatusCode::CONFLICT, "mcp-endpoint-already-registered");
    assert_eq!(v["error"]["details"]["endpointId"], "fast");
    let expected = [
        "fast.add",
        "fast.fail",
        "fast.order-status",
        "fast.peek",
        "fast.slow",
        "fast.weather",
    ];
    assert_eq!(tool_ids_of(&e).await, expected);
    let r = e.acme.get("/v1/tools/fast.add/versions/1.0.0").await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    let add = r.json();
    assert_eq!(add["version"], "1.0.0");
    assert_eq!(add["transport"], "mcp");
    assert_eq!(
        add["mcpEndpoint"],
        format!("mcp+http://127.0.0.1:{}/mcp", server.port)
    );
    assert_eq!(add["mutating"], true);
    assert_eq!(add["metadata"]["mcp"]["endpointId"], "fast");
    assert_eq!(add["metadata"]["mcp"]["toolName"], "add");
    assert_eq!(add["input"]["required"], json!(["a", "b"]));
    // The other tenant sees none of it.
    assert_eq!(
        e.other.get("/v1/mcp/endpoints/fast").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        e.other.get("/v1/tools/fast.add").await.status,
        StatusCode::NOT_FOUND
    );

    let r = e.acme.get("/v1/mcp/endpoints/fast").await;
    assert_eq!(r.status, StatusCode::OK);
    let got = r.json();
    assert_eq!(got["endpointId"], "fast");
    assert_eq!(
        got["config"],
        json!({"transport": "streamable-http", "url": url})
    );
    assert_eq!(got["metadata"], json!({"team": "ops"}));
    assert_eq!(got["instructions"], "be nice");
    assert_eq!(got["toolIds"].as_array().unwrap().len(), 6);
    assert!(
        got.get("scopeKind").is_none() && got.get("syncError").is_none(),
        "{got}"
    );

    // Case 72.
    let r = e.acme.post("/v1/mcp/endpoints/fast/unregister").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.json(),
        json!({"endpointId": "fast", "unregistered": true})
    );
    let r = e.acme.get("/v1/tools/fast.add").await;
    refused(&r, StatusCode::GONE, "tool-gone");
    let r = e.acme.get("/v1/mcp/endpoints/fast").await;
    refused(&r, StatusCode::NOT_FOUND, "mcp-endpoint-not-found");
    let r = e.acme.post("/v1/mcp/endpoints/fast/unregister").await;
    let v = refused(&r, StatusCode::NOT_FOUND, "mcp-endpoint-not-found");
    assert_eq!(v["error"]["details"]["endpointId"], "fast");
    // The legacy HTTP+SSE transport, against the same SDK's SSE app.
    let sse_server = mcp_support::fastmcp_http("sse").unwrap();
    let sse = json!({"endpointId": "fast-sse", "name": "Fast SSE", "transport": "http-sse",
                     "config": {"transport": "http-sse", "url": format!("http://127.0.0.1:{}/sse", sse_server.port)},
                     "scopeKind": "tenant"});
    let r = e.acme.post_json("/v1/mcp/endpoints", &sse).await;
    assert_eq!(r.status, StatusCode::CREATED);
    let r = e.acme.get("/v1/tools/fast-sse.weather").await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{:?}",
        e.acme.get("/v1/mcp/endpoints/fast-sse").await.json()
    );
    assert_eq!(
        r.json()["mcpEndpoint"],
        format!("mcp+sse://127.0.0.1:{}/sse", sse_server.port)
    );
    drop(sse_server);
    // Registering again brings the tools back.
    let r = e.acme.post_json("/v1/mcp/endpoints", &body).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(
        e.acme.get("/v1/tools/fast.add").await.status,
        StatusCode::OK
    );
    let ids = tool_ids_of(&e).await;
    assert_eq!(
        ids.iter().filter(|i| i.starts_with("fast.")).count(),
        expected.len()
    );
    assert!(expected.iter().all(|x| ids.iter().any(|i| i == x)));
    e.db.cleanup().await.unwrap();
}

async fn a_failed_sync_registers_nothing_and_says_why(kind: DatabaseKind) {
    let e = env(kind).await;
    // Nothing listens on a port we bound and closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = e
        .acme
        .post_json(
            "/v1/mcp/endpoints",
            &http_body("gone", &format!("http://127.0.0.1:{port}/mcp")),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let got = e.acme.get("/v1/mcp/endpoints/gone").await.json();
    assert_eq!(got["toolIds"], json!([]));
    assert!(
        got["syncError"].as_str().is_some_and(|s| !s.is_empty()),
        "{got}"
    );
    // A secret it can't resolve: also registered, no tools.
    let body = with(
        http_body("secret", "http://127.0.0.1:9/mcp"),
        json!({"secretRef": {"envName": "dev", "name": "TOKEN"}}),
    );
    assert_eq!(
        e.acme.post_json("/v1/mcp/endpoints", &body).await.status,
        StatusCode::CREATED
    );
    let got = e.acme.get("/v1/mcp/endpoints/secret").await.json();
    assert_eq!(got["secretRef"], json!({"envName": "dev", "name": "TOKEN"}));
    assert!(
        got["syncError"].as_str().unwrap().contains("secret"),
        "{got}"
    );
    assert!(tool_ids_of(&e).await.is_empty());
    e.db.cleanup().await.unwrap();
}

async fn stdio_when_allowed(kind: DatabaseKind) {
    let Some(endpoint) = mcp_support::fastmcp_stdio() else {
        return;
    };
    let kindgi_mcp::Endpoint::Stdio { command, args } =
        kindgi_mcp::Endpoint::parse(&endpoint).unwrap()
    else {
        panic!("not stdio: {endpoint}");
    };
    let mut e = env(kind).await;
    e.state.allow_stdio_mcp = true;
    let app = kindgi_api::router(e.state.clone());
    let acme = kindgi_api::testing::TestClient::new(app, Some(e.acme_key.clone()));
    let body = json!({"endpointId": "py_local", "name": "Local", "transport": "stdio",
                      "config": {"transport": "stdio", "command": command, "args": args}, "scopeKind": "tenant"});
    let r = acme.post_json("/v1/mcp/endpoints", &body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    // `py_local` is not a kebab-case segment: its tools are filed under `py-local`.
    let r = acme.get("/v1/tools/py-local.weather").await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    assert!(
        r.json()["mcpEndpoint"]
            .as_str()
            .unwrap()
            .starts_with("mcp+stdio://")
    );
    e.db.cleanup().await.unwrap();
}

async fn list_filters_pages_and_redacts(kind: DatabaseKind) {
    let e = env(kind).await;
    let project = kindgi_api::projects::default_project_id("acme");
    for id in ["a1", "a2", "a3"] {
        let r = e
            .acme
            .post_json(
                "/v1/mcp/endpoints",
                &http_body(id, "http://127.0.0.1:9/mcp"),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED);
    }
    let sse = json!({"endpointId": "p1", "name": "P", "transport": "http-sse",
                     "config": {"transport": "http-sse", "url": "http://127.0.0.1:9/sse"},
                     "scopeKind": "project", "scopeId": project});
    assert_eq!(
        e.acme.post_json("/v1/mcp/endpoints", &sse).await.status,
        StatusCode::CREATED
    );
    let ids = |v: &Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["endpointId"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = e.acme.get("/v1/mcp/endpoints?limit=2").await.json();
    assert_eq!(ids(&first), ["a1", "a2"]);
    assert_eq!(first["hasMore"], true);
    let next = first["nextCursor"].as_str().unwrap();
    let second = e
        .acme
        .get(&format!("/v1/mcp/endpoints?limit=2&cursor={next}"))
        .await
        .json();
    assert_eq!(ids(&second), ["a3", "p1"]);
    assert_eq!(second["hasMore"], false);
    assert!(second.get("nextCursor").is_none());
    let r = e.acme.get("/v1/mcp/endpoints?cursor=!!").await;
    refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    let sse_only = e
        .acme
        .get("/v1/mcp/endpoints?transport=http-sse")
        .await
        .json();
    assert_eq!(ids(&sse_only), ["p1"]);
    let r = e.acme.get("/v1/mcp/endpoints?transport=ws").await;
    refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    let literal = e
        .acme
        .get(&format!(
            "/v1/mcp/endpoints?scopeKind=project&scopeId={project}&inherit=false"
        ))
        .await
        .json();
    assert_eq!(ids(&literal), ["p1"]);
    let inherited = e
        .acme
        .get(&format!(
            "/v1/mcp/endpoints?scopeKind=project&scopeId={project}"
        ))
        .await
        .json();
    assert_eq!(ids(&inherited), ["a1", "a2", "a3", "p1"]);
    let tenant_only = e
        .acme
        .get("/v1/mcp/endpoints?scopeKind=tenant")
        .await
        .json();
    assert_eq!(ids(&tenant_only), ["a1", "a2", "a3"]);
    let r = e
        .acme
        .get("/v1/mcp/endpoints?scopeKind=tenant&scopeId=x")
        .await;
    refused(&r, StatusCode::BAD_REQUEST, "scope-invalid");
    let r = e.acme.get("/v1/mcp/endpoints?inherit=maybe").await;
    refused(&r, StatusCode::BAD_REQUEST, "scope-invalid");

    // An endpoint registered before the credential-header rule reads back redacted.
    let store = McpEndpointStore::new(e.state.db.clone());
    store
        .register(&McpEndpointRecord {
            tenant_id: "acme".into(),
            endpoint_id: "legacy".into(),
            name: "Legacy".into(),
            transport: "streamable-http".into(),
            body: json!({"endpointId": "legacy", "name": "Legacy", "transport": "streamable-http",
                         "config": {"transport": "streamable-http", "url": "http://h/mcp",
                                    "headers": {"Authorization": "Bearer hunter2", "X-Team": "ops"}}}),
            scope_kind: "tenant".into(),
            scope_id: String::new(),
            tool_ids: vec![],
            sync_error: None,
            created_at: 0,
            unregistered_at: None,
        })
        .await
        .unwrap();
    let r = e.acme.get("/v1/mcp/endpoints/legacy").await;
    assert_eq!(
        r.json()["config"]["headers"],
        json!({"Authorization": "[redacted]", "X-Team": "ops"})
    );
    assert!(
        !String::from_utf8_lossy(&e.acme.get("/v1/mcp/endpoints").await.body).contains("hunter2")
    );
    e.db.cleanup().await.unwrap();
}

both_stores!(
    every_validation_reason,
    a_real_server_becomes_a_tool_source,
    a_failed_sync_registers_nothing_and_says_why,
    stdio_when_allowed,
    list_filters_pages_and_redacts,
    resources_and_prompts_proxy,
);

async fn resources_and_prompts_proxy(kind: DatabaseKind) {
    let Some(server) = catalog::catalog_server() else {
        return;
    };
    let e = env(kind).await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    assert_eq!(
        e.acme
            .post_json("/v1/mcp/endpoints", &http_body("cat", &url))
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(
        e.acme.get("/v1/tools/cat.ping").await.status,
        StatusCode::OK
    );

    let r = e.acme.get("/v1/mcp/endpoints/cat/resources").await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    let data = r.json()["data"].as_array().unwrap().clone();
    let readme = data.iter().find(|d| d["uri"] == "docs://readme").unwrap();
    assert_eq!(
        readme,
        &json!({"uri": "docs://readme", "name": "readme", "description": "The readme", "mimeType": "text/markdown"})
    );

    let r = e
        .acme
        .get("/v1/mcp/endpoints/cat/resources/docs%3A%2F%2Freadme")
        .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    assert_eq!(
        r.json(),
        json!({"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Catalog\nHello."})
    );
    let r = e
        .acme
        .get("/v1/mcp/endpoints/cat/resources/docs%3A%2F%2Fbroken")
        .await;
    let v = refused(&r, StatusCode::BAD_GATEWAY, "mcp-resource-read-failed");
    assert_eq!(v["error"]["details"]["endpointId"], "cat");
    let r = e
        .acme
        .get("/v1/mcp/endpoints/cat/resources/docs%3A%2F%2Fnope")
        .await;
    refused(&r, StatusCode::NOT_FOUND, "mcp-resource-not-found");

    let r = e.acme.get("/v1/mcp/endpoints/cat/prompts").await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    assert_eq!(
        r.json(),
        json!({"data": [{"name": "greet", "description": "Greet someone", "arguments": [{"name": "name", "required": true}]}]})
    );
    let r = e
        .acme
        .post_json(
            "/v1/mcp/endpoints/cat/prompts/greet",
            &json!({"arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    assert_eq!(
        r.json(),
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to Ada."}}]})
    );
    let r = e
        .acme
        .post_json(
            "/v1/mcp/endpoints/cat/prompts/greet",
            &json!({"arguments": {"name": 1}}),
        )
        .await;
    refused(&r, StatusCode::BAD_REQUEST, "bad-input");
    let r = e
        .acme
        .post_json("/v1/mcp/endpoints/cat/prompts/greet", &json!({}))
        .await;
    refused(&r, StatusCode::BAD_GATEWAY, "mcp-prompt-get-failed");
    let r = e
        .acme
        .post_json("/v1/mcp/endpoints/cat/prompts/nope", &json!({}))
        .await;
    refused(&r, StatusCode::NOT_FOUND, "mcp-prompt-not-found");
    let r = e.acme.get("/v1/mcp/endpoints/missing/prompts").await;
    refused(&r, StatusCode::NOT_FOUND, "mcp-endpoint-not-found");
    // The server going away is a 502, not a hang.
    drop(server);
    let r = e.acme.get("/v1/mcp/endpoints/cat/resources").await;
    refused(&r, StatusCode::BAD_GATEWAY, "mcp-resource-read-failed");
    let r = e.acme.get("/v1/mcp/endpoints/cat/prompts").await;
    refused(&r, StatusCode::BAD_GATEWAY, "mcp-prompt-get-failed");
    e.db.cleanup().await.unwrap();
}
