//! The compiled form of a schema: an arena of nodes, each holding its keywords already grouped
//! in Ajv's evaluation order, with every issue a keyword can report prepared at compile time
//! (a shared [`Site`]: `schemaPath`, keyword, message, params) so reporting one copies a pointer.

use regress::Regex;
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::formats::Format;
pub(crate) use crate::issue::{Site, SiteId, SiteRef, SiteTable, Sites};
pub(crate) use crate::names::DeclaredNames;

pub(crate) type NodeId = usize;

/// JSON types as bits, with `integer` distinct from `number`.
pub(crate) mod ty {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 2;
    pub const INTEGER: u8 = 4;
    pub const NUMBER: u8 = 8;
    pub const STRING: u8 = 16;
    pub const ARRAY: u8 = 32;
    pub const OBJECT: u8 = 64;

    pub fn by_name(s: &str) -> Option<u8> {
        Some(match s {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "integer" => INTEGER,
            "number" => NUMBER,
            "string" => STRING,
            "array" => ARRAY,
            "object" => OBJECT,
            _ => return None,
        })
    }
}

/// How an applicator folds a child's evaluated properties/items into its parent's (Ajv's
/// `mergeEvaluated`, static or through a generated variable, possibly only when the child passed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merge {
    /// No merge.
    No,
    /// Always merged.
    Always,
    /// Merged when the child is valid; otherwise the parent's state becomes `undefined`
    /// (Ajv declares the variable inside the `if`).
    CondFirst,
    /// The parent takes the child's variable; merged with the parent's static state when valid.
    CondAlias,
    /// Merged into the parent's variable when the child is valid.
    Cond,
}

/// A subschema reference with its merge modes (props, items).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sub {
    pub node: NodeId,
    pub props: Merge,
    pub items: Merge,
}

/// The compile-time view of `unevaluatedItems`' counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ItemsAt {
    /// Known at compile time: this many items evaluated (0 when none).
    Static(usize),
    /// Only known at run time (JavaScript comparison semantics apply).
    Dynamic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Max,
    Min,
    ExMax,
    ExMin,
}

impl Cmp {
    pub(crate) fn ok_str(self) -> &'static str {
        match self {
            Cmp::Max => "<=",
            Cmp::Min => ">=",
            Cmp::ExMax => "<",
            Cmp::ExMin => ">",
        }
    }
}

/// Schema for child data: a node, or `false` (reports at the keyword), or always valid.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Child {
    Node(NodeId),
    False,
}

#[derive(Debug)]
pub(crate) struct Pattern {
    /// The exact ECMAScript engine, used when `fast` is `None`.
    pub regex: Regex,
    /// The same pattern for the `regex` crate when it provably matches identically (see
    /// [`crate::fastregex`]): a DFA that does not allocate per match, where regress does.
    pub fast: Option<crate::fastregex::FastRegex>,
    /// The pattern as the schema spells it, and the keyword's schema path: what an issue
    /// names when a match runs out of its step budget.
    pub source: Box<str>,
    pub schema_path: Box<str>,
}

/// `{key: value}`.
pub(crate) fn params1(k: &str, v: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(k.to_owned(), v);
    m
}

/// What the backtracking engine may still spend in one validation (every `regress` match
/// takes its steps off it), and where it first ran out.
#[derive(Debug)]
pub(crate) struct RegexSteps<'t> {
    pub left: u64,
    /// Boxed: a word on every validation's stack, where the steps rarely run out. Taken by
    /// `Run::finish` (hence `ManuallyDrop`: no drop glue on every run).
    pub ran_out: std::mem::ManuallyDrop<Option<Box<(&'t Pattern, String)>>>,
}

impl Pattern {
    /// `budget`: what the schema may still spend on automata (see
    /// [`crate::fastregex::compile_within`]).
    pub(crate) fn new(
        source: &str,
        schema_path: &str,
        regex: Regex,
        budget: &mut crate::fastregex::CompileBudget,
    ) -> Self {
        Pattern {
            regex,
            fast: crate::fastregex::compile_within(source, budget),
            source: source.into(),
            schema_path: schema_path.into(),
        }
    }

