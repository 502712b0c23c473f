//! npm's documented examples (node-semver README) and the reference's `pickVersion` cases.

use super::*;

fn expands(range: &str) -> String {
    Range::parse(range)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string()
}

fn sat(range: &str, v: &str) -> bool {
    Range::parse(range)
        .unwrap()
        .satisfies(&Version::parse(v).unwrap())
}

#[test]
fn versions_parse_strictly() {
    for ok in [
        "0.0.0",
        "1.2.3",
        "1.2.3-beta.1",
        "1.2.3-0.a.b-c",
        "1.2.3+build.5",
        "1.2.3-rc.1+b",
        "9007199254740991.0.0",
    ] {
        assert!(Version::parse(ok).is_ok(), "{ok}");
    }
    for bad in [
        "",
        "1",
        "1.2",
        "1.2.3.4",
        "01.0.0",
        "1.02.0",
        "1.2.3-",
        "1.2.3-01",
        "1.2.3+",
        "v1.2.3",
        " 1.2.3",
        "1.2.3-be ta",
        "a.b.c",
        "9007199254740992.0.0",
    ] {
        assert!(Version::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(Version::parse_npm(" v1.2.3 ").unwrap().to_string(), "1.2.3");
}

#[test]
fn precedence_follows_semver() {
    // The SemVer 2.0 spec's example chain.
    let chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "2.0.0",
    ];
    for w in chain.windows(2) {
        assert!(
            Version::parse(w[0]).unwrap() < Version::parse(w[1]).unwrap(),
            "{} < {}",
            w[0],
            w[1]
        );
    }
    assert_eq!(
        Version::parse("1.0.0+a").unwrap(),
        Version::parse("1.0.0+b").unwrap()
    );
}

#[test]
fn hyphen_ranges() {
    assert_eq!(expands("1.2.3 - 2.3.4"), ">=1.2.3 <=2.3.4");
    assert_eq!(expands("1.2 - 2.3.4"), ">=1.2.0 <=2.3.4");
    assert_eq!(expands("1.2.3 - 2.3"), ">=1.2.3 <2.4.0-0");
    assert_eq!(expands("1.2.3 - 2"), ">=1.2.3 <3.0.0-0");
    assert_eq!(expands("* - 2"), "<3.0.0-0");
}

#[test]
fn x_ranges() {
    assert_eq!(expands("*"), "");
    assert_eq!(expands(""), "");
    assert_eq!(expands("1.x"), ">=1.0.0 <2.0.0-0");
    assert_eq!(expands("1.2.x"), ">=1.2.0 <1.3.0-0");
    assert_eq!(expands("1"), ">=1.0.0 <2.0.0-0");
    assert_eq!(expands("1.2"), ">=1.2.0 <1.3.0-0");
    assert_eq!(expands("1.X"), ">=1.0.0 <2.0.0-0");
    assert_eq!(expands("1.2.*"), ">=1.2.0 <1.3.0-0");
    assert_eq!(expands(">1"), ">=2.0.0");
    assert_eq!(expands(">1.2"), ">=1.3.0");
    assert_eq!(expands("<=1.2"), "<1.3.0-0");
    assert_eq!(expands("<1.2"), "<1.2.0-0");
    assert_eq!(expands(">=1.2"), ">=1.2.0");
    assert_eq!(expands(">*"), "<0.0.0-0");
    assert_eq!(expands(">=0.0.0"), "");
}

#[test]
fn tilde_ranges() {
    assert_eq!(expands("~1.2.3"), ">=1.2.3 <1.3.0-0");
    assert_eq!(expands("~1.2"), ">=1.2.0 <1.3.0-0");
    assert_eq!(expands("~1"), ">=1.0.0 <2.0.0-0");
    assert_eq!(expands("~0.2.3"), ">=0.2.3 <0.3.0-0");
    assert_eq!(expands("~0.2"), ">=0.2.0 <0.3.0-0");
    assert_eq!(expands("~0"), "<1.0.0-0");
    assert_eq!(expands("~1.2.3-beta.2"), ">=1.2.3-beta.2 <1.3.0-0");
    assert_eq!(expands("~>1.2.3"), ">=1.2.3 <1.3.0-0");
    assert_eq!(expands("~ 1.2.3"), ">=1.2.3 <1.3.0-0");
    assert!(sat("~1.2.3-beta.2", "1.2.3-beta.4"));
    assert!(!sat("~1.2.3-beta.2", "1.2.4-beta.2"));
}

#[test]
fn caret_ranges() {
    assert_eq!(expands("^1.2.3"), ">=1.2.3 <2.0.0-0");
    assert_eq!(expands("^0.2.3"), ">=0.2.3 <0.3.0-0");
    assert_eq!(expands("^0.0.3"), ">=0.0.3 <0.0.4-0");
    assert_eq!(expands("^1.2.3-beta.2"), ">=1.2.3-beta.2 <2.0.0-0");
    assert_eq!(expands("^0.0.3-beta"), ">=0.0.3-beta <0.0.4-0");
    assert_eq!(expands("^1.2.x"), ">=1.2.0 <2.0.0-0");
    assert_eq!(expands("^0.0.x"), "<0.1.0-0");
    assert_eq!(expands("^0.0"), "<0.1.0-0");
    assert_eq!(expands("^1.x"), ">=1.0.0 <2.0.0-0");
    assert_eq!(expands("^0.x"), "<1.0.0-0");
    assert_eq!(expands("^ 1.2.3"), ">=1.2.3 <2.0.0-0");
    assert!(sat("^1.2.3-beta.2", "1.2.3-beta.4"));
    assert!(!sat("^1.2.3-beta.2", "1.2.4-beta.2"));
    assert!(sat("^0.0.3-beta", "0.0.3-pr.2"));
}

#[test]
fn comparators_and_unions() {
    assert_eq!(expands(">= 1.2.3 < 2"), ">=1.2.3 <2.0.0-0");
    assert_eq!(expands("=1.2.3"), "1.2.3");
    assert_eq!(expands("v1.2.3"), "1.2.3");
    assert_eq!(expands("1.2.7 || >=1.2.9 <2.0.0"), "1.2.7||>=1.2.9 <2.0.0");
    for v in ["1.2.7", "1.2.9", "1.4.6"] {
        assert!(sat("1.2.7 || >=1.2.9 <2.0.0", v), "{v}");
    }
    for v in ["1.2.8", "2.0.0"] {
        assert!(!sat("1.2.7 || >=1.2.9 <2.0.0", v), "{v}");
    }
    assert_eq!(expands("1.x || *"), "");
    assert_eq!(expands("||x"), "");
    // The prerelease rule from the README.
    assert!(sat(">1.2.3-alpha.3", "1.2.3-alpha.7"));
    assert!(!sat(">1.2.3-alpha.3", "3.4.5-alpha.9"));
    assert!(sat(">1.2.3-alpha.3", "3.4.5"));
    assert!(!sat("*", "1.0.0-beta"));
    assert!(
        Range::parse("*")
            .unwrap()
            .satisfies_with(&Version::parse("1.0.0-beta").unwrap(), true)
    );
    // An exact version is exact (Cargo would read it as ^1.0.0).
    assert!(!sat("1.0.0", "1.0.1"));
}

#[test]
fn invalid_ranges() {
    for bad in [
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
    ] {
        assert!(Range::parse(bad).is_err(), "{bad:?} should be invalid");
    }
    let err = Range::parse("nope").unwrap_err();
    assert!(
        err.to_string().contains("not a valid semver range"),
        "{err}"
    );
}

const PICK: [&str; 5] = ["1.0.0", "1.2.0", "1.3.0-beta.1", "2.0.0", "not-a-version"];

#[test]
fn pick_version_reference_cases() {
    let p = |r: Option<&str>| pick_version(PICK, r);
    assert_eq!(p(Some("^1.0.0")), Ok("1.2.0"));
    assert_eq!(p(Some("1.0.0")), Ok("1.0.0"));
    assert_eq!(p(Some(">=1.0.0")), Ok("2.0.0"));
    assert_eq!(p(Some("^1.2.0")), Ok("1.2.0"));
    assert_eq!(p(Some("^1.3.0-beta.0")), Ok("1.3.0-beta.1"));
    assert_eq!(p(None), Ok("2.0.0"));
    assert!(matches!(
        p(Some("not a range")),
        Err(PickError::InvalidRange(_))
    ));
    assert_eq!(p(Some("^3.0.0")), Err(PickError::NotSatisfiable));
    assert_eq!(
        pick_version(["1.0.0", "1.1.0-rc.1"], None),
        Ok("1.1.0-rc.1")
    );
    assert_eq!(latest_version(["0.1.0", "0.10.0", "0.9.0"]), Some("0.10.0"));
    assert_eq!(
        pick_version(std::iter::empty(), None),
        Err(PickError::NotSatisfiable)
    );
    assert_eq!(latest_version(std::iter::empty()), None);
}

#[test]
fn registry_agreement_cases() {
    let avail = ["1.0.0", "1.0.4", "1.2.0", "2.0.0"];
    let ms = |r: &str| max_satisfying(avail, &Range::parse(r).unwrap());
    assert_eq!(ms("^1.0.0"), Some("1.2.0"));
    assert_eq!(ms("~1.0.0"), Some("1.0.4"));
    assert_eq!(ms(">=1.0.0"), Some("2.0.0"));
    assert_eq!(ms("1.0.0"), Some("1.0.0"));
    assert_eq!(ms("^3.0.0"), None);
}
