//! `kindgi init --template=rust` end to end: the real binary scaffolds a pack with a dotted
//! id (as the official templates name packs), `kindgi dev` builds and serves it, and its
//! flow (dry and live) and agent run — the agent's guardrail check is found in the pack whose
//! id prefixes the check id, dots and all. Usage errors answer exit 2 naming what is wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;

#[test]
fn init_refuses_what_it_cannot_make() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(tmp.path(), &["init", "Acme"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("is not a pack id"), "{out:?}");
    let out = kindgi_in(tmp.path(), &["init", "acme.shop", "--template=sample"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("official CLI") && out.stderr.contains("it makes rust"),
        "{out:?}"
    );
    std::fs::create_dir(tmp.path().join("full")).unwrap();
    std::fs::write(tmp.path().join("full/keep.txt"), "mine").unwrap();
    let out = kindgi_in(tmp.path(), &["init", "acme.shop", "--path=full"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--force"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("full/keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_scaffolded_rust_pack_builds_serves_and_runs_its_flow_and_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(tmp.path(), &["init", "acme.shop"]);
    assert_eq!(out.code, 0, "{out:?}");
    let dir = tmp.path().join("shop");
    assert!(out.stdout.contains("kindgi dev"), "{out:?}");
    for f in [
        "Cargo.toml",
        "README.md",
        ".gitignore",
        "src/main.rs",
        "src/checks.rs",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    // The workspace's lock and target dir: the pack's dependencies are this checkout's, so
    // most of its build is already done.
    let root = repo_root();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let target = root.join("target").display().to_string();
    let dev = start_dev(&dir, &[("CARGO_TARGET_DIR", &target)], &["--no-watch"]);
    let err = dev.stderr();
    assert!(
        err.contains("pack \"acme.shop\" registered for tenant \"default\": 3 tools, 1 agent, 1 flow, 1 guardrail"),
        "{err}"
    );

    // A dry run: the read-only greet runs, the agent step skips its model call.
    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--flow=acme.shop.echo-flow",
            "--input={\"name\":\"Ada\"}",
            "--dry-run",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["status"], "completed", "{out:?}");

    // Live: dev-echo calls the agent's first tool (echo) with the greeting, and the
    // guardrail check (in pack `acme.shop`, not `acme`) passes the answer.
    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--flow=acme.shop.echo-flow",
            "--input={\"name\":\"Ada\"}",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}\n{}", dev.stderr());
    let run = out.json();
    assert_eq!(run["status"], "completed", "{run}");
    let text = run["output"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(r#"Tool responded: {"echoed":"Hello, Ada!"}"#),
        "{run}"
    );

    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--agent=acme.shop.echo-agent",
            "--input={\"message\":\"hello\"}",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["status"], "completed", "{out:?}");

    let status = dev.stop();
    assert!(status.success(), "{status:?}");
}
