//! Every route the host mounts, walked over a real socket, each answer's body checked
//! against the schema the served OpenAPI document (`GET /v1/openapi.json`, built from the
//! official Platform API document by `scripts/openapi`) gives for that operation and status,
//! with our own schema engine (kindgi-schema; `format`s checked).
//!
//! - Every operation in the served document is requested at least once — with fixtures
//!   published first (a tool, an agent, a flow, runs, a conversation, an env value, a
//!   secret, a key, a service account, a gated agent's approval, paused runs), so the success answers are walked, not only the
//!   refusals — and the status it answers must be one the operation documents.
//! - Operations of the official document the host does not serve answer `501 not-served`
//!   (naming the operation's template): the served document names exactly what is mounted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kindgi_host::{Host, HostConfig};
use kindgi_schema::{CompileOptions, Mode, Side, Validator};
use kindgi_tools::testing::{PausingTool, Tickets};
use serde_json::{Value, json};
use support::repo_root;

const METHODS: [&str; 5] = ["get", "post", "put", "delete", "patch"];

/// The document's schemas with `$ref`s into `$defs`. One repair: the official document
/// spells some timestamps `oneOf: [{type: string, format: date-time}, {type: string}]`,
/// which no string can meet (a date-time matches both branches); it is read as the `anyOf`
/// it means.
fn rewrite(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| match (k.as_str(), v.as_str()) {
                    ("oneOf", _) if all_strings(v) => ("anyOf".to_owned(), rewrite(v)),
                    ("$ref", Some(r)) if r.starts_with("#/components/schemas/") => (
                        k.clone(),
                        json!(r.replacen("#/components/schemas/", "#/$defs/", 1)),
                    ),
                    _ => (k.clone(), rewrite(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(rewrite).collect()),
        other => other.clone(),
    }
}

fn all_strings(branches: &Value) -> bool {
    branches
        .as_array()
        .is_some_and(|b| b.len() > 1 && b.iter().all(|s| s.get("type") == Some(&json!("string"))))
}

/// The served document's operations: (method, path template) → status → compiled schema
/// of the JSON body (`None`: the status documents no JSON body).
struct Document {
    ops: BTreeMap<(String, String), BTreeMap<String, Option<Validator>>>,
}

impl Document {
    fn load(doc: &Value) -> Document {
        let defs = rewrite(&doc["components"]["schemas"]);
        let mut ops = BTreeMap::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                let mut statuses = BTreeMap::new();
                for (status, response) in op["responses"].as_object().unwrap() {
                    let schema = response
                        .pointer("/content/application~1json/schema")
                        .map(|s| {
                            let root = json!({
                                "$schema": "https://json-schema.org/draft/2020-12/schema",
                                "$defs": defs,
                                "allOf": [rewrite(s)],
                            });
                            kindgi_schema::compile(
                                &root,
                                CompileOptions {
                                    mode: Mode::Mcp,
                                    side: Side::Output,
                                },
                            )
                            .unwrap_or_else(|e| {
                                panic!("{method} {path} {status}: schema does not compile: {e}")
                            })
                        });
                    statuses.insert(status.clone(), schema);
                }
                ops.insert((method.to_owned(), path.clone()), statuses);
            }
        }
        Document { ops }
    }
}

/// The path template a concrete path matches (`{param}` segments match anything).
fn template_of<'a>(doc: &'a Document, method: &str, path: &str) -> Option<&'a str> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut best: Option<(&str, usize)> = None;
    for (m, t) in doc.ops.keys() {
        if m != method {
            continue;
        }
        let tsegs: Vec<&str> = t.trim_start_matches('/').split('/').collect();
        if tsegs.len() != segs.len() {
            continue;
        }
        let mut literal = 0;
        let ok = tsegs.iter().zip(&segs).all(|(a, b)| {
            if a.starts_with('{') {
                true
            } else {
                literal += 1;
                a == b
            }
        });
        // Static segments beat parameters (`/v1/runs/failures`, …).
        if ok && best.is_none_or(|(_, n)| literal > n) {
            best = Some((t.as_str(), literal));
        }
    }
    best.map(|(t, _)| t)
}

/// The official document: the spec's copy beside the repository, else the one the official
/// CLI wheel installs (scripts/setup-reference).
fn official_document() -> Vec<u8> {
    let mut candidates = vec![repo_root().join("../shared/spec/platform-openapi.json")];
    if let Some(dir) = std::env::var_os("KINDGI_CLI_NODE_MODULES") {
        candidates.push(PathBuf::from(dir).join("@kindgi/api/openapi.json"));
    }
    candidates.push(repo_root().join(
        ".venv/lib/python3.11/site-packages/kindgi_cli/_cli/node_modules/@kindgi/api/openapi.json",
    ));
    candidates
        .iter()
        .find_map(|p| std::fs::read(p).ok())
        .unwrap_or_else(|| panic!("the official openapi.json is not found ({candidates:?}); run scripts/setup-reference"))
}

