//! The official `minimal` template (`kindgi init --template=minimal`, generated at test time:
//! no primitives, no `node_modules`) under our `kindgi dev`: it stays up and says why, and
//! every listing of the official CLI is an empty page, exit 0, nothing on stderr.
//!
//! Needs the official CLI and the wheel's TypeScript packages: skipped without them, failed
//! when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::templates::*;
use serde_json::json;

#[test]
fn the_minimal_template_stays_up_with_empty_listings() {
    let Some(pack) = serve("minimal", "minimal_template_e2e", &[]) else {
        return;
    };
    let err = pack.dev.stderr();
    assert!(
        err.contains("no tools, guardrails, agents or flows yet"),
        "{err}"
    );
    assert!(err.contains("kindgi dev keeps running"), "{err}");
    assert!(!err.contains("failed to index"), "{err}");
    for kind in ["tools", "flows", "agents", "guardrails", "runs"] {
        let out = pack.official(&[kind, "list"]);
        assert_eq!(out.code, 0, "{kind} list: {out:?}");
        assert_eq!(
            out.json(),
            json!({"data": [], "hasMore": false}),
            "{kind} list"
        );
        assert_eq!(out.stderr, "", "{kind} list");
    }
    pack.stop();
}
