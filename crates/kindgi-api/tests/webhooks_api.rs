//! Webhook triggers end to end over real HTTP on loopback (platform-api.md §9, black-box
//! cases 89–99): the admin routes (`/v1/webhooks`), and every step of the receiver
//! (`/v1/hooks/{tenantId}/{webhookId}`) with real HMACs computed here — hex and base64
//! HMAC-SHA256, Standard Webhooks with several signatures and a stale timestamp — the
//! WooCommerce ping, dedupe, the body and rate limits, the client refusal limit, the
//! per-trigger record cap (`suppressedRefusals`), pause/unregister, and the run a delivery
//! starts (`startedBy: webhook`, its input the body or `config.input`), and the auto-pause
//! after 5 failed starts; the registration checks (a model provider's key as
//! `hmacSecretName`, a key limited to a project), the owner re-checked at each fire (a revoked
//! key → a `refused` fire, counted), and the run idempotency key `fire:<fireId>`. SQLite and
//! PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kindgi_api::routes::hooks_state::WebhookSettings;
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use reqwest::StatusCode;
use serde_json::{Value, json};

const PUBLIC: &str = "https://hooks.example.test";

struct Server {
    db: TestDatabase,
    url: String,
    key: String,
    tenant_id: String,
    http: reqwest::Client,
}

fn echo_tool() -> Tool {
    Tool::define("shop.echo")
        .version("1.0.0")
        .description("echoes its input")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(
            |input: Value, _ctx| async move { Ok::<Value, HandlerError>(json!({"echo": input})) },
        )
        .build()
        .unwrap()
}

fn flow(id: &str, schema: Option<Value>) -> String {
    let mut f = json!({
        "id": id, "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "shop.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    });
    if let Some(s) = schema {
        f["metadata"] = json!({"inputSchema": s});
    }
    f.to_string()
}

