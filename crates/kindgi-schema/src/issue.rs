//! Validation issues, shaped exactly like Ajv's error objects, and cheap to report.
//!
//! Almost everything in an Ajv error is fixed by the schema: the `schemaPath`, the keyword, the
//! message and most params (`{type: "string"}`, `{missingProperty: "name"}`, `{limit: 5}`). The
//! compiler prepares those once per keyword as a [`Site`] in the validator's site table;
//! reporting an issue records the site's place in the table ([`SiteId`]) and spells out the
//! instance path. A site may leave one params slot open for a value only the instance knows
//! (`additionalProperty`, `propertyName`, `unevaluatedProperty`, `passingSchemas`,
//! `uniqueItems`' `i`/`j`); the issue carries that value — a property name inline after the
//! path, indexes inline, anything else boxed.
//!
//! A failed validation returns [`Issues`]: the recorded issues and one shared reference to the
//! table, so no issue touches a reference count. [`IssueRef`] reads one in place; [`Issue`] is
//! the standalone form (it holds its own reference to its site), for issues that outlive their
//! list or come from elsewhere (a pack's reply). An invalid instance thus costs one allocation
//! (the issue list) however many issues it has, as long as paths and names are short, where
//! owning four strings and a params map cost ten per issue.

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// An issue's own text: its instance path (a JSON Pointer), followed by the string an open
/// params slot takes when the instance supplies one (`additionalProperty: "x"`), and which kind
/// of fill the issue carries. Up to [`Text::INLINE`] bytes of text live inside the issue, so
/// reporting an issue at a short path — even one naming a property — allocates nothing.
///
/// Plain bytes, not an enum: every byte of a new issue is then a defined constant, which lets
/// the compiler write it straight into the issue list. With enums, padding and unused payload
/// bytes are undefined, and the compiler built issues on the stack and copied them over in wide
/// loads that read back narrower stores just made — a store-forwarding stall per load.
#[derive(Clone)]
pub(crate) struct Text {
    /// `[path end, text length (or LONG), fill kind, text…]`.
    bytes: [u8; Text::HEAD + Text::INLINE],
}

impl Text {
    const HEAD: usize = 3;
    pub(crate) const INLINE: usize = 37;
    /// The text length byte when the text lives in the issue's extra (longer than `INLINE`).
    const LONG: u8 = u8::MAX;

    fn new(kind: u8) -> Text {
        let mut bytes = [0u8; Text::HEAD + Text::INLINE];
        bytes[2] = kind;
        Text { bytes }
    }

    fn kind(&self) -> u8 {
        self.bytes[2]
    }

    /// Marks the text as `len` inline bytes, the path being the first `path`, and hands out the
    /// buffer to write them into. `len` is at most [`Text::INLINE`].
    #[inline(always)]
    pub(crate) fn inline_mut(&mut self, path: usize, len: usize) -> &mut [u8; Text::INLINE] {
        self.bytes[0] = path as u8;
        self.bytes[1] = len as u8;
        let (_, buf) = self.bytes.split_at_mut(Text::HEAD);
        // The split leaves exactly INLINE bytes.
        <&mut [u8; Text::INLINE]>::try_from(buf).unwrap_or_else(|_| unreachable!())
    }

    fn inline_parts(&self) -> Option<(&str, &str)> {
        let len = self.bytes[1];
        if len == Text::LONG {
            return None;
        }
        let text = self.bytes.get(Text::HEAD..Text::HEAD + usize::from(len))?;
        // Written only from whole `&str` segments and ASCII, so always UTF-8 with a char
        // boundary where the path ends.
        let s = std::str::from_utf8(text).unwrap_or_default();
        Some(
            s.split_at_checked(usize::from(self.bytes[0]))
                .unwrap_or((s, "")),
        )
    }
}

/// The schema-side half of an issue, prepared when the schema compiles.
#[derive(Debug, PartialEq)]
pub(crate) struct Site {
    pub schema_path: Box<str>,
    pub keyword: Box<str>,
    pub message: Box<str>,
    pub params: Map<String, Value>,
    /// What each issue supplies.
    pub slot: Slot,
}

/// The part of a site each issue fills in.
#[derive(Debug, PartialEq)]
pub(crate) enum Slot {
    /// Nothing: the site is the whole issue.
    None,
    /// The value of the params entry at this position.
    Open(usize),
    /// `uniqueItems`: params `{i, j}` and the message naming both.
    Pair,
}