struct Walk {
    http: reqwest::Client,
    base: String,
    key: String,
    doc: Document,
    seen: BTreeSet<(String, String)>,
}

impl Walk {
    /// Sends a request, checks its answer against the document, returns (status, body).
    async fn call(&mut self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let mut req = match method {
            "get" => self.http.get(&url),
            "post" => self.http.post(&url),
            "put" => self.http.put(&url),
            "delete" => self.http.delete(&url),
            "patch" => self.http.patch(&url),
            _ => unreachable!(),
        }
        .bearer_auth(&self.key);
        if path.ends_with("/stream") {
            req = req.header("accept", "text/event-stream");
        }
        if let Some(b) = &body {
            req = req.json(b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let json_body = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("application/json"));
        let text = r.text().await.unwrap();
        let bare = path.split('?').next().unwrap();
        let template = template_of(&self.doc, method, bare)
            .unwrap_or_else(|| panic!("{method} {bare} is not in the served document"))
            .to_owned();
        self.seen.insert((method.to_owned(), template.clone()));
        let statuses = &self.doc.ops[&(method.to_owned(), template.clone())];
        let key = status.to_string();
        let documented = statuses
            .get(&key)
            .or_else(|| statuses.get(&format!("{}XX", status / 100)))
            .or_else(|| statuses.get("default"));
        let Some(schema) = documented else {
            panic!(
                "{method} {path} answered {status}, which {template} does not document ({:?}): {text}",
                statuses.keys().collect::<Vec<_>>()
            );
        };
        let value: Value = if json_body {
            serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {text}"))
        } else {
            Value::String(text)
        };
        if let (Some(schema), true) = (schema, json_body)
            && let Err(issues) = schema.validate(&value)
        {
            let text: Vec<String> = issues
                .iter()
                .map(|i| format!("{} {}", i.instance_path(), i.message()))
                .collect();
            panic!(
                "{method} {path} {status}: the body breaks its schema:\n  {}\nbody: {value}",
                text.join("\n  ")
            );
        }
        (status, value)
    }
}

/// The walk's model: it asks for `walk.write` when the turn offers it and no result came
/// back yet (so `walk.gated` parks on its approval), else it answers.
#[derive(Debug)]
struct WalkModel;

#[async_trait::async_trait]
impl kindgi_runtime::ModelProvider for WalkModel {
    fn provider_id(&self) -> &str {
        "walk"
    }
    fn model(&self) -> &str {
        "walk-1"
    }
    async fn invoke(
        &self,
        r: kindgi_runtime::model::ModelRequest,
    ) -> Result<kindgi_runtime::model::ModelResponse, kindgi_runtime::model::ModelError> {
        use kindgi_runtime::model::{FinishReason, ModelResponse, Role, ToolCall};
        let offered = r.tools.iter().any(|t| t.name == "walk.write");
        let answered = r.messages.last().is_some_and(|m| m.role == Role::Tool);
        let tool_calls = if offered && !answered {
            vec![ToolCall {
                id: "c1".into(),
                name: "walk.write".into(),
                arguments: json!({"note": "hi"}),
            }]
        } else {
            vec![]
        };
        Ok(ModelResponse {
            text: if tool_calls.is_empty() {
                "ok".into()
            } else {
                String::new()
            },
            finish_reason: if tool_calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolUse
            },
            tool_calls,
            usage: Default::default(),
            warnings: vec![],
        })
    }
}

