//! The definitions registry (flows, agents, guardrails) on SQLite and PostgreSQL: immutable
//! versions, semver order, the latest active version, tombstones, paging by id prefix,
//! host puts and tenant isolation, and the store as core's `DefinitionSource` port.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::ports::DefinitionSource;
use kindgi_store::DatabaseKind;
use kindgi_store::definitions::{
    DefinitionError, DefinitionKind, Definitions, Latest, ListDefinitions, NewDefinition,
    PutOutcome, SOURCE_API,
};
use kindgi_store::testing::TestDatabase;
use serde_json::json;

const FLOW: DefinitionKind = DefinitionKind::Flow;

fn new(id: &str, version: &str, project: Option<&str>) -> NewDefinition {
    NewDefinition {
        id: id.to_owned(),
        version: version.to_owned(),
        project_id: project.map(str::to_owned),
        definition: json!({"id": id, "version": version, "nodes": [], "edges": []}),
        annotations: Some(json!({"pinsDigest": "sha256:x"})),
        source: SOURCE_API.to_owned(),
    }
}

async fn versions_and_latest(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let d = Definitions::new(t.db.clone());
    for v in ["1.9.0", "1.10.0", "1.10.1-rc.1", "0.1.0"] {
        d.publish("acme", FLOW, &new("acme.f", v, Some("p1")))
            .await
            .unwrap();
    }
    // Immutable; one project per id.
    let e = d
        .publish("acme", FLOW, &new("acme.f", "1.9.0", Some("p1")))
        .await;
    assert!(matches!(e, Err(DefinitionError::AlreadyRegistered { .. })));
    let e = d
        .publish("acme", FLOW, &new("acme.f", "2.0.0", Some("p2")))
        .await;
    assert!(matches!(e, Err(DefinitionError::ProjectMismatch { .. })));
    let all = d.versions("acme", FLOW, "acme.f").await.unwrap();
    let order: Vec<&str> = all.iter().map(|r| r.version.as_str()).collect();
    assert_eq!(order, ["0.1.0", "1.9.0", "1.10.0", "1.10.1-rc.1"]);
    assert_eq!(all[0].annotations().unwrap()["pinsDigest"], "sha256:x");
    // The latest includes prereleases (npm `*` with includePrerelease), as tools do.
    let Latest::Active(latest) = d.latest("acme", FLOW, "acme.f").await.unwrap() else {
        panic!("no latest")
    };
    assert_eq!(latest.version, "1.10.1-rc.1");
    // Tombstones: the latest moves down; all gone is Gone; reinstate is idempotent.
    assert_eq!(
        d.set_unregistered("acme", FLOW, "acme.f", "1.10.1-rc.1", true)
            .await
            .unwrap(),
        Some(true)
    );
    assert_eq!(
        d.set_unregistered("acme", FLOW, "acme.f", "1.10.1-rc.1", true)
            .await
            .unwrap(),
        Some(false)
    );
    let got = d.get_flow("acme", "acme.f", None).await.unwrap().unwrap();
    assert_eq!(got.version, "1.10.0");
    // An exact version is served even when unregistered.
    let exact = d
        .get_flow("acme", "acme.f", Some("1.10.1-rc.1"))
        .await
        .unwrap()
        .unwrap();
    assert!(exact.is_unregistered());
    for v in ["0.1.0", "1.9.0", "1.10.0"] {
        d.set_unregistered("acme", FLOW, "acme.f", v, true)
            .await
            .unwrap();
    }
    assert!(matches!(
        d.latest("acme", FLOW, "acme.f").await.unwrap(),
        Latest::Gone(r) if r.version == "1.10.1-rc.1"
    ));
    assert_eq!(d.get_flow("acme", "acme.f", None).await.unwrap(), None);
    assert_eq!(
        d.set_unregistered("acme", FLOW, "acme.f", "1.9.0", false)
            .await
            .unwrap(),
        Some(true)
    );
    assert_eq!(
        d.set_unregistered("acme", FLOW, "acme.f", "9.9.9", false)
            .await
            .unwrap(),
        None
    );
    // Other tenants and kinds see nothing.
    assert_eq!(
        d.latest("other", FLOW, "acme.f").await.unwrap(),
        Latest::NotFound
    );
    assert!(d.get_agent("acme", "acme.f", None).await.unwrap().is_none());
    t.cleanup().await.unwrap();
}

async fn lists(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let d = Definitions::new(t.db.clone());
    for id in ["acme.b", "acme.a", "zeta.c", "acme.c"] {
        d.publish("acme", FLOW, &new(id, "1.0.0", None))
            .await
            .unwrap();
    }
    d.set_unregistered("acme", FLOW, "acme.c", "1.0.0", true)
        .await
        .unwrap();
    let page = |after: Option<&str>, retired: bool| ListDefinitions {
        limit: 1,
        after: after.map(str::to_owned),
        prefix: Some("acme".into()),
        include_retired: retired,
    };
    let p1 = d.list("acme", FLOW, &page(None, false)).await.unwrap();
    assert_eq!(p1.items[0].id, "acme.a");
    assert!(p1.has_more);
    let p2 = d
        .list("acme", FLOW, &page(Some("acme.a"), false))
        .await
        .unwrap();
    assert_eq!(p2.items[0].id, "acme.b");
    assert!(!p2.has_more, "acme.c is retired");
    let p3 = d
        .list("acme", FLOW, &page(Some("acme.b"), true))
        .await
        .unwrap();
    assert_eq!(p3.items[0].id, "acme.c");
    assert!(p3.items[0].is_unregistered());
    let ids = d.list_ids("acme", FLOW).await.unwrap();
    let names: Vec<&str> = ids.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(names, ["acme.a", "acme.b", "zeta.c"]);
    t.cleanup().await.unwrap();
}

