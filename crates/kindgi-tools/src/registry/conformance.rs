//! A behavioural suite every [`ToolRegistry`] implementation must pass (the reference's
//! registry cases, made tenant-scoped). Run it from a test with a fresh, empty registry:
//! `conformance::run(&registry).await`. It panics with a message on the first failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kindgi_spec::ToolManifest;
use serde_json::json;

use super::{ListQuery, RegisterOptions, RegistryError, ToolRegistry};

/// A minimal valid manifest.
pub fn manifest(id: &str, version: &str) -> ToolManifest {
    serde_json::from_value(json!({
        "id": id,
        "description": format!("{id} at {version}"),
        "version": version,
        "input": {"type": "object", "properties": {"msg": {"type": "string"}}, "required": ["msg"]},
        "output": {"type": "object"},
        "mutating": false
    }))
    .expect("test manifest")
}

async fn reg(r: &dyn ToolRegistry, tenant: &str, id: &str, v: &str) {
    r.register(tenant, &manifest(id, v), RegisterOptions::default())
        .await
        .unwrap_or_else(|e| panic!("register {id}@{v}: {e}"));
}

/// Run every case.
pub async fn run(r: &dyn ToolRegistry) {
    register_and_get(r).await;
    versions_and_resolution(r).await;
    retired_and_tombstones(r).await;
    tenants_and_projects(r).await;
    listing(r).await;
}

async fn register_and_get(r: &dyn ToolRegistry) {
    let m = manifest("test.echo", "1.0.0");
    let rec = r
        .register("t1", &m, RegisterOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (rec.tool_id.as_str(), rec.version.as_str()),
        ("test.echo", "1.0.0")
    );
    let got = r.get("t1", "test.echo").await.unwrap();
    assert_eq!(
        got.manifest().unwrap(),
        m,
        "get returns the registered manifest"
    );
    assert_eq!(got.project_id, super::DEFAULT_PROJECT);
    // Immutable: the same (id, version) again is refused, identical or not.
    let err = r
        .register("t1", &m, RegisterOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "duplicate-tool-version");
    assert_eq!(
        err.to_string(),
        "Tool \"test.echo@1.0.0\" is already registered"
    );
    let mut changed = m.clone();
    changed.description = "different".into();
    assert_eq!(
        r.register("t1", &changed, RegisterOptions::default())
            .await
            .unwrap_err()
            .code(),
        "duplicate-tool-version"
    );
    assert_eq!(
        r.get_version("t1", "test.echo", "1.0.0")
            .await
            .unwrap()
            .manifest()
            .unwrap(),
        m
    );
    let err = r.get("t1", "missing").await.unwrap_err();
    assert!(matches!(err, RegistryError::ToolNotFound { .. }));
    assert_eq!(err.to_string(), "No tool registered with id \"missing\"");
    let err = r.get_version("t1", "test.echo", "9.9.9").await.unwrap_err();
    assert_eq!(err.code(), "tool-version-not-found");
    assert_eq!(
        err.to_string(),
        "Tool \"test.echo\" has no version \"9.9.9\" registered"
    );
    assert!(matches!(
        r.get_version("t1", "test.echo", "../1.0.0")
            .await
            .unwrap_err(),
        RegistryError::VersionNotFound { .. }
    ));
    // Versions must be exact semver without build metadata.
    for bad in ["1.0", "01.0.0", "1.0.0+build", "latest"] {
        let err = r
            .register("t1", &manifest("test.bad", bad), RegisterOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code(), "invalid-tool-definition", "{bad}");
    }
    assert!(
        matches!(
            r.get("t1", "test.bad").await.unwrap_err(),
            RegistryError::ToolNotFound { .. }
        ),
        "nothing stored"
    );
    // SQL-looking and unusual ids are data, stored verbatim.
    let odd = "x'; DROP TABLE tools; --";
    reg(r, "t1", odd, "1.0.0").await;
    assert_eq!(r.get("t1", odd).await.unwrap().tool_id, odd);
    reg(r, "t1", "ünïcødé.tool", "1.0.0").await;
    assert_eq!(r.get("t1", "ünïcødé.tool").await.unwrap().version, "1.0.0");
}

