//! Versions and ranges with **npm** semantics (node-semver 7, non-loose mode), which is what
//! an agent's `tools[].version` means on the wire. The `semver` crate follows Cargo instead
//! (a bare `1.2.3` is `^1.2.3` there; npm reads it as exactly `1.2.3`), so it cannot be used.
//!
//! * [`Version`]: `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, no leading zeros, each number at
//!   most 2^53-1 (npm's limit), ordered by SemVer 2.0 precedence (build ignored).
//! * [`Range`]: `||`-separated sets of space-separated (AND) comparators; each comparator is
//!   `<`, `<=`, `>`, `>=`, `=` or nothing before a version, or the sugar npm expands: x-ranges
//!   (`1.x`, `1.2.*`, `1`), `*`, `~` / `~>` (tilde), `^` (caret) and hyphen ranges
//!   (`1.2.3 - 2.3`). The empty range is `*`, as `semver.validRange('')` is.
//! * [`max_satisfying`] and [`pick_version`]: npm's prerelease rule applies — a prerelease
//!   version satisfies a range only when some comparator of the matching set names a
//!   prerelease of the same `major.minor.patch`.
//!
//! Ranges are parsed once into comparator sets (the expanded form renders with
//! [`Range`]'s `Display`, e.g. `^1.2.3` → `>=1.2.3 <2.0.0-0`, exactly as npm's `range.range`).

use std::cmp::Ordering;
use std::fmt;

/// npm's `Number.MAX_SAFE_INTEGER` bound on each version number.
const MAX_SAFE: u64 = (1 << 53) - 1;
/// Longest version string accepted (npm's `MAX_LENGTH`).
const MAX_VERSION_LEN: usize = 256;
/// Longest range accepted (a guard against pathological input; npm sets none).
const MAX_RANGE_LEN: usize = 2048;

/// One dot-separated prerelease identifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Identifier {
    Numeric(u64),
    Alpha(String),
}

impl Ord for Identifier {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Identifier::Numeric(a), Identifier::Numeric(b)) => a.cmp(b),
            (Identifier::Numeric(_), Identifier::Alpha(_)) => Ordering::Less,
            (Identifier::Alpha(_), Identifier::Numeric(_)) => Ordering::Greater,
            (Identifier::Alpha(a), Identifier::Alpha(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for Identifier {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Identifier::Numeric(n) => write!(f, "{n}"),
            Identifier::Alpha(s) => f.write_str(s),
        }
    }
}

/// A semantic version. Equality and ordering ignore build metadata, as npm's `compare` does.
#[derive(Debug, Clone)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub prerelease: Vec<Identifier>,
    pub build: Vec<String>,
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Version {}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(
                || match (self.prerelease.is_empty(), other.prerelease.is_empty()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    (false, false) => self.prerelease.cmp(&other.prerelease),
                },
            )
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        write_prerelease(f, &self.prerelease)?;
        if !self.build.is_empty() {
            write!(f, "+{}", self.build.join("."))?;
        }
        Ok(())
    }
}

fn write_prerelease(f: &mut fmt::Formatter<'_>, pre: &[Identifier]) -> fmt::Result {
    for (i, id) in pre.iter().enumerate() {
        f.write_str(if i == 0 { "-" } else { "." })?;
        write!(f, "{id}")?;
    }
    Ok(())
}

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a valid semantic version: {reason}")]
pub struct VersionError {
    pub input: String,
    pub reason: &'static str,
}

/// Why a range string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a valid semver range: {reason}")]
pub struct RangeError {
    pub input: String,
    pub reason: String,
}

/// A numeric identifier: `0` or no leading zero, at most 2^53-1.
fn numeric(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse::<u64>().ok().filter(|n| *n <= MAX_SAFE)
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn parse_prerelease(s: &str) -> Option<Vec<Identifier>> {
    s.split('.')
        .map(|part| {
            if part.is_empty() || !part.bytes().all(is_ident_char) {
                None
            } else if part.bytes().all(|b| b.is_ascii_digit()) {
                numeric(part).map(Identifier::Numeric)
            } else {
                Some(Identifier::Alpha(part.to_owned()))
            }
        })
        .collect()
}

fn parse_build(s: &str) -> Option<Vec<String>> {
    s.split('.')
        .map(|part| (!part.is_empty() && part.bytes().all(is_ident_char)).then(|| part.to_owned()))
        .collect()
}

/// Split `core[-pre][+build]` into its three parts.
fn split_version(s: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, build) = match s.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (s, None),
    };
    match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre), build),
        None => (rest, None, build),
    }
}

