//! Resolution through the database (the other half is kindgi-runtime's `tests/resolve.rs`,
//! same fixture): two tenants' flows on every store, tools by `(tenant, id, range)` from the
//! tool registry (kindgi-store's `StoreRegistry` on real SQLite and PostgreSQL) with npm
//! maxSatisfying at each call, an http-spec registry tool calling a real loopback server,
//! registry pack tools through the host's factory, recovery at the exact flow and agent
//! version, and env/secrets through `CallValues`. Here because the database runtimes are the
//! host's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-runtime/tests/support/resolve.rs"]
mod fixture;
mod support;

use async_trait::async_trait;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::get;
use fixture::{Caller, for_tenant, one_node_flow};
use kindgi_runtime::{
    AgentSpec, AgentTool, CallValues, PackCallError, PackCaller, RunOptions, RunStatus,
    RuntimeError, ToolTransport,
};
use kindgi_spec::ToolManifest;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tools::StoreRegistry;
use kindgi_tools::context::SecretResolver;
use kindgi_tools::registry::{RegisterOptions, ToolRegistry};
use kindgi_tools::{BoxFuture, ToolContext};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::{Backend, builder, cleanup, counting_tool, manifest, read_only, tool};

const SECRET: &str = "s3cr3t-token-value-never-journaled";

/// What the loopback HTTP server saw: paths, and whether the bearer token was right.
#[derive(Debug, Default)]
struct Seen {
    paths: Mutex<Vec<String>>,
}

async fn version_route(
    State(seen): State<Arc<Seen>>,
    Path(version): Path<String>,
) -> axum::Json<Value> {
    seen.paths.lock().unwrap().push(format!("/v/{version}"));
    axum::Json(json!({"servedBy": version}))
}

async fn private_route(State(seen): State<Arc<Seen>>, headers: HeaderMap) -> axum::Json<Value> {
    seen.paths.lock().unwrap().push("/private".into());
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    axum::Json(json!({"authorized": auth == format!("Bearer {SECRET}")}))
}

/// A real HTTP server on loopback: `GET /v/{version}` answers `{servedBy: version}`.
async fn http_server() -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route("/v/{version}", get(version_route))
        .route("/private", get(private_route))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}"), seen)
}

/// An http-spec manifest of `id` at `version` whose URL names the version.
fn http_manifest(id: &str, version: &str, base: &str) -> ToolManifest {
    serde_json::from_value(json!({
        "id": id,
        "description": format!("http tool {id}"),
        "version": version,
        "mutating": false,
        "input": {"type": "object"},
        "output": {"type": "object"},
        "spec": {"kind": "http", "method": "GET", "urlTemplate": format!("{base}/v/{version}")},
    }))
    .unwrap()
}

async fn register(registry: &StoreRegistry, tenant: &str, m: &ToolManifest) {
    registry
        .register(tenant, m, RegisterOptions::default())
        .await
        .unwrap();
}

async fn database(kind: DatabaseKind) -> TestDatabase {
    TestDatabase::new(kind)
        .await
        .expect("test database (PostgreSQL at KINDGI_TEST_DATABASE_URL)")
}

// ----- flows and agents per tenant ------------------------------------------------------

#[tokio::test]
async fn two_tenants_with_the_same_flow_id_each_run_their_own() {
    for backend in [Backend::Memory, Backend::Sqlite] {
        let (b, db) = builder(backend).await;
        let rt = b.build();
        let hits = Arc::new(AtomicUsize::new(0));
        for t in ["a", "b"] {
            let tool_id = format!("t.only-{t}");
            rt.tools().insert_for(
                Some(t),
                Arc::new(kindgi_runtime::InProcessTool::new(counting_tool(
                    &tool_id,
                    read_only(),
                    hits.clone(),
                    move |_| json!({"tenant": t}),
                ))),
            );
            rt.flows()
                .insert_json_for(Some(t), &one_node_flow("t.flow", "1.0.0", "tool", &tool_id))
                .unwrap();
        }
        for t in ["a", "b"] {
            let run = rt
                .start_run("t.flow", None, json!({}), for_tenant(t))
                .await
                .unwrap();
            assert_eq!(run.status, RunStatus::Completed, "{run:?}");
            assert_eq!(run.output, Some(json!({"tenant": t})));
            assert_eq!(run.tenant_id, t);
        }
        // A third tenant sees neither flow; one inserted for every tenant it does see.
        let err = rt
            .start_run("t.flow", None, json!({}), for_tenant("c"))
            .await
            .unwrap_err();
        assert!(matches!(err, RuntimeError::FlowNotFound { .. }), "{err}");
        // Tenant a's tool is invisible to tenant b, even with the same flow shape.
        rt.flows()
            .insert_json_for(
                Some("b"),
                &one_node_flow("t.cross", "1.0.0", "tool", "t.only-a"),
            )
            .unwrap();
        let err = rt
            .start_run("t.cross", None, json!({}), for_tenant("b"))
            .await
            .unwrap_err();
        assert!(matches!(err, RuntimeError::FlowUnbound { .. }), "{err}");
        cleanup(db).await;
    }
}