async fn versions_and_resolution(r: &dyn ToolRegistry) {
    reg(r, "t1", "multi", "1.0.0").await;
    reg(r, "t1", "multi", "1.1.0").await;
    let vs: Vec<String> = r
        .versions("t1", "multi", false)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(vs, ["1.1.0", "1.0.0"]);
    assert_eq!(r.get("t1", "multi").await.unwrap().version, "1.1.0");
    assert_eq!(
        r.get_version("t1", "multi", "1.0.0").await.unwrap().version,
        "1.0.0"
    );

    for v in ["1.0.0", "1.1.0", "2.0.0", "0.10.0", "0.9.0", "1.10.0-rc.1"] {
        reg(r, "t1", "rng", v).await;
    }
    let res = |range: &'static str| async move {
        r.resolve("t1", "rng", Some(range))
            .await
            .map(|x| x.resolved_version)
    };
    assert_eq!(res("^1.0.0").await.unwrap(), "1.1.0");
    assert_eq!(res("*").await.unwrap(), "2.0.0");
    assert_eq!(res("1.0.0").await.unwrap(), "1.0.0");
    assert_eq!(res("~0.9").await.unwrap(), "0.9.0");
    assert_eq!(res("^0.9.0 || ^0.10.0").await.unwrap(), "0.10.0");
    assert_eq!(res("^1.10.0-rc.0").await.unwrap(), "1.10.0-rc.1");
    assert_eq!(res("1.0.0 - 1.5").await.unwrap(), "1.1.0");
    assert_eq!(
        r.resolve("t1", "rng", None).await.unwrap().resolved_version,
        "2.0.0"
    );
    let err = res("not-a-range").await.unwrap_err();
    assert_eq!(err.code(), "invalid-version-range");
    assert_eq!(
        err.to_string(),
        "Version range \"not-a-range\" for tool \"rng\" is not a valid semver range"
    );
    let err = r.resolve("t1", "multi", Some("^2.0.0")).await.unwrap_err();
    assert_eq!(err.code(), "tool-version-unresolvable");
    assert_eq!(
        err.to_string(),
        "Tool \"multi\" has no version satisfying \"^2.0.0\" (available: 1.1.0, 1.0.0)"
    );
    assert!(
        matches!(err, RegistryError::Unresolvable { ref available, .. } if available == &["1.1.0", "1.0.0"])
    );
    assert_eq!(
        r.resolve("t1", "missing", Some("^1.0.0"))
            .await
            .unwrap_err()
            .code(),
        "tool-not-found"
    );

    // The reference's agreement table.
    for v in ["1.0.0", "1.0.4", "1.2.0", "2.0.0"] {
        reg(r, "t1", "agree", v).await;
    }
    for (range, want) in [
        ("^1.0.0", Some("1.2.0")),
        ("~1.0.0", Some("1.0.4")),
        (">=1.0.0", Some("2.0.0")),
        ("1.0.0", Some("1.0.0")),
        ("^3.0.0", None),
    ] {
        let got = r.resolve("t1", "agree", Some(range)).await;
        match want {
            Some(w) => assert_eq!(got.unwrap().resolved_version, w, "{range}"),
            None => assert_eq!(
                got.unwrap_err().code(),
                "tool-version-unresolvable",
                "{range}"
            ),
        }
    }
}

