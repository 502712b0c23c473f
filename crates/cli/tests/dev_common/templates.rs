//! The official templates driven end to end, written once for the `template_*` tests: a pack
//! made by the official `kindgi init --template=T` at test time, our `kindgi dev` serving it,
//! and the official CLI (`.venv/bin/kindgi`, or `KINDGI_OFFICIAL_CLI`) run in the pack's folder
//! (it finds the dev server through `.kindgirc.json` there) with its own empty `HOME`.
//!
//! Everything here needs the reference: skipped without it, failed when
//! `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::{Dev, Out, reference_python, repo_root, start_dev, ts_reference};

/// The warning line dev-echo's text answers start with (runtime.md §3.4).
pub const DEV_ECHO_WARNING: &str = "⚠ dev-echo isn't a real model: it only repeats what it's given. Add an LLM provider key (Anthropic, OpenAI, OpenRouter…) to get real answers.";

/// What a dry run's agent step answers instead of calling a model.
pub const DRY_RUN_REPLY: &str = "[dry-run: model call skipped]";

/// The official CLI, or `None` (skip) — a failure when the reference is required.
pub fn official_cli(test: &str) -> Option<PathBuf> {
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

/// A template's pack, served by our `kindgi dev`, with the official CLI to drive it.
pub struct Served {
    /// Holds the pack (`pack/`) and the official CLI's `HOME` (`home/`).
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub cli: PathBuf,
    pub dev: Dev,
}

/// `kindgi init acme.TEMPLATE --template=TEMPLATE --path=<tmp>/pack` with the official CLI.
pub fn init(cli: &Path, template: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pack");
    std::fs::create_dir_all(tmp.path().join("home")).unwrap();
    let out = Command::new(cli)
        .arg("init")
        .arg(format!("acme.{template}"))
        .arg(format!("--template={template}"))
        .arg(format!("--path={}", dir.display()))
        .current_dir(tmp.path())
        .env("HOME", tmp.path().join("home"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "official kindgi init --template={template}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (tmp, dir)
}

/// Generates `template` with the official CLI and starts our `kindgi dev` on it (TypeScript
/// templates with the wheel's `@kindgi/*` and Node 24, `python` with the reference Python),
/// plus `envs`. `None`: the reference is missing (skip).
pub fn serve(template: &str, test: &str, envs: &[(&str, &str)]) -> Option<Served> {
    serve_edited(template, test, envs, |_| {})
}

/// As [`serve`], with `edit` run on the generated pack folder before `kindgi dev` starts (a
/// test that works around a gap says so where it edits).
pub fn serve_edited(
    template: &str,
    test: &str,
    envs: &[(&str, &str)],
    edit: impl FnOnce(&Path),
) -> Option<Served> {
    let cli = official_cli(test)?;
    let mut vars: Vec<(String, String)> = Vec::new();
    if template == "python" {
        let python = reference_python(test)?;
        vars.push(("KINDGI_PYTHON".into(), python.display().to_string()));
    } else {
        let r = ts_reference(test)?;
        vars.push(("KINDGI_NODE".into(), r.node.display().to_string()));
        vars.push((
            "KINDGI_CLI_NODE_MODULES".into(),
            r.node_modules.display().to_string(),
        ));
    }
    let (tmp, dir) = init(&cli, template);
    edit(&dir);
    let mut all: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    all.extend_from_slice(envs);
    let dev = start_dev(&dir, &all, &["--no-watch"]);
    Some(Served { tmp, dir, cli, dev })
}

impl Served {
    /// The official CLI's `ARGS` in the pack folder, with no API environment and no colour.
    pub fn official(&self, args: &[&str]) -> Out {
        self.official_with_stdin(args, None)
    }

    /// As [`Self::official`], with `stdin` written to its standard input.
    pub fn official_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Out {
        let mut child = Command::new(&self.cli)
            .args(args)
            .current_dir(&self.dir)
            .env("HOME", self.tmp.path().join("home"))
            .env("NO_COLOR", "1")
            .env_remove("KINDGI_API_URL")
            .env_remove("KINDGI_API_TOKEN")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(text.as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `kindgi <kind> list` (`tools`, `flows`, `agents`, `guardrails`): the ids, sorted.
    pub fn listed(&self, kind: &str) -> Vec<String> {
        let out = self.official(&[kind, "list", "--limit=100"]);
        assert_eq!(out.code, 0, "{kind} list: {out:?}");
        let page = out.json();
        assert_eq!(page["hasMore"], false, "{page}");
        let mut ids: Vec<String> = page["data"]
            .as_array()
            .unwrap_or_else(|| panic!("{kind} list is not a page: {page}"))
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    }

    /// `kindgi runs start --flow=FLOW --input=INPUT [--dry-run]` (it waits): the exit code
    /// and the printed run.
    pub fn start_flow(&self, flow: &str, input: &str, dry_run: bool) -> (Out, Value) {
        self.start("--flow", flow, input, dry_run)
    }

    /// `kindgi runs start --agent=AGENT --input={"userMessage": MESSAGE} [--dry-run]`.
    pub fn start_agent(&self, agent: &str, message: &str, dry_run: bool) -> (Out, Value) {
        let input = serde_json::json!({ "userMessage": message }).to_string();
        self.start("--agent", agent, &input, dry_run)
    }

    fn start(&self, flag: &str, id: &str, input: &str, dry_run: bool) -> (Out, Value) {
        let target = format!("{flag}={id}");
        let input = format!("--input={input}");
        let mut args = vec!["runs", "start", target.as_str(), input.as_str()];
        if dry_run {
            args.push("--dry-run");
        }
        let out = self.official(&args);
        let run = out.json();
        assert_eq!(run["dryRun"], dry_run, "{run}");
        (out, run)
    }

    /// `kindgi runs journal RUN`: each entry's `(kind, nodeId)`.
    pub fn journal(&self, run: &Value) -> Vec<(String, String)> {
        let id = run["id"].as_str().unwrap();
        let out = self.official(&["runs", "journal", id]);
        assert_eq!(out.code, 0, "runs journal: {out:?}");
        out.json()["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["kind"].as_str().unwrap_or("").to_owned(),
                    e["nodeId"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    }

    /// Stops `kindgi dev` with SIGTERM; it must exit 0.
    pub fn stop(self) {
        let Served { tmp, dev, .. } = self;
        let status = dev.stop();
        assert!(status.success(), "kindgi dev exited {status}");
        drop(tmp);
    }
}

/// A completed run (exit 0, `status: completed`).
pub fn assert_completed(what: &str, out: &Out, run: &Value) {
    assert_eq!(out.code, 0, "{what}: {out:?}");
    assert_eq!(run["status"], "completed", "{what}: {run}");
}

/// A live agent turn answered by dev-echo after it called `tool` (the agent's first): the
/// turn completed, its text is dev-echo's `Tool responded: …` behind the warning line, its
/// one tool call is `tool`'s, and the official CLI printed the warning on stderr.
/// The tool's result, parsed from the answer.
pub fn assert_dev_echo_called(what: &str, out: &Out, turn: &Value, tool: &str) -> Value {
    assert_eq!(out.code, 0, "{what}: {out:?}");
    assert_eq!(turn["status"], "completed", "{what}: {turn}");
    let text = turn["output"]["text"].as_str().unwrap_or_default();
    let prefix = format!("{DEV_ECHO_WARNING}\n\nTool responded: ");
    let result = text
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{what}: not dev-echo's answer after a tool call: {turn}"));
    assert_eq!(turn["output"]["providerId"], "dev-echo", "{what}: {turn}");
    let calls = turn["output"]["toolCalls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{what}: {turn}");
    assert!(
        calls[0].to_string().contains(tool),
        "{what}: the call is not {tool}'s: {turn}"
    );
    assert!(
        out.stderr.contains("⚠ dev-echo isn't a real model"),
        "{what}: {out:?}"
    );
    serde_json::from_str(result).unwrap_or_else(|e| panic!("{what}: the tool result ({e}): {text}"))
}

/// The same, for the text an agent step put in a flow's output: the tool's result.
pub fn dev_echo_tool_result(what: &str, text: &Value) -> Value {
    let text = text.as_str().unwrap_or_default();
    let prefix = format!("{DEV_ECHO_WARNING}\n\nTool responded: ");
    let result = text
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{what}: not dev-echo's answer after a tool call: {text}"));
    serde_json::from_str(result).unwrap_or_else(|e| panic!("{what}: the tool result ({e}): {text}"))
}
