//! Tool ids and tool versions as types that cannot hold a bad value.
//!
//! - [`ToolId`]: `<pack-id>.<tool-name>` — two or more dot-separated kebab-case segments
//!   (`acme.verify-citation`, `conformance.checks.min-length`). A bare id (`kindgi_<verb>`,
//!   no dots) is only for tools built into the runtime and only through [`ToolId::built_in`];
//!   parsing (`FromStr`, `TryFrom<String>`, serde) accepts pack ids only, so a pack can
//!   never claim a built-in name.
//! - [`Version`]: a tool's plain `X.Y.Z` version, no prerelease, no build metadata, no
//!   leading zeros (tool.md §3: the schema pattern allows `01.0.0`, but it is not semver and
//!   breaks version ordering, so it is refused here).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// The prefix reserved for tools built into the runtime (`kindgi_remember`, …).
pub const BUILT_IN_TOOL_PREFIX: &str = "kindgi_";

/// What a good pack tool id looks like; appended to every id error.
const GOOD_ID_HINT: &str = "a tool id is \"<pack-id>.<tool-name>\": lowercase kebab-case segments separated by dots, e.g. \"acme.verify-citation\" or \"conformance.checks.min-length\"";

/// Why a string is not a valid tool id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolIdError {
    #[error("tool id is empty: {GOOD_ID_HINT}")]
    Empty,
    #[error(
        "tool id \"{id}\" uses the prefix \"kindgi_\", which is reserved for tools built into Kindgi: name pack tools \"<pack>.<tool>\", e.g. \"acme.verify-citation\""
    )]
    ReservedPrefix { id: String },
    #[error("tool id \"{id}\" has no pack prefix: {GOOD_ID_HINT}")]
    NoNamespace { id: String },
    #[error(
        "tool id \"{id}\" has an empty segment (two dots in a row, or a dot at an end): {GOOD_ID_HINT}"
    )]
    EmptySegment { id: String },
    #[error("tool id \"{id}\": segment \"{segment}\" is not kebab-case ({why}): {GOOD_ID_HINT}")]
    BadSegment {
        id: String,
        segment: String,
        why: &'static str,
    },
    #[error(
        "built-in tool id \"{id}\" must be \"kindgi_<verb>\": the prefix \"kindgi_\" then lowercase letters, digits and single underscores, no dots (e.g. \"kindgi_remember\")"
    )]
    BadBuiltIn { id: String },
}

/// A valid tool id. See the module docs for the rules.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolId(String);

impl ToolId {
    /// Parses a pack tool id (`<pack-id>.<tool-name>`).
    pub fn parse(id: &str) -> Result<Self, ToolIdError> {
        check_pack_id(id)?;
        Ok(ToolId(id.to_owned()))
    }

