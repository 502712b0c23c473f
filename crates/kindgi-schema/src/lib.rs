//! Kindgi's JSON Schema engine: validates exactly as the official runtime's Ajv 8.20 (+
//! ajv-formats 3) does, so a Rust runtime reports the same issues, in the same order, with the
//! same messages, and refuses the same schemas.
//!
//! - [`compile`] turns a schema into a [`Validator`] under [`CompileOptions`]: `Mode::Pack` is
//!   Draft 2020-12 in strict mode; `Mode::Mcp` picks the dialect from `$schema` (draft-06,
//!   draft-07, 2019-09, 2020-12) and is not strict. [`compile_inline`] compiles the `needsSpec`
//!   env/secret schemas (2020-12, strict, plus the `x-kindgi-tunable` keyword).
//! - Issues are Ajv-shaped ([`Issue`]) with Ajv's exact messages, params and order; compile
//!   errors carry Ajv's exact message ([`CompileError`]). A failed validation returns
//!   [`Issues`]: the list shares the validator's prepared sites, so reporting and dropping an
//!   issue touch no reference count; read it in place ([`IssueRef`]) or collect standalone
//!   [`Issue`]s.
//! - [`ValidatorCache`] keeps compiled validators so nothing compiles per call.
//!
//! Design (see `docs/schema.md`): a schema compiles into a [`tree`] of nodes whose keywords are
//! already grouped in Ajv's evaluation order, with every `schemaPath` spelled at compile time;
//! validation walks that tree without allocating until it reports an issue. `$ref`s resolve only
//! inside the document and the bundled meta-schemas — nothing is fetched. Schema nesting and
//! evaluation depth are bounded, so hostile input gets an error, never a stack overflow.

mod classseq;
mod compiler;
mod dialect;
mod eval;
mod fastregex;
mod formats;
mod index;
mod issue;
mod js;
mod jsregex;
mod meta;
mod names;
mod path;
mod tree;
mod unique;
mod uri;

use serde_json::Value;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock, RwLock};

pub use dialect::Dialect;
pub use issue::{Issue, IssueRef, Issues, IssuesIter, errors_text};
/// The ECMAScript regular expression engine [`ecma_regex`] compiles with.
pub use regress;

/// Compiles `pattern` as `new RegExp(pattern, flags)` would (flags among `imsuv`; the
/// matching-position flags `dgy` are the caller's business), refusing a pattern too complex to
/// compile safely. The error says why, in one line.
pub fn ecma_regex(pattern: &str, flags: &str) -> Result<regress::Regex, String> {
    match jsregex::guarded(pattern, flags) {
        Ok(Ok(re)) => Ok(re),
        Ok(Err(e)) => Err(e.text),
        Err(why) => Err(format!("it is too complex: {why}")),
    }
}

use compiler::{Compiler, Settings};
use eval::{Ev, PathNode, Run};
use tree::Tree;

/// Which configuration a schema is compiled under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Pack tools and everything that is not MCP: Draft 2020-12, strict.
    Pack,
    /// A tool with `transport: "mcp"`: the dialect `$schema` declares, non-strict.
    Mcp,
}

/// Which side of a tool the schema describes. Only the input side fills `default`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Input,
    Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    pub mode: Mode,
    pub side: Side,
}

/// A schema that does not compile. `name` is `Error`, or `SyntaxError` for a bad regex.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CompileError {
    pub name: String,
    pub message: String,
}

impl CompileError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        CompileError {
            name: "Error".into(),
            message: message.into(),
        }
    }
}

/// Work limits for one validation, so that no schema and no instance can make a validation
/// take exponential time or unbounded memory. When one runs out, the validation fails with an
/// issue that says which (an addition to Ajv's issues, in their shape; see `docs/schema.md`):
///
/// - `regex_steps`: backtracking steps all `pattern`/`patternProperties` matches that need the
///   backtracking engine (back-references, lookarounds, `\p{…}`…) may take together; the issue
///   has keyword `pattern`, params `{pattern, stepBudget}`.
/// - `evaluated_nodes`: schema nodes evaluated (each application of a subschema that is more
///   than a scalar check: `$ref`, `anyOf` branches, items, properties…); keyword
///   `maxEvaluations`, params `{limit}`.
/// - `issues`: issues collected; keyword `maxIssues`, params `{limit}`.
///
/// The defaults ([`Budgets::DEFAULT`]) leave every Ajv test vector and realistic schema alone
/// and stop the adversarial cases in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budgets {
    pub regex_steps: u64,
    pub evaluated_nodes: u64,
    pub issues: usize,
}

