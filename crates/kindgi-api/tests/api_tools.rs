//! `/v1/tools` end to end in process (tower `oneshot`), on SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::http::{Method, StatusCode};
use kindgi_store::DatabaseKind;
use serde_json::{Value, json};
use support::{body, env, manifest};

fn assert_envelope(r: &kindgi_api::testing::TestResponse, status: StatusCode, code: &str) -> Value {
    assert_eq!(
        r.status,
        status,
        "body: {}",
        String::from_utf8_lossy(&r.body)
    );
    let v = r.json();
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{v}"
    );
    let rid = v["error"]["requestId"].as_str().unwrap();
    assert_eq!(r.header("x-request-id"), Some(rid));
    assert_eq!(r.header("content-type"), Some("application/json"));
    v
}

async fn register_and_read(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json("/v1/tools", &body("acme.lookup-order", "1.0.0"))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    assert_eq!(r.json(), json!({"toolId": "acme.lookup-order"}));
    e.acme
        .post_json("/v1/tools", &body("acme.lookup-order", "1.2.0"))
        .await;

    let r = e
        .acme
        .get("/v1/tools/acme.lookup-order/versions/1.0.0")
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json(), manifest("acme.lookup-order", "1.0.0"));
    let r = e.acme.get("/v1/tools/acme.lookup-order").await;
    assert_eq!(r.json()["version"], "1.2.0");

    // Same (id, version) again → 409, whatever the manifest.
    let r = e
        .acme
        .post_json("/v1/tools", &body("acme.lookup-order", "1.0.0"))
        .await;
    let v = assert_envelope(&r, StatusCode::CONFLICT, "tool-already-registered");
    assert_eq!(
        v["error"]["message"],
        "Tool \"acme.lookup-order\" version \"1.0.0\" is already registered"
    );
    assert_eq!(
        v["error"]["details"],
        json!({"toolId": "acme.lookup-order", "version": "1.0.0"})
    );
    // A project that is not the tenant's, and one that is not a project id.
    let mut other_project = body("acme.lookup-order", "2.0.0");
    other_project["projectId"] = json!("6b1d54c2-0000-4c1e-9f0e-2d8a77c351b9");
    let r = e.acme.post_json("/v1/tools", &other_project).await;
    let v = assert_envelope(&r, StatusCode::NOT_FOUND, "project-not-found");
    assert_eq!(
        v["error"]["message"],
        "No project with id \"6b1d54c2-0000-4c1e-9f0e-2d8a77c351b9\" in this tenant"
    );
    other_project["projectId"] = json!("proj-2");
    let r = e.acme.post_json("/v1/tools", &other_project).await;
    let v = assert_envelope(&r, StatusCode::BAD_REQUEST, "bad-input");
    assert_eq!(
        v["error"]["message"],
        "`projectId` must be a project id (a UUID)"
    );

    // Missing tool and missing version.
    let r = e.acme.get("/v1/tools/acme.unknown").await;
    let v = assert_envelope(&r, StatusCode::NOT_FOUND, "tool-not-found");
    assert_eq!(
        v["error"]["message"],
        "No tool registered with id \"acme.unknown\""
    );
    assert_eq!(v["error"]["details"], json!({"toolId": "acme.unknown"}));
    let r = e
        .acme
        .get("/v1/tools/acme.lookup-order/versions/9.9.9")
        .await;
    let v = assert_envelope(&r, StatusCode::NOT_FOUND, "tool-not-found");
    assert_eq!(
        v["error"]["message"],
        "No tool \"acme.lookup-order\" at version \"9.9.9\""
    );
    assert_eq!(
        v["error"]["details"],
        json!({"toolId": "acme.lookup-order", "version": "9.9.9"})
    );
    e.db.cleanup().await.unwrap();
}

