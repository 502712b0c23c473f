//! Test kits for the workspace's tests (feature `testing`, off by default): the
//! reference-skip rule, written once.
//!
//! Many tests compare Kindgi with the official implementations (Node, Python, npm packages
//! that `scripts/setup-reference` installs, found through `.cache/reference.env`). Where
//! they are missing the test skips with a message, so a checkout without them still tests;
//! under CI (`CI` set, or `KINDGI_REQUIRE_REFERENCE=1`) a missing reference fails the test
//! instead, so a broken setup can never pass as a run of skips. It lives in the lowest crate
//! every test crate depends on.

use std::fmt::Display;

/// The variable that makes a missing reference a failure (`1`), as CI sets it.
pub const REQUIRE_REFERENCE_VAR: &str = "KINDGI_REQUIRE_REFERENCE";

/// Whether a missing reference fails the test rather than skipping it:
/// `KINDGI_REQUIRE_REFERENCE=1`, or under CI (`CI` set and not empty).
pub fn reference_required() -> bool {
    std::env::var(REQUIRE_REFERENCE_VAR).as_deref() == Ok("1")
        || std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The reference-skip rule for a test (`test`) whose reference is missing (`why`): panics
/// when the reference is required, else prints `SKIPPED test: why` — the caller then
/// returns without testing.
#[track_caller]
pub fn skip_without_reference(test: &str, why: impl Display) {
    assert!(
        !reference_required(),
        "{test}: the reference is required ({REQUIRE_REFERENCE_VAR}=1 or CI) but {why} \
         (run scripts/setup-reference, then source .cache/reference.env)"
    );
    eprintln!("SKIPPED {test}: {why}");
}

/// `found`, or — when it is `None` — the reference-skip rule (see
/// [`skip_without_reference`]) and `None`.
#[track_caller]
pub fn reference_or_skip<T>(test: &str, found: Option<T>, why: impl Display) -> Option<T> {
    if found.is_none() {
        skip_without_reference(test, why);
    }
    found
}

/// The variable that names the official CLI (`kindgi` from PyPI `kindgi-cli`) to test with.
pub const OFFICIAL_CLI_VAR: &str = "KINDGI_OFFICIAL_CLI";

/// The official CLI: `$KINDGI_OFFICIAL_CLI`, else `.venv/bin/kindgi` at the workspace root
/// (where `scripts/setup-reference` installs it) — or, when it is missing, the
/// reference-skip rule for `test` and `None`.
#[track_caller]
pub fn official_cli(test: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os(OFFICIAL_CLI_VAR)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/kindgi")
        });
    let found = path.exists().then_some(path.clone());
    reference_or_skip(
        test,
        found,
        format_args!("the official CLI is not at {}", path.display()),
    )
}