impl Version {
    /// Parse a strict SemVer 2.0 version (`1.2.3`, `1.2.3-beta.1+build.5`); no `v` prefix,
    /// no surrounding spaces.
    pub fn parse(input: &str) -> Result<Version, VersionError> {
        let err = |reason| VersionError {
            input: input.to_owned(),
            reason,
        };
        if input.len() > MAX_VERSION_LEN {
            return Err(err("it is longer than 256 characters"));
        }
        let (core, pre, build) = split_version(input);
        let mut nums = core.split('.');
        let (Some(ma), Some(mi), Some(pa), None) =
            (nums.next(), nums.next(), nums.next(), nums.next())
        else {
            return Err(err("it must be MAJOR.MINOR.PATCH"));
        };
        let (Some(major), Some(minor), Some(patch)) = (numeric(ma), numeric(mi), numeric(pa))
        else {
            return Err(err(
                "each of MAJOR, MINOR and PATCH must be a number without leading zeros",
            ));
        };
        let prerelease = match pre {
            None => Vec::new(),
            Some(p) => {
                parse_prerelease(p).ok_or_else(|| err("the prerelease part is malformed"))?
            }
        };
        let build = match build {
            None => Vec::new(),
            Some(b) => parse_build(b).ok_or_else(|| err("the build metadata is malformed"))?,
        };
        Ok(Version {
            major,
            minor,
            patch,
            prerelease,
            build,
        })
    }

    /// Parse as npm's `new SemVer(v)` does: surrounding whitespace and one leading `v` allowed.
    pub fn parse_npm(input: &str) -> Result<Version, VersionError> {
        let t = input.trim();
        Version::parse(t.strip_prefix('v').unwrap_or(t))
    }

    /// A version without prerelease or build.
    pub fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
            prerelease: Vec::new(),
            build: Vec::new(),
        }
    }

    fn with_pre(major: u64, minor: u64, patch: u64, prerelease: Vec<Identifier>) -> Version {
        Version {
            major,
            minor,
            patch,
            prerelease,
            build: Vec::new(),
        }
    }

    /// `M.m.p-0`: the lowest prerelease of a version, npm's exclusive upper bound.
    fn floor(major: u64, minor: u64, patch: u64) -> Version {
        Version::with_pre(major, minor, patch, vec![Identifier::Numeric(0)])
    }

    pub fn is_prerelease(&self) -> bool {
        !self.prerelease.is_empty()
    }
}

impl std::str::FromStr for Version {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::parse(s)
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// One comparator; `Any` matches every version (npm's empty comparator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparator {
    Any,
    Cmp(Op, Version),
}

impl Comparator {
    fn test(&self, v: &Version) -> bool {
        match self {
            Comparator::Any => true,
            Comparator::Cmp(op, c) => {
                let o = v.cmp(c);
                match op {
                    Op::Eq => o == Ordering::Equal,
                    Op::Lt => o == Ordering::Less,
                    Op::Le => o != Ordering::Greater,
                    Op::Gt => o == Ordering::Greater,
                    Op::Ge => o != Ordering::Less,
                }
            }
        }
    }

    /// npm's null set `<0.0.0-0`: matches nothing.
    fn is_null(&self) -> bool {
        matches!(self, Comparator::Cmp(Op::Lt, v) if *v == Version::floor(0, 0, 0))
    }
}

impl fmt::Display for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Comparator::Any => Ok(()),
            Comparator::Cmp(op, v) => {
                // npm prints comparators without build metadata.
                write!(f, "{}{}.{}.{}", op.as_str(), v.major, v.minor, v.patch)?;
                write_prerelease(f, &v.prerelease)
            }
        }
    }
}

