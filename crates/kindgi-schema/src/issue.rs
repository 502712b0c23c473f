//! Validation issues, shaped exactly like Ajv's error objects, and cheap to report.
//!
//! Almost everything in an Ajv error is fixed by the schema: the `schemaPath`, the keyword, the
//! message and most params (`{type: "string"}`, `{missingProperty: "name"}`, `{limit: 5}`). The
//! compiler prepares those once per keyword as a shared [`Site`]; reporting an issue copies a
//! pointer to its site and spells out the instance path (inline, without allocating, for paths
//! up to 24 bytes). A site may leave one params slot open for a value only the instance knows
//! (`additionalProperty`, `propertyName`, `unevaluatedProperty`, `passingSchemas`); the issue
//! carries that value. Everything else is read through the site.
//!
//! An invalid instance thus costs about one allocation per issue (often none), where owning
//! four strings and a params map cost ten.

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// An issue's own text: its instance path (a JSON Pointer), followed by the string an open
/// params slot takes when the instance supplies one (`additionalProperty: "x"`). Up to
/// [`Text::INLINE`] bytes together they live inside the issue, so reporting an issue at a short
/// path — even one naming a property — allocates nothing.
#[derive(Clone)]
pub(crate) enum Text {
    Inline {
        /// Where the path ends (and the name starts).
        path: u8,
        len: u8,
        buf: [u8; Text::INLINE],
    },
    Heap {
        path: usize,
        text: Box<str>,
    },
}

impl Text {
    pub(crate) const INLINE: usize = 29;
    pub(crate) const EMPTY: Text = Text::Inline {
        path: 0,
        len: 0,
        buf: [0; Text::INLINE],
    };

    /// A path and a name, copied.
    pub(crate) fn from_parts(path: &str, name: &str) -> Text {
        let len = path.len() + name.len();
        if len <= Text::INLINE {
            let mut buf = [0u8; Text::INLINE];
            buf[..path.len()].copy_from_slice(path.as_bytes());
            buf[path.len()..len].copy_from_slice(name.as_bytes());
            Text::Inline {
                path: path.len() as u8,
                len: len as u8,
                buf,
            }
        } else {
            let mut text = String::with_capacity(len);
            text.push_str(path);
            text.push_str(name);
            Text::Heap {
                path: path.len(),
                text: text.into(),
            }
        }
    }

    fn parts(&self) -> (&str, &str) {
        match self {
            // Written only from whole `&str` segments and ASCII, so always UTF-8 with a char
            // boundary where the path ends.
            Text::Inline { path, len, buf } => {
                let s = std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or_default();
                s.split_at_checked(usize::from(*path)).unwrap_or((s, ""))
            }
            Text::Heap { path, text } => text.split_at_checked(*path).unwrap_or((text, "")),
        }
    }

    pub(crate) fn path(&self) -> &str {
        self.parts().0
    }