/// Puts the gated agent (`walk.gated`, its `walk.write` asked for every time) and the
/// pausing flow (`walk.ask`) in the host's runtime.
fn gated_fixtures(rt: &kindgi_runtime::Runtime) -> Tickets {
    let write = kindgi_tools::Tool::define("walk.write")
        .version("1.0.0")
        .description("writes a note")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .effect(kindgi_spec::tool::EffectKind::Writes, "notes")
        .handler(|input: Value, _ctx| async move {
            Ok::<Value, kindgi_tools::HandlerError>(json!({"wrote": input}))
        })
        .build()
        .unwrap();
    rt.tools().insert_tool(write);
    let mut agent = kindgi_runtime::AgentSpec::new("walk.gated").with_tools(vec!["walk.write"]);
    agent.conversation_policy =
        Some(json!({"hitl": {"tools": {"overrides": {"walk.write": "always_ask"}}}}));
    rt.agents().insert(agent);
    let tickets: Tickets = Default::default();
    let manifest = serde_json::from_value(json!({
        "id": "walk.ask-human", "version": "1.0.0", "description": "asks a person",
        "input": {"type": "object"}, "pauses": true,
        "output": {"type": "object", "properties": {"answer": {"type": "string"}}}
    }))
    .unwrap();
    rt.tools().insert(std::sync::Arc::new(PausingTool::new(
        manifest,
        tickets.clone(),
        None,
    )));
    let flow = json!({
        "id": "walk.ask", "version": "1.0.0",
        "nodes": [{"id": "ask", "kind": "tool", "ref": "walk.ask-human"}],
        "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    tickets
}

/// Webhook triggers and the receiver (issue 22): register with a generated secret, list,
/// read, change, pause, resume, fires, take over, a refused delivery, unregister.
async fn walk_webhooks(w: &mut Walk, tenant: &str, unknown: &str) {
    let (status, t) = w
        .call(
            "post",
            "/v1/webhooks",
            Some(json!({"flowId": "walk.ask", "flowVersion": "1.0.0",
                "hmacSecretName": "WALK_HOOK", "generateSecret": true})),
        )
        .await;
    assert_eq!(status, 201, "{t}");
    let id = t["triggerId"].as_str().unwrap_or_default().to_owned();
    let webhook = t["webhookId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(w.call("get", "/v1/webhooks", None).await.0, 200);
    let path = format!("/v1/webhooks/{id}");
    assert_eq!(w.call("get", &path, None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/webhooks/{unknown}"), None)
            .await
            .0,
        404
    );
    let patched = w.call("patch", &path, Some(json!({"label": "walk"}))).await;
    assert_eq!(patched.0, 200, "{}", patched.1);
    for action in ["pause", "resume", "owner"] {
        let path = format!("/v1/webhooks/{id}/{action}");
        assert_eq!(
            w.call("post", &path, Some(json!({}))).await.0,
            200,
            "{path}"
        );
    }
    let path = format!("/v1/webhooks/{id}/resume");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 409);
    let tenant_id = kindgi_api::projects::tenant_uuid(tenant);
    let hook = format!("/v1/hooks/{tenant_id}/{webhook}");
    assert_eq!(
        w.call("post", &hook, Some(json!({"unsigned": true})))
            .await
            .0,
        401
    );
    assert_eq!(
        w.call("get", &format!("/v1/webhooks/{id}/fires"), None)
            .await
            .0,
        200
    );
    let path = format!("/v1/webhooks/{id}/unregister");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 200);
    // Again: 404, which the official document does not list for this operation (the
    // reference answers it all the same; tests/webhooks_api.rs checks it).
}

/// Approvals and waits: a gated turn's approval listed, read and approved; two paused runs
/// answered, one through `/resume`, one on its link.
/// Model providers, the reviewer roster and signed exports (issue 21).
async fn walk_providers_and_reviewers(w: &mut Walk, unknown: &str) {
    let provider = json!({
        "metadata": {"id": "walk-provider", "region": "unspecified",
            // No features: the official `CapabilityDescriptor.feature` is a `oneOf` of the
            // Feature enum and any string, which a built-in feature matches twice, so no
            // answer naming one passes a strict validator (a defect of the official schema).
            "models": [{"name": "m1", "contextWindow": 8192, "features": [],
                "cost": {"promptUsdPer1kTokens": 0, "completionUsdPer1kTokens": 0}}]},
        "adapter_id": "@kindgi/adapter-model-openai-compat",
        "adapter_config": {"baseUrl": "https://models.example.com/v1"}});
    let (status, body) = w.call("post", "/v1/providers", Some(provider)).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(w.call("get", "/v1/providers", None).await.0, 200);
    for suffix in ["", "/check", "/capabilities"] {
        let path = format!("/v1/providers/walk-provider{suffix}");
        assert_eq!(w.call("get", &path, None).await.0, 200, "{path}");
    }
    let path = "/v1/providers/walk-provider/unregister";
    assert_eq!(w.call("post", path, Some(json!({}))).await.0, 200);

    let (status, reviewer) = w
        .call(
            "post",
            "/v1/approvals/reviewers",
            Some(json!({"userId": "6f1d2c3b-0a4e-4b5f-9c8d-7e6f5a4b3c2d", "role": "standard"})),
        )
        .await;
    assert_eq!(status, 201, "{reviewer}");
    // The standard ones only: the operator's bootstrap person (`admin`, auto-registered as
    // an admin reviewer) has no UUID id, which `Reviewer.userId` documents (known gap).
    let path = "/v1/approvals/reviewers?role=standard";
    assert_eq!(w.call("get", path, None).await.0, 200);
    let id = reviewer["id"].as_str().unwrap_or_default().to_owned();
    let path = format!("/v1/approvals/reviewers/{id}");
    assert_eq!(w.call("get", &path, None).await.0, 200);
    let path = format!("/v1/approvals/reviewers/{id}/unregister");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 200);

    let keys = w.call("get", "/v1/export-signing-keys", None).await.0;
    assert!(keys == 200 || keys == 404, "{keys}");
    let path = format!("/v1/approvals/{unknown}/audit-bundle");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 404);
}

