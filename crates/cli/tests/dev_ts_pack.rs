//! `kindgi dev` with the TypeScript example pack (`examples/my-pack-ts`, the official SDK
//! `@kindgi/sdk` 0.1.10 and the Node 24 that PyPI kindgi-cli==0.1.10 ships): indexed by the
//! official TypeScript indexer, served by the official TypeScript pack service; the guide's
//! three dry runs (seed 004) through our `kindgi runs start`, a live run, a reload on a
//! saved change, and the refusals (no packages, a Node too old for type stripping).
//!
//! Needs `KINDGI_CLI_NODE_MODULES` and `KINDGI_NODE24_DIR` (`source .cache/reference.env`
//! after scripts/setup-reference): skipped without them, failed when
//! `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[test]
fn the_typescript_example_pack_runs_the_guides_dry_runs() {
    let Some(r) = ts_reference("the_typescript_example_pack_runs_the_guides_dry_runs") else {
        return;
    };
    let tmp = ts_pack(&r);
    let node = r.node.display().to_string();
    let started = Instant::now();
    let dev = start_dev(tmp.path(), &[("KINDGI_NODE", &node)], &["--no-watch"]);
    eprintln!(
        "kindgi dev (TypeScript pack) start → listening: {} ms",
        started.elapsed().as_millis()
    );
    let err = dev.stderr();
    assert!(err.contains("indexing (Node v24."), "{err}");
    assert!(err.contains("kindgi-index-main.js"), "{err}");
    assert!(err.contains("pack-service/main.js"), "{err}");
    // The official indexer wrote the index: every tool, the agent and the flows, by source.
    let index: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join(".kindgi/index.json")).unwrap(),
    )
    .unwrap();
    let ids = |key: &str| -> Vec<String> {
        index[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        ids("tools"),
        [
            "my-pack.add-order-note",
            "my-pack.greet",
            "my-pack.lookup-order"
        ]
    );
    assert_eq!(ids("agents"), ["my-pack.echo-agent"]);
    assert_eq!(
        ids("flows"),
        [
            "my-pack.check-order",
            "my-pack.echo-flow",
            "my-pack.note-order"
        ]
    );
    assert_eq!(
        index["tools"][2]["modulePath"],
        "tools/lookup-order/index.js"
    );
    assert_eq!(index["tools"][2]["mutating"], false);
    assert!(
        index["tools"][0].get("mutating").is_none(),
        "left out = mutating"
    );

    guide_dry_runs(tmp.path());

    // Live: the mutating tool runs, and its handler's output comes back.
    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.note-order",
            "--input={\"orderId\":\"ord_1001\",\"text\":\"Customer called\"}",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let run = out.json();
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["dryRun"], false);
    // The handler's own error reaches the run: an unknown order.
    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"ord_9999\"}",
        ],
    );
    assert_eq!(out.code, 1, "{out:?}");
    let msg = out.json()["failureMessage"].as_str().unwrap().to_owned();
    assert!(msg.contains("ord_9999"), "{msg}");
    let status = dev.stop();
    assert!(status.success(), "{status}");
}