    /// `regex.test(s)` (unanchored). A `regress` match spends `steps`; when they run out the
    /// answer is unknown: `steps` records where (`at` spells the instance location) and the
    /// caller gets `if_out`, the answer that does the least further work.
    #[inline(always)]
    pub(crate) fn matches<'t>(
        &'t self,
        s: &str,
        steps: &mut RegexSteps<'t>,
        at: impl FnOnce() -> String,
        if_out: bool,
    ) -> bool {
        match &self.fast {
            Some(fast) => fast.is_match(s),
            None => self.matches_within(s, steps, at, if_out),
        }
    }

    /// [`Pattern::matches`] with `regress`.
    #[inline(never)]
    fn matches_within<'t>(
        &'t self,
        s: &str,
        steps: &mut RegexSteps<'t>,
        at: impl FnOnce() -> String,
        if_out: bool,
    ) -> bool {
        match self.matches_exactly(s, &mut steps.left) {
            Some(found) => found,
            None => {
                if steps.ran_out.is_none() {
                    *steps.ran_out = Some(Box::new((self, at())));
                }
                if_out
            }
        }
    }

    /// `regress`, within `steps`; `None` when they run out. ASCII text takes its faster byte
    /// path. Out of line, so the fast paths keep a small frame.
    #[inline(never)]
    fn matches_exactly(&self, s: &str, steps: &mut u64) -> Option<bool> {
        let found = if s.is_ascii() {
            self.regex.find_ascii_within_steps(s, steps)
        } else {
            self.regex.find_within_steps(s, steps)
        };
        found.ok().map(|m| m.is_some())
    }
}

/// A required name with the issue its absence reports.
#[derive(Debug)]
pub(crate) struct RequiredName {
    pub name: Box<str>,
    pub site: SiteRef,
}

/// `property → [names]` from `dependencies`/`dependentRequired`, each name with the issue its
/// absence reports.
pub(crate) type PropertyDep = (Box<str>, Vec<(Box<str>, SiteRef)>);

/// `repr(u8)`: an explicit tag byte makes the `match` every keyword evaluation starts with a
/// load and a jump; a niche-encoded tag (inside some variant's `Vec`) costs several more
/// instructions per keyword.
#[derive(Debug)]
#[repr(u8)]
pub(crate) enum Kw {
    DynamicAnchor {
        anchor: Box<str>,
        target: NodeId,
    },
    DynamicRef {
        anchor: Box<str>,
        use_anchor: bool,
        fallback: NodeId,
        merge_props: Merge,
        merge_items: Merge,
    },
    Ref(Sub),
    Fail {
        site: SiteRef,
    },
    Const {
        value: Value,
        site: SiteRef,
    },
    Enum {
        values: Vec<Value>,
        site: SiteRef,
    },
    Not {
        node: NodeId,
        site: SiteRef,
    },
    AnyOf {
        branches: Vec<Sub>,
        site: SiteRef,
    },
    OneOf {
        branches: Vec<Option<Sub>>,
        site: SiteRef,
    },
    AllOf {
        branches: Vec<Sub>,
    },
    If {
        cond: NodeId,
        then: Option<Sub>,
        els: Option<Sub>,
        /// The issue for a failing `then` and for a failing `else`.
        sites: Box<[SiteRef; 2]>,
        merge_cond: (Merge, Merge),
    },
    Limit {
        cmp: Cmp,
        limit: f64,
        site: SiteRef,
    },
    MultipleOf {
        by: f64,
        site: SiteRef,
    },
    Format {
        format: Format,
        site: SiteRef,
    },
    FormatLimit {
        format: Format,
        cmp: Cmp,
        limit: Box<str>,
        site: SiteRef,
    },
    /// `maxLength`: at most `limit` characters (the schema's limit rounded down; negative
    /// when no string is short enough).
    MaxLength {
        limit: i64,
        site: SiteRef,
    },
    /// `minLength`: at least `limit` characters (the schema's limit rounded up).
    MinLength {
        limit: u64,
        site: SiteRef,
    },
    Pattern {
        pattern: Arc<Pattern>,
        site: SiteRef,
    },
    MaxItems {
        limit: f64,
        site: SiteRef,
    },
    MinItems {
        limit: f64,
        site: SiteRef,
    },
    /// `prefixItems` or array-form `items`.
    Tuple {
        items: Vec<Option<NodeId>>,
    },
    /// Items from `start` on: `items` (object form / 2020), `additionalItems`.
    ItemsFrom {
        start: usize,
        child: Child,
        /// Reported when `child` is `False` and the array is longer than `start`.
        site: SiteRef,
    },
    Contains {
        node: Option<NodeId>,
        min: f64,
        max: Option<f64>,
        site: SiteRef,
    },
    UniqueItems {
        scalar_types: Option<u8>,
        site: SiteRef,
    },
    UnevaluatedItems {
        child: Child,
        at: ItemsAt,
        path: Box<str>,
    },
    MaxProperties {
        limit: f64,
        site: SiteRef,
    },
    MinProperties {
        limit: f64,
        site: SiteRef,
    },
    Required {
        names: Vec<RequiredName>,
    },
    PropertyNames {
        node: NodeId,
        site: SiteRef,
    },
    AdditionalProperties {
        child: Child,
        props: DeclaredNames,
        patterns: Vec<Arc<Pattern>>,
        site: SiteRef,
    },
    PropertyDeps {
        deps: Vec<PropertyDep>,
    },
    Properties {
        props: Vec<(Box<str>, Option<NodeId>)>,
        /// Whether no name in `props` needs `~` escapes in a JSON Pointer (checked once here,
        /// not on every visit).
        plain: bool,
        names: Vec<Box<str>>,
    },
    PatternProperties {
        patterns: Vec<(Arc<Pattern>, Option<NodeId>)>,
        track: bool,
    },
    SchemaDeps {
        deps: Vec<(Box<str>, Sub)>,
    },
    UnevaluatedProperties {
        child: Child,
        site: SiteRef,
    },
    /// `required`, `additionalProperties` and `properties` of one object, checked over one pass
    /// through its keys (see [`Shape`]).
    Shape(Box<Shape>),
}