    /// A tool built into the runtime: `kindgi_<verb>`, no dots.
    pub fn built_in(id: &str) -> Result<Self, ToolIdError> {
        let bad = || ToolIdError::BadBuiltIn { id: id.to_owned() };
        let verb = id.strip_prefix(BUILT_IN_TOOL_PREFIX).ok_or_else(bad)?;
        let ok = !verb.is_empty()
            && verb.split('_').all(|w| {
                !w.is_empty()
                    && w.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        if ok {
            Ok(ToolId(id.to_owned()))
        } else {
            Err(bad())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// Whether this is a tool built into the runtime (`kindgi_…`).
    pub fn is_built_in(&self) -> bool {
        self.0.starts_with(BUILT_IN_TOOL_PREFIX)
    }

    /// The pack prefix: everything before the last dot (`conformance.checks` for
    /// `conformance.checks.min-length`). `None` for a built-in tool.
    pub fn pack(&self) -> Option<&str> {
        self.0.rsplit_once('.').map(|(pack, _)| pack)
    }

    /// The tool's own name: the last segment (the whole id for a built-in tool).
    pub fn name(&self) -> &str {
        self.0
            .rsplit_once('.')
            .map_or(self.0.as_str(), |(_, name)| name)
    }
}

fn check_pack_id(id: &str) -> Result<(), ToolIdError> {
    if id.is_empty() {
        return Err(ToolIdError::Empty);
    }
    if id.starts_with(BUILT_IN_TOOL_PREFIX) {
        return Err(ToolIdError::ReservedPrefix { id: id.to_owned() });
    }
    if !id.contains('.') {
        // Say what is wrong with the lone segment first if it is not even kebab-case.
        if let Some(why) = segment_problem(id) {
            return Err(ToolIdError::BadSegment {
                id: id.to_owned(),
                segment: id.to_owned(),
                why,
            });
        }
        return Err(ToolIdError::NoNamespace { id: id.to_owned() });
    }
    for segment in id.split('.') {
        if segment.is_empty() {
            return Err(ToolIdError::EmptySegment { id: id.to_owned() });
        }
        if let Some(why) = segment_problem(segment) {
            return Err(ToolIdError::BadSegment {
                id: id.to_owned(),
                segment: segment.to_owned(),
                why,
            });
        }
    }
    Ok(())
}

/// Kebab-case: lowercase ASCII letters and digits in words joined by single hyphens.
fn segment_problem(segment: &str) -> Option<&'static str> {
    if segment.bytes().any(|b| b.is_ascii_uppercase()) {
        return Some("uppercase letters");
    }
    if segment.contains('_') {
        return Some("underscores; use hyphens");
    }
    if segment.chars().any(char::is_whitespace) {
        return Some("whitespace");
    }
    if !segment
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Some("only a-z, 0-9 and '-' are allowed");
    }
    if segment.starts_with('-') || segment.ends_with('-') {
        return Some("starts or ends with '-'");
    }
    if segment.contains("--") {
        return Some("two hyphens in a row");
    }
    None
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ToolId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromStr for ToolId {
    type Err = ToolIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolId::parse(s)
    }
}

impl TryFrom<String> for ToolId {
    type Error = ToolIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        check_pack_id(&s)?;
        Ok(ToolId(s))
    }
}

impl TryFrom<&str> for ToolId {
    type Error = ToolIdError;
    fn try_from(s: &str) -> Result<Self, Self::Error> {
        ToolId::parse(s)
    }
}

impl From<ToolId> for String {
    fn from(id: ToolId) -> String {
        id.0
    }
}

impl PartialEq<str> for ToolId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for ToolId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl Serialize for ToolId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Deserializes a pack id, or a well-formed built-in id: a built-in tool's manifest is
/// data the runtime itself wrote, so it must read back. Refusing `kindgi_` ids from
/// outside is the job of the wire path ([`crate::validate`]) and of [`ToolId::parse`].
impl<'de> Deserialize<'de> for ToolId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        if s.starts_with(BUILT_IN_TOOL_PREFIX) {
            return ToolId::built_in(&s).map_err(serde::de::Error::custom);
        }
        ToolId::try_from(s).map_err(serde::de::Error::custom)
    }
}

/// Why a string is not a plain `X.Y.Z` version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error(
        "version \"{version}\" is not a plain \"X.Y.Z\" version (three dot-separated numbers, no prerelease or build suffix), e.g. \"1.2.3\""
    )]
    Shape { version: String },
    #[error("version \"{version}\" has a leading zero in \"{part}\": write \"{fixed}\"")]
    LeadingZero {
        version: String,
        part: String,
        fixed: String,
    },
    #[error("version \"{version}\": \"{part}\" is too large")]
    TooLarge { version: String, part: String },
}

/// A tool version: plain `major.minor.patch`. Ordered numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Version {
            major,
            minor,
            patch,
        }
    }

    pub fn parse(s: &str) -> Result<Self, VersionError> {
        let shape = || VersionError::Shape {
            version: s.to_owned(),
        };
        let parts: Vec<&str> = s.split('.').collect();
        if parts.len() != 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(shape());
        }
        if let Some(part) = parts.iter().find(|p| p.len() > 1 && p.starts_with('0')) {
            let fixed = parts
                .iter()
                .map(|p| {
                    let t = p.trim_start_matches('0');
                    if t.is_empty() { "0" } else { t }
                })
                .collect::<Vec<_>>()
                .join(".");
            return Err(VersionError::LeadingZero {
                version: s.to_owned(),
                part: (*part).to_owned(),
                fixed,
            });
        }
        let num = |p: &str| {
            p.parse::<u64>().map_err(|_| VersionError::TooLarge {
                version: s.to_owned(),
                part: p.to_owned(),
            })
        };
        Ok(Version {
            major: num(parts[0])?,
            minor: num(parts[1])?,
            patch: num(parts[2])?,
        })
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for Version {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::parse(s)
    }
}

