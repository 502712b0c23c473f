//! `kindgi server --config FILE`: what a configuration file may say, and the clear error for
//! each thing it may not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kindgi_host::{ConfigFile, HostError, McpServer, PackSource};

fn write(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("kindgi.json");
    std::fs::write(&p, text).unwrap();
    p
}

fn message(e: HostError) -> String {
    e.to_string()
}

#[test]
fn packs_and_mcp_servers_are_read_with_paths_relative_to_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write(
        tmp.path(),
        r#"{"listen": "0.0.0.0:7070", "database": "k.db",
            "packs": [{"url": "https://p.example", "tokenEnv": "P_TOKEN", "index": "p/index.json", "tenant": "acme"},
                      {"dir": "/abs/pack", "watch": true}],
            "mcp": [{"endpoint": "mcp+stdio://server"}]}"#,
    );
    let file = ConfigFile::read(&path).unwrap();
    assert_eq!(file.listen.as_deref(), Some("0.0.0.0:7070"));
    assert_eq!(file.database.as_deref(), Some("k.db"));
    let packs = file.pack_sources(&path, tmp.path()).unwrap();
    assert_eq!(
        packs,
        vec![
            PackSource::Remote {
                url: "https://p.example".into(),
                token_env: "P_TOKEN".into(),
                index: tmp.path().join("p/index.json"),
                tenant: "acme".into(),
            },
            PackSource::Folder {
                dir: "/abs/pack".into(),
                tenant: "default".into(),
                watch: true,
                release: false,
            },
        ]
    );
    assert_eq!(
        file.mcp_servers(&path).unwrap(),
        vec![McpServer {
            endpoint: "mcp+stdio://server".into(),
            tenant: "default".into()
        }]
    );
}

#[test]
fn each_mistake_is_named_with_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            r#"{"packs": [{"url": "http://x", "index": "i.json"}]}"#,
            "packs[0]: a pack with a `url` needs `tokenEnv`",
        ),
        (
            r#"{"packs": [{"url": "http://x", "tokenEnv": "T"}]}"#,
            "packs[0]: a pack with a `url` needs `index`",
        ),
        (
            r#"{"packs": [{"dir": "d"}, {"url": "http://x", "dir": "d"}]}"#,
            "packs[1]: give either `url` or `dir`, not both",
        ),
        (
            r#"{"packs": [{}]}"#,
            "packs[0]: give `url` (a pack service) or `dir` (a pack folder)",
        ),
        (
            r#"{"packs": [{"dir": "d", "tokenEnv": "T"}]}"#,
            "packs[0]: `tokenEnv` and `index` apply to a pack service (`url`) only",
        ),
        (
            r#"{"packs": [{"dir": "d", "tenant": "no spaces"}]}"#,
            "packs[0]: tenant \"no spaces\" is not a tenant id",
        ),
    ];
    for (text, want) in cases {
        let path = write(tmp.path(), text);
        let file = ConfigFile::read(&path).unwrap();
        let got = message(file.pack_sources(&path, tmp.path()).unwrap_err());
        assert!(got.contains(want), "{text}: {got}");
        assert!(got.contains(&path.display().to_string()), "{got}");
    }
    let path = write(tmp.path(), r#"{"pack": []}"#);
    let got = message(ConfigFile::read(&path).unwrap_err());
    assert!(got.contains("unknown field `pack`"), "{got}");
    let path = write(tmp.path(), &" ".repeat(1024 * 1024 + 1));
    let got = message(ConfigFile::read(&path).unwrap_err());
    assert!(got.contains("over the 1048576 byte limit"), "{got}");
}

#[test]
fn a_remote_slot_never_shows_its_token() {
    let slot = kindgi_pack_client::dispatch::ServiceSlot::remote(
        "https://pack.example/",
        "tok-0123456789abcdef-secret",
        |_| {},
    )
    .unwrap();
    let serving = slot.get().unwrap();
    assert_eq!(serving.base_url, "https://pack.example");
    let shown = format!("{slot:?} {serving:?}");
    assert!(!shown.contains("secret"), "{shown}");
    // Not a URL a pack client takes: a clear error.
    let e = kindgi_pack_client::dispatch::ServiceSlot::remote("ftp://x", "t", |_| {}).unwrap_err();
    assert!(e.to_string().contains("is not an http(s) URL"), "{e}");
}

/// `tenantHitl`: a floor per tenant under every agent's approval gates, read from the file;
/// each problem names the tenant and where in its policy it is.
#[tokio::test]
async fn tenant_hitl_policies_are_read_and_checked() {
    use kindgi_runtime::agent::hitl::TenantApprovalPolicy;
    let tmp = tempfile::tempdir().unwrap();
    let path = write(
        tmp.path(),
        r#"{"tenantHitl": {"acme": {"tools": {"acme.refund": "always_ask"}, "maxTimeoutMs": 3600000,
                                   "minReviewerRole": "senior"}}}"#,
    );
    let policies = ConfigFile::read(&path).unwrap().tenant_hitl(&path).unwrap();
    let acme = policies.hitl_policy("acme").await.unwrap().unwrap();
    assert_eq!(acme.max_timeout_ms, Some(3_600_000));
    assert_eq!(
        acme.min_reviewer_role,
        Some(kindgi_runtime::ReviewerRole::Senior)
    );
    assert!(acme.tools.contains_key("acme.refund"));
    assert_eq!(policies.hitl_policy("other").await.unwrap(), None);

    let path = write(
        tmp.path(),
        r#"{"tenantHitl": {"acme": {"maxTimeoutMs": "soon", "loose": true}}}"#,
    );
    let got = message(
        ConfigFile::read(&path)
            .unwrap()
            .tenant_hitl(&path)
            .unwrap_err(),
    );
    assert!(got.contains("tenantHitl.acme/maxTimeoutMs"), "{got}");
    assert!(got.contains("tenantHitl.acme/loose"), "{got}");
}
