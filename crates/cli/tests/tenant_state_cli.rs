//! `kindgi tenant suspend|resume|close --database` against a real SQLite file (the store's
//! own tests cover both databases): what each prints, a second suspend keeping the first
//! reason, a project's suspension apart from the tenant's, closing one-way and refusing a
//! suspend, and usage errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output};

use serde_json::Value;
use support::BIN;

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn operator_sets_tenant_and_project_states() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let db = db.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["tenant"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--database", db, "--tenant", "acme"]);
        Command::new(BIN).args(&all).output().unwrap()
    };

    let t = json(&run(&["suspend", "--reason", "unpaid"]));
    assert_eq!(t["state"], "suspended");
    assert_eq!(t["suspendedReason"], "unpaid");
    let first_at = t["suspendedAt"].clone();
    let t = json(&run(&["suspend", "--reason", "again"]));
    assert_eq!(t["suspendedReason"], "unpaid", "a second keeps the first");
    assert_eq!(t["suspendedAt"], first_at);
    let t = json(&run(&["resume"]));
    assert_eq!(t["state"], "active");
    assert!(t.get("suspendedAt").is_none());

    // The Default project, apart from the tenant.
    let p = json(&run(&["suspend", "--project", "default"]));
    assert_eq!(p["suspended"], true);
    assert_eq!(
        p["projectId"],
        kindgi_api::projects::default_project_id("acme")
    );
    assert_eq!(json(&run(&["resume"]))["state"], "active");
    let p = json(&run(&["resume", "--project", "default"]));
    assert_eq!(p["suspended"], false);
    let unknown = run(&[
        "suspend",
        "--project",
        "00000000-0000-4000-8000-00000000000a",
    ]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("project-not-found"));

    // Closing is one-way and refuses a suspend.
    let t = json(&run(&["close"]));
    assert_eq!(t["state"], "closing");
    assert!(t["closingAt"].is_string());
    let refused = run(&["suspend"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("tenant-closing"));
    assert_eq!(json(&run(&["resume"]))["state"], "closing");

    // Usage errors: exit 2.
    for args in [
        &["suspend", "--project", "nope"][..],
        &["close", "--project", "default"][..],
        &["resume", "--reason", "x"][..],
        &["suspend", "--reason", " "][..],
    ] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
}
