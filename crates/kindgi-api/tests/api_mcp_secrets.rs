//! An MCP endpoint that authenticates with a secret reference (platform-api.md §6:
//! `secretRef {envName, name}`, sent as `Authorization: Bearer <value>`), end to end against a
//! REAL MCP server (the official Python SDK's FastMCP, `tests/servers/bearer_mcp.py`) that
//! refuses any other token, over streamable HTTP and the legacy SSE transport: without the
//! secret the sync fails naming it and `kindgi secrets set`; with it the sync registers the
//! server's tools and the proxy routes work; the token is in no API answer, not even when the
//! server echoes a wrong one or quotes the right one in an error after connect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-mcp/tests/support/mod.rs"]
mod mcp_support;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};

const TOKEN: &str = "mcp-bearer-Zq7vX2pL9wK4";
const WRONG: &str = "wrong-bearer-Hs8dQ3mN";

/// The bearer-guarded server; killed on drop.
struct Guarded {
    child: Child,
    port: u16,
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn guarded(mode: &str) -> Option<Guarded> {
    let py = mcp_support::python()?;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/bearer_mcp.py");
    let mut child = Command::new(py)
        .arg(script)
        .arg(mode)
        .env("MCP_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(port) = line.strip_prefix("PORT ") {
                let _ = tx.send(port.trim().parse::<u16>().unwrap());
            }
        }
    });
    let port = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the bearer MCP server did not report its port");
    Some(Guarded { child, port })
}

/// Every answer a test saw, to check none carries the token.
#[derive(Default)]
struct Answers(Vec<String>);

impl Answers {
    fn keep(&mut self, r: &TestResponse) -> Value {
        self.0.push(String::from_utf8_lossy(&r.body).into_owned());
        r.json()
    }

    fn assert_clean(&self) {
        for a in &self.0 {
            assert!(
                !a.contains(TOKEN) && !a.contains(WRONG),
                "an answer carries a token: {a}"
            );
        }
    }
}

fn endpoint(id: &str, transport: &str, url: &str, secret: &str) -> Value {
    json!({"endpointId": id, "name": id, "transport": transport,
           "config": {"transport": transport, "url": url},
           "secretRef": {"envName": "local", "name": secret},
           "scopeKind": "tenant"})
}

async fn set_secret(c: &TestClient, name: &str, value: &str, seen: &mut Answers) {
    let body = json!({"scope": {"kind": "tenant"}, "envName": "local", "name": name,
                      "value": value, "writeMode": "create-new"});
    let r = c.post_json("/v1/secrets", &body).await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
    seen.keep(&r);
}

