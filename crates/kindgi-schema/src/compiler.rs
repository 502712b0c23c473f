//! Schema → [`Tree`]. Walks a schema the way Ajv's code generator does — same keyword order,
//! same strict-mode checks in the same order (so the first error is Ajv's first error), same
//! `$ref` inlining rule — and records for every keyword what validation must do.

use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use crate::CompileError;
use crate::dialect::{self, Dialect};
use crate::formats::Format;
use crate::index::{Index, Loc, pointer};
use crate::js::{self, js_number_value};
use crate::jsregex::compile_at;
use crate::path::{escape_pointer, fragment_segment};
use crate::tree::*;
use crate::uri::{normalize_id, resolve};

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
        let r = stacker::maybe_grow(crate::eval::STACK_RED_ZONE, crate::eval::STACK_GROW, || {
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
        // getSchemaTypes
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

        let only_ref = o.contains_key("$ref") && !o.keys().any(|k| k != "$ref" && self.is_rule(k));
        let d = self.set.dialect;
        let used = |g: &str| dialect::group(d, g).iter().any(|k| o.contains_key(*k));
        let mut type_check = None;
        if !names.is_empty() {
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
            type_check = Some(TypeCheck {
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
            });
        }
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
            "$dynamicAnchor" | "$recursiveAnchor" => {
                let anchor = if k == "$dynamicAnchor" {
                    match v.as_str() {
                        Some(a) => a.to_owned(),
                        None => return Err(err("$dynamicAnchor value must be [\"string\"]")),
                    }
                } else {
                    match v {
                        Value::Bool(true) => String::new(),
                        Value::Bool(false) => {
                            if strict {
                                return Err(strict_err("$recursiveAnchor: false is ignored"));
                            }
                            return Ok(());
                        }
                        _ => return Err(err("$recursiveAnchor value must be [\"boolean\"]")),
                    }
                };
                self.dyn_seen
                    .entry(cx.loc.doc)
                    .or_default()
                    .insert(anchor.clone());
                let target = if cx.path == "#" {
                    self.funcs[cx.func].node
                } else {
                    self.function(cx.loc.clone())?
                };
                out.push(Kw::DynamicAnchor {
                    anchor: anchor.into(),
                    target,
                });
            }
            "$dynamicRef" | "$recursiveRef" => {
                let Some(r) = v.as_str() else {
                    return Err(err(format!("{k} value must be [\"string\"]")));
                };
                let Some(anchor) = r.strip_prefix('#') else {
                    return Err(err(format!(
                        "\"{k}\" only supports hash fragment reference"
                    )));
                };
                let use_anchor = self
                    .dyn_seen
                    .get(&cx.loc.doc)
                    .is_some_and(|s| s.contains(anchor));
                let fallback = self.funcs[cx.func].node;
                let (mp, mi) = if self.track {
                    let mp = if cx.props == PSt::All {
                        Merge::No
                    } else if cx.props == PSt::Name {
                        Merge::Cond
                    } else {
                        cx.props = PSt::Name;
                        Merge::CondFirst
                    };
                    let mi = if cx.items == ISt::All {
                        Merge::No
                    } else if cx.items == ISt::Name {
                        Merge::Cond
                    } else {
                        cx.items = ISt::Name;
                        Merge::CondFirst
                    };
                    (mp, mi)
                } else {
                    (Merge::No, Merge::No)
                };
                out.push(Kw::DynamicRef {
                    anchor: anchor.into(),
                    use_anchor,
                    fallback,
                    merge_props: mp,
                    merge_items: mi,
                });
            }
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
            "not" => {
                if self.always_valid(cx, v)? {
                    out.push(Kw::Fail {
                        site: self.sites.add(Site::fixed(
                            path,
                            "not",
                            Map::new(),
                            "must NOT be valid",
                        )),
                    });
                } else {
                    let (n, _, _) = self.sub(
                        cx,
                        v,
                        "not",
                        None,
                        Sub2 {
                            composite: true,
                            ..Default::default()
                        },
                    )?;
                    out.push(Kw::Not {
                        node: n,
                        site: self.sites.add(Site::fixed(
                            path,
                            "not",
                            Map::new(),
                            "must NOT be valid",
                        )),
                    });
                }
            }
            "anyOf" | "oneOf" | "allOf" => {
                let Some(a) = v.as_array() else {
                    return Err(err(format!("{k} value must be [\"array\"]")));
                };
                if k == "anyOf" && !self.track {
                    let mut any_true = false;
                    for s in a {
                        if self.always_valid(cx, s)? {
                            any_true = true;
                        }
                    }
                    if any_true {
                        return Ok(());
                    }
                }
                let mut subs = Vec::new();
                let mut opt = Vec::new();
                for (i, s) in a.iter().enumerate() {
                    let idx = i.to_string();
                    if k != "anyOf" && self.always_valid(cx, s)? {
                        if k == "oneOf" {
                            opt.push(None);
                        }
                        continue;
                    }
                    let composite = k != "allOf";
                    let (n, p, it) = self.sub(
                        cx,
                        s,
                        k,
                        Some(&idx),
                        Sub2 {
                            composite,
                            ..Default::default()
                        },
                    )?;
                    let cond = k != "allOf";
                    let (mp, mi) = if self.track {
                        (
                            merge_props(&mut cx.props, &p, cond, cond),
                            merge_items(&mut cx.items, it, cond, cond),
                        )
                    } else {
                        (Merge::No, Merge::No)
                    };
                    let sub = Sub {
                        node: n,
                        props: mp,
                        items: mi,
                    };
                    if k == "oneOf" {
                        opt.push(Some(sub));
                    } else {
                        subs.push(sub);
                    }
                }
                out.push(match k {
                    "anyOf" => Kw::AnyOf {
                        branches: subs,
                        site: self.sites.add(Site::fixed(
                            path,
                            "anyOf",
                            Map::new(),
                            "must match a schema in anyOf",
                        )),
                    },
                    "oneOf" => Kw::OneOf {
                        branches: opt,
                        site: self.sites.add(Site::open(
                            path,
                            "oneOf",
                            "passingSchemas",
                            "must match exactly one schema in oneOf",
                        )),
                    },
                    _ => Kw::AllOf { branches: subs },
                });
            }
            "if" => {
                if !o.contains_key("then") && !o.contains_key("else") && strict {
                    return Err(strict_err(
                        "\"if\" without \"then\" and \"else\" is ignored",
                    ));
                }
                let has_then = match o.get("then") {
                    Some(t) => !self.always_valid(cx, t)?,
                    None => false,
                };
                let has_else = match o.get("else") {
                    Some(t) => !self.always_valid(cx, t)?,
                    None => false,
                };
                if !has_then && !has_else {
                    return Ok(());
                }
                let (cond, cp, ci) = self.sub(
                    cx,
                    v,
                    "if",
                    None,
                    Sub2 {
                        composite: true,
                        ..Default::default()
                    },
                )?;
                let merge_cond = if self.track {
                    (
                        merge_props(&mut cx.props, &cp, false, false),
                        merge_items(&mut cx.items, ci, false, false),
                    )
                } else {
                    (Merge::No, Merge::No)
                };
                let branch = |me: &mut Self,
                              cx: &mut Cx,
                              name: &str,
                              has: bool|
                 -> Result<Option<Sub>, CompileError> {
                    if !has {
                        return Ok(None);
                    }
                    let Some(s) = o.get(name) else {
                        return Ok(None);
                    };
                    let (n, p, it) = me.sub(cx, s, name, None, Sub2::default())?;
                    let (mp, mi) = if me.track {
                        (
                            merge_props(&mut cx.props, &p, true, true),
                            merge_items(&mut cx.items, it, true, true),
                        )
                    } else {
                        (Merge::No, Merge::No)
                    };
                    Ok(Some(Sub {
                        node: n,
                        props: mp,
                        items: mi,
                    }))
                };
                let then = branch(self, cx, "then", has_then)?;
                let els = branch(self, cx, "else", has_else)?;
                let site = |name: &str| {
                    Site::fixed(
                        path.clone(),
                        "if",
                        params1("failingKeyword", Value::String(name.into())),
                        format!("must match \"{name}\" schema"),
                    )
                };
                out.push(Kw::If {
                    cond,
                    then,
                    els,
                    sites: Box::new([self.sites.add(site("then")), self.sites.add(site("else"))]),
                    merge_cond,
                });
            }
            "then" | "else" if !o.contains_key("if") && strict => {
                return Err(strict_err(format!("\"{k}\" without \"if\" is ignored")));
            }
            // number
            "maximum" | "minimum" | "exclusiveMaximum" | "exclusiveMinimum" => {
                let Some(n) = v.as_number() else {
                    return Err(err(format!("{k} value must be [\"number\"]")));
                };
                let cmp = match k {
                    "maximum" => Cmp::Max,
                    "minimum" => Cmp::Min,
                    "exclusiveMaximum" => Cmp::ExMax,
                    _ => Cmp::ExMin,
                };
                let limit = js::num(n);
                let mut params = Map::new();
                params.insert("comparison".into(), Value::String(cmp.ok_str().into()));
                params.insert("limit".into(), js_number_value(n));
                out.push(Kw::Limit {
                    cmp,
                    limit,
                    site: self.sites.add(Site::fixed(
                        path,
                        k,
                        params,
                        format!("must be {} {}", cmp.ok_str(), js::fmt_number(limit)),
                    )),
                });
            }
            "multipleOf" => {
                let Some(n) = v.as_number() else {
                    return Err(err("multipleOf value must be [\"number\"]"));
                };
                let by = js::num(n);
                out.push(Kw::MultipleOf {
                    by,
                    site: self.sites.add(Site::fixed(
                        path,
                        "multipleOf",
                        params1("multipleOf", js_number_value(n)),
                        format!("must be multiple of {}", js::fmt_number(by)),
                    )),
                });
            }
            "format" => self.format(cx, v, out, path)?,
            "formatMaximum"
            | "formatMinimum"
            | "formatExclusiveMaximum"
            | "formatExclusiveMinimum" => {
                if !o.contains_key("format") {
                    return Err(err(format!(
                        "parent schema must have dependencies of {k}: format"
                    )));
                }
                let Some(limit) = v.as_str() else {
                    return Err(err(format!("{k} value must be [\"string\"]")));
                };
                if !self.set.validate_formats {
                    return Ok(());
                }
                let Some(fname) = o.get("format").and_then(Value::as_str) else {
                    return Ok(());
                };
                let Some(format) = Format::by_name(fname) else {
                    return Ok(());
                };
                if format == Format::Any {
                    return Ok(());
                }
                if !format.has_compare() {
                    return Err(err(format!(
                        "\"{k}\": format \"{fname}\" does not define \"compare\" function"
                    )));
                }
                let (keyword, cmp) = match k {
                    "formatMaximum" => ("formatMaximum", Cmp::Max),
                    "formatMinimum" => ("formatMinimum", Cmp::Min),
                    "formatExclusiveMaximum" => ("formatExclusiveMaximum", Cmp::ExMax),
                    _ => ("formatExclusiveMinimum", Cmp::ExMin),
                };
                let mut params = Map::new();
                params.insert("comparison".into(), Value::String(cmp.ok_str().into()));
                params.insert("limit".into(), Value::String(limit.to_owned()));
                out.push(Kw::FormatLimit {
                    format,
                    cmp,
                    limit: limit.into(),
                    site: self.sites.add(Site::fixed(
                        path,
                        keyword,
                        params,
                        format!("should be {} {}", cmp.ok_str(), limit),
                    )),
                });
            }
            // string
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
            | "minProperties" => {
                let Some(n) = v.as_number() else {
                    return Err(err(format!("{k} value must be [\"number\"]")));
                };
                let limit = js::num(n);
                let param = js_number_value(n);
                let word = if k.starts_with("max") {
                    "more"
                } else {
                    "fewer"
                };
                let what = if k.ends_with("Length") {
                    "characters"
                } else if k.ends_with("Items") {
                    "items"
                } else {
                    "properties"
                };
                let message = format!("must NOT have {word} than {} {what}", js::fmt_value(&param));
                let site = self
                    .sites
                    .add(Site::fixed(path, k, params1("limit", param), message));
                out.push(match k {
                    // Whole counts: `n <= limit` is `n <= floor(limit)`, `n >= limit` is
                    // `n >= ceil(limit)` (`as` saturates, and takes a negative floor to -1 at
                    // most where it matters).
                    "maxLength" => Kw::MaxLength {
                        limit: limit.floor().max(-1.0) as i64,
                        site,
                    },
                    "minLength" => Kw::MinLength {
                        limit: limit.ceil() as u64,
                        site,
                    },
                    "maxItems" => Kw::MaxItems { limit, site },
                    "minItems" => Kw::MinItems { limit, site },
                    "maxProperties" => Kw::MaxProperties { limit, site },
                    _ => Kw::MinProperties { limit, site },
                });
            }
            "pattern" => {
                let Some(p) = v.as_str() else {
                    return Err(err("pattern value must be [\"string\"]"));
                };
                let regex = compile_at(p, &path)?;
                out.push(Kw::Pattern {
                    pattern: Arc::new(Pattern::new(p, &path, regex, &mut self.regex_budget)),
                    site: self.sites.add(Site::fixed(
                        path,
                        "pattern",
                        params1("pattern", Value::String(p.to_owned())),
                        format!("must match pattern \"{p}\""),
                    )),
                });
            }
            // array
            "prefixItems" => {
                let Some(a) = v.as_array() else {
                    return Err(err("prefixItems value must be [\"array\"]"));
                };
                self.tuple(cx, o, a, "prefixItems", "items", out)?;
            }
            "items" => {
                if let Some(a) = v.as_array() {
                    self.tuple(cx, o, a, "items", "additionalItems", out)?;
                    return Ok(());
                }
                if self.track {
                    cx.items = ISt::All;
                }
                if self.always_valid(cx, v)? {
                    return Ok(());
                }
                let prefix = if self.set.dialect == Dialect::Draft2020 {
                    o.get("prefixItems").and_then(Value::as_array).map(Vec::len)
                } else {
                    None
                };
                self.items_from(
                    cx,
                    v,
                    "items",
                    prefix.unwrap_or(0),
                    prefix.is_some(),
                    out,
                    path,
                )?;
            }
            "additionalItems" => {
                let Some(items) = o.get("items").and_then(Value::as_array) else {
                    if strict {
                        return Err(strict_err(
                            "\"additionalItems\" is ignored when \"items\" is not an array of schemas",
                        ));
                    }
                    return Ok(());
                };
                if self.track {
                    cx.items = ISt::All;
                }
                if v == &Value::Bool(false) || !self.always_valid(cx, v)? {
                    self.items_from(cx, v, "additionalItems", items.len(), true, out, path)?;
                }
            }
            "contains" => {
                let (min, max) = if self.set.dialect.modern() {
                    (
                        o.get("minContains").and_then(Value::as_f64).unwrap_or(1.0),
                        o.get("maxContains").and_then(Value::as_f64),
                    )
                } else {
                    (1.0, None)
                };
                if max.is_none() && min == 0.0 {
                    if strict {
                        return Err(strict_err(
                            "\"minContains\" == 0 without \"maxContains\": \"contains\" keyword ignored",
                        ));
                    }
                    return Ok(());
                }
                if let Some(mx) = max {
                    if min > mx {
                        if strict {
                            return Err(strict_err(
                                "\"minContains\" > \"maxContains\" is always invalid",
                            ));
                        }
                        out.push(Kw::Contains {
                            node: None,
                            min,
                            max,
                            site: self.sites.add(contains_site(path, min, max)),
                        });
                        return Ok(());
                    }
                }
                if self.always_valid(cx, v)? {
                    out.push(Kw::Contains {
                        node: None,
                        min,
                        max,
                        site: self.sites.add(contains_site(path, min, max)),
                    });
                    return Ok(());
                }
                if self.track {
                    cx.items = ISt::All;
                }
                let (n, _, _) = self.sub(
                    cx,
                    v,
                    "contains",
                    None,
                    Sub2 {
                        new_data: true,
                        composite: true,
                        ..Default::default()
                    },
                )?;
                out.push(Kw::Contains {
                    node: Some(n),
                    min,
                    max,
                    site: self.sites.add(contains_site(path, min, max)),
                });
            }
            "uniqueItems" => {
                let Some(b) = v.as_bool() else {
                    return Err(err("uniqueItems value must be [\"boolean\"]"));
                };
                if !b {
                    return Ok(());
                }
                let item_types: Vec<&'static str> = match o.get("items") {
                    Some(it @ Value::Object(io)) => {
                        let mut t = types_of(it);
                        if !t.contains(&"null")
                            && io.get("nullable") == Some(&Value::Bool(true))
                            && !t.is_empty()
                        {
                            t.push("null");
                        }
                        t
                    }
                    _ => Vec::new(),
                };
                let scalar = !item_types.is_empty()
                    && !item_types.iter().any(|t| *t == "object" || *t == "array");
                let bits = item_types
                    .iter()
                    .filter_map(|n| ty::by_name(n))
                    .fold(0u8, |a, b| a | b);
                out.push(Kw::UniqueItems {
                    scalar_types: scalar.then_some(bits),
                    site: self.sites.add(Site::pair(path)),
                });
            }
            "maxContains" | "minContains" if !o.contains_key("contains") && strict => {
                return Err(strict_err(format!(
                    "\"{k}\" without \"contains\" is ignored"
                )));
            }
            "unevaluatedItems" => {
                self.uses_uneval = true;
                let items = cx.items;
                if items == ISt::All {
                    return Ok(());
                }
                let at = match items {
                    ISt::Num(n) => ItemsAt::Static(n),
                    ISt::Name => ItemsAt::Dynamic,
                    _ => ItemsAt::Static(0),
                };
                let child = if v == &Value::Bool(false) {
                    Some(Child::False)
                } else if !self.always_valid(cx, v)? {
                    let (n, _, _) = self.sub(
                        cx,
                        v,
                        "unevaluatedItems",
                        None,
                        Sub2 {
                            new_data: true,
                            ..Default::default()
                        },
                    )?;
                    Some(Child::Node(n))
                } else {
                    None
                };
                cx.items = ISt::All;
                if let Some(child) = child {
                    out.push(Kw::UnevaluatedItems { child, at, path });
                }
            }
            // object
            "required" => {
                let Some(a) = v.as_array() else {
                    return Err(err("required value must be [\"array\"]"));
                };
                let names: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                if strict {
                    let props = o.get("properties").and_then(Value::as_object);
                    for r in &names {
                        let in_props =
                            props.is_some_and(|p| p.contains_key(*r) || js::inherited(r));
                        if !in_props && !cx.defined.borrow().contains(*r) {
                            return Err(strict_err(format!(
                                "required property \"{r}\" is not defined at \"{}{}\" (strictRequired)",
                                self.funcs[cx.func].base, cx.path
                            )));
                        }
                    }
                }
                if !names.is_empty() {
                    let names = names
                        .iter()
                        .map(|n| RequiredName {
                            name: (*n).into(),
                            site: self.sites.add(Site::fixed(
                                path.clone(),
                                "required",
                                params1("missingProperty", Value::String((*n).to_owned())),
                                format!("must have required property '{n}'"),
                            )),
                        })
                        .collect();
                    out.push(Kw::Required { names });
                }
            }
            "propertyNames" => {
                if self.always_valid(cx, v)? {
                    return Ok(());
                }
                let (n, _, _) = self.sub(
                    cx,
                    v,
                    "propertyNames",
                    None,
                    Sub2 {
                        composite: true,
                        types: Some(vec!["string"]),
                        ..Default::default()
                    },
                )?;
                out.push(Kw::PropertyNames {
                    node: n,
                    site: self.sites.add(Site::open(
                        path,
                        "propertyNames",
                        "propertyName",
                        "property name must be valid",
                    )),
                });
            }
            "additionalProperties" => {
                if self.track {
                    cx.props = PSt::All;
                }
                if self.always_valid(cx, v)? {
                    return Ok(());
                }
                let props = DeclaredNames::new(
                    schema_props(o.get("properties"))
                        .into_iter()
                        .map(Into::into)
                        .collect(),
                );
                let mut patterns = Vec::new();
                for p in schema_props(o.get("patternProperties")) {
                    let regex = compile_at(&p, &Self::kpath(cx, "patternProperties"))?;
                    patterns.push(Arc::new(Pattern::new(
                        &p,
                        &Self::kpath(cx, "patternProperties"),
                        regex,
                        &mut self.regex_budget,
                    )));
                }
                let child = if v == &Value::Bool(false) {
                    Child::False
                } else {
                    let (n, _, _) = self.sub(
                        cx,
                        v,
                        "additionalProperties",
                        None,
                        Sub2 {
                            new_data: true,
                            ..Default::default()
                        },
                    )?;
                    Child::Node(n)
                };
                out.push(Kw::AdditionalProperties {
                    child,
                    props,
                    patterns,
                    site: self.sites.add(Site::open(
                        path,
                        "additionalProperties",
                        "additionalProperty",
                        "must NOT have additional properties",
                    )),
                });
            }
            "dependencies" | "dependentRequired" | "dependentSchemas" => {
                let Some(m) = v.as_object() else {
                    return Err(err(format!("{k} value must be [\"object\"]")));
                };
                let mut prop_deps = Vec::new();
                let mut schema_deps: Vec<(&String, &Value)> = Vec::new();
                for key in obj_keys(m) {
                    if key == "__proto__" {
                        continue;
                    }
                    let dv = &m[key.as_str()];
                    let is_prop = if k == "dependencies" {
                        dv.is_array()
                    } else {
                        k == "dependentRequired"
                    };
                    if is_prop {
                        let deps: Vec<Box<str>> = dv
                            .as_array()
                            .map(|a| a.iter().filter_map(Value::as_str).map(Into::into).collect())
                            .unwrap_or_default();
                        if deps.is_empty() {
                            continue;
                        }
                        prop_deps.push((key.as_str(), deps));
                    } else {
                        schema_deps.push((key, dv));
                    }
                }
                if !prop_deps.is_empty() {
                    let keyword = if k == "dependencies" {
                        "dependencies"
                    } else {
                        "dependentRequired"
                    };
                    let deps = prop_deps
                        .into_iter()
                        .map(|(prop, deps)| {
                            let sites: Vec<SiteRef> = dependency_sites(&path, keyword, prop, &deps)
                                .into_iter()
                                .map(|s| self.sites.add(s))
                                .collect();
                            (prop.into(), deps.into_iter().zip(sites).collect())
                        })
                        .collect();
                    out.push(Kw::PropertyDeps { deps });
                }
                let mut deps = Vec::new();
                for (key, dv) in schema_deps {
                    if self.always_valid(cx, dv)? {
                        continue;
                    }
                    let (n, p, it) = self.sub(cx, dv, k, Some(key), Sub2::default())?;
                    let (mp, mi) = if self.track {
                        (
                            merge_props(&mut cx.props, &p, true, true),
                            merge_items(&mut cx.items, it, true, true),
                        )
                    } else {
                        (Merge::No, Merge::No)
                    };
                    deps.push((
                        key.as_str().into(),
                        Sub {
                            node: n,
                            props: mp,
                            items: mi,
                        },
                    ));
                }
                if !deps.is_empty() {
                    out.push(Kw::SchemaDeps { deps });
                }
            }
            "properties" => {
                let Some(m) = v.as_object() else {
                    return Err(err("properties value must be [\"object\"]"));
                };
                let all = schema_props(Some(v));
                for p in &all {
                    cx.defined.borrow_mut().insert(p.clone());
                }
                if self.track && !all.is_empty() && cx.props != PSt::All {
                    let from = PSt::Keys(all.clone());
                    merge_props(&mut cx.props, &from, false, false);
                }
                let mut props = Vec::new();
                for p in &all {
                    let s = &m[p.as_str()];
                    if self.always_valid(cx, s)? {
                        continue;
                    }
                    let (n, _, _) = self.sub(
                        cx,
                        s,
                        "properties",
                        Some(p),
                        Sub2 {
                            new_data: true,
                            ..Default::default()
                        },
                    )?;
                    cx.defined.borrow_mut().insert(p.clone());
                    props.push((p.as_str().into(), Some(n)));
                }
                let names = all.into_iter().map(Into::into).collect();
                let plain = !props
                    .iter()
                    .any(|(p, _): &(Box<str>, _)| p.contains(['~', '/']));
                out.push(Kw::Properties {
                    props,
                    plain,
                    names,
                });
            }
            "patternProperties" => {
                let Some(m) = v.as_object() else {
                    return Err(err("patternProperties value must be [\"object\"]"));
                };
                let pats = schema_props(Some(v));
                let mut always = Vec::new();
                for p in &pats {
                    always.push(self.always_valid(cx, &m[p.as_str()])?);
                }
                if pats.is_empty()
                    || (always.iter().all(|a| *a) && (!self.track || cx.props == PSt::All))
                {
                    return Ok(());
                }
                let check = strict && o.get("properties").is_some_and(Value::is_object);
                let track = self.track && cx.props != PSt::All;
                if self.track && cx.props != PSt::All {
                    cx.props = PSt::Name;
                }
                let mut patterns = Vec::new();
                for (i, p) in pats.iter().enumerate() {
                    if check {
                        if let Some(props) = o.get("properties").and_then(Value::as_object) {
                            let re = crate::jsregex::guarded(p, "").ok().and_then(Result::ok);
                            for prop in obj_keys(props) {
                                if re.as_ref().is_some_and(|r| r.find(prop).is_some()) {
                                    return Err(strict_err(format!(
                                        "property {prop} matches pattern {p} (use allowMatchingProperties)"
                                    )));
                                }
                            }
                        }
                    }
                    let regex = compile_at(p, &path)?;
                    let node = if always[i] {
                        None
                    } else {
                        Some(
                            self.sub(
                                cx,
                                &m[p.as_str()],
                                "patternProperties",
                                Some(p),
                                Sub2 {
                                    new_data: true,
                                    ..Default::default()
                                },
                            )?
                            .0,
                        )
                    };
                    patterns.push((
                        Arc::new(Pattern::new(p, &path, regex, &mut self.regex_budget)),
                        node,
                    ));
                }
                out.push(Kw::PatternProperties { patterns, track });
            }
            "unevaluatedProperties" => {
                self.uses_uneval = true;
                if cx.props == PSt::All {
                    return Ok(());
                }
                let child = if v == &Value::Bool(false) {
                    Some(Child::False)
                } else if !self.always_valid(cx, v)? {
                    let (n, _, _) = self.sub(
                        cx,
                        v,
                        "unevaluatedProperties",
                        None,
                        Sub2 {
                            new_data: true,
                            ..Default::default()
                        },
                    )?;
                    Some(Child::Node(n))
                } else {
                    None
                };
                cx.props = PSt::All;
                if let Some(child) = child {
                    out.push(Kw::UnevaluatedProperties {
                        child,
                        site: self.sites.add(Site::open(
                            path,
                            "unevaluatedProperties",
                            "unevaluatedProperty",
                            "must NOT have unevaluated properties",
                        )),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn format(
        &mut self,
        cx: &Cx,
        v: &Value,
        out: &mut Vec<Kw>,
        path: Box<str>,
    ) -> Result<(), CompileError> {
        if !self.set.validate_formats {
            return Ok(());
        }
        let Some(name) = v.as_str() else {
            return Err(err("format value must be [\"string\"]"));
        };
        let Some(format) = Format::by_name(name) else {
            if self.set.strict {
                return Err(err(format!(
                    "unknown format \"{name}\" ignored in schema at path \"{}\"",
                    cx.path
                )));
            }
            return Ok(());
        };
        if format.data_type().is_some() && !out.iter().any(|k| matches!(k, Kw::Format { .. })) {
            out.push(Kw::Format {
                format,
                site: self.sites.add(Site::fixed(
                    path,
                    "format",
                    params1("format", Value::String(name.to_owned())),
                    format!("must match format \"{name}\""),
                )),
            });
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn items_from(
        &mut self,
        cx: &mut Cx,
        v: &Value,
        keyword: &'static str,
        start: usize,
        bounded: bool,
        out: &mut Vec<Kw>,
        path: Box<str>,
    ) -> Result<(), CompileError> {
        let child = if v == &Value::Bool(false) && bounded {
            Child::False
        } else {
            let (n, _, _) = self.sub(
                cx,
                v,
                keyword,
                None,
                Sub2 {
                    new_data: true,
                    ..Default::default()
                },
            )?;
            Child::Node(n)
        };
        out.push(Kw::ItemsFrom {
            start,
            child,
            site: self.sites.add(Site::fixed(
                path,
                keyword,
                params1("limit", Value::from(start)),
                format!("must NOT have more than {start} items"),
            )),
        });
        Ok(())
    }

    fn tuple(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        a: &[Value],
        keyword: &str,
        extra: &str,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let l = a.len();
        if self.strict(cx) {
            let eq = |k: &str| o.get(k).and_then(Value::as_f64) == Some(l as f64);
            let full =
                eq("minItems") && (eq("maxItems") || o.get(extra) == Some(&Value::Bool(false)));
            if !full {
                return Err(strict_err(format!(
                    "\"{keyword}\" is {l}-tuple, but minItems or maxItems/{extra} are not specified or different at path \"{}\"",
                    cx.path
                )));
            }
        }
        if self.track && l > 0 && cx.items != ISt::All {
            merge_items(&mut cx.items, ISt::Num(l), false, false);
        }
        let mut items = Vec::new();
        for (i, s) in a.iter().enumerate() {
            if self.always_valid(cx, s)? {
                items.push(None);
                continue;
            }
            let (n, _, _) = self.sub(
                cx,
                s,
                keyword,
                Some(&i.to_string()),
                Sub2 {
                    new_data: true,
                    ..Default::default()
                },
            )?;
            items.push(Some(n));
        }
        out.push(Kw::Tuple { items });
        Ok(())
    }

    fn reference(&mut self, cx: &mut Cx, r: &str) -> Result<Kw, CompileError> {
        let missing = || {
            let from = if cx.base.is_empty() {
                "#".to_owned()
            } else {
                normalize_id(&cx.base).to_owned()
            };
            err(format!("can't resolve reference {r} from id {from}"))
        };
        let is_root_ref = (r == "#" || r == "#/")
            && cx.base
                == self
                    .index
                    .roots
                    .get(cx.loc.doc)
                    .cloned()
                    .unwrap_or_default();
        let mut target = if is_root_ref {
            Loc {
                doc: cx.loc.doc,
                ptr: String::new(),
            }
        } else {
            self.resolve(&cx.base, r).ok_or_else(missing)?
        };
        // Ajv follows a target that is only a `$ref` to its own target.
        let mut seen = HashSet::new();
        while let (false, Some(tv)) = (is_root_ref, self.value_at(&target)) {
            let Some(to) = tv.as_object() else { break };
            let Some(next) = to.get("$ref").and_then(Value::as_str) else {
                break;
            };
            if to.keys().any(|k| k != "$ref" && self.is_rule(k)) || !seen.insert(target.clone()) {
                break;
            }
            let tb = self.index.base_of(&target);
            match self.resolve(&tb, next) {
                Some(n) if n.ptr.is_empty() => break,
                Some(n) => target = n,
                None => break,
            }
        }
        let Some(tv) = self.value_at(&target) else {
            return Err(missing());
        };
        let inline = self.set.inline_refs && !target.ptr.is_empty() && !has_ref(tv);
        if inline {
            let base = self.index.base_of(&target);
            let types = Vec::new();
            let mut tmp = cx.clone();
            tmp.base = base;
            let (n, p, it) = self.sub_at(
                &mut tmp,
                tv,
                target,
                r.to_owned(),
                Sub2 {
                    types: Some(types),
                    ..Default::default()
                },
            )?;
            cx.defined = tmp.defined;
            let (mp, mi) = if self.track {
                (
                    merge_props(&mut cx.props, &p, false, false),
                    merge_items(&mut cx.items, it, false, false),
                )
            } else {
                (Merge::No, Merge::No)
            };
            return Ok(Kw::Ref(Sub {
                node: n,
                props: mp,
                items: mi,
            }));
        }
        let node = self.function(target.clone())?;
        let f = self.func_by_loc.get(&target).copied();
        let (mp, mi) = if self.track {
            let info = f.map(|f| {
                (
                    self.funcs[f].done,
                    self.funcs[f].props.clone(),
                    self.funcs[f].items,
                )
            });
            match info {
                Some((true, fp, fi)) if fp != PSt::Name && fi != ISt::Name => (
                    merge_props(&mut cx.props, &fp, false, true),
                    merge_items(&mut cx.items, fi, false, true),
                ),
                _ => {
                    let mp = match cx.props {
                        PSt::All => Merge::No,
                        PSt::Name => Merge::Cond,
                        _ => {
                            cx.props = PSt::Name;
                            Merge::CondFirst
                        }
                    };
                    let mi = match cx.items {
                        ISt::All => Merge::No,
                        ISt::Name => Merge::Cond,
                        _ => {
                            cx.items = ISt::Name;
                            Merge::CondFirst
                        }
                    };
                    (mp, mi)
                }
            }
        } else {
            (Merge::No, Merge::No)
        };
        Ok(Kw::Ref(Sub {
            node,
            props: mp,
            items: mi,
        }))
    }
}

/// The issue `contains` reports (`minContains`, `maxContains` as the schema gives them).
fn contains_site(path: Box<str>, min: f64, max: Option<f64>) -> Site {
    let mut params = Map::new();
    params.insert("minContains".into(), js::number_value(min));
    let message = match max {
        None => format!(
            "must contain at least {} valid item(s)",
            js::fmt_number(min)
        ),
        Some(mx) => {
            params.insert("maxContains".into(), js::number_value(mx));
            format!(
                "must contain at least {} and no more than {} valid item(s)",
                js::fmt_number(min),
                js::fmt_number(mx)
            )
        }
    };
    Site::fixed(path, "contains", params, message)
}

/// The issue each missing name of `prop`'s dependency list reports (Ajv's
/// `{property, missingProperty, depsCount, deps}` and one message for the whole list).
fn dependency_sites(path: &str, keyword: &str, prop: &str, deps: &[Box<str>]) -> Vec<Site> {
    let joined = deps
        .iter()
        .map(|d| d.as_ref())
        .collect::<Vec<_>>()
        .join(", ");
    let word = if deps.len() == 1 {
        "property"
    } else {
        "properties"
    };
    let message = format!("must have {word} {joined} when property {prop} is present");
    deps.iter()
        .map(|d| {
            let mut p = Map::new();
            p.insert("property".into(), Value::String(prop.to_owned()));
            p.insert("missingProperty".into(), Value::String(d.to_string()));
            p.insert("depsCount".into(), Value::from(deps.len()));
            p.insert("deps".into(), Value::String(joined.clone()));
            Site::fixed(path, keyword, p, message.as_str())
        })
        .collect()
}
