//! The official CLI (kindgi-cli 0.1.10) against `/v1/env` and `/v1/secrets` on a real
//! loopback server: `secrets set` from stdin, `secrets list` / `get` (never a value),
//! `env set` / `list` / `unset` with `--scope`. Needs the reference CLI (`.venv/bin/kindgi`,
//! or beside `KINDGI_REFERENCE_PYTHON`); without it the test skips, and fails when
//! `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;

const SECRET: &str = "cli-secret-value-NEVER-SHOWN";

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

struct Cli {
    bin: PathBuf,
    url: String,
    token: String,
    dir: tempfile::TempDir,
}

impl Cli {
    /// Run `kindgi <args> --json`; stdout, stderr and whether it exited 0.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> (String, String, bool) {
        let mut child = Command::new(&self.bin)
            .args(args)
            .args(["--json", "--url", &self.url, "--token", &self.token])
            .current_dir(self.dir.path())
            .env("HOME", self.dir.path())
            .env_remove("KINDGI_API_URL")
            .env_remove("KINDGI_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            pipe.write_all(s.as_bytes()).unwrap();
        }
        drop(pipe);
        let out = child.wait_with_output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.success(),
        )
    }
}

#[tokio::test]
async fn the_official_cli_sets_and_lists_env_values_and_secrets() {
    let Some(bin) = official_cli() else {
        return;
    };
    let t = TestDatabase::sqlite().await.unwrap();
    let state = AppState::new(t.db.clone());
    let token = state.tokens.create("acme", None).await.unwrap().key;
    let (seal, _) = SealKey::generate();
    let app = router(state.with_values(ValuesConfig::new("local", Some(seal))));
    let served = support::serve_loopback(app).await;
    let cli = Cli {
        bin,
        url: served.url.clone(),
        token,
        dir: tempfile::tempdir().unwrap(),
    };

    let outcome = tokio::task::spawn_blocking(move || {
        let mut transcript = Vec::new();
        let mut step = |args: &[&str], stdin: Option<&str>| {
            let (out, err, ok) = cli.run(args, stdin);
            transcript.push(format!("$ kindgi {}\n{out}{err}", args.join(" ")));
            assert!(ok, "kindgi {} failed:\n{out}\n{err}", args.join(" "));
            assert!(
                !out.contains(SECRET) && !err.contains(SECRET),
                "the CLI printed the secret"
            );
            out
        };
        step(
            &[
                "secrets",
                "set",
                "STRIPE_KEY",
                "--env=local",
                "--scope=tenant",
                "--from-stdin",
            ],
            Some(SECRET),
        );
        step(
            &[
                "secrets",
                "set",
                "STRIPE_KEY",
                "--env=local",
                "--scope=tenant",
                "--from-stdin",
                "--write-mode=add-version",
            ],
            Some(SECRET),
        );
        let list = step(&["secrets", "list", "--env=local", "--scope=tenant"], None);
        let get = step(
            &[
                "secrets",
                "get",
                "STRIPE_KEY",
                "--env=local",
                "--scope=tenant",
            ],
            None,
        );
        step(
            &[
                "env",
                "set",
                "BASE_URL",
                "https://api.example",
                "--env=local",
                "--scope=tenant",
            ],
            None,
        );
        let env_list = step(&["env", "list", "--env=local", "--scope=tenant"], None);
        step(
            &["env", "unset", "BASE_URL", "--env=local", "--scope=tenant"],
            None,
        );
        let after = step(&["env", "list", "--env=local", "--scope=tenant"], None);
        (list, get, env_list, after, transcript.join("\n"))
    })
    .await;
    served.stop().await;
    let (list, get, env_list, after, transcript) = outcome.unwrap();
    eprintln!("{transcript}");
    assert!(list.contains("STRIPE_KEY"), "{transcript}");
    assert!(get.contains("\"currentVersion\": 2"), "{transcript}");
    assert!(
        env_list.contains("\"value\": \"https://api.example\""),
        "{transcript}"
    );
    assert!(!after.contains("https://api.example"), "{transcript}");
    t.cleanup().await.unwrap();
}