/// What an issue adds to its site (how it is reported; see [`FillRef`] for how it is read).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fill {
    None,
    /// The open slot takes a string, kept in the issue's [`Text`] after the path.
    Name,
    /// The open slot takes this value.
    Value(Box<Value>),
    /// `uniqueItems`' indexes (`u32`: no array in memory has more items).
    Pair(u32, u32),
}

/// An issue's [`Fill`], read back.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FillRef<'a> {
    None,
    Name(&'a str),
    Value(&'a Value),
    Pair(u32, u32),
}

const FILL_NONE: u8 = 0;
const FILL_NAME: u8 = 1;
const FILL_VALUE: u8 = 2;
const FILL_PAIR: u8 = 3;

/// A prepared site: its place in the validator's site table ([`Sites`]). Compiled keywords hold
/// it, and so does each issue they report: a copy of four bytes, where a shared pointer to the
/// site cost an atomic increment per issue and a decrement when the issue was dropped — a tenth
/// of the time of validating a small instance with ten issues.
///
/// Places past the table's end name the sites a validation built on the spot (its message or
/// params depend on the instance), which the issue list keeps beside the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SiteId(u32);

impl SiteId {
    /// The site at `place`, past a table of `table` sites among the ones built on the spot.
    pub(crate) fn own(table: usize, place: usize) -> SiteId {
        SiteId(u32::try_from(table + place).unwrap_or(u32::MAX))
    }
}

/// What compiled keywords refer to a site by.
pub(crate) type SiteRef = SiteId;

/// A validator's sites, shared by the validator and every issue list it returns.
pub(crate) type Sites = Arc<[Arc<Site>]>;

/// The sites of a schema being compiled.
#[derive(Default)]
pub(crate) struct SiteTable(Vec<Arc<Site>>);

impl SiteTable {
    pub(crate) fn add(&mut self, site: Site) -> SiteId {
        // No table holds four billion sites.
        let id = u32::try_from(self.0.len()).unwrap_or(u32::MAX);
        self.0.push(Arc::new(site));
        SiteId(id)
    }

    pub(crate) fn finish(self) -> Sites {
        self.0.into()
    }
}

impl Site {
    /// A site whose params are all known at compile time.
    pub(crate) fn fixed(
        schema_path: impl Into<Box<str>>,
        keyword: &str,
        params: Map<String, Value>,
        message: impl Into<Box<str>>,
    ) -> Site {
        Site {
            schema_path: schema_path.into(),
            keyword: keyword.into(),
            message: message.into(),
            params,
            slot: Slot::None,
        }
    }

    /// A site whose only param, `key`, is supplied by each issue.
    pub(crate) fn open(
        schema_path: impl Into<Box<str>>,
        keyword: &str,
        key: &str,
        message: impl Into<Box<str>>,
    ) -> Site {
        let mut params = Map::with_capacity(1);
        params.insert(key.to_owned(), Value::Null);
        Site {
            schema_path: schema_path.into(),
            keyword: keyword.into(),
            message: message.into(),
            params,
            slot: Slot::Open(0),
        }
    }

    /// The `uniqueItems` site: `{i, j}` and the message come with each issue.
    pub(crate) fn pair(schema_path: impl Into<Box<str>>) -> Site {
        let mut params = Map::with_capacity(2);
        params.insert("i".to_owned(), Value::Null);
        params.insert("j".to_owned(), Value::Null);
        Site {
            schema_path: schema_path.into(),
            keyword: "uniqueItems".into(),
            message: "".into(),
            params,
            slot: Slot::Pair,
        }
    }
}

/// `must NOT have duplicate items (items ## j and i are identical)`.
fn unique_items_message(i: u32, j: u32) -> String {
    format!("must NOT have duplicate items (items ## {j} and {i} are identical)")
}

/// What an issue holds besides its site: its text, `uniqueItems`' pair, and a box for the rare
/// rest. Shared by [`Issue`] (which owns its site) and [`Entry`] (which names its site in the
/// validator's table).
#[derive(Clone)]
pub(crate) struct Body {
    /// What few issues carry beyond their site and text (rare, so boxed).
    extra: Option<Box<Extra>>,
    /// `uniqueItems`' `i` and `j` (zero otherwise).
    pair: [u32; 2],
    text: Text,
}

#[derive(Clone, Default)]
struct Extra {
    /// A [`Fill::Value`].
    value: Option<Value>,
    property_name: Option<Box<str>>,
    /// A text longer than [`Text::INLINE`]: where its path ends, and the text.
    long: Option<(usize, Box<str>)>,
}

impl Body {
    #[inline(always)]
    fn new(fill: Fill, property_name: Option<&str>) -> Body {
        let (kind, pair, value) = match fill {
            Fill::None => (FILL_NONE, [0; 2], None),
            Fill::Name => (FILL_NAME, [0; 2], None),
            Fill::Value(v) => (FILL_VALUE, [0; 2], Some(*v)),
            Fill::Pair(i, j) => (FILL_PAIR, [i, j], None),
        };
        let extra = match (value, property_name) {
            (None, None) => None,
            (value, name) => Some(Box::new(Extra {
                value,
                property_name: name.map(Into::into),
                long: None,
            })),
        };
        Body {
            extra,
            pair,
            text: Text::new(kind),
        }
    }

    /// Where the evaluator writes a short text (see [`Text::inline_mut`]).
    #[inline(always)]
    pub(crate) fn text_mut(&mut self) -> &mut Text {
        &mut self.text
    }

    /// Sets the text: the instance path, then the name a [`Fill::Name`] stands for.
    pub(crate) fn set_text(&mut self, path: &str, name: &str) {
        let len = path.len() + name.len();
        if len <= Text::INLINE {
            let buf = self.text.inline_mut(path.len(), len);
            buf[..path.len()].copy_from_slice(path.as_bytes());
            buf[path.len()..len].copy_from_slice(name.as_bytes());
        } else {
            self.text.bytes[1] = Text::LONG;
            let mut text = String::with_capacity(len);
            text.push_str(path);
            text.push_str(name);
            self.extra.get_or_insert_default().long = Some((path.len(), text.into()));
        }
    }

    /// The instance path and the name after it.
    pub(crate) fn text_parts(&self) -> (&str, &str) {
        if let Some(parts) = self.text.inline_parts() {
            return parts;
        }
        match self.extra.as_ref().and_then(|e| e.long.as_ref()) {
            Some((path, text)) => text.split_at_checked(*path).unwrap_or((text, "")),
            None => ("", ""),
        }
    }

    /// Whether the text lives inside the issue.
    #[cfg(test)]
    pub(crate) fn text_is_inline(&self) -> bool {
        self.text.inline_parts().is_some()
    }

    fn fill(&self) -> FillRef<'_> {
        match self.text.kind() {
            FILL_NAME => FillRef::Name(self.text_parts().1),
            FILL_VALUE => match self.extra.as_ref().and_then(|e| e.value.as_ref()) {
                Some(v) => FillRef::Value(v),
                None => FillRef::None,
            },
            FILL_PAIR => FillRef::Pair(self.pair[0], self.pair[1]),
            _ => FillRef::None,
        }
    }

    fn property_name(&self) -> Option<&str> {
        self.extra.as_ref().and_then(|e| e.property_name.as_deref())
    }
}

