//! The service token never reaches pack code: a Rust pack started the way `kindgi dev`
//! starts one (the token in a 0600 file named by `KINDGI_PACK_SERVICE_TOKEN_FILE`), or with
//! the token in `KINDGI_PACK_SERVICE_TOKEN` (the service re-executes itself without it),
//! asked from inside a handler whether the token can be read back — from the environment,
//! `/proc/self/environ`, `/proc/self/cmdline` or the token file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use std::ffi::OsStr;

const TOKEN: &str = "probe-token-8c1d0b6e5f2a4937a1e0";

fn probe(port: u16) -> Value {
    let body = json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.token-probe"},
        "input": {"token": TOKEN}, "ctx": {"tenantId": "t", "runId": "r"}});
    let (status, answer) = common::invoke(port, TOKEN, body.to_string().as_bytes());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["kind"], "result", "{answer}");
    answer["output"].clone()
}

fn assert_unseen(found: &Value) {
    assert_eq!(found["env"], false, "{found}");
    assert_eq!(found["cmdline"], false, "{found}");
    // `null`: no /proc here (macOS), or no token file (it is gone).
    assert_ne!(found["environ"], true, "{found}");
    assert_ne!(found["tokenFile"], true, "{found}");
    if cfg!(target_os = "linux") {
        assert_eq!(found["environ"], false, "{found}");
    }
}

#[test]
fn a_token_file_is_read_and_removed_before_pack_code_runs() {
    let dir = tempfile::Builder::new()
        .prefix("kindgi-pack-token")
        .tempdir()
        .unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, TOKEN).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let svc = common::start(
        "index.extras.json",
        &[("KINDGI_PACK_SERVICE_TOKEN_FILE", file.as_os_str())],
    );
    let found = probe(svc.port);
    assert_unseen(&found);
    assert_eq!(found["tokenFile"], Value::Null, "{found}");
    assert!(!file.exists(), "the token file is still there");
}

#[test]
fn a_token_in_the_environment_is_gone_from_the_process_image() {
    let svc = common::start(
        "index.extras.json",
        &[("KINDGI_PACK_SERVICE_TOKEN", OsStr::new(TOKEN))],
    );
    assert_unseen(&probe(svc.port));
}
