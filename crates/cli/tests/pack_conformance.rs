//! `kindgi pack conformance` end to end: the real `kindgi` binary runs the kit against the
//! Rust fixture (`target/debug/conformance-pack`, built beforehand with
//! `cargo build -p conformance-pack`) and against the official Python service running the
//! Python twin (`examples/conformance-pack-python`), and against the official TypeScript
//! service on the echo-only fixture (`examples/conformance-pack-ts-echo`), whose missing
//! members are skipped by name. Also the CLI's usage errors.
//!
//! Missing prerequisites skip with a message, or fail when `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kindgi() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kindgi"))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Skips (or fails, when the reference is required) when `what` is unavailable.
fn unavailable(what: &str) {
    kindgi_spec::testing::skip_without_reference("pack_conformance", what);
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The report's shape: one line per check, then `N passed, M failed` alone and last.
fn summary(report: &str) -> (u32, u32) {
    let last = report.lines().last().unwrap_or_default();
    let (p, f) = last
        .split_once(" passed, ")
        .unwrap_or_else(|| panic!("no summary line: {last:?}\n{report}"));
    let f = f
        .strip_suffix(" failed")
        .unwrap_or_else(|| panic!("no summary line: {last:?}"));
    (p.parse().unwrap(), f.parse().unwrap())
}

#[test]
fn the_rust_fixture_passes_every_check() {
    let fixture = workspace().join("target/debug/conformance-pack");
    if !fixture.is_file() {
        unavailable("target/debug/conformance-pack is not built (cargo build -p conformance-pack)");
        return;
    }
    let index = workspace().join("examples/conformance-pack/index.json");
    let out = kindgi()
        .args(["pack", "conformance", "--require-all", "--"])
        .arg(&fixture)
        .arg("serve")
        .arg("--index")
        .arg(&index)
        .output()
        .unwrap();
    let report = stdout(&out);
    let (passed, failed) = summary(&report);
    let failures: Vec<&str> = report.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed, 0, "failures:\n{}", failures.join("\n"));
    assert_eq!(passed, 84, "{report}");
    assert!(
        !report.contains("known-divergence"),
        "our service has no known divergences:\n{report}"
    );
    assert_eq!(out.status.code(), Some(0), "{report}");
}

#[test]
fn the_official_python_service_passes_or_diverges_knowingly() {
    let python = match std::env::var("KINDGI_REFERENCE_PYTHON") {
        Ok(p) if Path::new(&p).is_file() => p,
        _ => {
            unavailable(
                "KINDGI_REFERENCE_PYTHON is not set (source .cache/reference.env after scripts/setup-reference)",
            );
            return;
        }
    };
    let index = workspace().join("examples/conformance-pack-python/index.json");
    let out = kindgi()
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args([
            "pack",
            "conformance",
            "--implementation",
            "python-0.1.10",
            "--",
        ])
        .arg(&python)
        .args(["-m", "kindgi.pack", "serve", "--index"])
        .arg(&index)
        .output()
        .unwrap();
    let report = stdout(&out);
    let (passed, failed) = summary(&report);
    let failures: Vec<&str> = report.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed, 0, "failures:\n{}", failures.join("\n"));
    let divergences = report
        .lines()
        .filter(|l| l.starts_with("known-divergence"))
        .count() as u32;
    assert_eq!(passed + divergences, 84, "{report}");
    assert_eq!(out.status.code(), Some(0), "{report}");
}

/// The official TypeScript service's command on `examples/conformance-pack-ts-echo`, or `None`
/// (skipped, or failed under `KINDGI_REQUIRE_REFERENCE`) without the kindgi-cli wheel.
fn typescript_echo_command() -> Option<Vec<String>> {
    let (Ok(node), Ok(modules)) = (
        std::env::var("KINDGI_NODE24_DIR"),
        std::env::var("KINDGI_CLI_NODE_MODULES"),
    ) else {
        unavailable(
            "KINDGI_NODE24_DIR / KINDGI_CLI_NODE_MODULES are not set (source .cache/reference.env)",
        );
        return None;
    };
    let index = workspace().join("examples/conformance-pack-ts-echo/index.json");
    Some(vec![
        format!("{node}/bin/node"),
        format!("{modules}/@kindgi/handler-runtime/dist/pack-service/main.js"),
        "--index".to_owned(),
        index.display().to_string(),
    ])
}