async fn a_secret_ref_endpoint_syncs_with_its_bearer(kind: DatabaseKind) {
    let (Some(http), Some(sse)) = (guarded("streamable-http"), guarded("sse")) else {
        return;
    };
    let db = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let (seal, _) = SealKey::generate();
    let app = router(
        state
            .clone()
            .with_values(ValuesConfig::new("local", Some(seal))),
    );
    let acme = TestClient::new(app, Some(key));
    let mut seen = Answers::default();
    let http_url = format!("http://127.0.0.1:{}/mcp", http.port);
    let sse_url = format!("http://127.0.0.1:{}/sse", sse.port);

    // No secret yet: registered, no tools, and the reason names the secret and the command.
    let r = acme
        .post_json(
            "/v1/mcp/endpoints",
            &endpoint("guarded", "streamable-http", &http_url, "MCP_TOKEN"),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
    let got = seen.keep(&acme.get("/v1/mcp/endpoints/guarded").await);
    let why = got["syncError"].as_str().unwrap_or_default();
    assert!(
        why.contains("\"MCP_TOKEN\"")
            && why.contains("kindgi secrets set MCP_TOKEN --env=local --scope=tenant --from-stdin"),
        "{got}"
    );
    assert_eq!(got["toolIds"], json!([]), "{got}");
    let r = acme.get("/v1/mcp/endpoints/guarded/prompts").await;
    assert_eq!(r.status.as_u16(), 502, "{}", seen.keep(&r));
    assert!(
        seen.keep(&r)["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("MCP_TOKEN")
    );

    // With the secret: the same registration syncs, over both HTTP transports.
    set_secret(&acme, "MCP_TOKEN", TOKEN, &mut seen).await;
    let r = acme.post("/v1/mcp/endpoints/guarded/unregister").await;
    assert_eq!(r.status.as_u16(), 200, "{}", seen.keep(&r));
    let r = acme
        .post_json(
            "/v1/mcp/endpoints",
            &endpoint("guarded", "streamable-http", &http_url, "MCP_TOKEN"),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
    let got = seen.keep(&acme.get("/v1/mcp/endpoints/guarded").await);
    assert_eq!(got["toolIds"], json!(["guarded.add"]), "{got}");
    assert!(got.get("syncError").is_none(), "{got}");
    assert_eq!(
        got["secretRef"],
        json!({"envName": "local", "name": "MCP_TOKEN"})
    );
    let r = acme
        .post_json(
            "/v1/mcp/endpoints",
            &endpoint("guarded-sse", "http-sse", &sse_url, "MCP_TOKEN"),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
    let got = seen.keep(&acme.get("/v1/mcp/endpoints/guarded-sse").await);
    assert_eq!(got["toolIds"], json!(["guarded-sse.add"]), "{got}");

    // The proxy routes connect with it too.
    let r = acme.get("/v1/mcp/endpoints/guarded/prompts").await;
    assert_eq!(r.status.as_u16(), 200, "{}", seen.keep(&r));
    assert_eq!(seen.keep(&r)["data"][0]["name"], "greet");
    let r = acme.get("/v1/mcp/endpoints/guarded-sse/prompts").await;
    assert_eq!(r.status.as_u16(), 200, "{}", seen.keep(&r));
    // An error the server answers after connect, quoting the token, is masked too.
    for id in ["guarded", "guarded-sse"] {
        let r = acme
            .post_json(&format!("/v1/mcp/endpoints/{id}/prompts/leak"), &json!({}))
            .await;
        let got = seen.keep(&r);
        assert_eq!(r.status.as_u16(), 502, "{got}");
        let why = got["error"]["message"].as_str().unwrap_or_default();
        assert!(why.contains("upstream refused token ***"), "{got}");
    }

    // A wrong token the server echoes back in its 401 is masked in the sync error.
    set_secret(&acme, "WRONG_TOKEN", WRONG, &mut seen).await;
    let r = acme
        .post_json(
            "/v1/mcp/endpoints",
            &endpoint("wrong", "streamable-http", &http_url, "WRONG_TOKEN"),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
    let got = seen.keep(&acme.get("/v1/mcp/endpoints/wrong").await);
    assert!(got["syncError"].is_string(), "{got}");
    assert_eq!(got["toolIds"], json!([]), "{got}");
    let r = acme
        .post_json(
            "/v1/mcp/endpoints",
            &endpoint("wrong-sse", "http-sse", &sse_url, "WRONG_TOKEN"),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
    let got = seen.keep(&acme.get("/v1/mcp/endpoints/wrong-sse").await);
    assert!(got["syncError"].is_string(), "{got}");
    eprintln!("wrong-sse syncError: {}", got["syncError"]);

    // The list, the tool and boot re-sync.
    seen.keep(&acme.get("/v1/mcp/endpoints").await);
    let r = acme.get("/v1/tools/guarded.add/versions/1.0.0").await;
    assert_eq!(r.status.as_u16(), 200, "{}", seen.keep(&r));
    seen.assert_clean();
    // The stored records hold the reference, never the value.
    let rows = kindgi_store::mcp_endpoints::McpEndpointStore::new(db.db.clone())
        .all_active()
        .await
        .unwrap();
    for row in rows {
        let text = row.body.to_string() + row.sync_error.as_deref().unwrap_or_default();
        assert!(!text.contains(TOKEN) && !text.contains(WRONG), "{text}");
    }
    db.cleanup().await.unwrap();
}

both_stores!(a_secret_ref_endpoint_syncs_with_its_bearer);