    /// The string an open slot takes ([`Fill::Name`]).
    pub(crate) fn name(&self) -> &str {
        self.parts().1
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

/// What an issue adds to its site.
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

/// A prepared site, shared by the compiled schema and every issue reported at it.
pub(crate) type SiteRef = Arc<Site>;

impl Site {
    /// A site whose params are all known at compile time.
    pub(crate) fn fixed(
        schema_path: impl Into<Box<str>>,
        keyword: &str,
        params: Map<String, Value>,
        message: impl Into<Box<str>>,
    ) -> SiteRef {
        Arc::new(Site {
            schema_path: schema_path.into(),
            keyword: keyword.into(),
            message: message.into(),
            params,
            slot: Slot::None,
        })
    }

    /// A site whose only param, `key`, is supplied by each issue.
    pub(crate) fn open(
        schema_path: impl Into<Box<str>>,
        keyword: &str,
        key: &str,
        message: impl Into<Box<str>>,
    ) -> SiteRef {
        let mut params = Map::with_capacity(1);
        params.insert(key.to_owned(), Value::Null);
        Arc::new(Site {
            schema_path: schema_path.into(),
            keyword: keyword.into(),
            message: message.into(),
            params,
            slot: Slot::Open(0),
        })
    }

    /// The `uniqueItems` site: `{i, j}` and the message come with each issue.
    pub(crate) fn pair(schema_path: impl Into<Box<str>>) -> SiteRef {
        let mut params = Map::with_capacity(2);
        params.insert("i".to_owned(), Value::Null);
        params.insert("j".to_owned(), Value::Null);
        Arc::new(Site {
            schema_path: schema_path.into(),
            keyword: "uniqueItems".into(),
            message: "".into(),
            params,
            slot: Slot::Pair,
        })
    }
}

/// `must NOT have duplicate items (items ## j and i are identical)`.
fn unique_items_message(i: u32, j: u32) -> String {
    format!("must NOT have duplicate items (items ## {j} and {i} are identical)")
}

/// One validation problem, shaped exactly like an Ajv error object: `instancePath`,
/// `schemaPath`, `keyword`, `params`, `message` (and `propertyName` inside `propertyNames`).
///
/// Serializes to (and deserializes from) that JSON shape. Cloning is cheap.
#[derive(Clone)]
pub struct Issue {
    site: SiteRef,
    text: Text,
    /// What this issue adds to its site (see [`Slot`]).
    fill: Fill,
    /// Set inside `propertyNames` (rare, so boxed; a thin pointer keeps the issue at 64 bytes).
    #[allow(clippy::box_collection)]
    property_name: Option<Box<String>>,
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
        Issue {
            site: Site::fixed(schema_path, keyword, params, message),
            text: Text::from_parts(instance_path.as_ref(), ""),
            fill: Fill::None,
            property_name: None,
        }
    }

    /// The same issue, raised while checking the property name `name` (`propertyNames`).
    #[must_use]
    pub fn with_property_name(mut self, name: impl Into<Box<str>>) -> Issue {
        let name: Box<str> = name.into();
        self.property_name = Some(Box::new(name.into()));
        self
    }

    /// An issue at `site`; the evaluator writes its text in place.
    #[inline(always)]
    pub(crate) fn at(site: &SiteRef, fill: Fill, property_name: Option<&str>) -> Issue {
        Issue {
            site: Arc::clone(site),
            text: Text::EMPTY,
            fill,
            property_name: property_name.map(|n| Box::new(n.to_owned())),
        }
    }

    /// Where the evaluator writes the instance path (and a [`Fill::Name`]), once the issue is
    /// in place.
    pub(crate) fn text_mut(&mut self) -> &mut Text {
        &mut self.text
    }

    /// Where in the instance: a JSON Pointer (`""` for the root, `/a/0/b`).
    pub fn instance_path(&self) -> &str {
        self.text.path()
    }

    /// Where in the schema: `#/properties/a/type`.
    pub fn schema_path(&self) -> &str {
        &self.site.schema_path
    }

    /// The keyword that failed (`type`, `required`, …).
    pub fn keyword(&self) -> &str {
        &self.site.keyword
    }

    /// Ajv's message: `must be string`.
    pub fn message(&self) -> Cow<'_, str> {
        match (&self.site.slot, self.fill()) {
            (Slot::Pair, Fill::Pair(i, j)) => Cow::Owned(unique_items_message(*i, *j)),
            _ => Cow::Borrowed(&self.site.message),
        }
    }

    /// Set on issues raised inside `propertyNames`: the key being checked.
    pub fn property_name(&self) -> Option<&str> {
        self.property_name.as_deref().map(String::as_str)
    }

    fn fill(&self) -> &Fill {
        &self.fill
    }

    /// The keyword's params, in Ajv's order (`{type: "string"}`).
    pub fn params(&self) -> Cow<'_, Map<String, Value>> {
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
        match (&self.site.slot, self.fill()) {
            (Slot::Open(at), Fill::Value(v)) if *at == index => Value::clone(v),
            (Slot::Open(at), Fill::Name) if *at == index => Value::from(self.text.name()),
            (Slot::Pair, Fill::Pair(i, j)) => Value::from(if index == 0 { *i } else { *j }),
            _ => compiled.clone(),
        }
    }
}

