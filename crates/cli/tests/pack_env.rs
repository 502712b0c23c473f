//! What pack code sees of the runtime's environment (issue 19, finding 7): from inside a
//! handler of the official Python and TypeScript SDKs, under `kindgi dev` and `kindgi server
//! --pack-dir`, a tool that returns the names of its process environment. The runtime's
//! secrets key, a planted API token and a database URL are never there; the allowlist
//! (PATH, HOME, …), the protocol's tuning variables and what the operator adds with
//! `--pack-env NAME` are, and the pack still works.
//!
//! Needs the official SDKs (`source .cache/reference.env`): skipped without them, failed
//! when `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;
mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use dev_common::*;

/// A valid secrets key (base64 of 32 bytes) the runtime itself reads.
const SECRETS_KEY: &str = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";

/// The environment every test starts the runtime with: the runtime's own keys, a variable
/// nobody passes on, one the operator passes on with `--pack-env`, and the protocol's
/// `KINDGI_PACK_ENV_FILTER=off` (so the SDK's own filter keeps whatever the runtime gave
/// it, and what the test sees is the runtime's allowlist alone).
const PLANTED: &[(&str, &str)] = &[
    ("KINDGI_SECRETS_KEY", SECRETS_KEY),
    ("KINDGI_API_TOKEN", "kgi_planted-api-token"),
    ("DATABASE_URL", "postgres://planted@127.0.0.2/db"),
    ("PLANTED_UNLISTED", "unlisted"),
    ("OPERATOR_EXTRA", "extra"),
    ("KINDGI_PACK_ENV_FILTER", "off"),
];

const PYTHON_GREET: &str = r#"
"""my-pack.greet, as an environment probe: the sorted names of the process environment."""
import os
from pydantic import BaseModel, Field
from kindgi import ToolContext, tool

class Person(BaseModel):
    name: str = Field(min_length=1)

class Greeting(BaseModel):
    greeting: str

@tool(id="my-pack.greet", version="0.1.0", mutating=False)
def greet(person: Person, ctx: ToolContext) -> Greeting:
    """Lists the process environment's names."""
    return Greeting(greeting=",".join(sorted(os.environ)))
"#;

/// The Python example pack whose `my-pack.greet` returns the environment's names.
fn python_probe_pack() -> tempfile::TempDir {
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    std::fs::write(tmp.path().join("tools/greet.py"), PYTHON_GREET).unwrap();
    tmp
}

/// The TypeScript example pack whose `my-pack.greet` returns the environment's names.
fn ts_probe_pack(r: &TsReference) -> tempfile::TempDir {
    let tmp = ts_pack(r);
    let file = tmp.path().join("tools/greet/index.ts");
    let text = std::fs::read_to_string(&file).unwrap();
    let probe = text.replace(
        "handler: async ({ name }) => ({ greeting: `Hello, ${name}!` }),",
        "handler: async () => ({ greeting: Object.keys(process.env).sort().join(',') }),",
    );
    assert_ne!(probe, text, "the example's greet handler changed");
    std::fs::write(&file, probe).unwrap();
    tmp
}

/// The names `my-pack.greet` saw: a dry run of `my-pack.echo-flow` by `kindgi runs start`,
/// with `envs` (the address and key, or none to use the folder's `.kindgirc.json`).
fn names_seen(cwd: &Path, envs: &[(&str, &str)]) -> Vec<String> {
    let out = Command::new(kindgi())
        .args([
            "runs",
            "start",
            "--flow=my-pack.echo-flow",
            "--input={\"name\":\"Ada\"}",
            "--dry-run",
        ])
        .current_dir(cwd)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    run["output"]["greeting"]
        .as_str()
        .unwrap_or_else(|| panic!("no greeting: {run}"))
        .split(',')
        .map(str::to_owned)
        .collect()
}

/// The allowlist's promise, on the names a handler saw.
fn assert_allowlisted(names: &[String]) {
    let has = |n: &str| names.iter().any(|x| x == n);
    for kept in ["PATH", "HOME", "OPERATOR_EXTRA", "KINDGI_PACK_ENV_FILTER"] {
        assert!(has(kept), "{kept} is kept: {names:?}");
    }
    for never in [
        "KINDGI_SECRETS_KEY",
        "KINDGI_API_TOKEN",
        "DATABASE_URL",
        "PLANTED_UNLISTED",
        "KINDGI_PACK_SERVICE_TOKEN",
        "KINDGI_PYTHON",
        "KINDGI_NODE",
    ] {
        assert!(!has(never), "{never} reached pack code: {names:?}");
    }
}

fn dev_envs<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    PLANTED
        .iter()
        .copied()
        .chain(extra.iter().copied())
        .collect()
}

#[test]
fn a_python_handler_under_dev_sees_the_allowlist_and_never_the_runtimes_keys() {
    let Some(python) = reference_python("a_python_handler_under_dev_sees_the_allowlist") else {
        return;
    };
    let tmp = python_probe_pack();
    let py = python.display().to_string();
    let dev = start_dev(
        tmp.path(),
        &dev_envs(&[("KINDGI_PYTHON", &py)]),
        &["--no-watch", "--pack-env", "OPERATOR_EXTRA"],
    );
    assert_allowlisted(&names_seen(tmp.path(), &[]));
    assert!(dev.stop().success());
}

#[test]
fn a_typescript_handler_under_dev_sees_the_allowlist_and_never_the_runtimes_keys() {
    let Some(r) = ts_reference("a_typescript_handler_under_dev_sees_the_allowlist") else {
        return;
    };
    let tmp = ts_probe_pack(&r);
    let node = r.node.display().to_string();
    let dev = start_dev(
        tmp.path(),
        &dev_envs(&[("KINDGI_NODE", &node)]),
        &["--no-watch", "--pack-env", "OPERATOR_EXTRA"],
    );
    assert_allowlisted(&names_seen(tmp.path(), &[]));
    assert!(dev.stop().success());
}

#[test]
fn a_python_handler_under_server_pack_dir_never_sees_the_secrets_key() {
    let Some(python) = reference_python("a_python_handler_under_server_pack_dir") else {
        return;
    };
    let tmp = python_probe_pack();
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("k.db").display().to_string();
    let key = support::create_token(&db, "default").key;
    let py = python.display().to_string();
    let dir = tmp.path().display().to_string();
    let server = support::Server::start_with(
        &db,
        &["--pack-dir", &dir, "--pack-env", "OPERATOR_EXTRA"],
        &dev_envs(&[("KINDGI_PYTHON", &py)]),
    );
    let names = names_seen(
        db_dir.path(),
        &[("KINDGI_API_URL", &server.url), ("KINDGI_API_TOKEN", &key)],
    );
    assert_allowlisted(&names);
    server.stop();
}

#[test]
fn pack_env_refuses_the_runtimes_own_names() {
    for (name, why) in [
        ("KINDGI_SECRETS_KEY", "runtime's own variables"),
        ("DATABASE_URL", "runtime's own variables"),
        ("1BAD", "not a variable name"),
    ] {
        let out = Command::new(kindgi())
            .args(["server", "--pack-env", name])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(why), "{name}: {err}");
    }
}
