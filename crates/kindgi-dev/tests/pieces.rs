//! The supervisor's pure pieces on real folders: pack detection, index → manifest,
//! the change fingerprint, the discovery file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_dev::DevError;
use kindgi_dev::detect::{PackKind, detect};
use kindgi_dev::discovery::{self, Discovery};
use kindgi_dev::watch::fingerprint;
use kindgi_pack_client::dispatch::manifest_of;
use kindgi_spec::pack_index::IndexTool;
use serde_json::json;

#[test]
fn packs_are_detected_by_their_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert!(matches!(detect(d), Err(DevError::NoPack { .. })));
    std::fs::write(d.join("Cargo.toml"), "[package]\nname = \"p\"\n").unwrap();
    assert_eq!(detect(d).unwrap(), PackKind::Rust);
    // A pyproject without a kindgi section is not a Python pack; with one, it wins.
    std::fs::write(d.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    assert_eq!(detect(d).unwrap(), PackKind::Rust);
    std::fs::write(d.join("pyproject.toml"), "[tool.kindgi.pack]\nid = \"p\"\n").unwrap();
    assert!(matches!(detect(d).unwrap(), PackKind::Python { .. }));

    let ts = tempfile::tempdir().unwrap();
    std::fs::write(
        ts.path().join("package.json"),
        r#"{"name": "p", "dependencies": {"@kindgi/sdk": "0.1.10"}}"#,
    )
    .unwrap();
    // Without its own packages, the pack runs on the kindgi-cli wheel's when one is found
    // ($KINDGI_CLI_NODE_MODULES, a .venv above, `kindgi` on PATH); else it is refused.
    match kindgi_dev::typescript::wheel_node_modules(ts.path()) {
        Some(wheel) => match detect(ts.path()).unwrap() {
            PackKind::TypeScript { runtime: found, .. } => {
                assert_eq!(found, wheel.join("@kindgi/handler-runtime"))
            }
            other => panic!("{other:?}"),
        },
        None => {
            let err = detect(ts.path()).unwrap_err().to_string();
            assert!(err.contains("@kindgi/handler-runtime"), "{err}");
            assert!(err.contains("npm install"), "{err}");
        }
    }
    let runtime = ts.path().join("node_modules/@kindgi/handler-runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::write(runtime.join("package.json"), "{}").unwrap();
    match detect(ts.path()).unwrap() {
        PackKind::TypeScript { runtime: found, .. } => assert_eq!(found, runtime),
        other => panic!("{other:?}"),
    }
    // The official scaffolds' marker, kindgi.config.ts, is enough (and wins over Cargo.toml).
    let cfg = tempfile::tempdir().unwrap();
    std::fs::write(cfg.path().join("Cargo.toml"), "[package]\nname = \"p\"\n").unwrap();
    std::fs::write(cfg.path().join("kindgi.config.ts"), "export default {};\n").unwrap();
    // Without packages of its own the pack gets the kindgi-cli wheel's when one is installed
    // ($KINDGI_CLI_NODE_MODULES, a .venv above, beside `kindgi` on PATH), else the refusal.
    match detect(cfg.path()) {
        Ok(PackKind::TypeScript { runtime: found, .. }) => {
            assert!(
                found.ends_with("node_modules/@kindgi/handler-runtime"),
                "{found:?}"
            );
        }
        Ok(other) => panic!("{other:?}"),
        Err(err) => {
            let err = err.to_string();
            assert!(err.contains("@kindgi/handler-runtime"), "{err}");
        }
    }
    // A package.json that names no kindgi is not a pack.
    std::fs::write(ts.path().join("package.json"), r#"{"name": "p"}"#).unwrap();
    assert!(matches!(detect(ts.path()), Err(DevError::NoPack { .. })));
    std::fs::write(ts.path().join("package.json"), "{not json").unwrap();
    let err = detect(ts.path()).unwrap_err().to_string();
    assert!(err.contains("package.json is not valid JSON"), "{err}");
}

#[test]
fn index_tools_become_manifests_with_the_safe_defaults() {
    let tool = IndexTool {
        id: "my-pack.add-order-note".into(),
        input: json!({"type": "object"}),
        output: json!({"type": "object"}),
        effects: Some(vec![
            json!({"kind": "writes", "resource": "external:orders"}),
        ]),
        module_path: "tools/add_order_note.py".into(),
        ..IndexTool::default()
    };
    let m = manifest_of(&tool).unwrap();
    assert!(m.is_mutating(), "mutating left out means true");
    assert!(!m.is_read_only());
    assert_eq!(m.version, "0.0.0");

    let read = IndexTool {
        id: "my-pack.lookup-order".into(),
        version: Some("0.1.0".into()),
        input: json!({"type": "object"}),
        output: json!({"type": "object"}),
        effects: Some(vec![]),
        mutating: Some(false),
        module_path: "tools/lookup_order.py".into(),
        ..IndexTool::default()
    };
    let m = manifest_of(&read).unwrap();
    assert!(m.is_read_only());
    assert_eq!(m.version, "0.1.0");

    let bad = IndexTool {
        effects: Some(vec![json!({"kind": "teleports"})]),
        ..read
    };
    let err = manifest_of(&bad).unwrap_err();
    assert!(err.contains("effects"), "{err}");
}

#[test]
fn the_fingerprint_sees_source_changes_and_ignores_state() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::write(d.join("src/main.rs"), "fn main() {}").unwrap();
    let a = fingerprint(d);
    for ignored in ["target", ".kindgi", ".venv", "__pycache__", "node_modules"] {
        std::fs::create_dir_all(d.join(ignored)).unwrap();
        std::fs::write(d.join(ignored).join("x"), "noise").unwrap();
    }
    std::fs::write(d.join(".kindgirc.json"), "{}").unwrap();
    assert_eq!(fingerprint(d), a, "state and build output are not sources");
    std::fs::write(d.join("src/main.rs"), "fn main() { }").unwrap();
    assert_ne!(fingerprint(d), a);
    let b = fingerprint(d);
    std::fs::write(d.join("src/new.rs"), "").unwrap();
    assert_ne!(fingerprint(d), b);
}

#[test]
fn the_discovery_file_is_found_from_below() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let rc = Discovery {
        api_url: "http://127.0.0.1:4000".into(),
        token: "kgi_x".into(),
        tenant_id: Some("default".into()),
        user_id: Some("dev".into()),
        pack_service_port: Some(41234),
        pid: Some(1),
        pack_id: Some("my-pack".into()),
    };
    let path = discovery::write(d, &rc).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "it holds an API key");
    }
    let below = d.join("a/b");
    std::fs::create_dir_all(&below).unwrap();
    let (found, parsed) = discovery::find(&below).unwrap();
    assert_eq!(found, path);
    assert_eq!(parsed.unwrap(), rc);
    std::fs::write(&path, "nope").unwrap();
    assert!(discovery::find(&below).unwrap().1.is_err());
}

#[test]
fn the_discovery_file_has_the_official_shape_and_no_pack_token() {
    let tmp = tempfile::tempdir().unwrap();
    let rc = Discovery {
        api_url: "http://127.0.0.1:4000".into(),
        token: "kgi_x".into(),
        tenant_id: Some("default".into()),
        user_id: Some("dev".into()),
        pack_service_port: Some(41234),
        pid: None,
        pack_id: None,
    };
    let path = discovery::write(tmp.path(), &rc).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"apiUrl": "http://127.0.0.1:4000", "token": "kgi_x",
            "tenantId": "default", "userId": "dev", "packServicePort": 41234})
    );
    assert!(v.get("packServiceToken").is_none());
    // A file written before the official shape (`url`) still reads.
    std::fs::write(&path, r#"{"url": "http://127.0.0.1:9", "token": "kgi_y"}"#).unwrap();
    let (_, parsed) = discovery::find(tmp.path()).unwrap();
    assert_eq!(parsed.unwrap().api_url, "http://127.0.0.1:9");
    assert_eq!(discovery::port_of("http://127.0.0.1:4000"), Some(4000));
    assert_eq!(discovery::port_of("http://[::1]:81/x"), Some(81));
}
