//! Every TypeScript template of the official `kindgi init` (kindgi-cli 0.1.10: `sample`,
//! `woocommerce`, `drupal`), generated at test time into a temp folder with no
//! `node_modules`, runs under our `kindgi dev`: its TypeScript is transformed in process
//! (parameter properties, NodeNext `.js` specifiers), the wheel's `@kindgi/*` packages are
//! used (one log line says which folder), the official indexer indexes the build tree and the
//! official pack service serves it. (`minimal` has no primitives: helper "dev" covers it.)
//!
//! Needs the official CLI in `.venv` and `KINDGI_CLI_NODE_MODULES` / `KINDGI_NODE24_DIR`:
//! skipped without them, failed when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;
use std::path::{Path, PathBuf};

/// `kindgi init acme.TEMPLATE --template=TEMPLATE` with the official CLI, into a temp dir.
fn init(cli: &Path, template: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pack");
    let out = std::process::Command::new(cli)
        .arg("init")
        .arg(format!("acme.{template}"))
        .arg(format!("--template={template}"))
        .arg(format!("--path={}", dir.display()))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kindgi init --template={template}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmp
}

fn official_cli(test: &str) -> Option<PathBuf> {
    let cli = repo_root().join(".venv/bin/kindgi");
    kindgi_spec::testing::reference_or_skip(
        test,
        Some(cli).filter(|c| c.is_file()),
        ".venv/bin/kindgi (kindgi-cli==0.1.10) is not installed",
    )
}

/// The ids of the index's `key` entries, and that every module path is an emitted `.js`.
fn ids(index: &serde_json::Value, key: &str) -> Vec<String> {
    let mut ids: Vec<String> = index[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let module = e["modulePath"].as_str().unwrap_or("");
            assert!(module.ends_with(".js"), "{key}: {e}");
            e["id"].as_str().unwrap().to_owned()
        })
        .collect();
    ids.sort();
    ids
}

/// Starts `kindgi dev` on a fresh `template` project; its index.
fn serve(template: &str, test: &str) -> Option<(tempfile::TempDir, Dev, serde_json::Value)> {
    let (Some(r), Some(cli)) = (ts_reference(test), official_cli(test)) else {
        return None;
    };
    let tmp = init(&cli, template);
    let dir = tmp.path().join("pack");
    assert!(!dir.join("node_modules").exists());
    let node = r.node.display().to_string();
    let modules = r.node_modules.display().to_string();
    let dev = start_dev(
        &dir,
        &[
            ("KINDGI_NODE", &node),
            ("KINDGI_CLI_NODE_MODULES", &modules),
        ],
        &["--no-watch"],
    );
    let err = dev.stderr();
    assert!(
        err.contains(&format!(
            "the pack has no node_modules/@kindgi: using the kindgi-cli wheel's packages in {modules}"
        )),
        "{err}"
    );
    assert!(err.contains("transforming TypeScript (oxc"), "{err}");
    assert!(dir.join(".kindgi/dev/build/lib").is_dir() || template == "sample");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".kindgi/index.json")).unwrap())
            .unwrap();
    assert!(!err.contains("was left out"), "{err}");
    Some((tmp, dev, index))
}

#[test]
fn the_woocommerce_template_loads_with_its_parameter_properties_and_js_specifiers() {
    let Some((_tmp, dev, index)) = serve("woocommerce", "woocommerce_template") else {
        return;
    };
    assert_eq!(
        ids(&index, "tools"),
        [
            "acme.woocommerce.woo.check-order-event",
            "acme.woocommerce.woo.find-orders",
            "acme.woocommerce.woo.publish-product",
            "acme.woocommerce.woo.refund",
            "acme.woocommerce.woo.refund-large",
            "acme.woocommerce.woo.set-price",
        ]
    );
    assert_eq!(
        ids(&index, "agents"),
        [
            "acme.woocommerce.order-reviewer",
            "acme.woocommerce.store-agent"
        ]
    );
    assert_eq!(ids(&index, "flows"), ["acme.woocommerce.order-review"]);
    assert!(dev.stop().success());
}

#[test]
fn the_drupal_template_loads() {
    let Some((_tmp, dev, index)) = serve("drupal", "drupal_template") else {
        return;
    };
    assert_eq!(
        ids(&index, "agents"),
        ["acme.drupal.content-agent", "acme.drupal.content-reviewer"]
    );
    assert_eq!(ids(&index, "flows"), ["acme.drupal.content-review"]);
    assert!(dev.stop().success());
}

#[test]
fn the_sample_template_loads() {
    let Some((_tmp, dev, index)) = serve("sample", "sample_template") else {
        return;
    };
    assert_eq!(
        ids(&index, "tools"),
        [
            "acme.sample.echo",
            "acme.sample.fetch-httpbin",
            "acme.sample.greet"
        ]
    );
    assert_eq!(ids(&index, "flows"), ["acme.sample.echo-flow"]);
    assert!(dev.stop().success());
}