#[test]
fn the_official_typescript_service_on_a_partial_fixture_skips_by_name() {
    let Some(command) = typescript_echo_command() else {
        return;
    };
    let out = kindgi()
        .args(["pack", "conformance", "--"])
        .args(&command)
        .output()
        .unwrap();
    let report = stdout(&out);
    let (passed, failed) = summary(&report);
    let failures: Vec<&str> = report.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed, 0, "failures:\n{}", failures.join("\n"));
    assert!(
        report.starts_with("# pack service: ")
            && report
                .lines()
                .next()
                .unwrap()
                .ends_with("(implementation: typescript 0.1.10)"),
        "detected from the command: {report}"
    );
    let skipped: Vec<&str> = report.lines().filter(|l| l.starts_with("skip ")).collect();
    assert!(
        skipped.iter().any(|l| l.starts_with("skip 47 ")
            && l.ends_with("the fixture has no tool \"conformance.sleep\"")),
        "{report}"
    );
    assert!(
        skipped.iter().any(|l| l.starts_with("skip 53 ")
            && l.ends_with("the fixture has no check \"conformance.checks.min-length\"")),
        "{report}"
    );
    assert!(
        skipped.iter().any(|l| l.starts_with("skip 17 ")
            && l.ends_with("the fixture has no index variant index.extras.json")),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "{} skipped: the fixture lacks what they need",
            skipped.len()
        )),
        "{report}"
    );
    let divergences = report
        .lines()
        .filter(|l| l.starts_with("known-divergence"))
        .count();
    assert_eq!(
        passed as usize + skipped.len() + divergences,
        84,
        "{report}"
    );
    assert!(
        report.lines().any(|l| l.starts_with("ok 11 ")),
        "echo checks run: {report}"
    );
    assert_eq!(out.status.code(), Some(0), "{report}");

    // --require-all: the same missing member is a failure, exit 1.
    let out = kindgi()
        .args([
            "pack",
            "conformance",
            "--require-all",
            "--only",
            "1,47",
            "--",
        ])
        .args(&command)
        .output()
        .unwrap();
    let report = stdout(&out);
    assert!(report.lines().any(|l| l.starts_with("ok 1 ")), "{report}");
    assert!(
        report.lines().any(|l| l.starts_with("FAIL 47 ")
            && l.ends_with("the fixture has no tool \"conformance.sleep\" (--require-all)")),
        "{report}"
    );
    assert_eq!(summary(&report), (1, 1), "{report}");
    assert_eq!(out.status.code(), Some(1), "{report}");
}

#[test]
fn a_failing_check_exits_1_and_says_what_it_got() {
    // The Python twin's base index passed as the Rust implementation with a check the
    // official service is known to fail: reported as FAIL, exit 1.
    let python = match std::env::var("KINDGI_REFERENCE_PYTHON") {
        Ok(p) if Path::new(&p).is_file() => p,
        _ => {
            unavailable("KINDGI_REFERENCE_PYTHON is not set");
            return;
        }
    };
    let index = workspace().join("examples/conformance-pack-python/index.json");
    let out = kindgi()
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args([
            "pack",
            "conformance",
            "--implementation",
            "rust",
            "--only",
            "39,1",
            "--",
        ])
        .arg(&python)
        .args(["-m", "kindgi.pack", "serve", "--index"])
        .arg(&index)
        .output()
        .unwrap();
    let report = stdout(&out);
    assert!(report.lines().any(|l| l.starts_with("ok 1 ")), "{report}");
    let fail = report
        .lines()
        .find(|l| l.starts_with("FAIL 39 "))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(fail.contains("expected"), "{fail}");
    assert_eq!(summary(&report), (1, 1));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn usage_errors_exit_2() {
    let no_index = kindgi()
        .args(["pack", "conformance", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(no_index.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&no_index.stderr).contains("--index"),
        "{no_index:?}"
    );
    let bad_only = kindgi()
        .args([
            "pack",
            "conformance",
            "--only",
            "x",
            "--",
            "true",
            "--index",
            "i.json",
        ])
        .output()
        .unwrap();
    assert_eq!(bad_only.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad_only.stderr).contains("--only"),
        "{bad_only:?}"
    );
    let no_cmd = kindgi().args(["pack", "conformance"]).output().unwrap();
    assert_eq!(no_cmd.status.code(), Some(2));
}