/// An issue as the evaluator records it: its site by place in the validator's table.
#[derive(Clone)]
pub(crate) struct Entry {
    site: SiteId,
    body: Body,
}

impl Entry {
    /// An issue at `site`; the evaluator writes its text in place.
    #[inline(always)]
    pub(crate) fn at(site: SiteId, fill: Fill, property_name: Option<&str>) -> Entry {
        Entry {
            site,
            body: Body::new(fill, property_name),
        }
    }

    #[inline(always)]
    pub(crate) fn body_mut(&mut self) -> &mut Body {
        &mut self.body
    }

    /// The issue, read through the validator's `sites` and the ones its validation built on
    /// the spot (`own`).
    pub(crate) fn view<'a>(&'a self, sites: &'a [Arc<Site>], own: &'a [Arc<Site>]) -> IssueRef<'a> {
        let place = self.site.0 as usize;
        let site = match sites.get(place) {
            Some(site) => site,
            None => own.get(place - sites.len()).unwrap_or(&NO_SITE),
        };
        IssueRef {
            site,
            body: &self.body,
        }
    }
}

/// Stands in for a site that is not in the table (cannot happen: entries only come from the
/// validator that owns the table).
static NO_SITE: std::sync::LazyLock<Arc<Site>> =
    std::sync::LazyLock::new(|| Arc::new(Site::fixed("#", "", Map::new(), "")));