/// A parsed npm range: a union of comparator sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    sets: Vec<Vec<Comparator>>,
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, set) in self.sets.iter().enumerate() {
            if i > 0 {
                f.write_str("||")?;
            }
            for (j, c) in set.iter().enumerate() {
                if j > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

/// A partial version as written in a range (`1`, `1.x`, `1.2.*`, `1.2.3-beta`).
/// `None` is an x (`x`, `X`, `*` or missing).
#[derive(Debug, Clone)]
struct Partial {
    major: Option<u64>,
    minor: Option<u64>,
    patch: Option<u64>,
    prerelease: Vec<Identifier>,
    /// True when the text had at most one leading `v` and no `=`: only then may a full
    /// version be used verbatim in a comparator (npm re-parses it with `v?`).
    plain_prefix: bool,
}

impl Partial {
    fn is_full(&self) -> bool {
        self.major.is_some() && self.minor.is_some() && self.patch.is_some()
    }
}

fn x_ident(s: &str) -> Option<Option<u64>> {
    if s == "x" || s == "X" || s == "*" {
        Some(None)
    } else {
        numeric(s).map(Some)
    }
}

/// Parse npm's XRANGEPLAIN: leading `v`/`=` characters, then up to three parts.
fn parse_partial(s: &str) -> Option<Partial> {
    let stripped = s.trim_start_matches(['v', '=']);
    let plain_prefix =
        stripped.len() == s.len() || (stripped.len() + 1 == s.len() && s.starts_with('v'));
    let s = stripped;
    if s.is_empty() {
        return None;
    }
    let (core, pre, build) = split_version(s);
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() > 3 || (parts.len() < 3 && (pre.is_some() || build.is_some())) {
        return None;
    }
    let major = x_ident(parts[0])?;
    let minor = match parts.get(1) {
        Some(p) => x_ident(p)?,
        None => None,
    };
    let patch = match parts.get(2) {
        Some(p) => x_ident(p)?,
        None => None,
    };
    let prerelease = match pre {
        Some(p) => parse_prerelease(p)?,
        None => Vec::new(),
    };
    if let Some(b) = build {
        parse_build(b)?;
    }
    Some(Partial {
        major,
        minor,
        patch,
        prerelease,
        plain_prefix,
    })
}

fn ge(v: Version) -> Comparator {
    Comparator::Cmp(Op::Ge, v)
}
fn lt(v: Version) -> Comparator {
    Comparator::Cmp(Op::Lt, v)
}

/// `n + 1`, refusing to leave npm's safe-integer range.
fn inc(n: u64) -> Option<u64> {
    n.checked_add(1).filter(|n| *n <= MAX_SAFE)
}

fn caret(p: &Partial) -> Option<Vec<Comparator>> {
    let Some(ma) = p.major else {
        return Some(vec![Comparator::Any]);
    };
    let Some(mi) = p.minor else {
        return Some(vec![
            ge(Version::new(ma, 0, 0)),
            lt(Version::floor(inc(ma)?, 0, 0)),
        ]);
    };
    let Some(pa) = p.patch else {
        let upper = if ma == 0 {
            Version::floor(0, inc(mi)?, 0)
        } else {
            Version::floor(inc(ma)?, 0, 0)
        };
        return Some(vec![ge(Version::new(ma, mi, 0)), lt(upper)]);
    };
    let upper = if ma == 0 {
        if mi == 0 {
            Version::floor(0, 0, inc(pa)?)
        } else {
            Version::floor(0, inc(mi)?, 0)
        }
    } else {
        Version::floor(inc(ma)?, 0, 0)
    };
    Some(vec![
        ge(Version::with_pre(ma, mi, pa, p.prerelease.clone())),
        lt(upper),
    ])
}

fn tilde(p: &Partial) -> Option<Vec<Comparator>> {
    let Some(ma) = p.major else {
        return Some(vec![Comparator::Any]);
    };
    let Some(mi) = p.minor else {
        return Some(vec![
            ge(Version::new(ma, 0, 0)),
            lt(Version::floor(inc(ma)?, 0, 0)),
        ]);
    };
    let lower = match p.patch {
        None => Version::new(ma, mi, 0),
        Some(pa) => Version::with_pre(ma, mi, pa, p.prerelease.clone()),
    };
    Some(vec![ge(lower), lt(Version::floor(ma, inc(mi)?, 0))])
}

/// A primitive comparator (`op` may be absent), with npm's x-range expansion.
fn xrange(op: &str, p: &Partial) -> Option<Vec<Comparator>> {
    let Some(ma) = p.major else {
        // `>*` and `<*` match nothing; `*`, `>=*`, `<=*`, `=*` match everything.
        return Some(if op == ">" || op == "<" {
            vec![lt(Version::floor(0, 0, 0))]
        } else {
            vec![Comparator::Any]
        });
    };
    let (Some(mi), Some(pa)) = (p.minor, p.patch) else {
        let x_minor = p.minor.is_none();
        let mi = p.minor.unwrap_or(0);
        return Some(match op {
            "" | "=" => {
                if x_minor {
                    vec![
                        ge(Version::new(ma, 0, 0)),
                        lt(Version::floor(inc(ma)?, 0, 0)),
                    ]
                } else {
                    vec![
                        ge(Version::new(ma, mi, 0)),
                        lt(Version::floor(ma, inc(mi)?, 0)),
                    ]
                }
            }
            ">" => {
                if x_minor {
                    vec![ge(Version::new(inc(ma)?, 0, 0))]
                } else {
                    vec![ge(Version::new(ma, inc(mi)?, 0))]
                }
            }
            "<=" => {
                if x_minor {
                    vec![lt(Version::floor(inc(ma)?, 0, 0))]
                } else {
                    vec![lt(Version::floor(ma, inc(mi)?, 0))]
                }
            }
            "<" => vec![lt(Version::floor(ma, mi, 0))],
            ">=" => vec![ge(Version::new(ma, mi, 0))],
            _ => return None,
        });
    };
    if !p.plain_prefix {
        return None;
    }
    let v = Version::with_pre(ma, mi, pa, p.prerelease.clone());
    let op = match op {
        "" | "=" => Op::Eq,
        "<" => Op::Lt,
        "<=" => Op::Le,
        ">" => Op::Gt,
        ">=" => Op::Ge,
        _ => return None,
    };
    Some(vec![Comparator::Cmp(op, v)])
}

/// One whitespace-free comparator token (after npm's operator trimming).
fn parse_comparator(token: &str) -> Option<Vec<Comparator>> {
    if let Some(rest) = token.strip_prefix('^') {
        return caret(&parse_partial(rest)?);
    }
    if let Some(rest) = token.strip_prefix('~') {
        let rest = rest.strip_prefix('>').unwrap_or(rest);
        return tilde(&parse_partial(rest)?);
    }
    let op_len = if token.starts_with("<=") || token.starts_with(">=") {
        2
    } else if token.starts_with(['<', '>', '=']) {
        1
    } else {
        0
    };
    let (op, rest) = token.split_at(op_len);
    xrange(op, &parse_partial(rest)?)
}

fn hyphen(from: &Partial, to: &Partial) -> Option<Vec<Comparator>> {
    // npm splices a full bound's text into the comparator, which must then re-parse.
    if (from.is_full() && !from.plain_prefix)
        || (to.is_full() && to.prerelease.is_empty() && !to.plain_prefix)
    {
        return None;
    }
    let mut set = Vec::new();
    if let Some(ma) = from.major {
        let lower = match (from.minor, from.patch) {
            (Some(mi), Some(pa)) => Version::with_pre(ma, mi, pa, from.prerelease.clone()),
            (Some(mi), None) => Version::new(ma, mi, 0),
            (None, _) => Version::new(ma, 0, 0),
        };
        set.push(ge(lower));
    }
    if let Some(ma) = to.major {
        set.push(match (to.minor, to.patch) {
            (Some(mi), Some(pa)) => {
                Comparator::Cmp(Op::Le, Version::with_pre(ma, mi, pa, to.prerelease.clone()))
            }
            (Some(mi), None) => lt(Version::floor(ma, inc(mi)?, 0)),
            (None, _) => lt(Version::floor(inc(ma)?, 0, 0)),
        });
    }
    Some(set)
}

/// Is `t` a bare operator that npm glues to the version after it (`>= 1.2.3`, `~ 1`, `^ 1`)?
fn is_bare_operator(t: &str) -> bool {
    matches!(t, "<" | ">" | "<=" | ">=" | "=" | "~" | "~>" | "^")
}

fn parse_set(set: &str) -> Option<Vec<Comparator>> {
    let tokens: Vec<&str> = set.split_whitespace().collect();
    // A hyphen range is the whole set: `A - B`.
    if tokens.len() == 3 && tokens[1] == "-" {
        if let (Some(a), Some(b)) = (parse_partial(tokens[0]), parse_partial(tokens[2])) {
            return finish_set(hyphen(&a, &b)?);
        }
    }
    let mut comparators = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let mut token = tokens[i].to_owned();
        if is_bare_operator(&token) && i + 1 < tokens.len() {
            token = if token == "~>" { "~".to_owned() } else { token };
            token.push_str(tokens[i + 1]);
            i += 1;
        }
        comparators.extend(parse_comparator(&token)?);
        i += 1;
    }
    if comparators.is_empty() {
        comparators.push(Comparator::Any);
    }
    finish_set(comparators)
}

/// npm's tidy-up of one set: `>=0.0.0` is any; a null comparator makes the whole set null;
/// duplicates go; `Any` goes when anything else remains.
fn finish_set(comparators: Vec<Comparator>) -> Option<Vec<Comparator>> {
    let mut out: Vec<Comparator> = Vec::with_capacity(comparators.len());
    for c in comparators {
        let c = match c {
            Comparator::Cmp(Op::Ge, v) if v == Version::new(0, 0, 0) && v.prerelease.is_empty() => {
                Comparator::Any
            }
            c => c,
        };
        if c.is_null() {
            return Some(vec![c]);
        }
        if !out.contains(&c) {
            out.push(c);
        }
    }
    if out.len() > 1 {
        out.retain(|c| *c != Comparator::Any);
    }
    if out.is_empty() {
        out.push(Comparator::Any);
    }
    Some(out)
}

impl Range {
    /// Parse an npm range. The empty string is `*`.
    pub fn parse(input: &str) -> Result<Range, RangeError> {
        let err = |reason: &str| RangeError {
            input: input.to_owned(),
            reason: reason.to_owned(),
        };
        if input.len() > MAX_RANGE_LEN {
            return Err(err("it is longer than 2048 characters"));
        }
        let mut sets = Vec::new();
        for part in input.split("||") {
            let set = parse_set(part).ok_or_else(|| {
                err(&format!(
                    "{:?} is not a comparator set (use e.g. 1.2.3, ^1.2.3, ~1.2, 1.x, >=1.0.0 <2.0.0, 1.0.0 - 2.0.0)",
                    part.trim()
                ))
            })?;
            sets.push(set);
        }
        // A set that matches everything makes the others irrelevant.
        if let Some(any) = sets
            .iter()
            .find(|s| s.len() == 1 && s[0] == Comparator::Any)
        {
            sets = vec![any.clone()];
        }
        Ok(Range { sets })
    }

    /// The range matching every (non-prerelease) version: `*`.
    pub fn any() -> Range {
        Range {
            sets: vec![vec![Comparator::Any]],
        }
    }

    /// npm's `satisfies(version, range)`.
    pub fn satisfies(&self, v: &Version) -> bool {
        self.satisfies_with(v, false)
    }

    /// `satisfies` with npm's `includePrerelease` option for the prerelease rule.
    pub fn satisfies_with(&self, v: &Version, include_prerelease: bool) -> bool {
        self.sets
            .iter()
            .any(|set| test_set(set, v, include_prerelease))
    }

    /// The comparator sets.
    pub fn sets(&self) -> &[Vec<Comparator>] {
        &self.sets
    }
}

impl std::str::FromStr for Range {
    type Err = RangeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Range::parse(s)
    }
}