async fn server(kind: DatabaseKind, tenant_limit: u64) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    rt.tools().insert_tool(echo_tool());
    rt.flows().insert_json(&flow("shop.order", None)).unwrap();
    rt.flows()
        .insert_json(&flow(
            "shop.strict",
            Some(json!({"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]})),
        ))
        .unwrap();
    let (seal, _) = SealKey::generate();
    let state = AppState::new(db.db.clone())
        .with_runtime(rt)
        .with_values(ValuesConfig::new("local", Some(seal)))
        .with_webhook_settings(WebhookSettings {
            public_url: Some(PUBLIC.into()),
            tenant_receives_per_minute: tenant_limit,
        });
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = router(state);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Server {
        db,
        url,
        key,
        tenant_id: kindgi_api::projects::tenant_uuid("acme"),
        http: reqwest::Client::new(),
    }
}

impl Server {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call_as(&self.key, method, path, body).await
    }

    async fn call_as(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut r = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }

    async fn register(&self, body: Value) -> Value {
        let (s, t) = self.post("/v1/webhooks", body).await;
        assert_eq!(s, StatusCode::CREATED, "{t}");
        t
    }

    fn hook_path(&self, t: &Value) -> String {
        format!(
            "/v1/hooks/{}/{}",
            self.tenant_id,
            t["webhookId"].as_str().unwrap()
        )
    }

    /// A delivery: no bearer.
    async fn deliver(
        &self,
        path: &str,
        headers: &[(&str, String)],
        body: &[u8],
    ) -> reqwest::Response {
        let mut r = self
            .http
            .post(format!("{}{path}", self.url))
            .body(body.to_vec());
        for (k, v) in headers {
            r = r.header(*k, v);
        }
        r.send().await.unwrap()
    }

    async fn secret(&self, name: &str, value: &str) {
        let (s, b) = self
            .post(
                "/v1/secrets?envName=local",
                json!({"scope": {"kind": "tenant"}, "envName": "local", "name": name, "value": value, "writeMode": "create-new"}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{b}");
    }

    /// The input run `run_id` started with: its `run.started` journal entry's (bounded).
    async fn run_input(&self, run_id: &str) -> Value {
        for _ in 0..400 {
            let (_, page) = self
                .get(&format!("/v1/runs/{run_id}/journal?limit=1"))
                .await;
            let first = &page["data"][0];
            if first["kind"] == "run.started" {
                return first["payload"]["input"].clone();
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("run {run_id} did not start");
    }

    /// The trigger's fires once none is `pending` (bounded).
    async fn settled_fires(&self, trigger_id: &str, at_least: usize) -> Vec<Value> {
        for _ in 0..400 {
            let (_, page) = self
                .get(&format!("/v1/webhooks/{trigger_id}/fires?limit=100"))
                .await;
            let fires = page["data"].as_array().cloned().unwrap_or_default();
            if fires.len() >= at_least && fires.iter().all(|f| f["outcome"] != "pending") {
                return fires;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("the fires of {trigger_id} did not settle");
    }
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key), data)
        .as_ref()
        .to_vec()
}

async fn body_of(r: reqwest::Response) -> (StatusCode, Value) {
    let s = r.status();
    (s, r.json().await.unwrap_or(Value::Null))
}

async fn admin_routes(kind: DatabaseKind) {
    let s = server(kind, 12_000).await;
    // 89: the required fields; standard-webhooks with a delivery id header.
    let (st, e) = s
        .post(
            "/v1/webhooks",
            json!({"flowId": "shop.order", "flowVersion": "1.0.0"}),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(e["error"]["code"], "bad-input");
    assert_eq!(e["error"]["message"], "`hmacSecretName` is required");
    let (st, e) = s
        .post(
            "/v1/webhooks",
            json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "S",
                   "signature": {"kind": "standard-webhooks"}, "deliveryIdHeader": "X-Id"}),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{e}");
    let (st, e) = s
        .post(
            "/v1/webhooks",
            json!({"flowId": "shop.nope", "flowVersion": "1.0.0", "hmacSecretName": "S"}),
        )
        .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("flow-not-found"))
    );

    // 90: the defaults; the secret's scope is where it was found.
    s.secret("SHOP_SECRET", "s3cret").await;
    let t = s
        .register(json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "SHOP_SECRET"}))
        .await;
    assert_eq!(
        t["signature"],
        json!({"kind": "hmac-sha256", "encoding": "hex", "header": "X-Kindgi-Signature"})
    );
    assert_eq!(
        (
            t["bodyLimitBytes"].as_u64(),
            t["rateLimitPerMinute"].as_u64()
        ),
        (Some(262_144), Some(600))
    );
    assert_eq!(t["status"], "active");
    assert_eq!(t["label"], Value::Null);
    assert_eq!(t["lastFiredAt"], Value::Null);
    assert_eq!(t["hmacSecretScope"], json!({"kind": "tenant"}));
    assert_eq!(t["owner"]["kind"], "user");
    assert!(t.get("signingSecret").is_none());
    assert_eq!(
        t["receiveUrl"],
        format!(
            "{PUBLIC}/v1/hooks/{}/{}",
            s.tenant_id,
            t["webhookId"].as_str().unwrap()
        )
    );
    let unknown = s
        .register(json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "NOBODY_HAS_IT"}))
        .await;
    assert_eq!(unknown["hmacSecretScope"], Value::Null);

    // 91: a generated secret, shown once; a repeat with the Idempotency-Key learns only that
    // it happened; a name the project has is refused.
    let body = json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "GEN", "generateSecret": true});
    let send = || {
        s.http
            .post(format!("{}/v1/webhooks", s.url))
            .bearer_auth(&s.key)
            .header("Idempotency-Key", "reg-1")
            .json(&body)
            .send()
    };
    let (st, g) = body_of(send().await.unwrap()).await;
    assert_eq!(st, StatusCode::CREATED, "{g}");
    let secret = g["signingSecret"].as_str().unwrap();
    assert_eq!(secret.len(), 40);
    assert!(secret.bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(g["hmacSecretScope"]["kind"], "project");
    let (st, again) = body_of(send().await.unwrap()).await;
    assert_eq!(st, StatusCode::CONFLICT);
    assert_eq!(again["error"]["code"], "idempotency-key-replay-withheld");
    assert_eq!(again["error"]["details"]["status"], 201);
    assert!(!again.to_string().contains(secret));
    let (st, e) = s.post("/v1/webhooks", body.clone()).await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("secret-write-conflict"))
    );
    let sw = s
        .register(
            json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "SW",
                         "generateSecret": true, "signature": {"kind": "standard-webhooks"}}),
        )
        .await;
    let w = sw["signingSecret"].as_str().unwrap();
    assert_eq!(
        STANDARD
            .decode(w.strip_prefix("whsec_").unwrap())
            .unwrap()
            .len(),
        32
    );
    // The secret is never read back.
    let id = g["triggerId"].as_str().unwrap();
    let (_, read) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert!(read.get("signingSecret").is_none());
    assert_eq!(read["triggerId"], id);

    // List, PATCH, pause/resume, unregister.
    let (_, page) = s.get("/v1/webhooks?limit=2").await;
    assert_eq!(page["data"].as_array().unwrap().len(), 2);
    assert_eq!(page["hasMore"], true);
    let (_, rest) = s
        .get(&format!(
            "/v1/webhooks?cursor={}",
            page["nextCursor"].as_str().unwrap()
        ))
        .await;
    assert_eq!(rest["data"].as_array().unwrap().len(), 2);
    let (st, p) = s
        .call(reqwest::Method::PATCH, &format!("/v1/webhooks/{id}"),
              Some(json!({"label": "orders", "rateLimitPerMinute": 5, "config": {"input": {"fixed": 1}}})))
        .await;
    assert_eq!(st, StatusCode::OK, "{p}");
    assert_eq!(
        (p["label"].as_str(), p["rateLimitPerMinute"].as_u64()),
        (Some("orders"), Some(5))
    );
    assert_eq!(p["input"], json!({"fixed": 1}));
    let (_, p) = s
        .call(
            reqwest::Method::PATCH,
            &format!("/v1/webhooks/{id}"),
            Some(json!({"label": null, "rateLimitPerMinute": null})),
        )
        .await;
    assert_eq!(
        (p["label"].clone(), p["rateLimitPerMinute"].as_u64()),
        (Value::Null, Some(600))
    );
    let (st, e) = s
        .call(
            reqwest::Method::PATCH,
            &format!("/v1/webhooks/{id}"),
            Some(json!({"flowVersion": "9.9.9"})),
        )
        .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("flow-not-found"))
    );
    // A lifecycle POST with no body and no Content-Type.
    let bare = |action: &str| {
        s.http
            .post(format!("{}/v1/webhooks/{id}/{action}", s.url))
            .bearer_auth(&s.key)
            .send()
    };
    let (st, p) = body_of(bare("pause").await.unwrap()).await;
    assert_eq!((st, p["status"].as_str()), (StatusCode::OK, Some("paused")));
    let (st, e) = body_of(bare("pause").await.unwrap()).await;
    assert_eq!(st, StatusCode::CONFLICT);
    assert_eq!(e["error"]["code"], "trigger-already-in-state");
    assert_eq!(e["error"]["message"], "The trigger is already paused");
    let (_, p) = body_of(bare("resume").await.unwrap()).await;
    assert_eq!(p["status"], "active");
    let (st, o) = s.post(&format!("/v1/webhooks/{id}/owner"), json!({})).await;
    assert_eq!(
        (st, o["owner"]["kind"].as_str()),
        (StatusCode::OK, Some("user"))
    );
    let (st, u) = body_of(bare("unregister").await.unwrap()).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(u, json!({"triggerId": id, "unregistered": true}));
    let (st, e) = body_of(bare("unregister").await.unwrap()).await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("trigger-not-found"))
    );
    let (st, _) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, e) = s.get("/v1/webhooks/not-a-uuid").await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("trigger-not-found"))
    );
    s.db.cleanup().await.unwrap();
}

