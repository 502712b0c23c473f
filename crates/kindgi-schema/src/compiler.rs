//! Schema → [`Tree`]. Walks a schema the way Ajv's code generator does — same keyword order,
//! same strict-mode checks in the same order (so the first error is Ajv's first error), same
//! `$ref` inlining rule — and records for every keyword what validation must do.

use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::CompileError;
use crate::dialect::{self, Dialect};
use crate::index::{Index, Loc, pointer};
use crate::js;
use crate::path::{escape_pointer, fragment_segment};
use crate::tree::*;
use crate::uri::{normalize_id, resolve};

// The keyword families, each a few `impl Compiler` methods called from `keyword` below.
mod applicators;
mod arrays;
mod numeric;
mod objects;
mod refs;
mod strings;

/// How to compile.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub dialect: Dialect,
    pub strict: bool,
    pub use_defaults: bool,
    pub inline_refs: bool,
    pub validate_formats: bool,
    pub extra_keywords: &'static [&'static str],
}

/// Deepest schema nesting accepted (JSON levels).
pub(crate) const MAX_SCHEMA_DEPTH: usize = 256;

/// Compile-time state of evaluated properties (Ajv's `it.props`).
#[derive(Debug, Clone, PartialEq)]
enum PSt {
    Undef,
    All,
    Keys(Vec<String>),
    Name,
}

/// Compile-time state of evaluated items (Ajv's `it.items`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum ISt {
    Undef,
    All,
    Num(usize),
    Name,
}

#[derive(Debug)]
struct FnInfo {
    node: NodeId,
    done: bool,
    props: PSt,
    items: ISt,
    data_counter: usize,
    base: String,
}

#[derive(Clone)]
struct Cx {
    loc: Loc,
    base: String,
    path: String,
    types: Vec<&'static str>,
    composite: bool,
    data_var: String,
    func: usize,
    defined: Rc<RefCell<HashSet<String>>>,
    props: PSt,
    items: ISt,
    meta: bool,
    top: bool,
}

/// What a child subschema changes.
#[derive(Default)]
struct Sub2 {
    /// New data (a property or item) — resets context types and gets a new data variable.
    new_data: bool,
    composite: bool,
    types: Option<Vec<&'static str>>,
}

pub(crate) struct Compiler<'a> {
    docs: Vec<&'a Value>,
    lazy: Vec<&'a Value>,
    set: Settings,
    nodes: Vec<Node>,
    index: Index,
    funcs: Vec<FnInfo>,
    func_by_loc: HashMap<Loc, usize>,
    dyn_seen: HashMap<usize, HashSet<String>>,
    track: bool,
    uses_uneval: bool,
    has_defaults: bool,
    depth: usize,
    /// Bytes this schema's patterns may still spend on dense DFAs.
    /// What the schema's patterns may still spend on automata (see `fastregex`).
    regex_budget: crate::fastregex::CompileBudget,
    /// Every issue site the schema's keywords report at.
    sites: SiteTable,
}

fn err(msg: impl Into<String>) -> CompileError {
    CompileError::new(msg)
}

fn strict_err(msg: impl AsRef<str>) -> CompileError {
    err(format!("strict mode: {}", msg.as_ref()))
}

