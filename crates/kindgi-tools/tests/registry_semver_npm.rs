//! Differential test: our npm-semver ranges against the real `semver` package (the one the
//! reference SDK depends on), run with the reference Node. Skips with a message when the
//! reference is not installed, unless `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use kindgi_tools::semver::{Range, max_satisfying};

const RANGES: &[&str] = &[
    "",
    "*",
    "x",
    "X",
    "1",
    "1.x",
    "1.2",
    "1.2.x",
    "1.2.*",
    "1.x.x",
    "=1.2.3",
    "v1.2.3",
    "1.2.3",
    "1.2.3-beta.1",
    "^1.2.3",
    "^0.2.3",
    "^0.0.3",
    "^0",
    "^0.0",
    "^0.x",
    "^1.x",
    "^1.2.x",
    "^0.0.x",
    "^1.2.3-beta.2",
    "^0.0.3-beta",
    "^v1.2.3",
    "^=1.2.3",
    "^ 1.2.3",
    "~1.2.3",
    "~1.2",
    "~1",
    "~0",
    "~0.2",
    "~>1.2.3",
    "~> 1.2",
    "~ 1",
    "~1.2.3-beta.2",
    ">1.2.3",
    ">=1.2.3",
    "<1.2.3",
    "<=1.2.3",
    "> 1.2.3",
    ">= 1.2.3 < 2",
    ">1",
    ">1.2",
    "<1",
    "<1.2",
    "<=1",
    "<=1.2",
    ">=1",
    ">=1.2",
    ">*",
    "<*",
    ">=*",
    "<=*",
    "=*",
    ">=0.0.0",
    ">=0.0.0 <1",
    ">1.2.3-alpha.3",
    "<2.0.0-0",
    "1.2.3 - 2.3.4",
    "1.2 - 2.3.4",
    "1.2.3 - 2.3",
    "1.2.3 - 2",
    "* - 2",
    "1 - *",
    "1.2.3-beta - 2.3.4-rc.1",
    "v1.2.3 - v2.0.0",
    "=1.2.3 - 2",
    "1.2.7 || >=1.2.9 <2.0.0",
    "1.x || >=2.5.0 || 5.0.0 - 7.2.3",
    "||x",
    " || 1.0.0",
    "1.0.0 ||",
    "^1.0.0 ^1.5.0",
    ">=1.0.0 <1.0.0",
    "<0.0.0-0",
    "not-a-range",
    "not a range",
    "1.2.3.4",
    ">=",
    "^",
    "~",
    "1.2.3 -",
    "01.2.3",
    "1 | 2",
    ">=1.2.3 - 2",
    "==1.2.3",
    "1.2.3-01",
    "^1.2.3.4",
    "=>1.2.3",
    "1.2.3+build",
    "^1.2.3+b",
    "'; DROP TABLE tools; --",
    "1.2.3  ||  2.x",
    ">=1.2.3\t<2",
    "vv1.2.3",
    "^vv1.2.3",
    "1.2.3 - 2.3.4 || 3",
    "9007199254740991",
    "9007199254740992",
    "^9007199254740991.0.0",
    "1.2.3-",
    "1.2.3-beta..1",
    "~1.2.3-0",
];

const VERSIONS: &[&str] = &[
    "0.0.0",
    "0.0.1",
    "0.0.3",
    "0.0.3-beta",
    "0.0.3-pr.2",
    "0.0.4",
    "0.1.0",
    "0.2.3",
    "0.2.9",
    "0.3.0",
    "0.9.0",
    "0.10.0",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.4",
    "1.2.0",
    "1.2.3-alpha.7",
    "1.2.3-beta.1",
    "1.2.3-beta.4",
    "1.2.3",
    "1.2.4-beta.2",
    "1.2.7",
    "1.2.8",
    "1.2.9",
    "1.3.0-beta.1",
    "1.4.6",
    "1.99.99",
    "2.0.0-0",
    "2.0.0-rc.1",
    "2.0.0",
    "2.3.4",
    "2.3.5",
    "2.5.0",
    "3.4.5-alpha.9",
    "3.4.5",
    "5.0.0",
    "7.2.3",
    "7.2.4",
    "not-a-version",
    "v2.4.0",
];

#[test]
fn ranges_match_npm_semver() {
    let (Ok(node_dir), Ok(modules)) = (
        std::env::var("KINDGI_NODE24_DIR"),
        std::env::var("KINDGI_CLI_NODE_MODULES"),
    ) else {
        kindgi_spec::testing::skip_without_reference(
            "ranges_match_npm_semver",
            "KINDGI_NODE24_DIR / KINDGI_CLI_NODE_MODULES are not set",
        );
        return;
    };
    let script = r#"
const s = require('semver');
const [ranges, versions] = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = ranges.map(r => { const v = s.validRange(r); return [v, v === null ? null : s.maxSatisfying(versions, r)]; });
process.stdout.write(JSON.stringify(out));
"#;
    let mut child = Command::new(format!("{node_dir}/bin/node"))
        .arg("-e")
        .arg(script)
        .env("NODE_PATH", &modules)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let input = serde_json::to_vec(&(RANGES, VERSIONS)).unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    let expected: Vec<(Option<String>, Option<String>)> =
        serde_json::from_slice(&output.stdout).unwrap();
    let mut mismatches = Vec::new();
    for (range, (valid, max)) in RANGES.iter().zip(expected) {
        let ours = Range::parse(range);
        let ours_valid = ours.as_ref().ok().map(|r| {
            let s = r.to_string();
            if s.is_empty() { "*".to_owned() } else { s }
        });
        let ours_max = ours
            .as_ref()
            .ok()
            .and_then(|r| max_satisfying(VERSIONS.iter().copied(), r))
            .map(str::to_owned);
        if ours_valid != valid || ours_max != max {
            mismatches.push(format!(
                "{range:?}: npm {valid:?} → {max:?}; ours {ours_valid:?} → {ours_max:?}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