/// One validation problem, shaped exactly like an Ajv error object: `instancePath`,
/// `schemaPath`, `keyword`, `params`, `message` (and `propertyName` inside `propertyNames`).
///
/// Standalone: it owns (a shared reference to) its site. [`Issues`] hands out [`IssueRef`]s,
/// which read the same; `to_owned` or collecting an [`Issues`] makes `Issue`s.
///
/// Serializes to (and deserializes from) that JSON shape. Cloning is cheap.
#[derive(Clone)]
pub struct Issue {
    site: Arc<Site>,
    body: Body,
}

impl Issue {
    /// An issue from its parts, for issues that do not come from a compiled schema (a pack's
    /// reply, a test, a hand-made check).
    pub fn new(
        instance_path: impl AsRef<str>,
        schema_path: impl Into<Box<str>>,
        keyword: &str,
        params: Map<String, Value>,
        message: impl Into<Box<str>>,
    ) -> Issue {
        let mut issue = Issue {
            site: Arc::new(Site::fixed(schema_path, keyword, params, message)),
            body: Body::new(Fill::None, None),
        };
        issue.body.set_text(instance_path.as_ref(), "");
        issue
    }

    /// The same issue, raised while checking the property name `name` (`propertyNames`).
    #[must_use]
    pub fn with_property_name(mut self, name: impl Into<Box<str>>) -> Issue {
        self.body.extra.get_or_insert_default().property_name = Some(name.into());
        self
    }

    /// A standalone issue at `site` (tests build issues this way).
    #[cfg(test)]
    pub(crate) fn at(site: &Arc<Site>, fill: Fill, property_name: Option<&str>) -> Issue {
        Issue {
            site: Arc::clone(site),
            body: Body::new(fill, property_name),
        }
    }

    #[cfg(test)]
    pub(crate) fn body_mut(&mut self) -> &mut Body {
        &mut self.body
    }

    #[cfg(test)]
    pub(crate) fn set_text(&mut self, path: &str, name: &str) {
        self.body.set_text(path, name);
    }

    #[cfg(test)]
    pub(crate) fn text_parts(&self) -> (&str, &str) {
        self.body.text_parts()
    }

    #[cfg(test)]
    pub(crate) fn text_is_inline(&self) -> bool {
        self.body.text_is_inline()
    }

    /// The issue as a borrowed view (what [`Issues`] hands out).
    pub fn view(&self) -> IssueRef<'_> {
        IssueRef {
            site: &self.site,
            body: &self.body,
        }
    }

    /// Where in the instance: a JSON Pointer (`""` for the root, `/a/0/b`).
    pub fn instance_path(&self) -> &str {
        self.view().instance_path()
    }

    /// Where in the schema: `#/properties/a/type`.
    pub fn schema_path(&self) -> &str {
        self.view().schema_path()
    }

    /// The keyword that failed (`type`, `required`, …).
    pub fn keyword(&self) -> &str {
        self.view().keyword()
    }

    /// Ajv's message: `must be string`.
    pub fn message(&self) -> Cow<'_, str> {
        self.view().message()
    }

    /// Set on issues raised inside `propertyNames`: the key being checked.
    pub fn property_name(&self) -> Option<&str> {
        self.view().property_name()
    }

    /// The keyword's params, in Ajv's order (`{type: "string"}`).
    pub fn params(&self) -> Cow<'_, Map<String, Value>> {
        self.view().params()
    }
}

/// An issue of an [`Issues`] list (or of an [`Issue`]), read in place: the same accessors and
/// JSON as [`Issue`]. [`IssueRef::to_owned`] makes a standalone [`Issue`].
#[derive(Clone, Copy)]
pub struct IssueRef<'a> {
    site: &'a Arc<Site>,
    body: &'a Body,
}

