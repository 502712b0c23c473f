//! A Zod refinement's issue reaches the person who ran the flow: the TypeScript example pack
//! (`examples/my-pack-ts`, the official SDK `@kindgi/sdk` 0.1.10) under `kindgi dev`, its
//! `lookup-order` input given a refinement JSON Schema cannot say. The official pack service
//! answers `input-validation-failed` with a Zod issue `{instancePath, message}` — no
//! `schemaPath` or `keyword` — and the pack client keeps it (it used to drop it), so the
//! run's `failure.details.issues`, its `step.failed` entry and our `kindgi runs start`'s
//! `  ✗ <path>: <reason>` line all name the field.
//!
//! Needs `KINDGI_CLI_NODE_MODULES` and `KINDGI_NODE24_DIR` (`source .cache/reference.env`):
//! skipped without them, failed when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;

const RULE: &str = "an order id starts with \\\"ord_\\\"";

#[test]
fn a_zod_refinement_names_the_field_in_the_run_and_the_cli() {
    let Some(r) = ts_reference("a_zod_refinement_names_the_field_in_the_run_and_the_cli") else {
        return;
    };
    let tmp = ts_pack(&r);
    let file = tmp.path().join("tools/lookup-order/index.ts");
    let text = std::fs::read_to_string(&file).unwrap();
    let refined = text.replace(
        "orderId: z.string().min(1),",
        &format!("orderId: z.string().min(1).refine((s) => s.startsWith('ord_'), {{ message: \"{RULE}\" }}),"),
    );
    assert_ne!(text, refined, "the example's input schema changed");
    std::fs::write(&file, refined).unwrap();
    let node = r.node.display().to_string();
    let dev = start_dev(tmp.path(), &[("KINDGI_NODE", &node)], &["--no-watch"]);

    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"x1\"}",
            "--dry-run",
        ],
    );
    assert_eq!(out.code, 1, "{out:?}\n{}", dev.stderr());
    let message = "an order id starts with \"ord_\"";
    assert!(
        out.stderr.contains(&format!(
            "Error [run-failed]: input-validation-failed: Tool \"my-pack.lookup-order\" input failed validation\n  \u{2717} /orderId: {message}\n"
        )),
        "{out:?}"
    );
    let run = out.json();
    let issues = run["failure"]["details"]["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 1, "{run}");
    assert_eq!(issues[0]["instancePath"], "/orderId", "{run}");
    assert_eq!(issues[0]["message"], message, "{run}");

    let id = run["id"].as_str().unwrap();
    let journal = kindgi_in(tmp.path(), &["runs", "journal", id]);
    assert_eq!(journal.code, 0, "{journal:?}");
    let page = journal.json();
    let failed = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "step.failed")
        .unwrap_or_else(|| panic!("no step.failed: {page}"));
    assert_eq!(failed["payload"]["issues"][0]["instancePath"], "/orderId");
    assert_eq!(failed["payload"]["issues"][0]["message"], message);
    let status = dev.stop();
    assert!(status.success(), "{status}");
}