impl TryFrom<String> for Version {
    type Error = VersionError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Version::parse(&s)
    }
}

impl TryFrom<&str> for Version {
    type Error = VersionError;
    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Version::parse(s)
    }
}

impl From<Version> for String {
    fn from(v: Version) -> String {
        v.to_string()
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Version::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_pack_ids() {
        for id in [
            "acme.verify-citation",
            "conformance.checks.min-length",
            "demo.echo",
            "s3.get-object",
            "acme.v2",
        ] {
            let parsed: ToolId = id.parse().unwrap();
            assert_eq!(parsed.as_str(), id);
            assert!(!parsed.is_built_in());
        }
        let id = ToolId::parse("conformance.checks.min-length").unwrap();
        assert_eq!(id.pack(), Some("conformance.checks"));
        assert_eq!(id.name(), "min-length");
    }

    #[test]
    fn bad_pack_ids_say_what_is_wrong() {
        let cases: [(&str, &str); 10] = [
            ("", "empty"),
            ("echo", "no pack prefix"),
            ("kindgi_remember", "reserved"),
            ("acme..x", "empty segment"),
            (".acme", "empty segment"),
            ("acme.", "empty segment"),
            ("Acme.tool", "uppercase"),
            ("acme.verify_citation", "underscores"),
            ("acme.-x", "starts or ends"),
            ("acme.a--b", "two hyphens"),
        ];
        for (id, fragment) in cases {
            let err = ToolId::parse(id).unwrap_err().to_string();
            assert!(err.contains(fragment), "{id:?}: {err}");
        }
        let err = ToolId::parse("acme.verify citation")
            .unwrap_err()
            .to_string();
        assert!(err.contains("whitespace"), "{err}");
        assert!(
            err.contains("acme.verify-citation"),
            "the error shows a good id: {err}"
        );
        assert!(ToolId::parse("acme.über").is_err());
    }

    #[test]
    fn built_in_ids_only_through_their_constructor() {
        let id = ToolId::built_in("kindgi_remember").unwrap();
        assert!(id.is_built_in());
        assert_eq!(id.pack(), None);
        assert_eq!(id.name(), "kindgi_remember");
        for bad in [
            "kindgi_",
            "kindgi_a.b",
            "remember",
            "kindgi_Remember",
            "kindgi__x",
        ] {
            assert!(ToolId::built_in(bad).is_err(), "{bad}");
        }
        assert!(ToolId::built_in("acme.echo").is_err());
        assert!("kindgi_remember".parse::<ToolId>().is_err());
        assert!(ToolId::try_from("kindgi_remember".to_owned()).is_err());
    }

    #[test]
    fn serde_round_trip_and_errors() {
        let id: ToolId = serde_json::from_str("\"acme.echo\"").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"acme.echo\"");
        let built_in: ToolId = serde_json::from_str("\"kindgi_remember\"").unwrap();
        assert!(built_in.is_built_in());
        let err = serde_json::from_str::<ToolId>("\"Echo\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not kebab-case"), "{err}");
    }

    #[test]
    fn versions() {
        let v = Version::parse("1.20.3").unwrap();
        assert_eq!(v, Version::new(1, 20, 3));
        assert_eq!(v.to_string(), "1.20.3");
        assert!(Version::parse("0.10.0").unwrap() > Version::parse("0.9.0").unwrap());
        for bad in [
            "1.2",
            "1.2.3.4",
            "v1.2.3",
            "1.2.3-beta.1",
            "1.2.3+b",
            "",
            "1..3",
            " 1.2.3",
        ] {
            let err = Version::parse(bad).unwrap_err();
            assert!(matches!(err, VersionError::Shape { .. }), "{bad}");
            assert!(err.to_string().contains("\"1.2.3\""));
        }
        let err = Version::parse("01.0.00").unwrap_err();
        assert_eq!(
            err.to_string(),
            "version \"01.0.00\" has a leading zero in \"01\": write \"1.0.0\""
        );
        assert!(matches!(
            Version::parse("99999999999999999999.0.0"),
            Err(VersionError::TooLarge { .. })
        ));
        let v: Version = serde_json::from_str("\"2.0.1\"").unwrap();
        assert_eq!(serde_json::to_value(v).unwrap(), serde_json::json!("2.0.1"));
        assert!(serde_json::from_str::<Version>("\"2.0\"").is_err());
    }
}