impl Budgets {
    /// 10^6 regex steps (about 0.1 s of backtracking), 10^6 evaluated nodes, 10^4 issues.
    pub const DEFAULT: Budgets = Budgets {
        regex_steps: 1_000_000,
        evaluated_nodes: 1_000_000,
        issues: 10_000,
    };
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets::DEFAULT
    }
}

/// A compiled schema. Cheap to share (`Arc`), `Send + Sync`.
#[derive(Debug)]
pub struct Validator {
    tree: Tree,
    fills_defaults: bool,
    budgets: Budgets,
}

impl Validator {
    /// Validates without changing the instance.
    #[inline]
    pub fn validate(&self, instance: &Value) -> Result<(), Issues> {
        self.validate_within(instance, &self.budgets)
    }

    /// [`Validator::validate`] under other budgets than the validator's own.
    pub fn validate_within(&self, instance: &Value, budgets: &Budgets) -> Result<(), Issues> {
        let mut run = Run::new(&self.tree, true, budgets);
        let mut ev = Ev::default();
        let valid = run.node_r(self.tree.root, instance, &PathNode::ROOT, &mut ev);
        // A budget that runs out adds its issue and makes the validation fail.
        if !run.finish() && valid {
            return Ok(());
        }
        Err(Issues::new(
            Arc::clone(&self.tree.sites),
            run.own_sites,
            run.errors,
        ))
    }

    /// Validates; on the input side fills `default`s into the instance first (as Ajv's
    /// `useDefaults` does — the instance is changed even when it turns out invalid).
    pub fn validate_in_place(&self, instance: &mut Value) -> Result<(), Issues> {
        self.validate_in_place_within(instance, &self.budgets)
    }

    /// [`Validator::validate_in_place`] under other budgets than the validator's own.
    pub fn validate_in_place_within(
        &self,
        instance: &mut Value,
        budgets: &Budgets,
    ) -> Result<(), Issues> {
        if !self.fills_defaults {
            return self.validate_within(instance, budgets);
        }
        let mut run = Run::new(&self.tree, true, budgets);
        let mut ev = Ev::default();
        let valid = run.node_m(self.tree.root, instance, &PathNode::ROOT, &mut ev);
        if !run.finish() && valid {
            return Ok(());
        }
        Err(Issues::new(
            Arc::clone(&self.tree.sites),
            run.own_sites,
            run.errors,
        ))
    }

    /// [`Validator::validate_within`] as an attempt: `None` when one of `budgets` ran out, so a
    /// caller can try small budgets where running is cheap (on an async worker) and run out of
    /// line with the full ones only when that is not enough. A `Some` answer is exactly what
    /// any larger budgets would give. (Written apart from `validate_within`: one shared
    /// outcome function cost the valid path 1.5 % more instructions.)
    pub fn try_validate_within(
        &self,
        instance: &Value,
        budgets: &Budgets,
    ) -> Option<Result<(), Issues>> {
        let mut run = Run::new(&self.tree, true, budgets);
        let mut ev = Ev::default();
        let valid = run.node_r(self.tree.root, instance, &PathNode::ROOT, &mut ev);
        if run.finish() {
            return None;
        }
        Some(if valid {
            Ok(())
        } else {
            Err(Issues::new(
                Arc::clone(&self.tree.sites),
                run.own_sites,
                run.errors,
            ))
        })
    }

    /// [`Validator::validate_in_place_within`] as an attempt (see
    /// [`Validator::try_validate_within`]). When it gives `None` some `default`s may already be
    /// filled in; validating again fills the rest and answers as one validation would (a
    /// filled default is validated where it was filled either way).
    pub fn try_validate_in_place_within(
        &self,
        instance: &mut Value,
        budgets: &Budgets,
    ) -> Option<Result<(), Issues>> {
        if !self.fills_defaults {
            return self.try_validate_within(instance, budgets);
        }
        let mut run = Run::new(&self.tree, true, budgets);
        let mut ev = Ev::default();
        let valid = run.node_m(self.tree.root, instance, &PathNode::ROOT, &mut ev);
        if run.finish() {
            return None;
        }
        Some(if valid {
            Ok(())
        } else {
            Err(Issues::new(
                Arc::clone(&self.tree.sites),
                run.own_sites,
                run.errors,
            ))
        })
    }