async fn retired_and_tombstones(r: &dyn ToolRegistry) {
    reg(r, "t1", "ret", "1.0.0").await;
    r.register(
        "t1",
        &manifest("ret", "1.1.0"),
        RegisterOptions {
            retired: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(
        r.get_version("t1", "ret", "1.1.0")
            .await
            .unwrap()
            .is_unregistered()
    );
    assert_eq!(
        r.resolve("t1", "ret", Some("^1.0.0"))
            .await
            .unwrap()
            .resolved_version,
        "1.0.0"
    );
    assert_eq!(r.get("t1", "ret").await.unwrap().version, "1.0.0");
    let vs: Vec<String> = r
        .versions("t1", "ret", false)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(vs, ["1.0.0"]);
    let all = r.versions("t1", "ret", true).await.unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[0].unregistered_at.is_some() && all[0].version == "1.1.0");

    // Only-retired id: not resolvable, not listed, still reachable by exact version.
    r.register(
        "t1",
        &manifest("only-retired", "2.0.0"),
        RegisterOptions {
            retired: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let err = r
        .resolve("t1", "only-retired", Some("^2.0.0"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, RegistryError::Unresolvable { ref available, .. } if available.is_empty()),
        "{err}"
    );
    assert!(r.get_version("t1", "only-retired", "2.0.0").await.is_ok());
    assert_eq!(
        r.get("t1", "only-retired").await.unwrap_err().code(),
        "tool-gone"
    );

    // Unregister / reinstate.
    reg(r, "t1", "tomb", "1.0.0").await;
    reg(r, "t1", "tomb", "1.1.0").await;
    r.unregister("t1", "tomb", "1.1.0").await.unwrap();
    r.unregister("t1", "tomb", "1.1.0").await.unwrap(); // idempotent
    assert_eq!(r.get("t1", "tomb").await.unwrap().version, "1.0.0");
    assert_eq!(
        r.resolve("t1", "tomb", Some("1.1.0"))
            .await
            .unwrap_err()
            .code(),
        "tool-version-unresolvable"
    );
    r.unregister("t1", "tomb", "1.0.0").await.unwrap();
    assert_eq!(r.get("t1", "tomb").await.unwrap_err().code(), "tool-gone");
    assert!(
        r.reinstate("t1", "tomb", "1.1.0").await.unwrap(),
        "was tombstoned"
    );
    assert!(
        !r.reinstate("t1", "tomb", "1.1.0").await.unwrap(),
        "already active"
    );
    assert_eq!(r.get("t1", "tomb").await.unwrap().version, "1.1.0");
    assert_eq!(
        r.unregister("t1", "tomb", "3.0.0")
            .await
            .unwrap_err()
            .code(),
        "tool-version-not-found"
    );
    assert_eq!(
        r.reinstate("t1", "nope", "1.0.0").await.unwrap_err().code(),
        "tool-not-found"
    );
    // Tombstoned versions still block re-registration: entries are immutable.
    r.unregister("t1", "tomb", "1.0.0").await.unwrap();
    assert_eq!(
        r.register("t1", &manifest("tomb", "1.0.0"), RegisterOptions::default())
            .await
            .unwrap_err()
            .code(),
        "duplicate-tool-version"
    );
}

async fn tenants_and_projects(r: &dyn ToolRegistry) {
    reg(r, "t1", "shared.id", "1.0.0").await;
    // Another tenant sees nothing, and may use the same id independently.
    assert_eq!(
        r.get("t2", "shared.id").await.unwrap_err().code(),
        "tool-not-found"
    );
    assert_eq!(
        r.get_version("t2", "shared.id", "1.0.0")
            .await
            .unwrap_err()
            .code(),
        "tool-not-found"
    );
    assert_eq!(
        r.unregister("t2", "shared.id", "1.0.0")
            .await
            .unwrap_err()
            .code(),
        "tool-not-found"
    );
    assert_eq!(
        r.resolve("t2", "shared.id", Some("*"))
            .await
            .unwrap_err()
            .code(),
        "tool-not-found"
    );
    reg(r, "t2", "shared.id", "1.0.0").await;
    r.unregister("t2", "shared.id", "1.0.0").await.unwrap();
    assert_eq!(
        r.get("t1", "shared.id").await.unwrap().version,
        "1.0.0",
        "t2's tombstone does not touch t1"
    );

    let in_project = |p: &str| RegisterOptions {
        project_id: Some(p.to_owned()),
        retired: false,
    };
    r.register("t1", &manifest("proj.tool", "1.0.0"), in_project("p1"))
        .await
        .unwrap();
    let err = r
        .register("t1", &manifest("proj.tool", "1.1.0"), in_project("p2"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "tool-project-mismatch");
    assert_eq!(
        err.to_string(),
        "Tool \"proj.tool\" belongs to another project; publish its versions there"
    );
    r.register("t1", &manifest("proj.tool", "1.1.0"), in_project("p1"))
        .await
        .unwrap();
    assert_eq!(r.get("t1", "proj.tool").await.unwrap().project_id, "p1");
}

async fn listing(r: &dyn ToolRegistry) {
    for i in 0..7 {
        reg(r, "lister", &format!("acme.t{i}"), "1.0.0").await;
        reg(r, "lister", &format!("acme.t{i}"), "1.2.0").await;
    }
    reg(r, "lister", "zeta.other", "0.1.0").await;
    reg(r, "lister", "acme.gone", "1.0.0").await;
    r.unregister("lister", "acme.gone", "1.0.0").await.unwrap();
    let page = r
        .list(
            "lister",
            ListQuery {
                limit: 3,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let ids: Vec<&str> = page.items.iter().map(|t| t.tool_id.as_str()).collect();
    assert_eq!(ids, ["acme.t0", "acme.t1", "acme.t2"]);
    assert!(page.has_more);
    assert!(
        page.items.iter().all(|t| t.version == "1.2.0"),
        "latest version of each"
    );
    let mut all = ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut after = all.last().cloned();
    loop {
        let page = r
            .list(
                "lister",
                ListQuery {
                    limit: 3,
                    after: after.clone(),
                    name: None,
                },
            )
            .await
            .unwrap();
        all.extend(page.items.iter().map(|t| t.tool_id.clone()));
        after = all.last().cloned();
        if !page.has_more {
            break;
        }
    }
    assert_eq!(
        all,
        [
            "acme.t0",
            "acme.t1",
            "acme.t2",
            "acme.t3",
            "acme.t4",
            "acme.t5",
            "acme.t6",
            "zeta.other"
        ]
    );
    let page = r
        .list(
            "lister",
            ListQuery {
                limit: 10,
                after: None,
                name: Some("zeta".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert!(!page.has_more);
    let page = r
        .list(
            "nobody",
            ListQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(page.items.is_empty() && !page.has_more);
}