impl std::fmt::Debug for Issue {
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

impl PartialEq for Issue {
    fn eq(&self, other: &Self) -> bool {
        self.instance_path() == other.instance_path()
            && self.schema_path() == other.schema_path()
            && self.keyword() == other.keyword()
            && self.property_name() == other.property_name()
            && ((Arc::ptr_eq(&self.site, &other.site)
                && self.fill() == other.fill()
                && self.text.name() == other.text.name())
                || (self.message() == other.message() && self.params() == other.params()))
    }
}

impl std::fmt::Display for Issue {
    /// Ajv's `errorsText` form: `data/a/b must be string`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "data{} {}", self.instance_path(), self.message())
    }
}

/// The params written in place, with the issue's values filled in (no map is built).
struct ParamsOut<'a>(&'a Issue);

impl Serialize for ParamsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let issue = self.0;
        let mut m = s.serialize_map(Some(issue.site.params.len()))?;
        for (i, (k, v)) in issue.site.params.iter().enumerate() {
            match (&issue.site.slot, issue.fill()) {
                (Slot::None, _) => m.serialize_entry(k, v)?,
                (Slot::Open(at), Fill::Value(fill)) if *at == i => m.serialize_entry(k, fill)?,
                (Slot::Open(at), Fill::Name) if *at == i => {
                    m.serialize_entry(k, issue.text.name())?;
                }
                (Slot::Pair, Fill::Pair(a, b)) => {
                    m.serialize_entry(k, if i == 0 { a } else { b })?;
                }
                _ => m.serialize_entry(k, v)?,
            }
        }
        m.end()
    }
}

impl Serialize for Issue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = if self.property_name().is_some() { 6 } else { 5 };
        let mut st = s.serialize_struct("Issue", n)?;
        st.serialize_field("instancePath", self.instance_path())?;
        st.serialize_field("schemaPath", self.schema_path())?;
        st.serialize_field("keyword", self.keyword())?;
        st.serialize_field("params", &ParamsOut(self))?;
        st.serialize_field("message", &self.message())?;
        if let Some(p) = self.property_name() {
            st.serialize_field("propertyName", p)?;
        }
        st.end()
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

/// Ajv's `errorsText(errors)`: each issue as `data<instancePath> <message>`, joined by `, `.
pub fn errors_text(issues: &[Issue]) -> String {
    let mut out = String::new();
    for (i, issue) in issues.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str("data");
        out.push_str(issue.instance_path());
        out.push(' ');
        out.push_str(&issue.message());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_open_slot_is_filled_wherever_params_are_read() {
        let site = Site::open(
            "#/additionalProperties",
            "additionalProperties",
            "additionalProperty",
            "must NOT have additional properties",
        );
        let mut by_value = Issue::at(&site, Fill::Value(Box::new(json!("extra"))), None);
        *by_value.text_mut() = Text::from_parts("/a", "");
        let mut issue = Issue::at(&site, Fill::Name, None);
        *issue.text_mut() = Text::from_parts("/a", "extra");
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
        let site = Site::pair("#/uniqueItems");
        let mut issue = Issue::at(&site, Fill::Pair(0, 2), None);
        *issue.text_mut() = Text::from_parts("/tags", "");
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
    }

    #[test]
    fn long_texts_move_to_the_heap_and_keep_both_parts() {
        for (path, name) in [
            ("", ""),
            ("/a", "b"),
            ("/abcdefghijklmnopqrstuvwxyz", "0123456789"),
            ("/ü", "ß"),
        ] {
            let t = Text::from_parts(path, name);
            assert_eq!((t.path(), t.name()), (path, name));
            assert_eq!(
                matches!(t, Text::Inline { .. }),
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