async fn declarative_http_tool(kind: DatabaseKind) {
    let e = env(kind).await;
    let mut b = body("github.get-issue", "1.0.0");
    b["spec"] = json!({
        "kind": "http", "method": "GET",
        "urlTemplate": "https://api.example.com/repos/{owner}/{repo}/issues/{number}",
        "authorization": {"kind": "bearer", "secretRef": {"envName": "production", "name": "github-token"}},
        "timeoutMs": 5000
    });
    b["input"] = json!({"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}, "number": {"type": "integer"}}, "required": ["owner", "repo", "number"]});
    let r = e.acme.post_json("/v1/tools", &b).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.json());
    let got = e
        .acme
        .get("/v1/tools/github.get-issue/versions/1.0.0")
        .await
        .json();
    assert_eq!(got["spec"], b["spec"]);
    // A placeholder in the host is refused.
    b["version"] = json!("1.0.1");
    b["spec"]["urlTemplate"] = json!("https://{host}/x");
    let r = e.acme.post_json("/v1/tools", &b).await;
    let v = assert_envelope(&r, StatusCode::BAD_REQUEST, "validation-failed");
    assert!(
        v["error"]["details"]["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["path"] == "/spec/urlTemplate"),
        "{v}"
    );
    assert_eq!(
        e.acme
            .get("/v1/tools/github.get-issue/versions/1.0.1")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    e.db.cleanup().await.unwrap();
}

async fn bad_bodies(kind: DatabaseKind) {
    let e = env(kind).await;
    let acme = &e.acme;
    let post_raw = |b: &'static [u8]| acme.send(Method::POST, "/v1/tools", Some(b.to_vec()), &[]);
    let v = assert_envelope(
        &post_raw(b"{not json").await,
        StatusCode::BAD_REQUEST,
        "bad-input",
    );
    assert_eq!(v["error"]["message"], "Request body must be valid JSON");
    let v = assert_envelope(&post_raw(b"").await, StatusCode::BAD_REQUEST, "bad-input");
    assert_eq!(v["error"]["message"], "Request body must be valid JSON");
    let v = assert_envelope(
        &post_raw(b"[1,2]").await,
        StatusCode::BAD_REQUEST,
        "bad-input",
    );
    assert_eq!(v["error"]["message"], "Request body must be an object");
    let mut no_project = body("acme.x", "1.0.0");
    no_project.as_object_mut().unwrap().remove("projectId");
    let v = assert_envelope(
        &e.acme.post_json("/v1/tools", &no_project).await,
        StatusCode::BAD_REQUEST,
        "bad-input",
    );
    assert_eq!(v["error"]["message"], "`projectId` is required");
    let mut blank_project = body("acme.x", "1.0.0");
    blank_project["projectId"] = json!("  ");
    assert_envelope(
        &e.acme.post_json("/v1/tools", &blank_project).await,
        StatusCode::BAD_REQUEST,
        "bad-input",
    );

    // Invalid manifests: every problem listed, nothing stored.
    let mut bad = body("acme.x", "1.0");
    bad["input"] = json!("not a schema");
    bad["extra"] = json!(true);
    let v = assert_envelope(
        &e.acme.post_json("/v1/tools", &bad).await,
        StatusCode::BAD_REQUEST,
        "validation-failed",
    );
    let issues = v["error"]["details"]["issues"].as_array().unwrap();
    assert!(issues.len() >= 2, "{v}");
    assert!(
        issues
            .iter()
            .all(|i| i["path"].is_string() && i["message"].is_string())
    );
    for (id, version) in [
        ("x'; DROP TABLE tools; --", "1.0.0"),
        ("../../etc/passwd", "1.0.0"),
        ("acme/evil", "1.0.0"),
        ("kindgi_remember", "1.0.0"),
        ("acme.x", "1.0.0-beta.1"),
        ("acme.x", "01.0.0"),
        ("", "1.0.0"),
    ] {
        let r = e.acme.post_json("/v1/tools", &body(id, version)).await;
        assert_envelope(&r, StatusCode::BAD_REQUEST, "validation-failed");
    }
    // Huge body (over the 10 MiB limit, streamed without a length) → 413.
    let mut huge = body("acme.big", "1.0.0");
    huge["description"] = json!("x".repeat(11 * 1024 * 1024));
    let r = e.acme.post_json("/v1/tools", &huge).await;
    let v = assert_envelope(&r, StatusCode::PAYLOAD_TOO_LARGE, "request-too-large");
    assert_eq!(v["error"]["details"]["maxBytes"], 10 * 1024 * 1024);
    // Nothing was stored.
    let list = e.acme.get("/v1/tools").await.json();
    assert_eq!(list["data"], json!([]), "{list}");
    e.db.cleanup().await.unwrap();
}

async fn bad_paths(kind: DatabaseKind) {
    let e = env(kind).await;
    e.acme
        .post_json("/v1/tools", &body("acme.x", "1.0.0"))
        .await;
    for path in [
        "/v1/tools/..",
        "/v1/tools/%2e%2e",
        "/v1/tools/a%2Fb",
        "/v1/tools/acme.x%2F..%2F..",
        "/v1/tools/%FF%FE",
        "/v1/tools/x'%20OR%201=1--",
        "/v1/tools/acme.x%00",
        "/v1/tools/acme.x/versions/1.0",
        "/v1/tools/acme.x/versions/..",
        "/v1/tools/acme.x/versions/1.0.0%2F..",
        "/v1/tools/acme.x/versions/1.0.0;DROP",
        "/v1/tools/%2e%2e/versions/1.0.0",
    ] {
        let r = e.acme.get(path).await;
        let v = assert_envelope(&r, StatusCode::BAD_REQUEST, "bad-input");
        assert!(
            !v["error"]["message"].as_str().unwrap().is_empty(),
            "{path}"
        );
    }
    for path in [
        "/v1/tools/..%2F../unregister",
        "/v1/tools/a%2Fb/versions/1.0.0/unregister",
    ] {
        let r = e.acme.post(path).await;
        assert!(r.status.is_client_error(), "{path}: {}", r.status);
    }
    // Unknown route, wrong method, trailing slash: all `route-not-found` (platform-api.md §1.1).
    assert_envelope(
        &e.acme.get("/v1/nope").await,
        StatusCode::NOT_FOUND,
        "route-not-found",
    );
    let r = e.acme.send(Method::DELETE, "/v1/tools", None, &[]).await;
    assert_envelope(&r, StatusCode::NOT_FOUND, "route-not-found");
    let r = e.acme.get("/v1/tools/?limit=2").await;
    assert_envelope(&r, StatusCode::NOT_FOUND, "route-not-found");
    assert_eq!(r.header("location"), None);
    // The tool is intact.
    assert_eq!(
        e.acme.get("/v1/tools/acme.x/versions/1.0.0").await.status,
        StatusCode::OK
    );
    e.db.cleanup().await.unwrap();
}

async fn auth_and_tenants(kind: DatabaseKind) {
    let e = env(kind).await;
    assert_eq!(e.anon.get("/health").await.json(), json!({"ok": true}));
    let v = assert_envelope(
        &e.anon.get("/v1/tools").await,
        StatusCode::UNAUTHORIZED,
        "auth-missing",
    );
    assert_eq!(v["error"]["message"], "Authorization header is required");
    let r = e
        .anon
        .send(
            Method::GET,
            "/v1/tools",
            None,
            &[("authorization", "Basic abc")],
        )
        .await;
    assert_envelope(&r, StatusCode::UNAUTHORIZED, "auth-missing");
    let r = e
        .anon
        .send(
            Method::GET,
            "/v1/tools",
            None,
            &[("authorization", "Bearer kgi_wrong")],
        )
        .await;
    assert_envelope(&r, StatusCode::UNAUTHORIZED, "auth-missing");
    let r = e
        .anon
        .send(
            Method::GET,
            "/v1/tools",
            None,
            &[("authorization", "Bearer ' OR '1'='1")],
        )
        .await;
    assert_envelope(&r, StatusCode::UNAUTHORIZED, "auth-missing");
    let r = e
        .anon
        .post_json("/v1/tools", &body("acme.x", "1.0.0"))
        .await;
    assert_envelope(&r, StatusCode::UNAUTHORIZED, "auth-missing");

    // Another tenant's tool is exactly as missing as a missing one.
    e.acme
        .post_json("/v1/tools", &body("acme.secret", "1.0.0"))
        .await;
    for path in [
        "/v1/tools/acme.secret",
        "/v1/tools/acme.secret/versions/1.0.0",
        "/v1/tools/acme.secret/versions",
    ] {
        let theirs = e.other.get(path).await;
        let missing = e.other.get(&path.replace("secret", "absent")).await;
        assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(theirs.status, missing.status);
        let strip = |mut v: Value| {
            v["error"].as_object_mut().unwrap().remove("requestId");
            v.to_string().replace("absent", "secret")
        };
        assert_eq!(strip(theirs.json()), strip(missing.json()), "{path}");
    }
    assert_eq!(
        e.other
            .post("/v1/tools/acme.secret/versions/1.0.0/unregister")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(e.other.get("/v1/tools").await.json()["data"], json!([]));
    // The other tenant may publish the same id on its own (in its own project).
    let mut theirs = body("acme.secret", "1.0.0");
    theirs["projectId"] = json!(kindgi_api::projects::default_project_id("other"));
    assert_eq!(
        e.other.post_json("/v1/tools", &theirs).await.status,
        StatusCode::CREATED
    );

    // An expired key.
    let expired = e.state.tokens.create("acme", Some(1)).await.unwrap().key;
    let auth = format!("Bearer {expired}");
    let r = e
        .anon
        .send(Method::GET, "/v1/tools", None, &[("authorization", &auth)])
        .await;
    assert_envelope(&r, StatusCode::UNAUTHORIZED, "auth-expired");

    // A revoked key stops working at once (nothing is cached).
    e.state.tokens.revoke(&e.acme_key_id).await.unwrap();
    assert_envelope(
        &e.acme.get("/v1/tools").await,
        StatusCode::UNAUTHORIZED,
        "auth-revoked",
    );
    e.db.cleanup().await.unwrap();
}

async fn unregister_and_reinstate(kind: DatabaseKind) {
    let e = env(kind).await;
    for v in ["1.0.0", "1.1.0"] {
        e.acme.post_json("/v1/tools", &body("acme.t", v)).await;
    }
    let r = e
        .acme
        .post("/v1/tools/acme.t/versions/1.1.0/unregister")
        .await;
    assert_eq!(
        r.json(),
        json!({"toolId": "acme.t", "version": "1.1.0", "unregistered": true})
    );
    assert_eq!(
        e.acme
            .post("/v1/tools/acme.t/versions/1.1.0/unregister")
            .await
            .status,
        StatusCode::OK,
        "idempotent"
    );
    assert_eq!(
        e.acme.get("/v1/tools/acme.t").await.json()["version"],
        "1.0.0"
    );
    // Still served by exact version.
    assert_eq!(
        e.acme.get("/v1/tools/acme.t/versions/1.1.0").await.status,
        StatusCode::OK
    );
    let versions = e.acme.get("/v1/tools/acme.t/versions").await.json();
    assert_eq!(versions["data"].as_array().unwrap().len(), 1);
    let all = e
        .acme
        .get("/v1/tools/acme.t/versions?includeTombstoned=true")
        .await
        .json();
    // Semver ascending; a tombstone carries `unregisteredAt` (RFC 3339).
    assert_eq!(all["data"][1]["version"], "1.1.0");
    let at = all["data"][1]["unregisteredAt"].as_str().unwrap();
    assert!(at.ends_with('Z') && at.contains('T'), "{all}");
    assert!(all["data"][0].get("unregisteredAt").is_none());
    e.acme
        .post("/v1/tools/acme.t/versions/1.0.0/unregister")
        .await;
    let v = assert_envelope(
        &e.acme.get("/v1/tools/acme.t").await,
        StatusCode::GONE,
        "tool-gone",
    );
    assert_eq!(v["error"]["details"], json!({"toolId": "acme.t"}));
    let r = e
        .acme
        .post("/v1/tools/acme.t/versions/1.1.0/reinstate")
        .await;
    assert_eq!(
        r.json(),
        json!({"toolId": "acme.t", "version": "1.1.0", "wasTombstoned": true})
    );
    let r = e
        .acme
        .post("/v1/tools/acme.t/versions/1.1.0/reinstate")
        .await;
    assert_eq!(r.json()["wasTombstoned"], false);
    assert_eq!(
        e.acme.get("/v1/tools/acme.t").await.json()["version"],
        "1.1.0"
    );
    let r = e
        .acme
        .post("/v1/tools/acme.t/versions/7.0.0/reinstate")
        .await;
    assert_envelope(&r, StatusCode::NOT_FOUND, "tool-not-found");
    let r = e
        .acme
        .post("/v1/tools/acme.none/versions/1.0.0/unregister")
        .await;
    assert_envelope(&r, StatusCode::NOT_FOUND, "tool-not-found");
    let r = e.acme.get("/v1/tools/acme.none/versions").await;
    assert_envelope(&r, StatusCode::NOT_FOUND, "tool-not-found");
    e.db.cleanup().await.unwrap();
}

async fn pagination(kind: DatabaseKind) {
    let e = env(kind).await;
    for i in 0..105 {
        let r = e
            .acme
            .post_json("/v1/tools", &body(&format!("acme.tool-{i:03}"), "1.0.0"))
            .await;
        assert_eq!(r.status, StatusCode::CREATED);
    }
    let acme = &e.acme;
    let page = |q: &'static str| async move { acme.get(&format!("/v1/tools{q}")).await.json() };
    let first = page("").await;
    assert_eq!(first["data"].as_array().unwrap().len(), 25);
    assert_eq!(first["hasMore"], true);
    assert_eq!(first["data"][0]["id"], "acme.tool-000");
    for q in ["?limit=abc", "?limit=0", "?limit=-3"] {
        assert_eq!(page(q).await["data"].as_array().unwrap().len(), 25, "{q}");
    }
    let capped = page("?limit=500").await;
    assert_eq!(capped["data"].as_array().unwrap().len(), 100);
    // Walk every page with the cursor.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let uri = match &cursor {
            Some(c) => format!("/v1/tools?limit=40&cursor={c}"),
            None => "/v1/tools?limit=40".to_owned(),
        };
        let p = e.acme.get(&uri).await.json();
        seen.extend(
            p["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].as_str().unwrap().to_owned()),
        );
        if p["hasMore"] == false {
            assert!(p.get("nextCursor").is_none());
            break;
        }
        cursor = Some(p["nextCursor"].as_str().unwrap().to_owned());
    }
    let expected: Vec<String> = (0..105).map(|i| format!("acme.tool-{i:03}")).collect();
    assert_eq!(seen, expected);
    let v = assert_envelope(
        &e.acme.get("/v1/tools?cursor=%%%").await,
        StatusCode::BAD_REQUEST,
        "bad-input",
    );
    assert_eq!(v["error"]["message"], "`cursor` is malformed");
    // `name` is an id prefix (platform-api.md §5).
    let filtered = page("?name=acme.tool-10").await;
    assert_eq!(filtered["data"].as_array().unwrap().len(), 5);
    let inner = page("?name=tool-10").await;
    assert_eq!(inner["data"], json!([]));
    e.db.cleanup().await.unwrap();
}

async fn request_ids(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .send(
            Method::GET,
            "/v1/tools/acme.none",
            None,
            &[("x-request-id", "abc")],
        )
        .await;
    assert_eq!(r.header("x-request-id"), Some("abc"));
    assert_eq!(r.json()["error"]["requestId"], "abc");
    let r = e.acme.get("/v1/tools").await;
    let id = r.header("x-request-id").unwrap();
    assert!(
        id.starts_with("req-")
            && id.len() == 40
            && id[4..].chars().all(|c| c.is_ascii_hexdigit() || c == '-'),
        "{id}"
    );
    // An unusable id (too long) is replaced.
    let long = "x".repeat(500);
    let r = e
        .acme
        .send(Method::GET, "/v1/tools", None, &[("x-request-id", &long)])
        .await;
    assert!(r.header("x-request-id").unwrap().starts_with("req-"));
    e.db.cleanup().await.unwrap();
}

async fn idempotency_keys(kind: DatabaseKind) {
    let e = env(kind).await;
    let b = body("acme.idem", "1.0.0").to_string().into_bytes();
    let post = |key: &'static str, b: Vec<u8>| {
        let acme = e.acme.clone();
        async move {
            acme.send(
                Method::POST,
                "/v1/tools",
                Some(b),
                &[("idempotency-key", key)],
            )
            .await
        }
    };
    let first = post("k-1", b.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert!(first.header("x-idempotent-replay").is_none());
    // The retry replays the first answer instead of a 409.
    let again = post("k-1", b.clone()).await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("x-idempotent-replay"), Some("true"));
    // Without the key the duplicate is refused as usual.
    let dup = e
        .acme
        .send(Method::POST, "/v1/tools", Some(b.clone()), &[])
        .await;
    assert_envelope(&dup, StatusCode::CONFLICT, "tool-already-registered");
    // Same key, other body.
    let other = body("acme.idem", "2.0.0").to_string().into_bytes();
    let r = post("k-1", other.clone()).await;
    assert_envelope(&r, StatusCode::CONFLICT, "idempotency-key-body-mismatch");
    assert_eq!(
        e.acme
            .get("/v1/tools/acme.idem/versions/2.0.0")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    // A failed request releases its key.
    let r = post("k-2", b"{broken".to_vec()).await;
    assert_envelope(&r, StatusCode::BAD_REQUEST, "bad-input");
    assert_eq!(post("k-2", other).await.status, StatusCode::CREATED);
    // Keys are per tenant.
    let mut their_body: Value = serde_json::from_slice(&b).unwrap();
    their_body["projectId"] = json!(kindgi_api::projects::default_project_id("other"));
    let theirs = e
        .other
        .send(
            Method::POST,
            "/v1/tools",
            Some(their_body.to_string().into_bytes()),
            &[("idempotency-key", "k-1")],
        )
        .await;
    assert_eq!(theirs.status, StatusCode::CREATED);
    assert!(theirs.header("x-idempotent-replay").is_none());
    // Unregister replays too.
    let u1 = e
        .acme
        .send(
            Method::POST,
            "/v1/tools/acme.idem/versions/1.0.0/unregister",
            None,
            &[("idempotency-key", "u-1")],
        )
        .await;
    let u2 = e
        .acme
        .send(
            Method::POST,
            "/v1/tools/acme.idem/versions/1.0.0/unregister",
            None,
            &[("idempotency-key", "u-1")],
        )
        .await;
    assert_eq!(u1.status, StatusCode::OK);
    assert_eq!(u2.body, u1.body);
    assert_eq!(u2.header("x-idempotent-replay"), Some("true"));
    // A bad key; GETs ignore the header; no bearer key → 401 as usual.
    let long = "k".repeat(300);
    let r = e
        .acme
        .send(
            Method::POST,
            "/v1/tools",
            Some(b.clone()),
            &[("idempotency-key", &long)],
        )
        .await;
    assert_envelope(&r, StatusCode::BAD_REQUEST, "bad-input");
    let r = e
        .acme
        .send(
            Method::GET,
            "/v1/tools/acme.idem",
            None,
            &[("idempotency-key", &long)],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = e
        .anon
        .send(
            Method::POST,
            "/v1/tools",
            Some(b),
            &[("idempotency-key", "k-1")],
        )
        .await;
    assert_envelope(&r, StatusCode::UNAUTHORIZED, "auth-missing");
    e.db.cleanup().await.unwrap();
}

both_stores!(
    idempotency_keys,
    register_and_read,
    declarative_http_tool,
    bad_bodies,
    bad_paths,
    auth_and_tenants,
    unregister_and_reinstate,
    pagination,
    request_ids
);

// The served OpenAPI document is walked route by route, every body checked against it, in
// crates/kindgi-host/tests/openapi_routes.rs.