/// The deepest nesting of a JSON value, computed without recursion.
pub(crate) fn json_depth(v: &Value, limit: usize) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((x, d)) = stack.pop() {
        max = max.max(d);
        if max > limit {
            return max;
        }
        match x {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

fn obj_keys(o: &Map<String, Value>) -> Vec<&String> {
    js::ordered_keys(o.keys())
}

/// `allSchemaProperties`: keys except `__proto__`, JavaScript order.
fn schema_props(v: Option<&Value>) -> Vec<String> {
    match v.and_then(Value::as_object) {
        Some(o) => obj_keys(o)
            .into_iter()
            .filter(|k| *k != "__proto__")
            .cloned()
            .collect(),
        None => Vec::new(),
    }
}

fn has_ref(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.iter().any(|(k, x)| {
            matches!(
                k.as_str(),
                "$ref" | "$recursiveRef" | "$recursiveAnchor" | "$dynamicRef" | "$dynamicAnchor"
            ) || has_ref(x)
        }),
        Value::Array(a) => a.iter().any(has_ref),
        _ => false,
    }
}

/// The JSON types a keyword's value may have (`KeywordCxt`'s `schemaType` check).
fn schema_types(d: Dialect, k: &str) -> Option<&'static [&'static str]> {
    Some(match k {
        "$ref"
        | "$dynamicRef"
        | "$recursiveRef"
        | "$dynamicAnchor"
        | "pattern"
        | "format"
        | "formatMaximum"
        | "formatMinimum"
        | "formatExclusiveMaximum"
        | "formatExclusiveMinimum" => &["string"],
        "$recursiveAnchor" | "uniqueItems" | "nullable" => &["boolean"],
        "maximum" | "minimum" | "exclusiveMaximum" | "exclusiveMinimum" | "multipleOf"
        | "maxLength" | "minLength" | "maxProperties" | "minProperties" | "maxItems"
        | "minItems" | "maxContains" | "minContains" => &["number"],
        "required" | "enum" | "anyOf" | "oneOf" | "allOf" | "prefixItems" => &["array"],
        "type" => &["string", "array"],
        "not" | "if" | "then" | "else" | "propertyNames" | "contains" => &["object", "boolean"],
        "additionalItems"
        | "additionalProperties"
        | "unevaluatedProperties"
        | "unevaluatedItems" => &["boolean", "object"],
        "items" => {
            if d == Dialect::Draft2020 {
                &["object", "boolean"]
            } else {
                &["object", "array", "boolean"]
            }
        }
        "dependencies" | "properties" | "patternProperties" | "dependentRequired"
        | "dependentSchemas" => &["object"],
        _ => return None,
    })
}

fn types_of(v: &Value) -> Vec<&'static str> {
    let names: Vec<&str> = match v.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    names.into_iter().filter_map(static_type_name).collect()
}

fn static_type_name(s: &str) -> Option<&'static str> {
    Some(match s {
        "null" => "null",
        "boolean" => "boolean",
        "integer" => "integer",
        "number" => "number",
        "string" => "string",
        "array" => "array",
        "object" => "object",
        _ => return None,
    })
}

/// A schema's type names (Ajv's `getSchemaTypes`): `type` as one name or a list, with `null`
/// added for `nullable: true`; an error for an unknown name or a contradicting `nullable`.
fn schema_type_names(o: &Map<String, Value>) -> Result<Vec<&'static str>, CompileError> {
    let mut names: Vec<&'static str> = Vec::new();
    match o.get("type") {
        None => {}
        Some(Value::String(s)) => match static_type_name(s) {
            Some(t) => names.push(t),
            None => return Err(err(format!("type must be JSONType or JSONType[]: {s}"))),
        },
        Some(Value::Array(a)) => {
            let all: Vec<Option<&'static str>> = a
                .iter()
                .map(|x| x.as_str().and_then(static_type_name))
                .collect();
            if all.iter().any(Option::is_none) {
                return Err(err(format!(
                    "type must be JSONType or JSONType[]: {}",
                    js::fmt_value(&Value::Array(a.clone()))
                )));
            }
            names.extend(all.into_iter().flatten());
        }
        Some(other) => {
            return Err(err(format!(
                "type must be JSONType or JSONType[]: {}",
                js::fmt_value(other)
            )));
        }
    }
    if names.contains(&"null") {
        if o.get("nullable") == Some(&Value::Bool(false)) {
            return Err(err("type: null contradicts nullable: false"));
        }
    } else {
        if names.is_empty() && o.contains_key("nullable") {
            return Err(err("\"nullable\" cannot be used without \"type\""));
        }
        if o.get("nullable") == Some(&Value::Bool(true)) {
            names.push("null");
        }
    }
    Ok(names)
}

