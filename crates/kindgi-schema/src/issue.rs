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

/// An instance path (a JSON Pointer). Up to [`InstancePath::INLINE`] bytes it lives inside the
/// issue, so reporting an issue at a short path allocates nothing.
#[derive(Clone)]
pub(crate) enum InstancePath {
    Inline(u8, [u8; InstancePath::INLINE]),
    Heap(Box<str>),
}

impl InstancePath {
    pub(crate) const INLINE: usize = 22;
    pub(crate) const EMPTY: InstancePath = InstancePath::Inline(0, [0; InstancePath::INLINE]);

    pub(crate) fn as_str(&self) -> &str {
        match self {
            // Written only from whole `&str` segments and ASCII, so always UTF-8.
            InstancePath::Inline(len, buf) => {
                std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or_default()
            }
            InstancePath::Heap(s) => s,
        }
    }
}

impl From<&str> for InstancePath {
    fn from(s: &str) -> Self {
        if s.len() <= InstancePath::INLINE {
            let mut buf = [0u8; InstancePath::INLINE];
            buf[..s.len()].copy_from_slice(s.as_bytes());
            InstancePath::Inline(s.len() as u8, buf)
        } else {
            InstancePath::Heap(s.into())
        }
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
    Value(Value),
    Pair(usize, usize),
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
fn unique_items_message(i: usize, j: usize) -> String {
    format!("must NOT have duplicate items (items ## {j} and {i} are identical)")
}

/// One validation problem, shaped exactly like an Ajv error object: `instancePath`,
/// `schemaPath`, `keyword`, `params`, `message` (and `propertyName` inside `propertyNames`).
///
/// Serializes to (and deserializes from) that JSON shape. Cloning is cheap.
#[derive(Clone)]
pub struct Issue {
    instance_path: InstancePath,
    site: SiteRef,
    /// What this issue adds to its site (see [`Slot`]).
    /// What few issues carry beyond their site, boxed so the common issue stays 40 bytes.
    extra: Option<Box<Extra>>,
}

#[derive(Clone, PartialEq)]
struct Extra {
    /// What this issue adds to its site (see [`Slot`]).
    fill: Fill,
    property_name: Option<Box<str>>,
}

static NO_FILL: Fill = Fill::None;

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
            instance_path: InstancePath::from(instance_path.as_ref()),
            site: Site::fixed(schema_path, keyword, params, message),
            extra: None,
        }
    }

    /// The same issue, raised while checking the property name `name` (`propertyNames`).
    #[must_use]
    pub fn with_property_name(mut self, name: impl Into<Box<str>>) -> Issue {
        let name = Some(name.into());
        match &mut self.extra {
            Some(extra) => extra.property_name = name,
            None => {
                self.extra = Some(Box::new(Extra {
                    fill: Fill::None,
                    property_name: name,
                }))
            }
        }
        self
    }

    /// An issue that is just its site (nearly every issue); the evaluator writes its instance
    /// path in place.
    #[inline(always)]
    pub(crate) fn plain(site: &SiteRef) -> Issue {
        Issue {
            instance_path: InstancePath::EMPTY,
            site: Arc::clone(site),
            extra: None,
        }
    }

    pub(crate) fn at(site: &SiteRef, fill: Fill, property_name: Option<&str>) -> Issue {
        Issue {
            instance_path: InstancePath::EMPTY,
            site: Arc::clone(site),
            extra: match (fill, property_name) {
                (Fill::None, None) => None,
                (fill, name) => Some(Box::new(Extra {
                    fill,
                    property_name: name.map(Into::into),
                })),
            },
        }
    }

    /// Where the evaluator writes the instance path, once the issue is in place.
    pub(crate) fn instance_path_mut(&mut self) -> &mut InstancePath {
        &mut self.instance_path
    }

    /// Where in the instance: a JSON Pointer (`""` for the root, `/a/0/b`).
    pub fn instance_path(&self) -> &str {
        self.instance_path.as_str()
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
        self.extra.as_ref().and_then(|e| e.property_name.as_deref())
    }

    fn fill(&self) -> &Fill {
        self.extra.as_ref().map_or(&NO_FILL, |e| &e.fill)
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
            (Slot::Open(at), Fill::Value(v)) if *at == index => v.clone(),
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
            && ((Arc::ptr_eq(&self.site, &other.site) && self.fill() == other.fill())
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
        let mut issue = Issue::at(&site, Fill::Value(json!("extra")), None);
        *issue.instance_path_mut() = InstancePath::from("/a");
        assert_eq!(issue.params()["additionalProperty"], "extra");
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
        *issue.instance_path_mut() = InstancePath::from("/tags");
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
    fn common_issues_stay_small() {
        assert_eq!(std::mem::size_of::<Issue>(), 40);
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