    /// Whether the instance is valid (stops at the first problem; builds no issues). A budget
    /// that runs out makes it invalid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        let mut run = Run::new(&self.tree, false, &self.budgets);
        let mut ev = Ev::default();
        let valid = run.node_r(self.tree.root, instance, &PathNode::ROOT, &mut ev);
        !run.finish() && valid
    }

    /// The budgets [`Validator::validate`] works within ([`Budgets::DEFAULT`] unless set).
    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    /// Sets the budgets [`Validator::validate`], `validate_in_place` and `is_valid` work within.
    pub fn set_budgets(&mut self, budgets: Budgets) {
        self.budgets = budgets;
    }

    /// The validator with other budgets.
    pub fn with_budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }

    /// Whether validating in place can change the instance (an input schema with `default`s).
    pub fn fills_defaults(&self) -> bool {
        self.fills_defaults
    }
}

/// The message Kindgi gives for a `$schema` outside `allowed` (all four dialects for MCP tools).
pub fn check_dialect(schema: &Value, allowed: &[Dialect]) -> Result<Dialect, CompileError> {
    const ALL: [(Dialect, &str); 4] = [
        (Dialect::Draft06, "draft-06"),
        (Dialect::Draft07, "draft-07"),
        (Dialect::Draft2019, "2019-09"),
        (Dialect::Draft2020, "2020-12"),
    ];
    let found = Dialect::from_schema(schema)
        .ok()
        .filter(|d| allowed.contains(d));
    if let Some(d) = found {
        return Ok(d);
    }
    let names: Vec<&str> = ALL
        .iter()
        .filter(|(d, _)| allowed.contains(d))
        .map(|(_, n)| *n)
        .collect();
    let list = match names.as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    let here = if names.len() < ALL.len() { " here" } else { "" };
    let value = schema
        .as_object()
        .and_then(|o| o.get("$schema"))
        .map(|v| serde_json::to_string(v).unwrap_or_default());
    let value = value.unwrap_or_else(|| "undefined".into());
    Err(CompileError::new(format!(
        "The schema's $schema {value} isn't a JSON Schema dialect Kindgi validates{here}: {list}."
    )))
}

const ALL_DIALECTS: [Dialect; 4] = [
    Dialect::Draft06,
    Dialect::Draft07,
    Dialect::Draft2019,
    Dialect::Draft2020,
];

fn build(schema: &Value, class: Dialect, set: Settings) -> Result<Validator, CompileError> {
    match schema {
        Value::Null => {
            return Err(CompileError {
                name: "TypeError".into(),
                message: "Cannot read properties of null (reading '$id')".into(),
            });
        }
        Value::Object(o) => {
            // Ajv's `normalizeId(schema.$id)` on a truthy non-string.
            let truthy = match o.get("$id") {
                None | Some(Value::Null | Value::String(_)) => false,
                Some(Value::Bool(b)) => *b,
                Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
                Some(_) => true,
            };
            if truthy {
                return Err(CompileError {
                    name: "TypeError".into(),
                    message: "id.replace is not a function".into(),
                });
            }
        }
        Value::Bool(_) | Value::Array(_) => {}
        _ => return Err(CompileError::new("schema must be object or boolean")),
    }
    if compiler::json_depth(schema, compiler::MAX_SCHEMA_DEPTH) > compiler::MAX_SCHEMA_DEPTH {
        return Err(CompileError::new(format!(
            "schema is nested too deeply: more than {} levels",
            compiler::MAX_SCHEMA_DEPTH
        )));
    }
    let fills_defaults = set.use_defaults;
    let compiler = Compiler::new(vec![schema], meta::documents(class), set)?;
    let default_meta = class;
    meta::validate_schema(schema, class, default_meta)?;
    let tree = compiler.compile()?;
    let fills_defaults = fills_defaults && tree.has_defaults;
    Ok(Validator {
        tree,
        fills_defaults,
        budgets: Budgets::DEFAULT,
    })
}