/// Connections (docs/connections.md): added, listed, read, revoked, the connect link.
async fn walk_connections(w: &mut Walk, unknown: &str) {
    let body = json!({"app": "google", "as": "person", "permissions": ["gmail.send"],
        "accessToken": "ya29.walk-token", "expiresIn": 3600});
    let (status, c) = w.call("post", "/v1/connections", Some(body)).await;
    assert_eq!(status, 201, "{c}");
    let (status, e) = w
        .call("post", "/v1/connections", Some(json!({"app": "google"})))
        .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(
        w.call("get", "/v1/connections?app=google", None).await.0,
        200
    );
    let id = c["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        w.call("get", &format!("/v1/connections/{id}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/connections/{unknown}"), None)
            .await
            .0,
        404
    );
    let path = "/v1/connections/connect?app=google&permissions=gmail.send";
    assert_eq!(w.call("get", path, None).await.0, 200);
    assert_eq!(w.call("get", "/v1/connections/connect", None).await.0, 400);
    let path = format!("/v1/connections/{id}/revoke");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 200);
    let path = format!("/v1/connections/{unknown}/revoke");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 404);
}

/// Mail triggers (our extension): the admin routes, then the inbound receiver (a JSON body
/// is no mail: `415`).
async fn walk_mail_triggers(w: &mut Walk, unknown: &str) {
    let body = json!({"address": "walk@mail.example.test", "flowId": "walk.ask",
        "flowVersion": "1.0.0", "senders": [{"address": "ada@example.test", "userId": "ada"}],
        "mailbox": {"app": "google"}});
    let (status, t) = w.call("post", "/v1/mail-triggers", Some(body)).await;
    assert_eq!(status, 201, "{t}");
    let id = t["triggerId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(w.call("get", "/v1/mail-triggers", None).await.0, 200);
    let path = format!("/v1/mail-triggers/{id}");
    assert_eq!(w.call("get", &path, None).await.0, 200);
    let label = Some(json!({"label": "walk"}));
    assert_eq!(w.call("patch", &path, label).await.0, 200);
    for what in ["pause", "resume"] {
        let path = format!("/v1/mail-triggers/{id}/{what}");
        assert_eq!(
            w.call("post", &path, Some(json!({}))).await.0,
            200,
            "{path}"
        );
    }
    let path = format!("/v1/mail-triggers/{id}/fires");
    assert_eq!(w.call("get", &path, None).await.0, 200);
    let path = format!("/v1/mail-triggers/{id}/unregister");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 200);
    let path = format!("/v1/mail-triggers/{unknown}");
    assert_eq!(w.call("get", &path, None).await.0, 404);
    let tenant = kindgi_api::projects::tenant_uuid(kindgi_host::DEFAULT_TENANT);
    let path = format!("/v1/mail/inbound/{tenant}");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 415);
}