/// A model provider's key is its own: a trigger's secret can't become one
/// (`409 provider-key-in-use`), and a provider's key can't sign a trigger
/// (`400 provider-key-refused`, on register and on update).
async fn provider_keys(kind: DatabaseKind) {
    let s = server(kind, 100).await;
    s.secret("SHOP_SECRET", "s3cret-shop-value").await;
    s.secret("PROVIDER_KEY", "sk-provider-value").await;
    let t = s
        .register(json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "SHOP_SECRET"}))
        .await;
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let provider = |id: &str, secret: &str| {
        json!({"metadata": {"id": id, "region": "unspecified",
                            "models": [{"name": "m", "contextWindow": 1000, "features": [],
                                        "cost": {"promptUsdPer1kTokens": 0, "completionUsdPer1kTokens": 0}}]},
               "adapter_id": "@kindgi/adapter-model-openai-compat",
               "secret_ref": {"envName": "local", "name": secret}})
    };
    let (status, e) = s
        .post("/v1/providers", provider("shop-llm", "SHOP_SECRET"))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    assert_eq!(e["error"]["code"], "provider-key-in-use", "{e}");
    assert_eq!(
        e["error"]["details"]["usedBy"],
        json!([{"kind": "webhook-trigger", "id": id}])
    );
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("webhook trigger \"{id}\""))),
        "{e}"
    );
    let (status, e) = s
        .post("/v1/providers", provider("own-llm", "PROVIDER_KEY"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{e}");

    for name in ["PROVIDER_KEY", "OPENAI_API_KEY"] {
        let (status, e) = s
            .post(
                "/v1/webhooks",
                json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": name}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
        assert_eq!(e["error"]["code"], "provider-key-refused", "{e}");
        assert_eq!(e["error"]["details"]["secret"], name, "{e}");
    }
    let (status, e) = s
        .call(
            reqwest::Method::PATCH,
            &format!("/v1/webhooks/{id}"),
            Some(json!({"hmacSecretName": "PROVIDER_KEY"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(
        e["error"]["details"],
        json!({"secret": "PROVIDER_KEY", "providerId": "own-llm"})
    );
    let (_, read) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(read["hmacSecretName"], "SHOP_SECRET", "nothing changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_provider_keys() {
    provider_keys(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_provider_keys() {
    provider_keys(DatabaseKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_admin_routes() {
    admin_routes(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_admin_routes() {
    admin_routes(DatabaseKind::Postgres).await;
}

/// The 401 body without its request id: the same for every refusal.
fn refusal(v: &Value) -> Value {
    let mut v = v.clone();
    v["error"].as_object_mut().unwrap().remove("requestId");
    v
}

async fn receiver(kind: DatabaseKind) {
    let s = server(kind, 12_000).await;
    // A WooCommerce-style trigger: base64 HMAC, a delivery id header.
    let woo = s
        .register(json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "WOO",
                         "generateSecret": true, "deliveryIdHeader": "X-WC-Webhook-Delivery-ID",
                         "signature": {"kind": "hmac-sha256", "encoding": "base64", "header": "X-WC-Webhook-Signature"}}))
        .await;
    let secret = woo["signingSecret"].as_str().unwrap().to_owned();
    let path = s.hook_path(&woo);
    let woo_id = woo["triggerId"].as_str().unwrap().to_owned();
    let sign = |body: &[u8]| STANDARD.encode(hmac(secret.as_bytes(), body));

    // 92: the ping, to any ids.
    let (st, b) = body_of(s.deliver("/v1/hooks/x/y", &[], b"webhook_id=42").await).await;
    assert_eq!((st, b), (StatusCode::OK, json!({"received": "ping"})));

    // 93: unknown ids, missing and wrong signatures: one body.
    let unknown = format!("/v1/hooks/{}/{}", s.tenant_id, uuid::Uuid::new_v4());
    let order = br#"{"id":1001,"status":"processing"}"#;
    let (st, a) = body_of(
        s.deliver(&unknown, &[("x-wc-webhook-signature", sign(order))], order)
            .await,
    )
    .await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    assert_eq!(a["error"]["code"], "webhook-refused");
    assert_eq!(
        a["error"]["message"],
        "This request doesn't prove its sender"
    );
    let (_, b) = body_of(s.deliver(&path, &[], order).await).await;
    let (_, c) = body_of(
        s.deliver(&path, &[("x-wc-webhook-signature", sign(b"other"))], order)
            .await,
    )
    .await;
    let (_, d) = body_of(s.deliver("/v1/hooks/nope/nope", &[], order).await).await;
    assert_eq!(refusal(&a), refusal(&b));
    assert_eq!(refusal(&a), refusal(&c));
    assert_eq!(refusal(&a), refusal(&d));

    // 94: a correct signature, case-insensitive header; the same delivery again.
    let headers = vec![
        ("X-WC-Webhook-Signature", sign(order)),
        ("X-WC-Webhook-Delivery-ID", "d-1".to_owned()),
        ("content-type", "application/json".to_owned()),
    ];
    let (st, first) = body_of(s.deliver(&path, &headers, order).await).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{first}");
    let fire_id = first["fireId"].as_str().unwrap().to_owned();
    let (st, dup) = body_of(s.deliver(&path, &headers, order).await).await;
    assert_eq!(
        (st, dup),
        (
            StatusCode::OK,
            json!({"fireId": fire_id, "duplicate": true})
        )
    );

    // 99: the run's input is the parsed body; it was started by the webhook.
    let fires = s.settled_fires(&woo_id, 1).await;
    let started = fires
        .iter()
        .find(|f| f["fireId"] == fire_id.as_str())
        .unwrap();
    assert_eq!(started["outcome"], "started", "{started}");
    assert_eq!(started["duplicates"], 1);
    let run_id = started["runId"].as_str().unwrap();
    let (_, run) = s.get(&format!("/v1/runs/{run_id}")).await;
    assert_eq!(run["startedBy"], "webhook", "{run}");
    assert_eq!(
        s.run_input(run_id).await,
        json!({"id": 1001, "status": "processing"})
    );
    assert_eq!(
        run["trigger"],
        json!({"triggerId": woo_id, "kind": "webhook", "fireId": fire_id})
    );
    let (_, by_trigger) = s.get(&format!("/v1/runs?triggerId={woo_id}")).await;
    assert_eq!(by_trigger["data"][0]["id"], run_id);
    let refused: Vec<&Value> = fires.iter().filter(|f| f["outcome"] == "refused").collect();
    assert!(
        refused.iter().any(|f| f["detail"] == "signature-missing")
            && refused.iter().any(|f| f["detail"] == "signature-invalid"),
        "{fires:?}"
    );
    assert!(refused.iter().all(|f| f["countsTowardPause"] == false));

    // 95: JSON that is not; text.
    let not_json = b"not json";
    let (st, e) = body_of(
        s.deliver(
            &path,
            &[
                ("x-wc-webhook-signature", sign(not_json)),
                ("content-type", "application/json".into()),
            ],
            not_json,
        )
        .await,
    )
    .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("webhook-body-not-json"))
    );
    assert_eq!(
        e["error"]["message"],
        "The body says it is JSON, but it is not"
    );
    let text = b"order 1002 paid";
    let (st, t) = body_of(
        s.deliver(
            &path,
            &[
                ("x-wc-webhook-signature", sign(text)),
                ("content-type", "text/plain".into()),
            ],
            text,
        )
        .await,
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{t}");
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let (st, e) = body_of(
        s.deliver(
            &path,
            &[
                ("x-wc-webhook-signature", sign(deep.as_bytes())),
                ("content-type", "application/vnd.x+json".into()),
            ],
            deep.as_bytes(),
        )
        .await,
    )
    .await;
    assert_eq!(
        (st, e["error"]["details"]["maxDepth"].as_u64()),
        (StatusCode::BAD_REQUEST, Some(128))
    );
    let fires = s.settled_fires(&woo_id, 2).await;
    let text_fire = fires.iter().find(|f| f["fireId"] == t["fireId"]).unwrap();
    let text_run = text_fire["runId"].as_str().unwrap();
    assert_eq!(s.run_input(text_run).await, "order 1002 paid");

    // 97: over 1 MiB; over the trigger's own limit.
    let big = vec![b'a'; 1_048_577];
    let (st, e) = body_of(s.deliver(&path, &[], &big).await).await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            Some("webhook-body-too-large")
        )
    );
    assert_eq!(
        e["error"]["message"],
        "The body is larger than 1048576 bytes"
    );
    let over = vec![b'a'; 262_145];
    let (st, _) = body_of(
        s.deliver(&path, &[("x-wc-webhook-signature", sign(&over))], &over)
            .await,
    )
    .await;
    assert_eq!(st, StatusCode::PAYLOAD_TOO_LARGE);

    // 96: paused; unregistered, signed and unsigned.
    let (st, _) = s
        .post(&format!("/v1/webhooks/{woo_id}/pause"), json!({}))
        .await;
    assert_eq!(st, StatusCode::OK);
    let ev = b"{\"id\":1003}";
    let (st, b) = body_of(
        s.deliver(&path, &[("x-wc-webhook-signature", sign(ev))], ev)
            .await,
    )
    .await;
    assert_eq!(
        (st, b),
        (StatusCode::ACCEPTED, json!({"skipped": "paused"}))
    );
    let (_, page) = s.get(&format!("/v1/webhooks/{woo_id}/fires")).await;
    assert_eq!(page["data"][0]["outcome"], "skipped");
    assert_eq!(page["data"][0]["detail"], "paused");
    let (st, _) = s
        .post(&format!("/v1/webhooks/{woo_id}/unregister"), json!({}))
        .await;
    assert_eq!(st, StatusCode::OK);
    let (st, e) = body_of(
        s.deliver(&path, &[("x-wc-webhook-signature", sign(ev))], ev)
            .await,
    )
    .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::GONE, Some("webhook-gone"))
    );
    assert_eq!(e["error"]["message"], "This trigger was unregistered");
    let (st, _) = body_of(s.deliver(&path, &[], ev).await).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);

    // 97: the trigger's rate; config.input replaces the event (99); GitHub's hex + prefix.
    s.secret("GH", "gh-secret").await;
    let gh = s
        .register(json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "GH",
                         "rateLimitPerMinute": 2, "config": {"input": {"fixed": true}},
                         "signature": {"kind": "hmac-sha256", "encoding": "hex", "header": "X-Hub-Signature-256", "prefix": "sha256="}}))
        .await;
    let gh_path = s.hook_path(&gh);
    let gh_sig = |b: &[u8]| format!("sha256={}", hex::encode(hmac(b"gh-secret", b)));
    for n in 0..2 {
        let b = format!("{{\"n\":{n}}}");
        let (st, r) = body_of(
            s.deliver(
                &gh_path,
                &[("x-hub-signature-256", gh_sig(b.as_bytes()))],
                b.as_bytes(),
            )
            .await,
        )
        .await;
        assert_eq!(st, StatusCode::ACCEPTED, "{r}");
    }
    let third = s
        .deliver(&gh_path, &[("x-hub-signature-256", gh_sig(b"{}"))], b"{}")
        .await;
    assert_eq!(third.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = third.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry));
    let (_, e) = body_of(third).await;
    assert_eq!(e["error"]["code"], "rate-limit-exceeded");
    let gh_id = gh["triggerId"].as_str().unwrap();
    let fires = s.settled_fires(gh_id, 2).await;
    let run_id = fires.iter().find_map(|f| f["runId"].as_str()).unwrap();
    assert_eq!(s.run_input(run_id).await, json!({"fixed": true}));

    // 98: Standard Webhooks — stale, then fresh with a valid signature among several.
    let sw = s
        .register(
            json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "SWH",
                         "generateSecret": true, "signature": {"kind": "standard-webhooks"}}),
        )
        .await;
    let key = STANDARD
        .decode(
            sw["signingSecret"]
                .as_str()
                .unwrap()
                .strip_prefix("whsec_")
                .unwrap(),
        )
        .unwrap();
    let sw_path = s.hook_path(&sw);
    let sw_headers = |id: &str, ts: i64, body: &[u8]| {
        let mut signed = format!("{id}.{ts}.").into_bytes();
        signed.extend_from_slice(body);
        let good = STANDARD.encode(hmac(&key, &signed));
        vec![
            ("webhook-id", id.to_owned()),
            ("webhook-timestamp", ts.to_string()),
            (
                "webhook-signature",
                format!("v1,{} v1,{good}", STANDARD.encode([0u8; 32])),
            ),
            ("content-type", "application/json".to_owned()),
        ]
    };
    let now = kindgi_runtime::record::now_millis() / 1000;
    let ev = br#"{"type":"invoice.paid"}"#;
    let (st, _) = body_of(
        s.deliver(&sw_path, &sw_headers("msg_1", now - 600, ev), ev)
            .await,
    )
    .await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, f) = body_of(s.deliver(&sw_path, &sw_headers("msg_1", now, ev), ev).await).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{f}");
    // The same webhook-id and body is the same delivery, even re-signed later.
    let (st, d) = body_of(
        s.deliver(&sw_path, &sw_headers("msg_1", now + 1, ev), ev)
            .await,
    )
    .await;
    assert_eq!((st, d["duplicate"].as_bool()), (StatusCode::OK, Some(true)));
    let fires = s.settled_fires(sw["triggerId"].as_str().unwrap(), 2).await;
    assert!(fires.iter().any(|f| f["detail"] == "stale"), "{fires:?}");
    s.db.cleanup().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_receiver() {
    receiver(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_receiver() {
    receiver(DatabaseKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_and_auto_pause() {
    let s = server(DatabaseKind::Sqlite, 3).await;
    s.secret("K", "k").await;
    let t = s
        .register(json!({"flowId": "shop.strict", "flowVersion": "1.0.0", "hmacSecretName": "K"}))
        .await;
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let path = s.hook_path(&t);
    let sig = |b: &[u8]| hex::encode(hmac(b"k", b));

    // Past 20 refusals a minute a trigger only counts them; past 60 from one client, 429.
    for i in 0..25 {
        let xff = (
            "x-forwarded-for",
            format!("203.0.113.9, 127.0.0.{}", 2 + i % 3),
        );
        let (st, _) = body_of(
            s.deliver(&path, &[xff, ("x-kindgi-signature", "0".repeat(64))], b"{}")
                .await,
        )
        .await;
        assert_eq!(st, StatusCode::UNAUTHORIZED);
    }
    let (_, rec) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(rec["suppressedRefusals"]["count"], 5, "{rec}");
    let (_, fires) = s.get(&format!("/v1/webhooks/{id}/fires?limit=100")).await;
    assert_eq!(fires["data"].as_array().unwrap().len(), 20);
    let client = ("x-forwarded-for", "127.0.0.50".to_owned());
    let mut last = StatusCode::OK;
    for _ in 0..61 {
        last = s
            .deliver(&path, std::slice::from_ref(&client), b"{}")
            .await
            .status();
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
    // Refusals never paused it.
    let (_, rec) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(rec["status"], "active");

    // The tenant-wide limit (3 a minute here); each start fails the flow's input schema, and
    // the failures count: the 5th in a row pauses the trigger.
    let mut statuses = Vec::new();
    for n in 0..3 {
        let b = format!("{{\"n\":{n}}}");
        let r = s
            .deliver(
                &path,
                &[("x-kindgi-signature", sig(b.as_bytes()))],
                b.as_bytes(),
            )
            .await;
        statuses.push(r.status());
    }
    assert!(
        statuses.iter().all(|s| *s == StatusCode::ACCEPTED),
        "{statuses:?}"
    );
    let r = s
        .deliver(&path, &[("x-kindgi-signature", sig(b"{}"))], b"{}")
        .await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(r.headers().contains_key("retry-after"));
    let (_, e) = body_of(r).await;
    assert_eq!(e["error"]["details"]["limit"], "webhook-receives");
    s.db.cleanup().await.unwrap();

    let s = server(DatabaseKind::Sqlite, 100).await;
    s.secret("K", "k").await;
    let t = s
        .register(json!({"flowId": "shop.strict", "flowVersion": "1.0.0", "hmacSecretName": "K"}))
        .await;
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let path = s.hook_path(&t);
    for n in 0..5 {
        let b = format!("{{\"n\":{n}}}");
        let (st, _) = body_of(
            s.deliver(
                &path,
                &[("x-kindgi-signature", sig(b.as_bytes()))],
                b.as_bytes(),
            )
            .await,
        )
        .await;
        assert_eq!(st, StatusCode::ACCEPTED);
        s.settled_fires(&id, n + 1).await;
    }
    let fires = s.settled_fires(&id, 5).await;
    assert!(
        fires
            .iter()
            .all(|f| f["outcome"] == "failed" && f["countsTowardPause"] == true),
        "{fires:?}"
    );
    let (_, rec) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(rec["status"], "paused", "{rec}");
    assert!(
        rec["statusReason"]
            .as_str()
            .unwrap()
            .contains("5 refused or failed starts")
    );
    let (_, rec) = s
        .post(&format!("/v1/webhooks/{id}/resume"), json!({}))
        .await;
    assert_eq!(rec["status"], "active");
    assert!(rec.get("statusReason").is_none());
    s.db.cleanup().await.unwrap();
}

fn code(v: &Value) -> Option<&str> {
    v["error"]["code"].as_str()
}

async fn registration_checks(kind: DatabaseKind) {
    let s = server(kind, 12_000).await;
    s.secret("K", "k").await;
    let base = json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "K"});
    // A model provider's key never signs deliveries: register and PATCH.
    let mut body = base.clone();
    body["hmacSecretName"] = json!("OPENAI_API_KEY");
    let (st, e) = s.post("/v1/webhooks", body).await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::BAD_REQUEST, Some("provider-key-refused")),
        "{e}"
    );
    assert_eq!(e["error"]["details"]["secret"], "OPENAI_API_KEY");
    assert_eq!(e["error"]["details"]["providerId"], "openai");
    let t = s.register(base.clone()).await;
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let (st, e) = s
        .call(
            reqwest::Method::PATCH,
            &format!("/v1/webhooks/{id}"),
            Some(json!({"hmacSecretName": "ANTHROPIC_API_KEY"})),
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::BAD_REQUEST, Some("provider-key-refused")),
        "{e}"
    );
    let (_, got) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(got["hmacSecretName"], "K", "nothing changed");

    // A key limited to a project registers in it (named or not), and nowhere else.
    let (st, p) = s
        .post("/v1/projects", json!({"name": "shop", "slug": "shop"}))
        .await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    let project = p["id"].as_str().unwrap().to_owned();
    let (st, k) = s.post("/v1/tokens", json!({"projectId": project})).await;
    assert_eq!(st, StatusCode::CREATED, "{k}");
    let pkey = k["token"].as_str().unwrap().to_owned();
    let (st, mine) = s
        .call_as(
            &pkey,
            reqwest::Method::POST,
            "/v1/webhooks",
            Some(base.clone()),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{mine}");
    assert_eq!(mine["projectId"], json!(project));
    let mut other = base.clone();
    other["projectId"] = t["projectId"].clone();
    let (st, e) = s
        .call_as(&pkey, reqwest::Method::POST, "/v1/webhooks", Some(other))
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch")),
        "{e}"
    );
    // The Default project's trigger is out of its reach: read, change, list.
    for (method, path, body) in [
        (reqwest::Method::GET, format!("/v1/webhooks/{id}"), None),
        (
            reqwest::Method::PATCH,
            format!("/v1/webhooks/{id}"),
            Some(json!({"label": "x"})),
        ),
        (
            reqwest::Method::POST,
            format!("/v1/webhooks/{id}/pause"),
            Some(json!({})),
        ),
    ] {
        let (st, e) = s.call_as(&pkey, method, &path, body).await;
        assert_eq!(
            (st, code(&e)),
            (StatusCode::FORBIDDEN, Some("permission-denied")),
            "{path} {e}"
        );
        assert_eq!(
            e["error"]["message"],
            json!(format!(
                "Permission denied: the API key is limited to project {project}"
            ))
        );
    }
    let (_, page) = s
        .call_as(&pkey, reqwest::Method::GET, "/v1/webhooks", None)
        .await;
    let listed: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["triggerId"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec![mine["triggerId"].as_str().unwrap()], "{page}");
    // A flow published in another project is not one it may run (no `execute` on it).
    let published = json!({"id": "shop.published", "version": "1.0.0", "projectId": t["projectId"],
        "nodes": [{"id": "n", "kind": "tool", "ref": "shop.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]});
    let (st, f) = s.post("/v1/flows", published).await;
    assert_eq!(st, StatusCode::CREATED, "{f}");
    let mut theirs = base.clone();
    theirs["flowId"] = json!("shop.published");
    let (st, e) = s
        .call_as(&pkey, reqwest::Method::POST, "/v1/webhooks", Some(theirs))
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("permission-denied")),
        "{e}"
    );
    assert_eq!(
        (
            &e["error"]["details"]["action"],
            &e["error"]["details"]["resource"]
        ),
        (&json!("execute"), &json!("flow:shop.published"))
    );
    let (_, got) = s.get(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(
        (got["label"].clone(), got["status"].clone()),
        (Value::Null, json!("active"))
    );
    s.db.cleanup().await.unwrap();
}

/// A delivery `{"n": <n>}` signed with the secret `k`.
async fn signed(s: &Server, path: &str, n: u32) -> (StatusCode, Value) {
    let b = format!("{{\"n\":{n}}}");
    let headers = [("x-kindgi-signature", hex::encode(hmac(b"k", b.as_bytes())))];
    body_of(s.deliver(path, &headers, b.as_bytes()).await).await
}

async fn owner_rechecked_at_each_fire(kind: DatabaseKind) {
    let s = server(kind, 12_000).await;
    s.secret("K", "k").await;
    // The trigger is registered with a key of its own, which is then revoked.
    let (st, k) = s.post("/v1/tokens", json!({"label": "owner"})).await;
    assert_eq!(st, StatusCode::CREATED, "{k}");
    let (owner_key, owner_token) = (
        k["token"].as_str().unwrap().to_owned(),
        k["tokenId"].as_str().unwrap().to_owned(),
    );
    let (st, t) = s
        .call_as(
            &owner_key,
            reqwest::Method::POST,
            "/v1/webhooks",
            Some(json!({"flowId": "shop.order", "flowVersion": "1.0.0", "hmacSecretName": "K"})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let path = s.hook_path(&t);

    // While the key is valid the fire starts one run, under `fire:<fireId>`.
    let (st, first) = signed(&s, &path, 1).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{first}");
    let fires = s.settled_fires(&id, 1).await;
    assert_eq!(fires[0]["outcome"], "started", "{fires:?}");
    let fire_id = first["fireId"].as_str().unwrap();
    assert_eq!(
        fires[0]["runId"].as_str().unwrap(),
        kindgi_runtime::runtime::run_id_for_key("acme", &format!("fire:{fire_id}"))
    );

    let (st, r) = s
        .post(&format!("/v1/tokens/{owner_token}/revoke"), json!({}))
        .await;
    assert_eq!(st, StatusCode::OK, "{r}");
    let (st, second) = signed(&s, &path, 2).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{second}");
    let fires = s.settled_fires(&id, 2).await;
    let refused = &fires[0];
    assert_eq!(refused["fireId"], second["fireId"]);
    assert_eq!(refused["outcome"], "refused", "{refused}");
    assert!(refused.get("runId").is_none());
    assert_eq!(refused["countsTowardPause"], true);
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("the key that owns this webhook trigger was revoked")
            && detail.contains(&format!("POST /v1/webhooks/{id}/owner")),
        "{detail}"
    );

    // An admin takes it over: the next fire starts again.
    let (st, rec) = s.post(&format!("/v1/webhooks/{id}/owner"), json!({})).await;
    assert_eq!(st, StatusCode::OK, "{rec}");
    let (st, _) = signed(&s, &path, 3).await;
    assert_eq!(st, StatusCode::ACCEPTED);
    let fires = s.settled_fires(&id, 3).await;
    assert_eq!(fires[0]["outcome"], "started", "{fires:?}");

    // A trigger stored before owner keys were kept, owned by a key that is its own
    // principal: that key is what is checked.
    use kindgi_core::ports::WebhookStore as _;
    let store = kindgi_store::webhooks::WebhookTriggerStore::new(s.db.db.clone());
    let mut legacy = store.trigger("acme", &id).await.unwrap().unwrap();
    legacy.owner = kindgi_core::trigger::TriggerOwner {
        kind: kindgi_core::trigger::OwnerKind::Service,
        id: owner_token.clone(),
        display_name: None,
    };
    legacy.owner_key_id = None;
    assert!(store.update(&legacy).await.unwrap());
    let (st, _) = signed(&s, &path, 4).await;
    assert_eq!(st, StatusCode::ACCEPTED);
    let fires = s.settled_fires(&id, 4).await;
    assert_eq!(fires[0]["outcome"], "refused", "{fires:?}");
    assert!(
        fires[0]["detail"]
            .as_str()
            .unwrap()
            .contains("the key that owns this webhook trigger was revoked"),
        "{fires:?}"
    );
    s.db.cleanup().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_registration_checks() {
    registration_checks(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_registration_checks() {
    registration_checks(DatabaseKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_owner_rechecked_at_each_fire() {
    owner_rechecked_at_each_fire(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_owner_rechecked_at_each_fire() {
    owner_rechecked_at_each_fire(DatabaseKind::Postgres).await;
}