/// The usual tool-input object — `properties` with `required` and/or `additionalProperties`
/// (no `patternProperties`), nothing in between — fused at compile time: one pass matches each
/// key to its declared name, then `required`, `additionalProperties` and `properties` read the
/// match instead of searching the object each. Issues come in the same order as from the three
/// keywords.
#[derive(Debug)]
pub(crate) struct Shape {
    /// Every name `properties` declares, in its order (at most [`Shape::MAX_NAMES`]).
    pub names: DeclaredNames,
    /// Whether no name in `names` needs `~` escapes in a JSON Pointer.
    pub plain: bool,
    /// Whether a declared or required name is one every JavaScript object inherits
    /// (`constructor`, `toString`, …), which Ajv finds on objects that lack it.
    pub inherited: bool,
    /// Whether a declared name starts with a digit (and so may be an array index, which
    /// JavaScript enumerates first).
    pub digit_names: bool,
    /// `required`: each name with its place in `names` when declared there.
    pub required: Vec<(Option<usize>, RequiredName)>,
    /// `additionalProperties`: what an undeclared key meets, and where it is reported.
    pub additional: Option<(Child, SiteRef)>,
    /// `properties`' subschemas: the place of the name in `names`, and its node.
    pub props: Vec<(usize, NodeId)>,
    /// The keywords fused, for the walker that fills defaults (which keeps them apart).
    pub originals: Vec<Kw>,
}

impl Shape {
    /// Most declared names a fused object may have (one slot each on the stack).
    pub(crate) const MAX_NAMES: usize = 32;

    /// Fuses an object group's `required`, `additionalProperties` and `properties` into one
    /// [`Kw::Shape`] when nothing else sits among them (`maxProperties`/`minProperties`, which
    /// come first, are fine), `additionalProperties` has no patterns beside it, and `properties`
    /// declares at most [`Shape::MAX_NAMES`] names. Not for schemas that track evaluated
    /// properties.
    pub(crate) fn fuse(kws: &mut Vec<Kw>) {
        let fusable = kws.iter().all(|k| match k {
            Kw::MaxProperties { .. }
            | Kw::MinProperties { .. }
            | Kw::Required { .. }
            | Kw::Properties { .. } => true,
            Kw::AdditionalProperties { patterns, .. } => patterns.is_empty(),
            _ => false,
        });
        let Some(Kw::Properties { names, .. }) =
            kws.iter().find(|k| matches!(k, Kw::Properties { .. }))
        else {
            return;
        };
        let others = kws
            .iter()
            .filter(|k| matches!(k, Kw::Required { .. } | Kw::AdditionalProperties { .. }))
            .count();
        if !fusable || others == 0 || names.len() > Shape::MAX_NAMES {
            return;
        }
        let names = names.clone();
        let at = kws
            .iter()
            .position(|k| {
                matches!(
                    k,
                    Kw::Required { .. } | Kw::AdditionalProperties { .. } | Kw::Properties { .. }
                )
            })
            .unwrap_or(0);
        let mut originals = Vec::new();
        let mut rest = Vec::new();
        for k in kws.drain(..) {
            match k {
                Kw::Required { .. } | Kw::AdditionalProperties { .. } | Kw::Properties { .. } => {
                    originals.push(k)
                }
                other => rest.push(other),
            }
        }
        let place = |name: &str| names.iter().position(|n| &**n == name);
        let mut shape = Shape {
            plain: !names.iter().any(|n| n.contains(['~', '/'])),
            inherited: false,
            digit_names: names
                .iter()
                .any(|n| n.as_bytes().first().is_some_and(u8::is_ascii_digit)),
            names: DeclaredNames::new(names.clone()),
            required: Vec::new(),
            additional: None,
            props: Vec::new(),
            originals: Vec::new(),
        };
        for k in &originals {
            match k {
                Kw::Required { names: required } => {
                    for r in required {
                        shape.required.push((
                            place(&r.name),
                            RequiredName {
                                name: r.name.clone(),
                                site: r.site,
                            },
                        ));
                    }
                }
                Kw::AdditionalProperties { child, site, .. } => {
                    shape.additional = Some((*child, *site));
                }
                Kw::Properties { props, .. } => {
                    for (name, node) in props {
                        if let (Some(i), Some(node)) = (place(name), node) {
                            shape.props.push((i, *node));
                        }
                    }
                }
                _ => {}
            }
        }
        shape.inherited = names.iter().any(|n| crate::js::inherited(n))
            || shape
                .required
                .iter()
                .any(|(_, r)| crate::js::inherited(&r.name));
        shape.originals = originals;
        rest.insert(at.min(rest.len()), Kw::Shape(Box::new(shape)));
        *kws = rest;
    }
}

