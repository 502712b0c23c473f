//! `kindgi dev` on packs made by the official `kindgi init` at test time: the default
//! `minimal` template (no primitives yet) stays up, says so, and registers the first tool
//! saved into it; the `java` and `scala` templates are refused with a message naming what this
//! runtime runs instead of "no pack here".
//!
//! Needs the official CLI (`.venv/bin/kindgi`, or `KINDGI_OFFICIAL_CLI`) and, for `minimal`,
//! the wheel's TypeScript packages (`KINDGI_CLI_NODE_MODULES`, `KINDGI_NODE24_DIR`): skipped
//! without them, failed when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The official CLI, or `None` (skip) — a failure when the reference is required.
fn official_cli(test: &str) -> Option<PathBuf> {
    let path = std::env::var_os("KINDGI_OFFICIAL_CLI")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/kindgi"));
    kindgi_spec::testing::reference_or_skip(
        test,
        path.is_file().then_some(path),
        "the official CLI is not at .venv/bin/kindgi (run scripts/setup-reference)",
    )
}

/// `kindgi init <name> --template T --path <tmp>/<name>` with the official CLI: the folder.
fn official_init(cli: &Path, template: &str, tmp: &Path) -> PathBuf {
    let name = format!("p{template}");
    let dir = tmp.join(&name);
    let out = Command::new(cli)
        .args(["init", &name, &format!("--template={template}"), "--path"])
        .arg(&dir)
        .current_dir(tmp)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "official kindgi init --template {template}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// The official CLI's `tools list --json` in `dir` (it reads `.kindgirc.json` there).
fn official_tools(cli: &Path, dir: &Path) -> serde_json::Value {
    let out = Command::new(cli)
        .args(["tools", "list", "--json"])
        .current_dir(dir)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "official tools list: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

const HELLO_TOOL: &str = r#"import { defineTool } from '@kindgi/sdk/define';
import type { ToolId } from '@kindgi/sdk/types';
import { z } from 'zod';

const defined = defineTool({
  id: 'pminimal.hello' as ToolId,
  description: 'Says hello.',
  version: '0.1.0',
  input: z.object({ name: z.string() }),
  output: z.object({ greeting: z.string() }),
  effects: [],
  mutating: false,
  handler: async ({ name }) => ({ greeting: `Hello, ${name}!` }),
});

if (defined.kind === 'err') {
  throw new Error(defined.error.message);
}

export default defined.value;
"#;

#[test]
fn the_minimal_template_stays_up_and_registers_its_first_tool() {
    let test = "the_minimal_template_stays_up_and_registers_its_first_tool";
    let (Some(cli), Some(r)) = (official_cli(test), ts_reference(test)) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = official_init(&cli, "minimal", tmp.path());
    std::os::unix::fs::symlink(&r.node_modules, dir.join("node_modules")).unwrap();
    let node = r.node.display().to_string();
    let dev = start_dev(&dir, &[("KINDGI_NODE", &node)], &[]);
    let err = dev.stderr();
    assert!(
        err.contains("no tools, guardrails, agents or flows yet"),
        "{err}"
    );
    assert!(err.contains("kindgi dev keeps running"), "{err}");
    assert!(!err.contains("failed to index"), "{err}");
    // Up, with nothing listed, and the official CLI talks to it.
    let listed = official_tools(&cli, &dir);
    assert!(
        !listed.to_string().contains("pminimal.hello"),
        "nothing yet: {listed}"
    );
    // The first saved tool is indexed, served and listed.
    std::fs::write(dir.join("tools/hello.ts"), HELLO_TOOL).unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    while !official_tools(&cli, &dir)
        .to_string()
        .contains("pminimal.hello")
    {
        assert!(
            Instant::now() < deadline,
            "the saved tool was never registered:\n{}",
            dev.stderr()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let status = dev.stop();
    assert!(status.success(), "{status}");
}

#[test]
fn the_java_and_scala_templates_are_told_what_this_runtime_runs() {
    let Some(cli) = official_cli("the_java_and_scala_templates_are_told_what_this_runtime_runs")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for (template, language, file) in [("java", "Java", "pom.xml"), ("scala", "Scala", "build.sbt")]
    {
        let dir = official_init(&cli, template, tmp.path());
        let out = kindgi_in(&dir, &["dev", ".", "--port", "0", "--no-watch"]);
        assert_eq!(out.code, 1, "{out:?}");
        let err = &out.stderr;
        assert!(!err.contains("no pack here"), "{err}");
        assert!(
            err.contains(&format!("a {language} pack ({file})")),
            "{err}"
        );
        assert!(
            err.contains(&format!("does not build or serve {language} packs")),
            "{err}"
        );
        assert!(err.contains("TypeScript, Python and Rust packs"), "{err}");
        assert!(err.contains("pack protocol v2"), "{err}");
        assert!(err.contains("--pack-url"), "{err}");
        assert!(out.stdout.is_empty(), "never listened: {}", out.stdout);
    }
}