impl<'a> IssueRef<'a> {
    /// Where in the instance: a JSON Pointer (`""` for the root, `/a/0/b`).
    pub fn instance_path(&self) -> &'a str {
        self.body.text_parts().0
    }

    /// Where in the schema: `#/properties/a/type`.
    pub fn schema_path(&self) -> &'a str {
        &self.site.schema_path
    }

    /// The keyword that failed (`type`, `required`, …).
    pub fn keyword(&self) -> &'a str {
        &self.site.keyword
    }

    /// Ajv's message: `must be string`.
    pub fn message(&self) -> Cow<'a, str> {
        match (&self.site.slot, self.body.fill()) {
            (Slot::Pair, FillRef::Pair(i, j)) => Cow::Owned(unique_items_message(i, j)),
            _ => Cow::Borrowed(&self.site.message),
        }
    }

    /// Set on issues raised inside `propertyNames`: the key being checked.
    pub fn property_name(&self) -> Option<&'a str> {
        self.body.property_name()
    }

    /// The keyword's params, in Ajv's order (`{type: "string"}`).
    pub fn params(&self) -> Cow<'a, Map<String, Value>> {
        if self.site.slot == Slot::None {
            return Cow::Borrowed(&self.site.params);
        }
        Cow::Owned(
            self.site
                .params
                .iter()
                .enumerate()
                .map(|(i, (k, v))| (k.clone(), self.param_at(i, v)))
                .collect(),
        )
    }

    /// The value of the params entry at `index` (whose compiled value is `compiled`).
    fn param_at(&self, index: usize, compiled: &Value) -> Value {
        match (&self.site.slot, self.body.fill()) {
            (Slot::Open(at), FillRef::Value(v)) if *at == index => v.clone(),
            (Slot::Open(at), FillRef::Name(name)) if *at == index => Value::from(name),
            (Slot::Pair, FillRef::Pair(i, j)) => Value::from(if index == 0 { i } else { j }),
            _ => compiled.clone(),
        }
    }

    /// A standalone copy (it shares the site).
    pub fn to_owned(&self) -> Issue {
        Issue {
            site: Arc::clone(self.site),
            body: self.body.clone(),
        }
    }
}

impl std::fmt::Debug for IssueRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Issue");
        d.field("instance_path", &self.instance_path())
            .field("schema_path", &self.schema_path())
            .field("keyword", &self.keyword())
            .field("params", &self.params())
            .field("message", &self.message());
        if let Some(p) = self.property_name() {
            d.field("property_name", &p);
        }
        d.finish()
    }
}

impl std::fmt::Debug for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.view().fmt(f)
    }
}

impl PartialEq for IssueRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.instance_path() == other.instance_path()
            && self.schema_path() == other.schema_path()
            && self.keyword() == other.keyword()
            && self.property_name() == other.property_name()
            && ((Arc::ptr_eq(self.site, other.site) && self.body.fill() == other.body.fill())
                || (self.message() == other.message() && self.params() == other.params()))
    }
}

impl PartialEq for Issue {
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}

impl PartialEq<Issue> for IssueRef<'_> {
    fn eq(&self, other: &Issue) -> bool {
        *self == other.view()
    }
}

impl std::fmt::Display for IssueRef<'_> {
    /// Ajv's `errorsText` form: `data/a/b must be string`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "data{} {}", self.instance_path(), self.message())
    }
}

impl std::fmt::Display for Issue {
    /// Ajv's `errorsText` form: `data/a/b must be string`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.view().fmt(f)
    }
}

/// The params written in place, with the issue's values filled in (no map is built).
struct ParamsOut<'a>(IssueRef<'a>);

impl Serialize for ParamsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let IssueRef { site, body } = self.0;
        let mut m = s.serialize_map(Some(site.params.len()))?;
        for (i, (k, v)) in site.params.iter().enumerate() {
            match (&site.slot, body.fill()) {
                (Slot::None, _) => m.serialize_entry(k, v)?,
                (Slot::Open(at), FillRef::Value(fill)) if *at == i => m.serialize_entry(k, fill)?,
                (Slot::Open(at), FillRef::Name(name)) if *at == i => m.serialize_entry(k, name)?,
                (Slot::Pair, FillRef::Pair(a, b)) => {
                    m.serialize_entry(k, &(if i == 0 { a } else { b }))?;
                }
                _ => m.serialize_entry(k, v)?,
            }
        }
        m.end()
    }
}

