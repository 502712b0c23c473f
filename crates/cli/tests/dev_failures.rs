//! `kindgi dev` refusing to start: a pack that does not build, a folder with no pack, a Python
//! without the official SDK. Exit 1 with a message that names what failed and where.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;

#[test]
fn a_rust_pack_that_fails_to_build_names_the_build_and_the_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"broken-pack\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() { let x = ; }\n").unwrap();
    let out = kindgi_in(dir, &["dev", ".", "--port", "0", "--no-watch"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("failed to build"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&std::fs::canonicalize(dir).unwrap().display().to_string()),
        "names the folder: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("src/main.rs"),
        "shows the compiler's error: {}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "never listened: {}", out.stdout);
    assert!(!dir.join(".kindgirc.json").exists());
}

#[test]
fn a_folder_without_a_pack_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(tmp.path(), &["dev", ".", "--port", "0"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("no pack here"), "{}", out.stderr);
    assert!(out.stderr.contains("pyproject.toml"), "{}", out.stderr);
}

#[test]
fn a_missing_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(tmp.path(), &["dev", "does-not-exist", "--port", "0"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("does-not-exist"), "{}", out.stderr);
}

#[test]
fn a_python_without_the_sdk_is_named_with_how_to_pick_another() {
    let pack = copy_pack(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/my-pack-python"),
    );
    // A fresh virtual environment: a Python that surely has no `kindgi` package.
    let venv = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(venv.path())
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv: {made}");
    let python = venv.path().join("bin/python");
    let out = std::process::Command::new(kindgi())
        .args(["dev", ".", "--port", "0", "--no-watch"])
        .current_dir(pack.path())
        .env("KINDGI_PYTHON", &python)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("failed to index"), "{stderr}");
    assert!(stderr.contains("No module named 'kindgi'"), "{stderr}");
    assert!(
        stderr.contains("KINDGI_PYTHON=/path/to/venv/bin/python"),
        "says how to pick another Python: {stderr}"
    );
    assert!(stderr.contains("pip install kindgi==0.1.10"), "{stderr}");
}
