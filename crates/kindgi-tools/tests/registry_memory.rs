//! The in-memory registry passes the registry conformance suite, and agent resolution maps
//! registry outcomes to the agent-turn errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_tools::registry::conformance::{self, manifest};
use kindgi_tools::registry::{
    AgentToolError, MemoryRegistry, RegisterOptions, ToolRegistry, resolve_agent_tool,
};

#[tokio::test]
async fn memory_registry_conformance() {
    conformance::run(&MemoryRegistry::new()).await;
}

#[tokio::test]
async fn agent_tool_resolution_errors() {
    let r = MemoryRegistry::new();
    for v in ["1.0.0", "1.1.0"] {
        r.register("t", &manifest("acme.lookup", v), RegisterOptions::default())
            .await
            .unwrap();
    }
    let ok = resolve_agent_tool(&r, "t", "agent.a", "acme.lookup", "^1.0.0", None)
        .await
        .unwrap();
    assert_eq!(ok.resolved_version, "1.1.0");
    // A resumed turn's pin wins over the range.
    let pinned = resolve_agent_tool(&r, "t", "agent.a", "acme.lookup", "^1.0.0", Some("1.0.0"))
        .await
        .unwrap();
    assert_eq!(pinned.resolved_version, "1.0.0");
    let err = resolve_agent_tool(&r, "t", "agent.a", "acme.missing", "^1.0.0", None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "unresolved-tool");
    assert_eq!(err.http_status(), 400);
    assert_eq!(
        err.to_string(),
        "Tool \"acme.missing\" declared by agent \"agent.a\" is not registered"
    );
    let err = resolve_agent_tool(&r, "t", "agent.a", "acme.lookup", "^2.0.0", None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "tool-version-unresolvable");
    assert_eq!(err.http_status(), 422);
    assert!(
        matches!(err, AgentToolError::VersionUnresolvable { ref available_versions, ref requested_range, .. }
        if available_versions.as_deref() == Some(&["1.1.0".to_owned(), "1.0.0".to_owned()][..]) && requested_range == "^2.0.0")
    );
    let err = resolve_agent_tool(&r, "t", "agent.a", "acme.lookup", "bogus range", None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "tool-version-unresolvable");
    // The pinned version is gone: fail rather than run another version.
    r.unregister("t", "acme.lookup", "1.0.0").await.unwrap();
    let err = resolve_agent_tool(&r, "t", "agent.a", "acme.lookup", "^1.0.0", Some("1.0.0"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "tool-version-unresolvable");
}