impl Serialize for IssueRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = if self.property_name().is_some() { 6 } else { 5 };
        let mut st = s.serialize_struct("Issue", n)?;
        st.serialize_field("instancePath", self.instance_path())?;
        st.serialize_field("schemaPath", self.schema_path())?;
        st.serialize_field("keyword", self.keyword())?;
        st.serialize_field("params", &ParamsOut(*self))?;
        st.serialize_field("message", &self.message())?;
        if let Some(p) = self.property_name() {
            st.serialize_field("propertyName", p)?;
        }
        st.end()
    }
}

impl Serialize for Issue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.view().serialize(s)
    }
}

/// The JSON shape, for reading issues other processes report.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IssueWire {
    instance_path: String,
    schema_path: String,
    keyword: String,
    #[serde(default)]
    params: Map<String, Value>,
    message: String,
    #[serde(default)]
    property_name: Option<String>,
}

impl<'de> Deserialize<'de> for Issue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = IssueWire::deserialize(d)?;
        let issue = Issue::new(
            w.instance_path,
            w.schema_path,
            &w.keyword,
            w.params,
            w.message,
        );
        Ok(match w.property_name {
            Some(p) => issue.with_property_name(p),
            None => issue,
        })
    }
}

/// The issues of one failed validation, in Ajv's order.
///
/// The list holds one reference to the validator's prepared sites and each issue names its
/// site by place, so reporting an issue and dropping it touch no reference count. Read the
/// issues in place ([`Issues::iter`], [`IssueRef`]), serialize the list (a JSON array of
/// Ajv-shaped issues), or turn it into standalone [`Issue`]s (`Vec::from`, `into_iter`).
#[derive(Clone)]
pub struct Issues {
    sites: Sites,
    /// Sites built on the spot by this validation (rare: see [`SiteId`]).
    own: Vec<Arc<Site>>,
    entries: Vec<Entry>,
}

impl Issues {
    pub(crate) fn new(sites: Sites, own: Vec<Arc<Site>>, entries: Vec<Entry>) -> Issues {
        Issues {
            sites,
            own,
            entries,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The issue at `index`.
    pub fn get(&self, index: usize) -> Option<IssueRef<'_>> {
        self.entries
            .get(index)
            .map(|e| e.view(&self.sites, &self.own))
    }

    pub fn first(&self) -> Option<IssueRef<'_>> {
        self.get(0)
    }

    pub fn last(&self) -> Option<IssueRef<'_>> {
        self.get(self.len().checked_sub(1)?)
    }

    /// The issues in order.
    pub fn iter(&self) -> IssuesIter<'_> {
        IssuesIter {
            sites: &self.sites,
            own: &self.own,
            entries: self.entries.iter(),
        }
    }

    /// Standalone copies of the issues.
    pub fn to_vec(&self) -> Vec<Issue> {
        self.iter().map(|i| i.to_owned()).collect()
    }
}

impl From<Issues> for Vec<Issue> {
    fn from(issues: Issues) -> Vec<Issue> {
        issues.to_vec()
    }
}

impl IntoIterator for Issues {
    type Item = Issue;
    type IntoIter = std::vec::IntoIter<Issue>;
    fn into_iter(self) -> Self::IntoIter {
        self.to_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a Issues {
    type Item = IssueRef<'a>;
    type IntoIter = IssuesIter<'a>;
    fn into_iter(self) -> IssuesIter<'a> {
        self.iter()
    }
}

/// The issues of an [`Issues`], in order.
#[derive(Clone)]
pub struct IssuesIter<'a> {
    sites: &'a [Arc<Site>],
    own: &'a [Arc<Site>],
    entries: std::slice::Iter<'a, Entry>,
}

impl<'a> Iterator for IssuesIter<'a> {
    type Item = IssueRef<'a>;
    fn next(&mut self) -> Option<IssueRef<'a>> {
        self.entries.next().map(|e| e.view(self.sites, self.own))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl<'a> DoubleEndedIterator for IssuesIter<'a> {
    fn next_back(&mut self) -> Option<IssueRef<'a>> {
        self.entries
            .next_back()
            .map(|e| e.view(self.sites, self.own))
    }
}

impl ExactSizeIterator for IssuesIter<'_> {}

impl std::fmt::Debug for Issues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl std::fmt::Display for Issues {
    /// Ajv's `errorsText(errors)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&errors_text(self))
    }
}

impl PartialEq for Issues {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl PartialEq<[Issue]> for Issues {
    fn eq(&self, other: &[Issue]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == *b)
    }
}