/// `/v1/schedules…`: every operation, over the walk's flow.
async fn walk_schedules(w: &mut Walk, unknown: &str) {
    let body = json!({"flowId": "walk.flow", "flowVersion": "1.0.0",
        "config": {"cronExpression": "0 3 * * *", "timezone": "Europe/Berlin"}, "label": "walk"});
    let (status, created) = w.call("post", "/v1/schedules", Some(body)).await;
    assert_eq!(status, 201, "{created}");
    let id = created["scheduleId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, bad) = w
        .call(
            "post",
            "/v1/schedules",
            Some(json!({"config": {"cronExpression": "0 3 * * *"}})),
        )
        .await;
    assert_eq!(status, 400, "{bad}");
    assert_eq!(w.call("get", "/v1/schedules", None).await.0, 200);
    let path = format!("/v1/schedules/{id}?upcoming=2");
    assert_eq!(w.call("get", &path, None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/schedules/{unknown}"), None)
            .await
            .0,
        404
    );
    let path = format!("/v1/schedules/{id}");
    assert_eq!(
        w.call("patch", &path, Some(json!({"label": null}))).await.0,
        200
    );
    for verb in ["pause", "resume"] {
        let path = format!("/v1/schedules/{id}/{verb}");
        assert_eq!(
            w.call("post", &path, Some(json!({}))).await.0,
            200,
            "{verb}"
        );
        assert_eq!(
            w.call("post", &path, Some(json!({}))).await.0,
            409,
            "{verb}"
        );
    }
    let path = format!("/v1/schedules/{id}/run-now");
    let (status, fire) = w.call("post", &path, Some(json!({}))).await;
    assert_eq!(status, 202, "{fire}");
    let path = format!("/v1/schedules/{id}/fires");
    assert_eq!(w.call("get", &path, None).await.0, 200);
    let path = format!("/v1/schedules/{id}/owner");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 200);
    let path = format!("/v1/schedules/{id}/unregister");
    assert_eq!(w.call("post", &path, Some(json!({}))).await.0, 200);
    // Again → 404, which `schedules.unregister` doesn't document (platform-api.md §14.9):
    // not walked.
}

async fn walk_approvals_and_waits(w: &mut Walk, tickets: &Tickets, unknown: &str) {
    let (s, run) = w
        .call(
            "post",
            "/v1/runs",
            Some(json!({"agent": "walk.gated", "input": {"userMessage": "write"}})),
        )
        .await;
    assert_eq!(
        (s, run["status"].as_str()),
        (201, Some("suspended")),
        "{run}"
    );
    let gated = run["id"].as_str().unwrap().to_owned();
    let (s, got) = w.call("get", &format!("/v1/runs/{gated}"), None).await;
    assert_eq!(s, 200);
    let approval = got["waitingFor"]["approvals"][0]["approvalId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(w.call("get", "/v1/approvals", None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/approvals/{approval}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/approvals/{unknown}"), None)
            .await
            .0,
        404
    );
    let decide = json!({"decision": "approve"});
    assert_eq!(
        w.call(
            "post",
            &format!("/v1/approvals/{unknown}/complete"),
            Some(decide.clone())
        )
        .await
        .0,
        404
    );
    let (s, done) = w
        .call(
            "post",
            &format!("/v1/approvals/{approval}/complete"),
            Some(decide),
        )
        .await;
    assert_eq!(s, 200, "{done}");

    let (s, first) = w
        .call(
            "post",
            "/v1/runs",
            Some(json!({"flow": "walk.ask", "input": {}})),
        )
        .await;
    assert_eq!(
        (s, first["status"].as_str()),
        (201, Some("suspended")),
        "{first}"
    );
    let (s, second) = w
        .call(
            "post",
            "/v1/runs",
            Some(json!({"flow": "walk.ask", "input": {}})),
        )
        .await;
    assert_eq!(s, 201, "{second}");
    let (one, two) = {
        let t = tickets.lock().unwrap();
        (t[0].token.clone(), t[1].token.clone())
    };
    let first = first["id"].as_str().unwrap();
    let (s, got) = w
        .call(
            "post",
            &format!("/v1/runs/{first}/resume"),
            Some(json!({"waitpointId": one, "value": {"answer": "yes"}})),
        )
        .await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(
        w.call("post", "/v1/waits/kgw_nope", Some(json!({"value": {}})))
            .await
            .0,
        404
    );
    let (s, got) = w
        .call(
            "post",
            &format!("/v1/waits/{two}"),
            Some(json!({"value": {"answer": "yes"}})),
        )
        .await;
    assert_eq!(s, 200, "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mounted_route_answers_what_the_served_document_says() {
    let tmp = tempfile::tempdir().unwrap();
    let mut config = HostConfig::new(
        tmp.path().join("walk.db").display().to_string(),
        "127.0.0.1:0",
    );
    config.secrets_key = Some(kindgi_store::seal::SealKey::generate().0);
    config.model = Some(std::sync::Arc::new(WalkModel));
    let host = Host::start("walk", config).await.unwrap();
    let tickets = gated_fixtures(host.runtime());
    let tenant = kindgi_host::DEFAULT_TENANT;
    let key = host.state().tokens.create(tenant, None).await.unwrap().key;
    let http = reqwest::Client::new();
    let served: Value = http
        .get(format!("{}/v1/openapi.json", host.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let committed: Value = serde_json::from_slice(
        &std::fs::read(repo_root().join("crates/kindgi-api/src/openapi.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        served, committed,
        "the served document is the committed one"
    );
    let mut w = Walk {
        http,
        base: host.url().to_owned(),
        key,
        doc: Document::load(&served),
        seen: BTreeSet::new(),
    };
    let project = kindgi_api::projects::default_project_id(tenant);
    let unknown = "00000000-0000-4000-8000-000000000000";

    // System.
    assert_eq!(w.call("get", "/health", None).await.0, 200);
    assert_eq!(w.call("get", "/v1/openapi.json", None).await.0, 200);
    assert_eq!(w.call("get", "/v1/projects/default", None).await.0, 200);
    assert_eq!(w.call("get", "/v1/identity/whoami", None).await.0, 200);
    assert_eq!(w.call("get", "/v1/tenant", None).await.0, 200);
    let patched = w
        .call("patch", "/v1/tenant", Some(json!({"name": "Walk"})))
        .await
        .0;
    assert!(patched == 200 || patched == 204, "{patched}");
    assert_eq!(w.call("get", "/v1/projects", None).await.0, 200);
    let (status, created) = w
        .call(
            "post",
            "/v1/projects",
            Some(json!({"name": "Walk", "slug": "walk"})),
        )
        .await;
    assert!(status == 200 || status == 201, "{status} {created}");
    let project_id = created["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        w.call("get", &format!("/v1/projects/{project_id}"), None)
            .await
            .0,
        200
    );
    let patched = w
        .call(
            "patch",
            &format!("/v1/projects/{project_id}"),
            Some(json!({"name": "Walked"})),
        )
        .await
        .0;
    assert!(patched == 200 || patched == 204, "{patched}");

    // Registries: a tool, an agent, a flow that runs the agent, a guardrail.
    let tool = json!({"projectId": project, "id": "walk.lookup", "version": "1.0.0",
        "description": "Looks a thing up", "mutating": false,
        "input": {"type": "object", "properties": {"q": {"type": "string"}}},
        "output": {"type": "object"}});
    assert_eq!(w.call("post", "/v1/tools", Some(tool)).await.0, 201);
    let agent = json!({"projectId": project, "id": "walk.agent", "version": "1.0.0",
        "name": "Walker", "instructions": "Answer briefly.",
        "capabilities": [{"kind": "llm-inference"}], "tools": [], "retrieval": [], "guardrails": []});
    assert_eq!(w.call("post", "/v1/agents", Some(agent)).await.0, 201);
    let flow = json!({"projectId": project, "id": "walk.flow", "version": "1.0.0",
        "nodes": [{"id": "ask", "kind": "agent", "ref": "walk.agent"}],
        "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]});
    assert_eq!(w.call("post", "/v1/flows", Some(flow)).await.0, 201);
    let guardrail = json!({"projectId": project, "id": "walk.guard", "kind": "zero-llm",
        "check": "max-tool-calls", "config": {"max": 3}, "action": {"on-violation": "halt"}});
    assert_eq!(
        w.call("post", "/v1/guardrails", Some(guardrail)).await.0,
        201
    );
    for (kind, id) in [
        ("tools", "walk.lookup"),
        ("agents", "walk.agent"),
        ("flows", "walk.flow"),
    ] {
        assert_eq!(w.call("get", &format!("/v1/{kind}"), None).await.0, 200);
        assert_eq!(
            w.call("get", &format!("/v1/{kind}/{id}"), None).await.0,
            200
        );
        assert_eq!(
            w.call("get", &format!("/v1/{kind}/{id}/versions"), None)
                .await
                .0,
            200
        );
        let v = format!("/v1/{kind}/{id}/versions/1.0.0");
        assert_eq!(w.call("get", &v, None).await.0, 200);
        assert_eq!(
            w.call("post", &format!("{v}/unregister"), Some(json!({})))
                .await
                .0,
            200
        );
        assert_eq!(w.call("post", &format!("{v}/reinstate"), None).await.0, 200);
        assert_eq!(
            w.call("get", &format!("/v1/{kind}/nope.nothing"), None)
                .await
                .0,
            404
        );
    }
    assert_eq!(w.call("get", "/v1/guardrails", None).await.0, 200);
    assert_eq!(
        w.call("get", "/v1/guardrails/walk.guard", None).await.0,
        200
    );
    w.call("get", "/v1/guardrails/walk.guard/outcomes", None)
        .await;
    assert_eq!(
        w.call(
            "post",
            "/v1/guardrails/walk.guard/unregister",
            Some(json!({}))
        )
        .await
        .0,
        200
    );

    // Runs: a flow run to the end, an agent turn, a run left pending to cancel.
    let (s, run) = w
        .call(
            "post",
            "/v1/runs",
            Some(json!({"flow": "walk.flow", "input": {"userMessage": "hi"}})),
        )
        .await;
    assert_eq!(s, 201, "{run}");
    assert_eq!(run["status"], "completed", "{run}");
    let id = run["id"].as_str().unwrap().to_owned();
    let (s, turn) = w
        .call("post", "/v1/runs", Some(json!({"agent": "walk.agent", "input": {"userMessage": "hi"}, "options": {"wait": false}})))
        .await;
    assert_eq!(s, 202, "{turn}");
    assert_eq!(w.call("get", "/v1/runs", None).await.0, 200);
    assert_eq!(w.call("get", &format!("/v1/runs/{id}"), None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/runs/{id}/journal"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/runs/{id}/progress"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/runs/{id}/stream"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/runs/{id}/progress/stream"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("post", &format!("/v1/runs/{id}/cancel"), Some(json!({})))
            .await
            .0,
        409
    );
    assert_eq!(
        w.call(
            "post",
            &format!("/v1/runs/{id}/resume"),
            Some(json!({"waitpointId": "w"}))
        )
        .await
        .0,
        409
    );
    walk_approvals_and_waits(&mut w, &tickets, unknown).await;
    walk_providers_and_reviewers(&mut w, unknown).await;
    walk_schedules(&mut w, unknown).await;
    walk_webhooks(&mut w, tenant, unknown).await;
    walk_connections(&mut w, unknown).await;
    walk_mail_triggers(&mut w, unknown).await;
    assert_eq!(
        w.call("get", &format!("/v1/runs/{unknown}"), None).await.0,
        404
    );
    assert_eq!(w.call("get", "/v1/runs/not-a-uuid", None).await.0, 400);

    // Conversations.
    let (s, c) = w
        .call(
            "post",
            "/v1/conversations",
            Some(json!({"agentId": "walk.agent", "agentVersion": "1.0.0"})),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_owned();
    // A turn in it: the user's message is kept, the turn counted, the agent's version used.
    let (s, turn) = w
        .call("post", "/v1/runs", Some(json!({"agent": "walk.agent", "input": {"userMessage": "hello", "conversationId": cid}})))
        .await;
    assert_eq!(s, 201, "{turn}");
    assert_eq!(turn["agent"]["conversationId"], cid.as_str());
    let (_, messages) = w
        .call("get", &format!("/v1/conversations/{cid}/messages"), None)
        .await;
    assert_eq!(messages["data"][0]["content"], "hello", "{messages}");
    let (_, again) = w
        .call("get", &format!("/v1/conversations/{cid}"), None)
        .await;
    assert_eq!(again["turnCount"], 1, "{again}");
    let (s, _) = w
        .call("post", "/v1/runs", Some(json!({"agent": "walk.agent", "input": {"userMessage": "x", "conversationId": unknown}})))
        .await;
    assert_eq!(s, 404);
    assert_eq!(w.call("get", "/v1/conversations", None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/conversations/{cid}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/conversations/{cid}/messages"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call(
            "post",
            &format!("/v1/conversations/{cid}/close"),
            Some(json!({}))
        )
        .await
        .0,
        200
    );
    w.call(
        "post",
        &format!("/v1/conversations/{cid}/unregister"),
        Some(json!({})),
    )
    .await;

    // MCP endpoints: the refusals and lookups (a live server is walked in kindgi-api's tests).
    let bad = json!({"endpointId": "a.b", "name": "x", "transport": "streamable-http",
        "config": {"transport": "streamable-http", "url": "http://127.0.0.1:9/mcp"}, "scopeKind": "tenant"});
    assert_eq!(w.call("post", "/v1/mcp/endpoints", Some(bad)).await.0, 400);
    assert_eq!(w.call("get", "/v1/mcp/endpoints", None).await.0, 200);
    for p in ["", "/resources", "/resources/x%3A%2F%2Fy", "/prompts"] {
        assert_eq!(
            w.call("get", &format!("/v1/mcp/endpoints/nope{p}"), None)
                .await
                .0,
            404
        );
    }
    assert_eq!(
        w.call("post", "/v1/mcp/endpoints/nope/prompts/p", Some(json!({})))
            .await
            .0,
        404
    );
    assert_eq!(
        w.call("post", "/v1/mcp/endpoints/nope/unregister", Some(json!({})))
            .await
            .0,
        404
    );

    // Env values and secrets.
    let q = "envName=local&scopeKind=tenant";
    assert_eq!(
        w.call(
            "put",
            &format!("/v1/env/BASE_URL?{q}"),
            Some(json!({"value": "http://x"}))
        )
        .await
        .0,
        200
    );
    assert_eq!(w.call("get", &format!("/v1/env?{q}"), None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/env/BASE_URL?{q}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("delete", &format!("/v1/env/BASE_URL?{q}"), None)
            .await
            .0,
        200
    );
    // Scopes name the tenant by its UUID, as the rest of the wire.
    let tenant_id = kindgi_api::projects::tenant_uuid(tenant);
    let secret = json!({"scope": {"kind": "tenant", "tenantId": tenant_id}, "envName": "local",
        "name": "API_TOKEN", "value": "s3cret-value", "writeMode": "create-new"});
    let (s, body) = w.call("post", "/v1/secrets", Some(secret)).await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["record"]["scope"]["tenantId"], json!(tenant_id));
    assert!(!body.to_string().contains("s3cret-value"));
    assert_eq!(
        w.call("get", &format!("/v1/secrets?{q}"), None).await.0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/secrets/API_TOKEN?{q}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call("get", &format!("/v1/secrets/API_TOKEN/versions?{q}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call(
            "get",
            &format!("/v1/secrets/API_TOKEN/versions/1?{q}"),
            None
        )
        .await
        .0,
        200
    );
    w.call(
        "post",
        &format!("/v1/secrets/API_TOKEN/rotate?{q}"),
        Some(json!({})),
    )
    .await;
    w.call(
        "get",
        &format!("/v1/secrets/API_TOKEN/rotations/r1?{q}"),
        None,
    )
    .await;
    w.call(
        "get",
        &format!("/v1/secrets/API_TOKEN/rotations/r1/events?{q}"),
        None,
    )
    .await;
    w.call("delete", &format!("/v1/secrets/API_TOKEN?{q}"), None)
        .await;

    // Keys and service accounts.
    let (s, minted) = w
        .call("post", "/v1/tokens", Some(json!({"label": "walk"})))
        .await;
    assert_eq!(s, 201, "{minted}");
    let token_id = minted["tokenId"].as_str().unwrap().to_owned();
    assert_eq!(w.call("get", "/v1/tokens", None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/tokens/{token_id}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        w.call(
            "post",
            &format!("/v1/tokens/{token_id}/revoke"),
            Some(json!({}))
        )
        .await
        .0,
        200
    );
    let (s, sa) = w
        .call(
            "post",
            "/v1/service-accounts",
            Some(json!({"name": "walker"})),
        )
        .await;
    assert_eq!(s, 201, "{sa}");
    let sa_id = sa["serviceAccountId"].as_str().unwrap().to_owned();
    assert_eq!(w.call("get", "/v1/service-accounts", None).await.0, 200);
    assert_eq!(
        w.call("get", &format!("/v1/service-accounts/{sa_id}"), None)
            .await
            .0,
        200
    );
    let grant = json!({"kind": "tenant-member"});
    assert_eq!(
        w.call(
            "post",
            &format!("/v1/service-accounts/{sa_id}/grant"),
            Some(grant.clone())
        )
        .await
        .0,
        200
    );
    assert_eq!(
        w.call(
            "post",
            &format!("/v1/service-accounts/{sa_id}/ungrant"),
            Some(grant)
        )
        .await
        .0,
        200
    );
    assert_eq!(
        w.call(
            "post",
            &format!("/v1/service-accounts/{sa_id}/unregister"),
            Some(json!({}))
        )
        .await
        .0,
        200
    );

    // Every served operation was walked.
    let all: BTreeSet<(String, String)> = w.doc.ops.keys().cloned().collect();
    let missing: Vec<_> = all.difference(&w.seen).collect();
    assert!(missing.is_empty(), "operations not walked: {missing:?}");

    // And nothing else is mounted: the official document's other operations are not served.
    let official: Value = serde_json::from_slice(&official_document()).unwrap();
    let mut checked = 0;
    for (path, item) in official["paths"].as_object().unwrap() {
        for method in METHODS {
            if item.get(method).is_none() || all.contains(&(method.to_owned(), path.clone())) {
                continue;
            }
            // Parameters filled with a value no static segment equals.
            let concrete: String = path
                .split('/')
                .map(|s| if s.starts_with('{') { "zz-param" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            // A static route beside a parameter one (GET /v1/runs/failures next to
            // /v1/runs/{runId}) is served by the parameter route: skip those.
            if template_of(&w.doc, method, &concrete).is_some() {
                continue;
            }
            let r = w
                .http
                .request(
                    method.to_uppercase().parse().unwrap(),
                    format!("{}{concrete}", w.base),
                )
                .bearer_auth(&w.key)
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap_or(Value::Null);
            assert!(
                status == 501
                    && body["error"]["code"] == "not-served"
                    && body["error"]["details"]["method"] == method.to_uppercase()
                    && body["error"]["details"]["path"] == path.as_str()
                    && body["error"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("not served by this runtime")),
                "{method} {path} is not in the served document but answered {status}: {body}"
            );
            checked += 1;
        }
    }
    assert!(
        checked > 100,
        "only {checked} unserved operations were checked"
    );
    host.stop().await;
}