fn test_set(set: &[Comparator], v: &Version, include_prerelease: bool) -> bool {
    if !set.iter().all(|c| c.test(v)) {
        return false;
    }
    if v.prerelease.is_empty() || include_prerelease {
        return true;
    }
    // npm's prerelease rule: a prerelease passes only when a comparator of this set names a
    // prerelease on the same major.minor.patch.
    set.iter().any(|c| match c {
        Comparator::Cmp(_, a) => {
            !a.prerelease.is_empty()
                && a.major == v.major
                && a.minor == v.minor
                && a.patch == v.patch
        }
        Comparator::Any => false,
    })
}

/// npm's `maxSatisfying(versions, range)`: the highest version in `versions` that satisfies
/// `range`; strings that are not valid versions are skipped.
pub fn max_satisfying<'a, I>(versions: I, range: &Range) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(Version, &'a str)> = None;
    for s in versions {
        let Ok(v) = Version::parse_npm(s) else {
            continue;
        };
        if range.satisfies(&v) && best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, s));
        }
    }
    best.map(|(_, s)| s)
}

/// npm's `maxSatisfying(versions, '*', {includePrerelease: true})`: the highest valid version.
pub fn latest_version<'a, I>(versions: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(Version, &'a str)> = None;
    for s in versions {
        let Ok(v) = Version::parse_npm(s) else {
            continue;
        };
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, s));
        }
    }
    best.map(|(_, s)| s)
}

/// Why [`pick_version`] found nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickError {
    /// The range does not parse.
    InvalidRange(RangeError),
    /// Nothing in the list satisfies it.
    NotSatisfiable,
}

/// The reference `pickVersion(available, range?)`: no range → the latest version
/// (prereleases included); otherwise `maxSatisfying` with the prerelease rule.
pub fn pick_version<'a, I>(available: I, range: Option<&str>) -> Result<&'a str, PickError>
where
    I: IntoIterator<Item = &'a str>,
{
    match range {
        None => latest_version(available).ok_or(PickError::NotSatisfiable),
        Some(r) => {
            let range = Range::parse(r).map_err(PickError::InvalidRange)?;
            max_satisfying(available, &range).ok_or(PickError::NotSatisfiable)
        }
    }
}

#[cfg(test)]
mod tests;