impl PartialEq<Vec<Issue>> for Issues {
    fn eq(&self, other: &Vec<Issue>) -> bool {
        *self == **other
    }
}

impl Serialize for Issues {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Ajv's `errorsText(errors)`: each issue as `data<instancePath> <message>`, joined by `, `.
/// Takes `&[Issue]`, `&Issues` or any list of issues.
pub fn errors_text<I>(issues: I) -> String
where
    I: IntoIterator,
    I::Item: std::fmt::Display,
{
    let mut out = String::new();
    for (i, issue) in issues.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        // Display is `data<instancePath> <message>`; writing to a String cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{issue}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_open_slot_is_filled_wherever_params_are_read() {
        let site = Arc::new(Site::open(
            "#/additionalProperties",
            "additionalProperties",
            "additionalProperty",
            "must NOT have additional properties",
        ));
        let mut by_value = Issue::at(&site, Fill::Value(Box::new(json!("extra"))), None);
        by_value.set_text("/a", "");
        let mut issue = Issue::at(&site, Fill::Name, None);
        issue.set_text("/a", "extra");
        assert_eq!(issue.instance_path(), "/a");
        assert_eq!(issue.params()["additionalProperty"], "extra");
        assert_eq!(
            serde_json::to_value(&by_value).unwrap(),
            serde_json::to_value(&issue).unwrap()
        );
        assert_eq!(
            serde_json::to_value(&issue).unwrap(),
            json!({"instancePath": "/a", "schemaPath": "#/additionalProperties", "keyword": "additionalProperties",
                   "params": {"additionalProperty": "extra"}, "message": "must NOT have additional properties"})
        );
        let back: Issue = serde_json::from_value(serde_json::to_value(&issue).unwrap()).unwrap();
        assert_eq!(back, issue);
        assert_eq!(
            back.to_string(),
            "data/a must NOT have additional properties"
        );
    }

    #[test]
    fn unique_items_issues_carry_both_indexes() {
        let site = Arc::new(Site::pair("#/uniqueItems"));
        let mut issue = Issue::at(&site, Fill::Pair(0, 2), None);
        issue.set_text("/tags", "");
        assert_eq!(
            issue.message(),
            "must NOT have duplicate items (items ## 2 and 0 are identical)"
        );
        assert_eq!(
            *issue.params(),
            *json!({"i": 0, "j": 2}).as_object().unwrap()
        );
        let v = serde_json::to_value(&issue).unwrap();
        assert_eq!(v["params"], json!({"i": 0, "j": 2}));
        let back: Issue = serde_json::from_value(v).unwrap();
        assert_eq!(back, issue);
    }

    #[test]
    fn an_issue_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Issue>(), 64);
        assert_eq!(std::mem::size_of::<Entry>(), 64);
    }

    #[test]
    fn issue_lists_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Issues>();
        send_sync::<Issue>();
        send_sync::<IssueRef<'static>>();
    }

    #[test]
    fn long_texts_move_to_the_heap_and_keep_both_parts() {
        let site = Arc::new(Site::open(
            "#/additionalProperties",
            "additionalProperties",
            "additionalProperty",
            "m",
        ));
        let long_path = "/abcdefghijklmnopqrstuvwxyz/0123456789";
        for (path, name) in [
            ("", ""),
            ("/a", "b"),
            (long_path, "0123456789"),
            (long_path, ""),
            ("/ü", "ß"),
        ] {
            let mut issue = Issue::at(&site, Fill::Name, Some("p"));
            issue.set_text(path, name);
            assert_eq!(issue.text_parts(), (path, name));
            assert_eq!(issue.params()["additionalProperty"], name);
            assert_eq!(issue.property_name(), Some("p"));
            assert_eq!(
                issue.text_is_inline(),
                path.len() + name.len() <= Text::INLINE
            );
        }
    }

    #[test]
    fn property_names_round_trip() {
        let issue = Issue::new(
            "",
            "#/propertyNames/pattern",
            "pattern",
            Map::new(),
            "must match",
        )
        .with_property_name("Bad");
        let v = serde_json::to_value(&issue).unwrap();
        assert_eq!(v["propertyName"], "Bad");
        let back: Issue = serde_json::from_value(v).unwrap();
        assert_eq!(back.property_name(), Some("Bad"));
        assert_eq!(
            errors_text(&[issue.clone(), issue]),
            "data must match, data must match"
        );
    }
}