/// Where the `type` error is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeAt {
    Upfront,
    /// In the group of this single type (bit).
    Group(u8),
}

#[derive(Debug)]
pub(crate) struct TypeCheck {
    pub types: u8,
    pub at: TypeAt,
    pub site: SiteRef,
}

/// Defaults filled into an object (or an array, draft-07 tuple form) before its keywords run.
#[derive(Debug, Default)]
pub(crate) struct Defaults {
    pub props: Vec<(Box<str>, Value)>,
    pub items: Vec<(usize, Value)>,
}

#[derive(Debug)]
pub(crate) struct ObjNode {
    pub type_check: Option<TypeCheck>,
    pub any: Vec<Kw>,
    /// `None` when the schema has no keyword of that group (the group does not run).
    pub number: Option<Vec<Kw>>,
    pub string: Option<Vec<Kw>>,
    pub array: Option<Vec<Kw>>,
    pub object: Option<Vec<Kw>>,
    pub defaults: Option<Box<Defaults>>,
    /// Whether the node only checks a scalar in place (see [`ObjNode::leaf_kind`]): it then
    /// runs on a lean path with no keyword calls.
    pub leaf: bool,
    /// Per data kind (number, string, array, object, anything else): where a `type` that is
    /// one group's (`TypeAt::Group`) is reported, worked out once from Ajv's group order.
    pub late: [Late; 5],
}

/// When a group-bound `type` issue comes, relative to the data's own group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Late {
    /// Not at all (no such `type`, or the data is of that type's group).
    No,
    /// Before the data's group runs (that type's group comes first, or the data's group has
    /// no keywords).
    Before,
    /// After the data's group has run.
    After,
}

impl ObjNode {
    /// [`ObjNode::late`] for this node's `type` and groups.
    pub(crate) fn late_plan(&self) -> [Late; 5] {
        let mut plan = [Late::No; 5];
        let Some(TypeCheck {
            at: TypeAt::Group(bit),
            ..
        }) = &self.type_check
        else {
            return plan;
        };
        let pos = match *bit {
            ty::NUMBER => 0,
            ty::STRING => 1,
            ty::ARRAY => 2,
            _ => 3,
        };
        let groups = [&self.number, &self.string, &self.array, &self.object];
        for (at, slot) in plan.iter_mut().enumerate() {
            if pos == at {
                continue;
            }
            let has_keywords = groups.get(at).is_some_and(|g| g.is_some());
            *slot = if pos < at || !has_keywords {
                Late::Before
            } else {
                Late::After
            };
        }
        plan
    }

    /// A leaf reads the data and never descends: no defaults, no array or object keywords,
    /// only `enum`/`const` among the keywords of any type, and only the number and string
    /// checks the lean path knows.
    pub(crate) fn leaf_kind(&self) -> bool {
        let scalar = |kws: &Option<Vec<Kw>>| {
            kws.iter().flatten().all(|k| {
                matches!(
                    k,
                    Kw::Limit { .. }
                        | Kw::MultipleOf { .. }
                        | Kw::MaxLength { .. }
                        | Kw::MinLength { .. }
                        | Kw::Pattern { .. }
                        | Kw::Format { .. }
                )
            })
        };
        self.defaults.is_none()
            && self.array.is_none()
            && self.object.is_none()
            && self
                .any
                .iter()
                .all(|k| matches!(k, Kw::Enum { .. } | Kw::Const { .. }))
            && scalar(&self.number)
            && scalar(&self.string)
    }
}

#[derive(Debug)]
#[repr(u8)]
pub(crate) enum Node {
    /// Valid for everything (`true`, `{}`, a schema with no rules).
    True,
    /// `false`: reports "boolean schema is false" at this path.
    False {
        site: SiteRef,
    },
    Obj(Box<ObjNode>),
    /// Placeholder while a recursive function is being compiled.
    Pending,
}

/// A compiled schema document.
#[derive(Debug)]
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    /// Whether any `unevaluated*` keyword needs evaluated properties/items tracked.
    pub track: bool,
    /// Whether validation can fill defaults.
    pub has_defaults: bool,
    /// The sites the keywords report at (shared with the issue lists validation returns).
    pub sites: Sites,
}