async fn host_puts(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let d = Definitions::new(t.db.clone());
    let agent = json!({"id": "pack.a", "version": "0.1.0", "name": "A"});
    assert_eq!(
        d.put_agent("acme", &agent, "pack:x").await.unwrap(),
        PutOutcome::Inserted
    );
    assert_eq!(
        d.put_agent("acme", &agent, "pack:x").await.unwrap(),
        PutOutcome::Unchanged
    );
    let mut edited = agent.clone();
    edited["name"] = json!("B");
    assert!(matches!(
        d.put_agent("acme", &edited, "pack:x").await,
        Err(DefinitionError::VersionTaken { .. })
    ));
    let g = json!({"id": "pack.g", "kind": "zero-llm", "check": "c", "action": {"on-violation": "halt"}});
    d.put_guardrail("acme", &g, "pack:x").await.unwrap();
    let got = d.get_guardrail("acme", "pack.g").await.unwrap().unwrap();
    assert_eq!(got.version, "");
    assert_eq!(got.project_id, None);
    assert!(matches!(
        d.latest("acme", DefinitionKind::Guardrail, "pack.g")
            .await
            .unwrap(),
        Latest::Active(_)
    ));
    assert!(
        d.put_flow("acme", &json!({"version": "1"}), "pack:x")
            .await
            .is_err()
    );
    assert_eq!(d.remove_source("acme", "pack:x").await.unwrap(), 2);
    // A pack's tool: idempotent, replaced in place when its file changes.
    let tools = kindgi_store::tools::StoreRegistry::new(t.db.clone());
    let mut m = json!({"id": "pack.t", "version": "0.1.0", "description": "T",
        "input": {"type": "object"}, "output": {"type": "object"}});
    let manifest = |v: &serde_json::Value| -> kindgi_spec::ToolManifest {
        serde_json::from_value(v.clone()).unwrap()
    };
    assert_eq!(
        tools.put_tool("acme", &manifest(&m)).await.unwrap(),
        PutOutcome::Inserted
    );
    assert_eq!(
        tools.put_tool("acme", &manifest(&m)).await.unwrap(),
        PutOutcome::Unchanged
    );
    m["description"] = json!("T2");
    assert_eq!(
        tools.put_tool("acme", &manifest(&m)).await.unwrap(),
        PutOutcome::Replaced
    );
    use kindgi_tools::registry::ToolRegistry as _;
    let got = tools.get("acme", "pack.t").await.unwrap();
    assert!(got.manifest_json.contains("T2"));
    assert!(d.get_agent("acme", "pack.a", None).await.unwrap().is_none());
    t.cleanup().await.unwrap();
}

/// Through core's port: an exact version (unregistered included: pins and resumes run it),
/// else the highest active one; a guardrail while registered; nothing of another tenant's.
async fn definition_source(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let d = Definitions::new(t.db.clone());
    for v in ["1.0.0", "1.1.0"] {
        d.publish("acme", FLOW, &new("acme.f", v, None))
            .await
            .unwrap();
    }
    d.set_unregistered("acme", FLOW, "acme.f", "1.1.0", true)
        .await
        .unwrap();
    let source: &dyn DefinitionSource = &d;
    let flow = |v: &str| json!({"id": "acme.f", "version": v, "nodes": [], "edges": []});
    assert_eq!(
        source.flow_json("acme", "acme.f", None).await.unwrap(),
        Some(flow("1.0.0"))
    );
    assert_eq!(
        source
            .flow_json("acme", "acme.f", Some("1.1.0"))
            .await
            .unwrap(),
        Some(flow("1.1.0"))
    );
    assert_eq!(
        source.flow_json("other", "acme.f", None).await.unwrap(),
        None
    );
    assert_eq!(
        source.agent_json("acme", "acme.f", None).await.unwrap(),
        None
    );
    let agent = json!({"id": "pack.a", "version": "0.1.0", "name": "A"});
    d.put_agent("acme", &agent, "pack:x").await.unwrap();
    assert_eq!(
        source
            .agent_json("acme", "pack.a", Some("0.1.0"))
            .await
            .unwrap(),
        Some(agent)
    );
    let g = json!({"id": "pack.g", "kind": "zero-llm", "check": "c"});
    d.put_guardrail("acme", &g, "pack:x").await.unwrap();
    assert_eq!(
        source.guardrail_json("acme", "pack.g").await.unwrap(),
        Some(g)
    );
    d.set_unregistered("acme", DefinitionKind::Guardrail, "pack.g", "", true)
        .await
        .unwrap();
    assert_eq!(source.guardrail_json("acme", "pack.g").await.unwrap(), None);
    t.cleanup().await.unwrap();
}

macro_rules! both {
    ($($name:ident),*) => {
        mod sqlite { $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })* }
        mod postgres { $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })* }
    };
}
both!(versions_and_latest, lists, host_puts, definition_source);