// ----- tools from the registry ----------------------------------------------------------

async fn agent_calls_the_highest_matching_version_and_a_new_one_mid_turn(kind: DatabaseKind) {
    let tdb = database(kind).await;
    let registry = Arc::new(StoreRegistry::new(tdb.db.clone()));
    let (base, seen) = http_server().await;
    for v in ["1.0.0", "1.2.0", "2.0.0"] {
        register(&registry, "acme", &http_manifest("t.lookup", v, &base)).await;
    }
    // Another tenant's 1.9.0 is not acme's.
    register(
        &registry,
        "other",
        &http_manifest("t.lookup", "1.9.0", &base),
    )
    .await;
    let late = registry.clone();
    let late_base = base.clone();
    let model = Caller {
        tool: "t.lookup".into(),
        calls: 2,
        step: AtomicUsize::new(0),
        between: Mutex::new(Some(Box::pin(async move {
            register(
                &late,
                "acme",
                &http_manifest("t.lookup", "1.3.0", &late_base),
            )
            .await;
        }))),
    };
    let rt = kindgi_runtime::Runtime::over(tdb.db.ports())
        .registry(registry.clone())
        .model(Arc::new(model))
        .build();
    rt.agents()
        .insert(AgentSpec::new("t.agent").with_tools([AgentTool::new("t.lookup", "^1.0.0")]));
    rt.flows()
        .insert_json(&one_node_flow("t.turn", "1.0.0", "agent", "t.agent"))
        .unwrap();
    let run = rt
        .start_run("t.turn", None, json!("look it up"), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    let out = run.output.unwrap();
    let calls = out["toolCalls"].as_array().unwrap();
    assert_eq!(calls[0]["toolVersion"], "1.2.0");
    assert_eq!(calls[1]["toolVersion"], "1.3.0");
    assert_eq!(out["text"], r#"{"servedBy":"1.2.0"}|{"servedBy":"1.3.0"}"#);
    assert_eq!(*seen.paths.lock().unwrap(), ["/v/1.2.0", "/v/1.3.0"]);
    // Two registry versions built, each once.
    assert_eq!(rt.resolver().built_count(), 2);
    tdb.cleanup().await.unwrap();
}

#[tokio::test]
async fn an_agent_calls_the_highest_matching_registry_version_on_sqlite() {
    agent_calls_the_highest_matching_version_and_a_new_one_mid_turn(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn an_agent_calls_the_highest_matching_registry_version_on_postgres() {
    agent_calls_the_highest_matching_version_and_a_new_one_mid_turn(DatabaseKind::Postgres).await;
}

async fn registry_http_tool_runs_from_a_flow(kind: DatabaseKind) {
    let tdb = database(kind).await;
    let registry = Arc::new(StoreRegistry::new(tdb.db.clone()));
    let (base, seen) = http_server().await;
    for v in ["1.0.0", "1.0.5", "1.4.0", "2.1.0"] {
        register(&registry, "acme", &http_manifest("t.lookup", v, &base)).await;
    }
    let rt = kindgi_runtime::Runtime::over(tdb.db.ports())
        .registry(registry.clone())
        .build();
    let cases = [
        ("t.lookup", "2.1.0"),
        ("t.lookup@~1.0.0", "1.0.5"),
        ("t.lookup@^1.0.0", "1.4.0"),
        ("t.lookup@1.0.0", "1.0.0"),
    ];
    for (i, (reference, served)) in cases.iter().enumerate() {
        let id = format!("t.flow-{i}");
        rt.flows()
            .insert_json(&one_node_flow(&id, "1.0.0", "tool", reference))
            .unwrap();
        let run = rt
            .start_run(&id, None, json!({}), for_tenant("acme"))
            .await
            .unwrap();
        assert_eq!(run.status, RunStatus::Completed, "{reference}: {run:?}");
        assert_eq!(run.output, Some(json!({"servedBy": served})), "{reference}");
    }
    // The range as the node's `config.version`.
    let flow = json!({"id": "t.cfg", "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "t.lookup", "config": {"version": "<1.4.0"}}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]});
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let run = rt
        .start_run("t.cfg", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(run.output, Some(json!({"servedBy": "1.0.5"})));
    assert_eq!(seen.paths.lock().unwrap().len(), 5);
    // A tenant without the tool is refused before a run exists.
    let err = rt
        .start_run("t.flow-0", None, json!({}), for_tenant("other"))
        .await
        .unwrap_err();
    assert!(matches!(err, RuntimeError::FlowUnbound { .. }), "{err}");
    tdb.cleanup().await.unwrap();
}

#[tokio::test]
async fn a_registry_http_tool_is_callable_from_a_flow_on_sqlite() {
    registry_http_tool_runs_from_a_flow(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn a_registry_http_tool_is_callable_from_a_flow_on_postgres() {
    registry_http_tool_runs_from_a_flow(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn an_unresolvable_range_fails_the_step_with_tool_version_unresolvable() {
    let tdb = database(DatabaseKind::Sqlite).await;
    let registry = Arc::new(StoreRegistry::new(tdb.db.clone()));
    let (base, seen) = http_server().await;
    for v in ["1.0.0", "1.2.0"] {
        register(&registry, "acme", &http_manifest("t.lookup", v, &base)).await;
    }
    let model = Caller {
        tool: "t.lookup".into(),
        calls: 1,
        step: AtomicUsize::new(0),
        between: Mutex::new(None),
    };
    let rt = kindgi_runtime::Runtime::over(tdb.db.ports())
        .registry(registry)
        .model(Arc::new(model))
        .build();
    rt.agents()
        .insert(AgentSpec::new("t.agent").with_tools([AgentTool::new("t.lookup", "^3.0.0")]));
    rt.flows()
        .insert_json(&one_node_flow("t.turn", "1.0.0", "agent", "t.agent"))
        .unwrap();
    rt.flows()
        .insert_json(&one_node_flow("t.flow", "1.0.0", "tool", "t.lookup@>=5"))
        .unwrap();
    rt.flows()
        .insert_json(&one_node_flow(
            "t.bad",
            "1.0.0",
            "tool",
            "t.lookup@not a range!",
        ))
        .unwrap();
    let run = rt
        .start_run("t.turn", None, json!("x"), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            r#"tool-version-unresolvable: Tool "t.lookup" has no version satisfying "^3.0.0" (available: 1.2.0, 1.0.0)"#
        )
    );
    let run = rt
        .start_run("t.flow", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            r#"tool-version-unresolvable: Tool "t.lookup" has no version satisfying ">=5" (available: 1.2.0, 1.0.0)"#
        )
    );
    let run = rt
        .start_run("t.bad", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            r#"tool-version-unresolvable: Version range "not a range!" for tool "t.lookup" is not a valid semver range"#
        )
    );
    assert!(seen.paths.lock().unwrap().is_empty());
    tdb.cleanup().await.unwrap();
}

#[tokio::test]
async fn a_registry_pack_tool_without_a_factory_fails_naming_the_tool_and_why() {
    let tdb = database(DatabaseKind::Sqlite).await;
    let registry = Arc::new(StoreRegistry::new(tdb.db.clone()));
    register(
        &registry,
        "acme",
        &manifest("t.packed", json!({"version": "1.1.0"})),
    )
    .await;
    let rt = kindgi_runtime::Runtime::over(tdb.db.ports())
        .registry(registry)
        .build();
    rt.flows()
        .insert_json(&one_node_flow("t.flow", "1.0.0", "tool", "t.packed"))
        .unwrap();
    let run = rt
        .start_run("t.flow", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    let msg = run.failure_message.unwrap();
    assert!(
        msg.starts_with(r#"tool-not-found: tool "t.packed" version 1.1.0 is in the registry, but it has no `spec`"#),
        "{msg}"
    );
    tdb.cleanup().await.unwrap();
}

// ----- recovery at the exact version ----------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_uses_the_exact_flow_version_it_started_with() {
    let tdb = database(DatabaseKind::Sqlite).await;
    let entered = Arc::new(tokio::sync::Notify::new());
    let first = kindgi_runtime::Runtime::over(tdb.db.ports()).build();
    let signal = entered.clone();
    first
        .tools()
        .insert_tool(tool("t.block", json!({}), move |_| {
            let signal = signal.clone();
            async move {
                signal.notify_one();
                std::future::pending::<()>().await;
                Ok(json!("never"))
            }
        }));
    let flow = |version: &str, step: &str| {
        json!({"id": "t.flow", "version": version,
            "nodes": [{"id": "a", "kind": "tool", "ref": "t.block"}, {"id": "b", "kind": "tool", "ref": step}],
            "edges": [{"id": "e1", "from": "$start", "to": "a"}, {"id": "e2", "from": "a", "to": "b"},
                      {"id": "e3", "from": "b", "to": "$end"}]})
        .to_string()
    };
    first
        .tools()
        .insert_tool(tool("t.one", json!({}), |_| async { Ok(json!("v1")) }));
    first.flows().insert_json(&flow("1.0.0", "t.one")).unwrap();
    let run = first
        .start_run(
            "t.flow",
            None,
            json!({}),
            RunOptions {
                tenant_id: Some("acme".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    entered.notified().await;
    first.abort_all();

    // After the crash, 2.0.0 is published; the resumed run still runs 1.0.0.
    let second = kindgi_runtime::Runtime::over(tdb.reopen().await.unwrap().ports()).build();
    let hits = Arc::new(AtomicUsize::new(0));
    second
        .tools()
        .insert_tool(counting_tool("t.block", json!({}), hits.clone(), |_| {
            json!({})
        }));
    second
        .tools()
        .insert_tool(counting_tool("t.one", json!({}), hits.clone(), |_| {
            json!("v1")
        }));
    second
        .tools()
        .insert_tool(counting_tool("t.two", json!({}), hits.clone(), |_| {
            json!("v2")
        }));
    second.flows().insert_json(&flow("1.0.0", "t.one")).unwrap();
    second.flows().insert_json(&flow("2.0.0", "t.two")).unwrap();
    assert_eq!(
        second.recover().await.unwrap(),
        std::slice::from_ref(&run.id)
    );
    let done = second.wait_for_run(&run.id).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{done:?}");
    assert_eq!(done.flow_version, "1.0.0");
    assert_eq!(done.output, Some(json!("v1")));
    // A new run takes the highest.
    let fresh = second
        .start_run("t.flow", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(fresh.output, Some(json!("v2")));
    tdb.cleanup().await.unwrap();
}

// ----- env values and secrets -----------------------------------------------------------

#[derive(Debug)]
struct Secrets;

impl SecretResolver for Secrets {
    fn resolve<'a>(
        &'a self,
        _env_name: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        let answer = if name == "api-token" {
            Ok(SECRET.to_owned())
        } else {
            Err(format!("no secret \"{name}\""))
        };
        Box::pin(async move { answer })
    }
}

/// Tenant `acme` has `REGION=eu` and the secret; other tenants have nothing.
#[derive(Debug, Default)]
struct Values {
    asked: Mutex<Vec<(String, Vec<String>)>>,
}

#[async_trait]
impl CallValues for Values {
    async fn env(
        &self,
        tenant: &str,
        _project: Option<&str>,
        _tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, kindgi_runtime::StorageError> {
        self.asked
            .lock()
            .unwrap()
            .push((tenant.to_owned(), names.to_vec()));
        let mut out = BTreeMap::new();
        if tenant == "acme" {
            out.insert("REGION".to_owned(), "eu".to_owned());
            out.insert("UNDECLARED".to_owned(), "x".to_owned());
        }
        Ok(out)
    }

    fn secrets(
        &self,
        tenant: &str,
        _project: Option<&str>,
        _tool: &ToolManifest,
    ) -> Option<Arc<dyn SecretResolver>> {
        (tenant == "acme").then(|| Arc::new(Secrets) as Arc<dyn SecretResolver>)
    }

    async fn secret_values(
        &self,
        tenant: &str,
        _project: Option<&str>,
        _tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, kindgi_runtime::StorageError> {
        let mut out = BTreeMap::new();
        if tenant == "acme" {
            for name in ["api-token", "UNDECLARED_SECRET"] {
                out.insert(name.to_owned(), SECRET.to_owned());
            }
        }
        out.retain(|k, _| names.contains(k) || k == "UNDECLARED_SECRET");
        Ok(out)
    }

    fn served_env(&self) -> &str {
        "local"
    }
}

#[derive(Debug, Default)]
struct CountingPack {
    calls: AtomicUsize,
}

#[async_trait]
impl PackCaller for CountingPack {
    async fn call_tool(
        &self,
        _manifest: &ToolManifest,
        _input: Value,
        ctx: &ToolContext,
    ) -> Result<Value, PackCallError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match ctx.secret_values.as_deref() {
            // Answers the secrets it got: names, the values reversed, and the value itself
            // (which the runtime must mask in what it stores).
            Some(secrets) => Ok(json!({
                "names": secrets.0.keys().collect::<Vec<_>>(),
                "reversed": secrets.0.values().map(|v| v.chars().rev().collect::<String>()).collect::<Vec<_>>(),
                "echo": secrets.0.values().collect::<Vec<_>>(),
            })),
            None => Ok(json!({"env": ctx.env.as_deref().cloned()})),
        }
    }
}

#[tokio::test]
async fn a_pack_call_carries_exactly_its_declared_secrets_and_a_missing_one_fails_before_it() {
    let tdb = database(DatabaseKind::Sqlite).await;
    let rt = kindgi_runtime::Runtime::over(tdb.db.ports())
        .call_values(Arc::new(Values::default()))
        .build();
    let pack = Arc::new(CountingPack::default());
    let needs = json!({"needsSpec": {"secrets": {"api-token": {"type": "string"}}}});
    rt.tools()
        .insert_pack_tool(manifest("t.packsecret", needs), "p", pack.clone());
    rt.flows()
        .insert_json(&one_node_flow(
            "f.packsecret",
            "1.0.0",
            "tool",
            "t.packsecret",
        ))
        .unwrap();
    let run = rt
        .start_run("f.packsecret", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    let reversed: String = SECRET.chars().rev().collect();
    // Only the declared name (the provider also had UNDECLARED_SECRET), the value itself
    // arrived, and the stored output has it masked.
    assert_eq!(
        run.output,
        Some(json!({"names": ["api-token"], "reversed": [reversed], "echo": ["***"]})),
        "{run:?}"
    );
    let journal = rt.journal(&run.id, None, None).await.unwrap();
    assert!(!serde_json::to_string(&journal).unwrap().contains(SECRET));
    let run = rt
        .start_run("f.packsecret", None, json!({}), for_tenant("other"))
        .await
        .unwrap();
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            "precondition-failed: Tool \"t.packsecret\" was not run: secret-value-missing: tool \"t.packsecret\" needs secret \"api-token\", which is not set in env \"local\" for this tenant (its project or the tenant); set it with `kindgi secrets set api-token --env=local --scope=tenant --from-stdin`"
        )
    );
    assert_eq!(pack.calls.load(Ordering::SeqCst), 1, "not sent without it");
    tdb.cleanup().await.unwrap();
}

#[tokio::test]
async fn env_values_and_secrets_reach_the_call_and_a_missing_env_fails_before_the_handler() {
    let tdb = database(DatabaseKind::Sqlite).await;
    let registry = Arc::new(StoreRegistry::new(tdb.db.clone()));
    let (base, seen) = http_server().await;
    let private: ToolManifest = serde_json::from_value(json!({
        "id": "t.private", "description": "needs a token", "version": "1.0.0", "mutating": false,
        "input": {"type": "object"}, "output": {"type": "object"},
        "spec": {"kind": "http", "method": "GET", "urlTemplate": format!("{base}/private"),
            "authorization": {"kind": "bearer", "secretRef": {"envName": "local", "name": "api-token"}}},
    }))
    .unwrap();
    for t in ["acme", "other"] {
        register(&registry, t, &private).await;
    }
    let values = Arc::new(Values::default());
    let rt = kindgi_runtime::Runtime::over(tdb.db.ports())
        .registry(registry)
        .call_values(values.clone())
        .build();
    let env_needs = json!({"needsSpec": {"env": {"REGION": {"type": "string"}}}});
    // The handler sees only the declared names.
    let seen_env = Arc::new(Mutex::new(None));
    let s = seen_env.clone();
    let handler: kindgi_tools::Handler = Arc::new(move |_input: Value, ctx: ToolContext| {
        *s.lock().unwrap() = ctx.env.as_deref().cloned();
        let fut: BoxFuture<'static, Result<Value, kindgi_tools::HandlerError>> =
            Box::pin(async { Ok(json!("ran")) });
        fut
    });
    rt.tools().insert_tool(kindgi_tools::Tool::from_parts(
        manifest("t.env", env_needs.clone()),
        handler,
    ));
    let pack = Arc::new(CountingPack::default());
    rt.tools()
        .insert_pack_tool(manifest("t.packenv", env_needs), "p", pack.clone());
    for (id, reference) in [
        ("f.env", "t.env"),
        ("f.pack", "t.packenv"),
        ("f.private", "t.private"),
    ] {
        rt.flows()
            .insert_json(&one_node_flow(id, "1.0.0", "tool", reference))
            .unwrap();
    }

    let ok = rt
        .start_run("f.env", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(ok.output, Some(json!("ran")), "{ok:?}");
    let expected: BTreeMap<String, String> = [("REGION".to_owned(), "eu".to_owned())].into();
    assert_eq!(seen_env.lock().unwrap().clone(), Some(expected.clone()));
    let ok = rt
        .start_run("f.pack", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(ok.output, Some(json!({"env": expected})));
    assert_eq!(pack.calls.load(Ordering::SeqCst), 1);

    let missing = r#"Tool "X" was not run: env-value-missing: tool "X" needs env value "REGION": the context's `env` doesn't set it, and its schema has no default"#;
    for (flow, id) in [("f.env", "t.env"), ("f.pack", "t.packenv")] {
        let run = rt
            .start_run(flow, None, json!({}), for_tenant("other"))
            .await
            .unwrap();
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(
            run.failure_message.unwrap(),
            format!("precondition-failed: {}", missing.replace('X', id)),
        );
    }
    // The pack was not called for the tenant without the value.
    assert_eq!(pack.calls.load(Ordering::SeqCst), 1);
    assert!(
        values
            .asked
            .lock()
            .unwrap()
            .iter()
            .all(|(_, n)| n == &["REGION"])
    );

    // The secret reaches the request, and never the run's record or journal.
    let run = rt
        .start_run("f.private", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(run.output, Some(json!({"authorized": true})), "{run:?}");
    let journal = rt.journal(&run.id, None, None).await.unwrap();
    let text = serde_json::to_string(&journal).unwrap() + &serde_json::to_string(&run).unwrap();
    assert!(!text.contains(SECRET));
    // Without a resolver for the tenant, the call fails clearly (and still leaks nothing).
    let run = rt
        .start_run("f.private", None, json!({}), for_tenant("other"))
        .await
        .unwrap();
    let msg = run.failure_message.unwrap();
    assert!(msg.contains("declares authorization"), "{msg}");
    assert!(!msg.contains(SECRET));
    assert_eq!(seen.paths.lock().unwrap().len(), 1);
    tdb.cleanup().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_agent_step_runs_the_agent_version_it_started_with() {
    let tdb = database(DatabaseKind::Sqlite).await;
    let entered = Arc::new(tokio::sync::Notify::new());
    let caller = |calls| Caller {
        tool: "t.block".into(),
        calls,
        step: AtomicUsize::new(0),
        between: Mutex::new(None),
    };
    let first = kindgi_runtime::Runtime::over(tdb.db.ports())
        .model(Arc::new(caller(1)))
        .build();
    let signal = entered.clone();
    first
        .tools()
        .insert_tool(tool("t.block", json!({}), move |_| {
            let signal = signal.clone();
            async move {
                signal.notify_one();
                std::future::pending::<()>().await;
                Ok(json!("never"))
            }
        }));
    let v1 = AgentSpec::new("t.agent")
        .with_version("1.0.0")
        .with_tools(["t.block"]);
    first.agents().insert(v1.clone());
    first
        .flows()
        .insert_json(&one_node_flow("t.turn", "1.0.0", "agent", "t.agent"))
        .unwrap();
    let options = RunOptions {
        tenant_id: Some("acme".into()),
        ..Default::default()
    };
    let run = first
        .start_run("t.turn", None, json!("go"), options)
        .await
        .unwrap();
    entered.notified().await;
    first.abort_all();

    // 2.0.0 no longer lists t.block: were it used, the recorded call would be refused.
    let second = kindgi_runtime::Runtime::over(tdb.reopen().await.unwrap().ports())
        .model(Arc::new(caller(0)))
        .build();
    second
        .tools()
        .insert_tool(tool("t.block", json!({}), |_| async {
            Ok(json!({"done": true}))
        }));
    second
        .tools()
        .insert_tool(tool("t.other", json!({}), |_| async { Ok(json!({})) }));
    second.agents().insert(v1);
    second.agents().insert(
        AgentSpec::new("t.agent")
            .with_version("2.0.0")
            .with_tools(["t.other"]),
    );
    second
        .flows()
        .insert_json(&one_node_flow("t.turn", "1.0.0", "agent", "t.agent"))
        .unwrap();
    assert_eq!(
        second.recover().await.unwrap(),
        std::slice::from_ref(&run.id)
    );
    let done = second.wait_for_run(&run.id).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{done:?}");
    let out = done.output.unwrap();
    assert_eq!(out["text"], r#"{"done":true}"#);
    assert_eq!(out["toolCalls"][0]["toolVersion"], "1.0.0");
    let journal = second.journal(&run.id, None, None).await.unwrap();
    let pinned = journal.iter().any(|e| {
        e.payload
            .as_ref()
            .is_some_and(|p| p["key"] == "agent-version" && p["value"] == "1.0.0")
    });
    assert!(pinned, "{journal:?}");
    tdb.cleanup().await.unwrap();
}

/// A host's factory for registry tools without a spec: pack tools through one caller.
#[derive(Debug, Default)]
struct Packs {
    caller: Arc<CountingPack>,
    built: AtomicUsize,
}

#[async_trait]
impl kindgi_runtime::RegistryToolFactory for Packs {
    async fn build(
        &self,
        _tenant: &str,
        manifest: &ToolManifest,
    ) -> Result<Option<Arc<dyn kindgi_runtime::ToolDispatcher>>, kindgi_runtime::RegistryToolError>
    {
        self.built.fetch_add(1, Ordering::SeqCst);
        if manifest.id.as_str() == "t.unserved" {
            return Ok(None);
        }
        Ok(Some(Arc::new(kindgi_runtime::PackTool::new(
            manifest.clone(),
            "p",
            self.caller.clone(),
        ))))
    }
}

#[tokio::test]
async fn registry_pack_tools_go_to_the_host_factory_built_once_per_version() {
    let tdb = database(DatabaseKind::Postgres).await;
    let registry = Arc::new(StoreRegistry::new(tdb.db.clone()));
    for (id, v) in [
        ("t.packed", "1.0.0"),
        ("t.packed", "1.1.0"),
        ("t.unserved", "1.0.0"),
    ] {
        register(&registry, "acme", &manifest(id, json!({"version": v}))).await;
    }
    let packs = Arc::new(Packs::default());
    let rt = kindgi_runtime::Runtime::over(tdb.db.ports())
        .registry(registry)
        .registry_tools(packs.clone())
        .build();
    rt.flows()
        .insert_json(&one_node_flow("t.flow", "1.0.0", "tool", "t.packed@^1"))
        .unwrap();
    rt.flows()
        .insert_json(&one_node_flow("t.none", "1.0.0", "tool", "t.unserved"))
        .unwrap();
    for _ in 0..2 {
        let run = rt
            .start_run("t.flow", None, json!({}), for_tenant("acme"))
            .await
            .unwrap();
        assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    }
    assert_eq!(packs.caller.calls.load(Ordering::SeqCst), 2);
    assert_eq!(packs.built.load(Ordering::SeqCst), 1);
    let t = rt
        .resolver()
        .resolve("acme", "t.packed", None)
        .await
        .unwrap();
    assert_eq!(
        (t.transport(), t.manifest().version.as_str()),
        (ToolTransport::Pack, "1.1.0")
    );
    let run = rt
        .start_run("t.none", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            r#"tool-not-found: tool "t.unserved" version 1.0.0 is in the registry, but it has no `spec` (it is a pack or MCP tool) and no connected pack or MCP server serves it"#
        )
    );
    tdb.cleanup().await.unwrap();
}