fn includes_type(ts: &[&str], t: &str) -> bool {
    ts.contains(&t) || (t == "integer" && ts.contains(&"number"))
}

fn has_applicable_type(ts: &[&str], kw: &str) -> bool {
    ts.contains(&kw) || (kw == "number" && ts.contains(&"integer"))
}

fn merge_props_static(to: &PSt, from: &PSt) -> PSt {
    match (to, from) {
        (PSt::All, _) | (_, PSt::All) => PSt::All,
        (PSt::Keys(a), PSt::Keys(b)) => {
            let mut k = a.clone();
            for x in b {
                if !k.contains(x) {
                    k.push(x.clone());
                }
            }
            PSt::Keys(k)
        }
        (PSt::Undef, x) | (x, PSt::Undef) => x.clone(),
        _ => PSt::Name,
    }
}

fn merge_items_static(to: ISt, from: ISt) -> ISt {
    match (to, from) {
        (ISt::All, _) | (_, ISt::All) => ISt::All,
        (ISt::Num(a), ISt::Num(b)) => ISt::Num(a.max(b)),
        (ISt::Undef, x) | (x, ISt::Undef) => x,
        _ => ISt::Name,
    }
}

/// Ajv's `mergeEvaluated` for props: updates the compile-time state and says what validation
/// does. `to_name`: the caller asked for a variable (a conditional merge); `in_if`: the code
/// sits inside `if (valid)`.
fn merge_props(to: &mut PSt, from: &PSt, to_name: bool, in_if: bool) -> Merge {
    if *to == PSt::All || *from == PSt::Undef {
        return Merge::No;
    }
    match (to.clone(), from) {
        (PSt::Undef, PSt::Name) => {
            *to = PSt::Name;
            Merge::Always
        }
        (PSt::Undef, f) => {
            if to_name {
                *to = PSt::Name;
                Merge::CondFirst
            } else {
                *to = f.clone();
                Merge::Always
            }
        }
        (PSt::Name, _) => {
            if in_if {
                Merge::Cond
            } else {
                Merge::Always
            }
        }
        (t, PSt::Name) => {
            let _ = t;
            *to = PSt::Name;
            if in_if {
                Merge::CondAlias
            } else {
                Merge::Always
            }
        }
        (t, f) => {
            let merged = merge_props_static(&t, f);
            if to_name {
                *to = PSt::Name;
                Merge::CondFirst
            } else {
                *to = merged;
                Merge::Always
            }
        }
    }
}

fn merge_items(to: &mut ISt, from: ISt, to_name: bool, in_if: bool) -> Merge {
    if *to == ISt::All || from == ISt::Undef {
        return Merge::No;
    }
    match (*to, from) {
        (ISt::Undef, ISt::Name) => {
            *to = ISt::Name;
            Merge::Always
        }
        (ISt::Undef, f) => {
            if to_name {
                *to = ISt::Name;
                Merge::CondFirst
            } else {
                *to = f;
                Merge::Always
            }
        }
        (ISt::Name, _) => {
            if in_if {
                Merge::Cond
            } else {
                Merge::Always
            }
        }
        (_, ISt::Name) => {
            *to = ISt::Name;
            if in_if {
                Merge::CondAlias
            } else {
                Merge::Always
            }
        }
        (t, f) => {
            let merged = merge_items_static(t, f);
            if to_name {
                *to = ISt::Name;
                Merge::CondFirst
            } else {
                *to = merged;
                Merge::Always
            }
        }
    }
}

impl<'a> Compiler<'a> {
    /// `docs` are indexed now; `lazy` documents (the meta-schemas) only when a reference does
    /// not resolve without them.
    pub(crate) fn new(
        docs: Vec<&'a Value>,
        lazy: Vec<&'a Value>,
        set: Settings,
    ) -> Result<Self, CompileError> {
        let mut index = Index::default();
        for (i, d) in docs.iter().enumerate() {
            index.add_document(i, d)?;
        }
        let track = set.dialect.modern();
        Ok(Compiler {
            docs,
            lazy,
            set,
            nodes: Vec::new(),
            index,
            funcs: Vec::new(),
            func_by_loc: HashMap::new(),
            dyn_seen: HashMap::new(),
            track,
            uses_uneval: false,
            has_defaults: false,
            depth: 0,
            regex_budget: crate::fastregex::CompileBudget::PER_SCHEMA,
            sites: SiteTable::default(),
        })
    }