#[test]
fn a_saved_change_is_reindexed_and_served_with_the_wheels_node() {
    let Some(r) = ts_reference("a_saved_change_is_reindexed_and_served_with_the_wheels_node")
    else {
        return;
    };
    let tmp = ts_pack(&r);
    // No KINDGI_NODE (empty counts as unset): the Node that ships beside the wheel's
    // packages is found and used.
    let dev = start_dev(tmp.path(), &[("KINDGI_NODE", "")], &[]);
    assert!(
        dev.stderr().contains("indexing (Node v24."),
        "{}",
        dev.stderr()
    );
    let greet = |dir: &Path| {
        let out = kindgi_in(
            dir,
            &[
                "runs",
                "start",
                "--flow=my-pack.echo-flow",
                "--input={\"name\":\"Ada\"}",
                "--dry-run",
            ],
        );
        out.json()["output"]["greeting"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(greet(tmp.path()), "Hello, Ada!");
    let file = tmp.path().join("tools/greet/index.ts");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("`Hello, ${name}!`", "`Hi, ${name}!`")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if greet(tmp.path()) == "Hi, Ada!" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never reloaded:\n{}",
            dev.stderr()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        dev.stderr().contains("change detected: reloading"),
        "{}",
        dev.stderr()
    );
    let status = dev.stop();
    assert!(status.success(), "{status}");
}

/// `kindgi dev DIR` expected to fail at start: its stderr.
fn failed_start(dir: &Path, envs: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(kindgi());
    cmd.arg("dev")
        .arg(dir)
        .args(["--port", "0", "--no-watch"])
        .stdin(std::process::Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

#[test]
fn a_typescript_pack_without_its_packages_or_with_an_old_node_is_refused_clearly() {
    let Some(r) = ts_reference(
        "a_typescript_pack_without_its_packages_or_with_an_old_node_is_refused_clearly",
    ) else {
        return;
    };
    // No node_modules, and no kindgi-cli wheel's: what to install, or what to link.
    let bare = copy_pack(&repo_root().join("examples/my-pack-ts"));
    let none = bare.path().join("no-such-node-modules");
    let err = failed_start(
        bare.path(),
        &[("KINDGI_CLI_NODE_MODULES", none.to_str().unwrap())],
    );
    assert!(err.contains("@kindgi/handler-runtime"), "{err}");
    assert!(err.contains("npm install"), "{err}");
    // A Node too old for the SDK (v20): which Node is needed and how to pick one.
    let tmp = ts_pack(&r);
    let old = tmp.path().join("old-node");
    std::fs::write(&old, "#!/bin/sh\necho v20.20.2\n").unwrap();
    std::fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let err = failed_start(tmp.path(), &[("KINDGI_NODE", old.to_str().unwrap())]);
    assert!(err.contains("Node v20.20.2"), "{err}");
    assert!(err.contains("22.12"), "{err}");
    assert!(err.contains("KINDGI_NODE"), "{err}");
    // A file that does not import is named with the indexer's reason; the rest serves.
    std::fs::write(
        tmp.path().join("tools/broken.ts"),
        "throw new Error('broken on purpose');\n",
    )
    .unwrap();
    let node = r.node.display().to_string();
    let dev = start_dev(tmp.path(), &[("KINDGI_NODE", &node)], &["--no-watch"]);
    let err = dev.stderr();
    assert!(
        err.contains("indexer: tools/broken.js was left out"),
        "{err}"
    );
    assert!(err.contains("broken on purpose"), "{err}");
    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"ord_1001\"}",
            "--dry-run",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let status = dev.stop();
    assert!(status.success(), "{status}");
}

/// `tsc` from the reference npm folder (scripts/setup-reference installs typescript@5.9.3).
fn reference_tsc(test: &str) -> Option<PathBuf> {
    let tsc = std::env::var_os("KINDGI_NPM_NODE_MODULES")
        .filter(|v| !v.is_empty())
        .map(|d| PathBuf::from(d).join("typescript/bin/tsc"))
        .filter(|t| t.is_file());
    kindgi_spec::testing::reference_or_skip(
        test,
        tsc,
        "KINDGI_NPM_NODE_MODULES has no typescript/bin/tsc",
    )
}

#[test]
fn the_example_type_checks_against_the_official_sdks_types() {
    let test = "the_example_type_checks_against_the_official_sdks_types";
    let (Some(r), Some(tsc)) = (ts_reference(test), reference_tsc(test)) else {
        return;
    };
    let tmp = ts_pack(&r);
    let check = || {
        std::process::Command::new(&r.node)
            .arg(&tsc)
            .arg("-p")
            .arg(tmp.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = check();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The check sees the SDK's types: a handler that misuses its typed input fails it.
    let file = tmp.path().join("tools/greet/index.ts");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("`Hello, ${name}!`", "name.toFixed(2)")).unwrap();
    let out = check();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("tools/greet/index.ts"), "{text}");
    assert!(text.contains("toFixed"), "{text}");
}