/// Compiles a schema.
pub fn compile(schema: &Value, options: CompileOptions) -> Result<Validator, CompileError> {
    let use_defaults = options.side == Side::Input;
    match options.mode {
        Mode::Pack => build(
            schema,
            Dialect::Draft2020,
            Settings {
                dialect: Dialect::Draft2020,
                strict: true,
                use_defaults,
                inline_refs: true,
                validate_formats: true,
                extra_keywords: &[],
            },
        ),
        Mode::Mcp => {
            let dialect = check_dialect(schema, &ALL_DIALECTS)?;
            let class = if dialect == Dialect::Draft06 {
                Dialect::Draft06
            } else {
                dialect
            };
            let keywords_of = if dialect == Dialect::Draft06 {
                Dialect::Draft07
            } else {
                dialect
            };
            build(
                schema,
                class,
                Settings {
                    dialect: keywords_of,
                    strict: false,
                    use_defaults,
                    inline_refs: false,
                    validate_formats: true,
                    extra_keywords: &[],
                },
            )
        }
    }
}

/// Compiles a `needsSpec.env`/`needsSpec.secrets` schema the way `compileInlineSchema` does:
/// Ajv2020, strict, all errors, union types, formats, plus the `x-kindgi-tunable` keyword.
pub fn compile_inline(schema: &Value) -> Result<Validator, CompileError> {
    build(
        schema,
        Dialect::Draft2020,
        Settings {
            dialect: Dialect::Draft2020,
            strict: true,
            use_defaults: false,
            inline_refs: true,
            validate_formats: true,
            extra_keywords: &["x-kindgi-tunable"],
        },
    )
}

/// Which compile path a cache entry used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CacheKind {
    Options(CompileOptions),
    Inline,
}

type Slot = Arc<OnceLock<Result<Arc<Validator>, CompileError>>>;
/// Entries sharing one content hash: the schema (compared structurally), how it was compiled.
type Bucket = Vec<(Value, CacheKind, Slot)>;

/// Compiled validators keyed by schema content and options. Thread-safe; a schema is compiled
/// once per options even when several threads ask for it at the same time (they wait for the
/// first), and compile errors are remembered too.
#[derive(Debug, Default)]
pub struct ValidatorCache {
    entries: RwLock<HashMap<u64, Bucket>>,
}

/// Order-sensitive structural hash (key order matters: it decides issue order).
fn hash_value(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            for x in a {
                hash_value(x, h);
            }
        }
        Value::Object(o) => {
            (5u8, o.len()).hash(h);
            for (k, x) in o {
                k.hash(h);
                hash_value(x, h);
            }
        }
    }
}

/// Order-sensitive equality.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        (Value::Number(x), Value::Number(y)) => x.to_string() == y.to_string(),
        _ => a == b,
    }
}

impl ValidatorCache {
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&self, schema: &Value, kind: CacheKind) -> Slot {
        if compiler::json_depth(schema, compiler::MAX_SCHEMA_DEPTH) > compiler::MAX_SCHEMA_DEPTH {
            // Too deep to hash safely; `compile` reports it. Not cached.
            let slot: Slot = Arc::new(OnceLock::new());
            return slot;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        hash_value(schema, &mut h);
        kind.hash(&mut h);
        let key = h.finish();
        if let Ok(map) = self.entries.read() {
            if let Some(list) = map.get(&key) {
                if let Some((_, _, slot)) =
                    list.iter().find(|(s, k, _)| *k == kind && same(s, schema))
                {
                    return slot.clone();
                }
            }
        }
        let mut map = match self.entries.write() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        let list = map.entry(key).or_default();
        if let Some((_, _, slot)) = list.iter().find(|(s, k, _)| *k == kind && same(s, schema)) {
            return slot.clone();
        }
        let slot: Slot = Arc::new(OnceLock::new());
        list.push((schema.clone(), kind, slot.clone()));
        slot
    }

    pub fn get_or_compile(
        &self,
        schema: &Value,
        options: CompileOptions,
    ) -> Result<Arc<Validator>, CompileError> {
        let slot = self.slot(schema, CacheKind::Options(options));
        slot.get_or_init(|| compile(schema, options).map(Arc::new))
            .clone()
    }

    /// [`compile_inline`], cached.
    pub fn get_or_compile_inline(&self, schema: &Value) -> Result<Arc<Validator>, CompileError> {
        let slot = self.slot(schema, CacheKind::Inline);
        slot.get_or_init(|| compile_inline(schema).map(Arc::new))
            .clone()
    }

    /// How many (schema, options) entries the cache holds.
    pub fn len(&self) -> usize {
        self.entries
            .read()
            .map(|m| m.values().map(Vec::len).sum())
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn validator_is_send_sync() {
        assert_send_sync::<Validator>();
        assert_send_sync::<ValidatorCache>();
    }
}