    /// Compiles document 0.
    pub(crate) fn compile(mut self) -> Result<Tree, CompileError> {
        let root = self.function(Loc {
            doc: 0,
            ptr: String::new(),
        })?;
        let track = self.track && self.uses_uneval;
        if !track {
            // Only now is it known that nothing tracks evaluated properties.
            for node in &mut self.nodes {
                if let Node::Obj(o) = node {
                    if let Some(kws) = &mut o.object {
                        Shape::fuse(kws);
                    }
                }
            }
        }
        Ok(Tree {
            nodes: self.nodes,
            root,
            track,
            has_defaults: self.has_defaults,
            sites: self.sites.finish(),
        })
    }

    /// Resolves a reference, indexing the lazy documents on first need.
    fn resolve(&mut self, base: &str, r: &str) -> Option<Loc> {
        if let Some(l) = self.index.resolve_ref(&self.docs, base, r) {
            return Some(l);
        }
        if self.lazy.is_empty() {
            return None;
        }
        for d in std::mem::take(&mut self.lazy) {
            let i = self.docs.len();
            self.docs.push(d);
            if self.index.add_document(i, d).is_err() {
                return None;
            }
        }
        self.index.resolve_ref(&self.docs, base, r)
    }

    fn value_at(&self, loc: &Loc) -> Option<&'a Value> {
        let doc: &'a Value = self.docs.get(loc.doc)?;
        pointer(doc, &loc.ptr)
    }

    /// A separately compiled schema (Ajv's `SchemaEnv` function): paths restart at `#`.
    fn function(&mut self, loc: Loc) -> Result<NodeId, CompileError> {
        if let Some(&f) = self.func_by_loc.get(&loc) {
            return Ok(self.funcs[f].node);
        }
        let Some(value) = self.value_at(&loc) else {
            return Err(err("ajv implementation error: missing schema"));
        };
        let node = self.nodes.len();
        self.nodes.push(Node::Pending);
        let base = self.index.base_of(&loc);
        let fn_base = {
            // Ajv's `schemaEnv.baseId`: the base the function starts from.
            let own = value
                .get("$id")
                .and_then(Value::as_str)
                .map(|id| normalize_id(id).to_owned());
            match own {
                Some(id) if loc.ptr.is_empty() => id,
                _ => base.clone(),
            }
        };
        let f = self.funcs.len();
        let meta = loc.doc > 0;
        self.funcs.push(FnInfo {
            node,
            done: false,
            props: PSt::Undef,
            items: ISt::Undef,
            data_counter: 0,
            base: fn_base,
        });
        self.func_by_loc.insert(loc.clone(), f);
        let parent_base = if loc.ptr.is_empty() {
            String::new()
        } else {
            base.clone()
        };
        let mut cx = Cx {
            loc,
            base: parent_base,
            path: "#".into(),
            types: Vec::new(),
            composite: false,
            data_var: "data".into(),
            func: f,
            defined: Rc::new(RefCell::new(HashSet::new())),
            props: PSt::Undef,
            items: ISt::Undef,
            meta,
            top: true,
        };
        let built = self.schema(&mut cx, value)?;
        self.nodes[node] = built;
        let info = &mut self.funcs[f];
        info.done = true;
        info.props = cx.props;
        info.items = cx.items;
        Ok(node)
    }

    fn push(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    fn strict(&self, cx: &Cx) -> bool {
        self.set.strict && !cx.meta
    }

    fn known(&self, key: &str) -> bool {
        dialect::is_keyword(self.set.dialect, key) || self.set.extra_keywords.contains(&key)
    }

    fn is_rule(&self, key: &str) -> bool {
        dialect::is_rule(self.set.dialect, key)
    }

    fn check_unknown(&self, cx: &Cx, v: &Value) -> Result<(), CompileError> {
        if !self.strict(cx) {
            return Ok(());
        }
        if let Some(o) = v.as_object() {
            for k in obj_keys(o) {
                if !self.known(k) {
                    return Err(strict_err(format!("unknown keyword: \"{k}\"")));
                }
            }
        }
        Ok(())
    }

    /// Ajv's `alwaysValidSchema` (with its strict unknown-keyword check).
    fn always_valid(&self, cx: &Cx, v: &Value) -> Result<bool, CompileError> {
        match v {
            Value::Bool(b) => Ok(*b),
            Value::Object(o) => {
                if o.is_empty() {
                    return Ok(true);
                }
                self.check_unknown(cx, v)?;
                Ok(!o.keys().any(|k| self.is_rule(k)))
            }
            _ => Ok(false),
        }
    }

    /// A subschema of `parent` at `keyword[/prop]`.
    fn sub(
        &mut self,
        parent: &mut Cx,
        value: &Value,
        keyword: &str,
        prop: Option<&str>,
        m: Sub2,
    ) -> Result<(NodeId, PSt, ISt), CompileError> {
        let mut ptr = format!("{}/{}", parent.loc.ptr, escape_pointer(keyword));
        let mut path = format!("{}/{}", parent.path, keyword);
        if let Some(p) = prop {
            ptr.push('/');
            ptr.push_str(&escape_pointer(p));
            path.push('/');
            path.push_str(&fragment_segment(p));
        }
        self.sub_at(
            parent,
            value,
            Loc {
                doc: parent.loc.doc,
                ptr,
            },
            path,
            m,
        )
    }

    fn sub_at(
        &mut self,
        parent: &mut Cx,
        value: &Value,
        loc: Loc,
        path: String,
        m: Sub2,
    ) -> Result<(NodeId, PSt, ISt), CompileError> {
        let mut data_var = parent.data_var.clone();
        let mut types = parent.types.clone();
        if m.new_data {
            let f = &mut self.funcs[parent.func];
            data_var = format!("data{}", f.data_counter);
            f.data_counter += 1;
            types = Vec::new();
            parent.defined = Rc::new(RefCell::new(HashSet::new()));
        }
        if let Some(t) = m.types {
            types = t;
        }
        let mut cx = Cx {
            loc,
            base: parent.base.clone(),
            path,
            types,
            composite: parent.composite || m.composite,
            data_var,
            func: parent.func,
            defined: parent.defined.clone(),
            props: PSt::Undef,
            items: ISt::Undef,
            meta: parent.meta,
            top: false,
        };
        let n = self.schema(&mut cx, value)?;
        let id = self.push(n);
        Ok((id, cx.props, cx.items))
    }

    /// Compiles one schema (boolean or object) in context `cx`.
    fn schema(&mut self, cx: &mut Cx, v: &Value) -> Result<Node, CompileError> {
        self.depth += 1;
        if self.depth > MAX_SCHEMA_DEPTH {
            return Err(err(format!(
                "schema is nested too deeply: more than {MAX_SCHEMA_DEPTH} levels"
            )));
        }
        let r = stacker::maybe_grow(crate::js::STACK_RED_ZONE, crate::js::STACK_GROW, || {
            self.schema_inner(cx, v)
        });
        self.depth -= 1;
        r
    }

    fn schema_inner(&mut self, cx: &mut Cx, v: &Value) -> Result<Node, CompileError> {
        let o = match v {
            Value::Bool(true) => return Ok(Node::True),
            Value::Bool(false) => {
                return Ok(Node::False {
                    site: self.sites.add(Site::fixed(
                        format!("{}/false schema", cx.path),
                        "false schema",
                        Map::new(),
                        "boolean schema is false",
                    )),
                });
            }
            Value::Object(o) => o,
            _ => return Err(err("schema must be object or boolean")),
        };
        self.check_unknown(cx, v)?;
        if let Some(id) = o.get("$id").and_then(Value::as_str) {
            cx.base = resolve(&cx.base, normalize_id(id));
        }
        if !o.keys().any(|k| self.is_rule(k)) {
            return Ok(Node::True);
        }
        if cx.top && o.contains_key("default") && self.set.use_defaults && self.strict(cx) {
            return Err(strict_err("default is ignored in the schema root"));
        }
        let names = schema_type_names(o)?;

        let only_ref = o.contains_key("$ref") && !o.keys().any(|k| k != "$ref" && self.is_rule(k));
        let d = self.set.dialect;
        let used = |g: &str| dialect::group(d, g).iter().any(|k| o.contains_key(*k));
        let type_check = if names.is_empty() {
            None
        } else {
            Some(self.type_check(cx, o, &names, used))
        };
        let mut node = ObjNode {
            type_check,
            any: Vec::new(),
            number: None,
            string: None,
            array: None,
            object: None,
            defaults: None,
            leaf: false,
            late: [Late::No; 5],
        };
        if only_ref {
            let mut kws = Vec::new();
            self.keyword(cx, o, "$ref", &mut kws)?;
            node.any = kws;
            node.late = node.late_plan();
            return Ok(Node::Obj(Box::new(node)));
        }
        if self.strict(cx) {
            self.strict_types(cx, o, &names)?;
        }
        // Groups, in Ajv's order.
        if used("any") {
            let mut kws = Vec::new();
            for k in dialect::group(d, "any") {
                if o.contains_key(*k) {
                    self.keyword(cx, o, k, &mut kws)?;
                }
            }
            node.any = kws;
        }
        for g in ["number", "string", "array", "object"] {
            if !used(g) {
                continue;
            }
            if self.set.use_defaults {
                self.defaults(cx, o, g, &mut node)?;
            }
            let mut kws = Vec::new();
            for k in dialect::group(d, g) {
                if o.contains_key(*k) {
                    self.keyword(cx, o, k, &mut kws)?;
                }
            }
            let slot = match g {
                "number" => &mut node.number,
                "string" => &mut node.string,
                "array" => &mut node.array,
                _ => &mut node.object,
            };
            *slot = Some(kws);
        }
        node.leaf = node.leaf_kind();
        node.late = node.late_plan();
        Ok(Node::Obj(Box::new(node)))
    }

    /// The `type` check of a schema with type `names` (`nullable: true` added): checked up front,
    /// or at its group's turn when the type is one group's and that group has keywords.
    #[inline]
    fn type_check(
        &mut self,
        cx: &Cx,
        o: &Map<String, Value>,
        names: &[&'static str],
        used: impl Fn(&str) -> bool,
    ) -> TypeCheck {
        let single_group = names.len() == 1
            && matches!(names[0], "number" | "string" | "array" | "object")
            && used(names[0]);
        let bits = names
            .iter()
            .filter_map(|n| ty::by_name(n))
            .fold(0u8, |a, b| a | b);
        let mut raw = o.get("type").cloned().unwrap_or(Value::Null);
        // Ajv appends "null" for `nullable: true` to the schema's own `type` array.
        if let Value::Array(a) = &mut raw {
            if names.contains(&"null") && !a.iter().any(|t| t == "null") {
                a.push(Value::String("null".into()));
            }
        }
        TypeCheck {
            types: bits,
            at: if single_group {
                TypeAt::Group(ty::by_name(names[0]).unwrap_or(0))
            } else {
                TypeAt::Upfront
            },
            site: {
                let message = format!("must be {}", js::fmt_value(&raw));
                self.sites.add(Site::fixed(
                    format!("{}/type", cx.path),
                    "type",
                    params1("type", raw),
                    message,
                ))
            },
        }
    }

    fn strict_types(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        types: &[&'static str],
    ) -> Result<(), CompileError> {
        let at = |cx: &Cx, s: &Compiler<'_>| format!("{}{}", s.funcs[cx.func].base, cx.path);
        if !types.is_empty() {
            if cx.types.is_empty() {
                cx.types = types.to_vec();
            } else {
                for t in types {
                    if !includes_type(&cx.types, t) {
                        return Err(strict_err(format!(
                            "type \"{t}\" not allowed by context \"{}\" at \"{}\" (strictTypes)",
                            cx.types.join(","),
                            at(cx, self)
                        )));
                    }
                }
                let mut narrowed = Vec::new();
                for t in &cx.types {
                    if includes_type(types, t) {
                        narrowed.push(*t);
                    } else if types.contains(&"integer") && *t == "number" {
                        narrowed.push("integer");
                    }
                }
                cx.types = narrowed;
            }
        }
        for k in dialect::rules(self.set.dialect) {
            if !o.contains_key(*k) {
                continue;
            }
            if let Some(kt) = dialect::keyword_types(k) {
                if !kt.split(',').any(|t| has_applicable_type(&cx.types, t)) {
                    return Err(strict_err(format!(
                        "missing type \"{kt}\" for keyword \"{k}\" at \"{}\" (strictTypes)",
                        at(cx, self)
                    )));
                }
            }
        }
        Ok(())
    }

    fn defaults(
        &mut self,
        cx: &Cx,
        o: &Map<String, Value>,
        group: &str,
        node: &mut ObjNode,
    ) -> Result<(), CompileError> {
        let mut found = Defaults::default();
        if group == "object" {
            if let Some(props) = o.get("properties").and_then(Value::as_object) {
                for k in obj_keys(props) {
                    let Some(def) = props.get(k).and_then(|s| s.get("default")) else {
                        continue;
                    };
                    if cx.composite {
                        if self.strict(cx) {
                            return Err(strict_err(format!(
                                "default is ignored for: {}{}",
                                cx.data_var,
                                js::js_property(k)
                            )));
                        }
                        continue;
                    }
                    if js::inherited(k) {
                        continue;
                    }
                    found.props.push((k.as_str().into(), def.clone()));
                }
            }
        } else if group == "array" {
            if let Some(items) = o.get("items").and_then(Value::as_array) {
                for (i, s) in items.iter().enumerate() {
                    let Some(def) = s.get("default") else {
                        continue;
                    };
                    if cx.composite {
                        if self.strict(cx) {
                            return Err(strict_err(format!(
                                "default is ignored for: {}[{i}]",
                                cx.data_var
                            )));
                        }
                        continue;
                    }
                    found.items.push((i, def.clone()));
                }
            }
        }
        if !found.props.is_empty() || !found.items.is_empty() {
            self.has_defaults = true;
            node.defaults = Some(Box::new(found));
        }
        Ok(())
    }

    fn kpath(cx: &Cx, k: &str) -> Box<str> {
        format!("{}/{}", cx.path, k).into()
    }

    /// Checks a keyword value's type the way `KeywordCxt` does (for keywords outside the
    /// meta-schema).
    fn schema_type(k: &str, v: &Value, ok: bool, want: &str) -> Result<(), CompileError> {
        let _ = v;
        if ok {
            Ok(())
        } else {
            Err(err(format!("{k} value must be {want}")))
        }
    }

    fn keyword(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        k: &str,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let Some(v) = o.get(k) else { return Ok(()) };
        let strict = self.strict(cx);
        if k.starts_with("format") && k != "format" && !o.contains_key("format") {
            return Err(err(format!(
                "parent schema must have dependencies of {k}: format"
            )));
        }
        if let Some(want) = schema_types(self.set.dialect, k) {
            let ok = want.iter().any(|t| match *t {
                "array" => v.is_array(),
                "object" => v.is_object(),
                "string" => v.is_string(),
                "number" => v.is_number(),
                "boolean" => v.is_boolean(),
                _ => false,
            });
            if !ok {
                return Err(err(format!(
                    "{k} value must be {}",
                    serde_json::to_string(want).unwrap_or_default()
                )));
            }
        }
        let path = Self::kpath(cx, k);
        match k {
            "$comment" | "type" => {}
            "nullable" => Self::schema_type(k, v, v.is_boolean(), "[\"boolean\"]")?,
            "id" => {
                return Err(err(
                    "NOT SUPPORTED: keyword \"id\", use \"$id\" for schema ID",
                ));
            }
            "$dynamicAnchor" | "$recursiveAnchor" => self.dynamic_anchor(cx, k, v, out)?,
            "$dynamicRef" | "$recursiveRef" => self.dynamic_ref(cx, k, v, out)?,
            "$ref" => {
                let Some(r) = v.as_str() else {
                    return Err(err("$ref value must be [\"string\"]"));
                };
                out.push(self.reference(cx, r)?);
            }
            "const" => out.push(Kw::Const {
                value: v.clone(),
                site: self.sites.add(Site::fixed(
                    path,
                    "const",
                    params1("allowedValue", v.clone()),
                    "must be equal to constant",
                )),
            }),
            "enum" => {
                let Some(a) = v.as_array() else {
                    return Err(err("enum schema must be array"));
                };
                if a.is_empty() {
                    return Err(err("enum must have non-empty array"));
                }
                out.push(Kw::Enum {
                    values: a.clone(),
                    site: self.sites.add(Site::fixed(
                        path,
                        "enum",
                        params1("allowedValues", v.clone()),
                        "must be equal to one of the allowed values",
                    )),
                });
            }
            "not" => self.not(cx, v, path, out)?,
            "anyOf" | "oneOf" | "allOf" => self.combination(cx, k, v, path, out)?,
            "if" => self.if_then_else(cx, o, v, path, out)?,
            "then" | "else" if !o.contains_key("if") && strict => {
                return Err(strict_err(format!("\"{k}\" without \"if\" is ignored")));
            }
            // number (numeric.rs, strings.rs for format)
            "maximum" | "minimum" | "exclusiveMaximum" | "exclusiveMinimum" => {
                self.limit(k, v, path, out)?
            }
            "multipleOf" => self.multiple_of(v, path, out)?,
            "format" => self.format(cx, v, out, path)?,
            "formatMaximum"
            | "formatMinimum"
            | "formatExclusiveMaximum"
            | "formatExclusiveMinimum" => self.format_limit(o, k, v, path, out)?,
            // string (counts in numeric.rs, the rest in strings.rs)
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
            | "minProperties" => self.count_limit(k, v, path, out)?,
            "pattern" => self.pattern(v, path, out)?,
            // array (arrays.rs)
            "prefixItems" => self.prefix_items(cx, o, v, out)?,
            "items" => self.items(cx, o, v, path, out)?,
            "additionalItems" => self.additional_items(cx, o, v, path, out)?,
            "contains" => self.contains(cx, o, v, path, out)?,
            "uniqueItems" => self.unique_items(o, v, path, out)?,
            "maxContains" | "minContains" if !o.contains_key("contains") && strict => {
                return Err(strict_err(format!(
                    "\"{k}\" without \"contains\" is ignored"
                )));
            }
            "unevaluatedItems" => self.unevaluated_items(cx, v, path, out)?,
            // object (objects.rs)
            "required" => self.required(cx, o, v, path, out)?,
            "propertyNames" => self.property_names(cx, v, path, out)?,
            "additionalProperties" => self.additional_properties(cx, o, v, path, out)?,
            "dependencies" | "dependentRequired" | "dependentSchemas" => {
                self.dependencies(cx, k, v, path, out)?
            }
            "properties" => self.properties(cx, v, out)?,
            "patternProperties" => self.pattern_properties(cx, o, v, path, out)?,
            "unevaluatedProperties" => self.unevaluated_properties(cx, v, path, out)?,
            _ => {}
        }
        Ok(())
    }
}
