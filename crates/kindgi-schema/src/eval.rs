//! Validation: walks a compiled [`Tree`] over an instance, in Ajv's order, reporting Ajv's
//! issues. The same code runs over `&Value` (plain validation) and `&mut Value` (filling
//! `default`s as Ajv's `useDefaults` does, interleaved with validation); a macro stamps out
//! both (`eval/evaluator.rs`).
//!
//! Nothing is allocated on the valid path: the instance path is a linked list on the stack and
//! is only spelled out when an issue is reported. An issue points at its site, prepared at
//! compile time (see [`crate::issue`]).

use serde_json::{Map, Value};
use std::mem::ManuallyDrop;
use std::sync::Arc;

use crate::issue::{Body, Entry, Fill, Text};
use crate::js;
use crate::js::{STACK_GROW, STACK_RED_ZONE};
use crate::tree::params1;
use crate::tree::*;

// The walker's code, stamped out at the end of this file (`evaluator!`).
#[macro_use]
mod evaluator;

/// Deepest evaluation nesting (schema applications stacked on one another).
pub(crate) const MAX_EVAL_DEPTH: usize = 2048;

/// How many evaluation levels pass between two checks of the remaining stack.
const STACK_CHECK_EVERY: usize = if cfg!(debug_assertions) { 1 } else { 8 };

/// A step of the instance path, linked to its parent.
pub(crate) struct PathNode<'p> {
    pub parent: Option<&'p PathNode<'p>>,
    pub seg: Seg<'p>,
    /// The pointer's length up to here, or [`PathNode::ESCAPED`] when a key on the way needs
    /// `~` escapes: kept as the path grows (an addition) so that spelling the pointer out is one
    /// walk writing back to front.
    len: usize,
}

#[derive(Clone, Copy)]
pub(crate) enum Seg<'p> {
    Root,
    Key(&'p str),
    Index(usize),
}

impl<'p> PathNode<'p> {
    pub(crate) const ROOT: PathNode<'static> = PathNode {
        parent: None,
        seg: Seg::Root,
        len: 0,
    };

    /// Marks a path that must be spelled out the slow way (escapes); far above any inline size
    /// and far from overflowing as segments are added.
    const ESCAPED: usize = usize::MAX / 4;

    /// The location of property `k` inside `parent`.
    #[inline(always)]
    pub(crate) fn key(parent: &'p PathNode<'p>, k: &'p str) -> Self {
        let len = if needs_escape(k) {
            Self::ESCAPED
        } else {
            parent.len.saturating_add(1 + k.len())
        };
        PathNode {
            parent: Some(parent),
            seg: Seg::Key(k),
            len,
        }
    }

    /// The location of property `k` inside `parent`, where `k` is known to need no escape (a
    /// name the schema declares, checked when it compiled).
    #[inline(always)]
    pub(crate) fn plain_key(parent: &'p PathNode<'p>, k: &'p str) -> Self {
        PathNode {
            parent: Some(parent),
            seg: Seg::Key(k),
            len: parent.len.saturating_add(1 + k.len()),
        }
    }

    /// The location of item `i` inside `parent`.
    #[inline(always)]
    pub(crate) fn index(parent: &'p PathNode<'p>, i: usize) -> Self {
        PathNode {
            parent: Some(parent),
            seg: Seg::Index(i),
            len: parent.len.saturating_add(1 + decimal_len(i)),
        }
    }

    /// An issue at this location (tests read its path).
    #[cfg(test)]
    pub(crate) fn render(&self) -> crate::Issue {
        let mut out = crate::Issue::new("", "#", "test", Map::new(), "");
        self.render_into(out.body_mut(), "");
        out
    }

    /// Writes the JSON Pointer of this location, then `name` (the string an open params slot
    /// takes, usually empty), into `out` — an issue already in place in the issue list, so its
    /// bytes are written once and never copied (copying bytes just written one by one stalls
    /// the CPU on store forwarding). Short texts live inside the issue, without allocating.
    #[inline(always)]
    pub(crate) fn render_into(&self, out: &mut Body, name: &str) {
        let len = self.len;
        if len.saturating_add(name.len()) > Text::INLINE {
            out.set_text(&self.render_string(), name);
            return;
        }
        let buf = out.text_mut().inline_mut(len, len + name.len());
        copy_short(&mut buf[len..], name.as_bytes());
        let mut end = len;
        let mut node = Some(self);
        while let Some(p) = node {
            match p.seg {
                Seg::Root => {}
                Seg::Key(k) => {
                    end -= k.len();
                    copy_short(&mut buf[end..], k.as_bytes());
                    end -= 1;
                    buf[end] = b'/';
                }
                Seg::Index(i) => {
                    let d = decimal_len(i);
                    write_decimal(&mut buf[end - d..end], i);
                    end -= d + 1;
                    buf[end] = b'/';
                }
            }
            node = p.parent;
        }
    }

    /// The pointer as a `String` (long or escaped paths; no depth limit, no recursion).
    #[cold]
    pub(crate) fn render_string(&self) -> String {
        let mut segs = Vec::new();
        let mut node = Some(self);
        while let Some(p) = node {
            segs.push(p.seg);
            node = p.parent;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            match *seg {
                Seg::Root => {}
                Seg::Key(k) => {
                    out.push('/');
                    let mut rest = k;
                    while let Some(at) = rest.find(['~', '/']) {
                        out.push_str(&rest[..at]);
                        out.push_str(if rest.as_bytes()[at] == b'~' {
                            "~0"
                        } else {
                            "~1"
                        });
                        rest = &rest[at + 1..];
                    }
                    out.push_str(rest);
                }
                Seg::Index(i) => {
                    out.push('/');
                    push_decimal(&mut out, i);
                }
            }
        }
        out
    }
}

/// Copies `src` to the front of `dst` (both at most a few dozen bytes): overlapping word
/// copies up to 16 bytes, where `copy_from_slice` calls `memcpy` for lengths it cannot see
/// and a byte loop costs a few instructions a byte.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        // Bytes 0, n/2 and n-1 cover every byte of 1 to 3.
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        }
        _ => dst[..n].copy_from_slice(src),
    }
}

#[inline]
fn needs_escape(k: &str) -> bool {
    k.bytes().any(|b| matches!(b, b'~' | b'/'))
}

/// Writes `i` in decimal into exactly `buf` (`buf.len()` is its digit count).
#[inline]
fn write_decimal(buf: &mut [u8], mut i: usize) {
    for slot in buf.iter_mut().rev() {
        *slot = b'0' + (i % 10) as u8;
        i /= 10;
    }
}

fn push_decimal(out: &mut String, i: usize) {
    let mut digits = [0u8; 20];
    let d = decimal_len(i);
    write_decimal(&mut digits[..d], i);
    for &c in &digits[..d] {
        out.push(char::from(c));
    }
}

/// Digits in `i`: comparisons for the usual array sizes, no division.
#[inline]
fn decimal_len(i: usize) -> usize {
    match i {
        0..10 => 1,
        10..100 => 2,
        100..1000 => 3,
        1000..10000 => 4,
        _ => {
            let mut n = 5;
            let mut rest = i / 100_000;
            while rest > 0 {
                rest /= 10;
                n += 1;
            }
            n
        }
    }
}

/// Evaluated properties as Ajv's generated code holds them (`undefined`, `true`, or a set).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Props {
    #[default]
    Undef,
    All,
    Keys(Vec<String>),
}

/// Evaluated items (`undefined`, `true`, or a count).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) enum Items {
    #[default]
    Undef,
    All,
    Num(usize),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Ev {
    pub props: Props,
    pub items: Items,
}

fn merge_p(to: &mut Props, from: &Props) {
    match (&mut *to, from) {
        (Props::All, _) | (_, Props::Undef) => {}
        (_, Props::All) => *to = Props::All,
        (Props::Undef, Props::Keys(k)) => *to = Props::Keys(k.clone()),
        (Props::Keys(a), Props::Keys(b)) => {
            for k in b {
                if !a.contains(k) {
                    a.push(k.clone());
                }
            }
        }
    }
}

fn merge_i(to: &mut Items, from: Items) {
    match (*to, from) {
        (Items::All, _) | (_, Items::Undef) => {}
        (_, Items::All) => *to = Items::All,
        (Items::Undef, f) => *to = f,
        (Items::Num(a), Items::Num(b)) => *to = Items::Num(a.max(b)),
    }
}

/// Applies a merge of a child's evaluated state into the parent's.
fn apply_merge(parent: &mut Ev, child: &Ev, mp: Merge, mi: Merge, valid: bool) {
    match mp {
        Merge::No => {}
        Merge::Always => merge_p(&mut parent.props, &child.props),
        Merge::CondFirst => {
            if valid {
                merge_p(&mut parent.props, &child.props);
            } else {
                parent.props = Props::Undef;
            }
        }
        Merge::CondAlias => {
            if valid {
                merge_p(&mut parent.props, &child.props);
            } else {
                parent.props = child.props.clone();
            }
        }
        Merge::Cond => {
            if valid {
                merge_p(&mut parent.props, &child.props);
            }
        }
    }
    match mi {
        Merge::No => {}
        Merge::Always => merge_i(&mut parent.items, child.items),
        Merge::CondFirst => {
            if valid {
                merge_i(&mut parent.items, child.items);
            } else {
                parent.items = Items::Undef;
            }
        }
        Merge::CondAlias => {
            if valid {
                merge_i(&mut parent.items, child.items);
            } else {
                parent.items = child.items;
            }
        }
        Merge::Cond => {
            if valid {
                merge_i(&mut parent.items, child.items);
            }
        }
    }
}

/// A merge that did not run (its branch was not taken): a variable declared inside it stays
/// `undefined`.
fn skip_merge(parent: &mut Ev, mp: Merge, mi: Merge) {
    if matches!(mp, Merge::CondFirst | Merge::CondAlias) {
        parent.props = Props::Undef;
    }
    if matches!(mi, Merge::CondFirst | Merge::CondAlias) {
        parent.items = Items::Undef;
    }
}

/// Stands for an `Object.prototype` member (`constructor`, `toString`, …): Ajv's
/// `data.x !== undefined` finds one on every object and validates the function.
pub(crate) static JS_FUNCTION: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    let mut m = Map::new();
    m.insert(FUNCTION_KEY.into(), Value::Null);
    Value::Object(m)
});
const FUNCTION_KEY: &str = "\u{0}kindgi:js-function";

#[inline(always)]
fn is_function(m: &Map<String, Value>) -> bool {
    m.len() == 1 && m.keys().next().is_some_and(|k| k == FUNCTION_KEY)
}

/// The kind of `data` (its type group's place in Ajv's order: number, string, array, object;
/// 4 for the rest) and the node's keywords of that group (`None`: the group does not run).
#[inline(always)]
fn group_of<'o>(o: &'o ObjNode, data: &Value) -> (usize, Option<&'o Vec<Kw>>) {
    match data {
        Value::Number(_) => (0, o.number.as_ref()),
        Value::String(_) => (1, o.string.as_ref()),
        Value::Array(_) => (2, o.array.as_ref()),
        Value::Object(m) if !is_function(m) => (3, o.object.as_ref()),
        _ => (4, None),
    }
}

/// `enum`: whether `data` equals one of `values` (a string is compared inline with the string
/// values, the usual kind of `enum`).
#[inline]
fn in_enum(values: &[Value], data: &Value) -> bool {
    match data {
        Value::String(s) => values
            .iter()
            .any(|v| matches!(v, Value::String(t) if js::key_eq(t, s))),
        _ => values.iter().any(|v| js::equal(data, v)),
    }
}

#[inline]
fn type_ok(types: u8, v: &Value) -> bool {
    match v {
        Value::Null => types & ty::NULL != 0,
        Value::Bool(_) => types & ty::BOOLEAN != 0,
        Value::Number(n) => {
            types & ty::NUMBER != 0 || (types & ty::INTEGER != 0 && js::is_integer(n))
        }
        Value::String(_) => types & ty::STRING != 0,
        Value::Array(_) => types & ty::ARRAY != 0,
        Value::Object(m) => types & ty::OBJECT != 0 && !is_function(m),
    }
}

fn limit_violated(cmp: Cmp, x: f64, limit: f64) -> bool {
    match cmp {
        Cmp::Max => x > limit,
        Cmp::Min => x < limit,
        Cmp::ExMax => x >= limit,
        Cmp::ExMin => x <= limit,
    }
}

/// `multipleOf`: `q = data / m; invalid if q !== parseInt(q)` (or `m === 0`).
fn not_multiple(x: f64, by: f64) -> bool {
    if by == 0.0 {
        return true;
    }
    let q = x / by;
    !(q.is_finite() && q.fract() == 0.0 && q.abs() < 1e21)
}

/// Where a `uniqueItems` duplicate is (`i` < `j` as Ajv reports them).
#[inline]
fn find_duplicate(items: &[Value], scalar_types: Option<u8>) -> Option<(usize, usize)> {
    match scalar_types {
        _ if items.len() < 2 => None,
        // Strings only (the usual list of tags or names): compared as they are.
        Some(ty::STRING) if items.len() <= 32 => duplicate_string(items),
        _ => find_duplicate_any(items, scalar_types),
    }
}

/// [`find_duplicate`] over strings (and items of other types, which `type` reports).
#[inline(never)]
fn duplicate_string(items: &[Value]) -> Option<(usize, usize)> {
    // Plain indexes: `enumerate().rev()` over 72-byte values divides to find them.
    for i in (0..items.len()).rev() {
        let Some(Value::String(a)) = items.get(i) else {
            continue;
        };
        for j in i + 1..items.len() {
            if matches!(items.get(j), Some(Value::String(b)) if js::key_eq(a, b)) {
                return Some((i, j));
            }
        }
    }
    None
}

/// [`find_duplicate`] for any items.
#[inline(never)]
fn find_duplicate_any(items: &[Value], scalar_types: Option<u8>) -> Option<(usize, usize)> {
    let n = items.len();
    match scalar_types {
        Some(types) if n <= 32 => {
            // Same answer as the map below: the nearest equal item above the highest `i`.
            let same = |a: &Value, b: &Value| match (a, b) {
                (Value::Number(x), Value::Number(y)) => js::num(x) == js::num(y),
                (Value::String(x), Value::String(y)) => js::key_eq(x, y),
                _ => a == b,
            };
            for i in (0..n).rev() {
                if !type_ok(types, &items[i]) {
                    continue;
                }
                for j in i + 1..n {
                    if type_ok(types, &items[j]) && same(&items[i], &items[j]) {
                        return Some((i, j));
                    }
                }
            }
            None
        }
        Some(types) => {
            // Backwards with a map keyed by the item as a JS property name.
            let multi =
                types.count_ones() > 1 || (types & ty::INTEGER != 0 && types & ty::NUMBER != 0);
            let mut seen: std::collections::HashMap<String, usize> =
                std::collections::HashMap::new();
            for i in (0..n).rev() {
                let it = &items[i];
                if !type_ok(types, it) {
                    continue;
                }
                let mut key = match it {
                    Value::String(s) => s.clone(),
                    Value::Number(x) => js::fmt_number(js::num(x)),
                    other => js::fmt_value(other),
                };
                if multi && it.is_string() {
                    key.push('_');
                }
                if let Some(&j) = seen.get(&key) {
                    return Some((i, j));
                }
                seen.insert(key, i);
            }
            None
        }
        None if n <= SMALL_UNIQUE => crate::unique::duplicate_quadratic(items),
        None => crate::unique::duplicate_hashed(items),
    }
}

/// Arrays up to this length are compared pairwise (no hashing, nothing allocated).
const SMALL_UNIQUE: usize = 16;

/// Objects up to this size are searched linearly (cheaper than hashing the key).
const SMALL_MAP: usize = 12;

/// Finds `key` in `m`, trying the entry after the previous find first: instances usually list
/// their properties in the order the schema declares them, so a walk over the declared names
/// mostly finds each one at the cursor, where a search from the start compares every key
/// before it.
#[inline]
fn get_next<'v>(
    m: &'v Map<String, Value>,
    cursor: &mut serde_json::map::Iter<'v>,
    key: &str,
) -> Option<&'v Value> {
    let mut ahead = cursor.clone();
    if let Some((k, v)) = ahead.next() {
        if js::key_eq(k, key) {
            *cursor = ahead;
            return Some(v);
        }
    }
    if m.len() > SMALL_MAP {
        return m.get(key);
    }
    let mut scan = m.iter();
    while let Some((k, v)) = scan.next() {
        if js::key_eq(k, key) {
            *cursor = scan;
            return Some(v);
        }
    }
    None
}

/// Whether `additionalProperties` leaves the key `k` alone: a name `properties` declares (see
/// [`DeclaredNames::find`]), or one a `patternProperties` pattern matches.
#[inline(always)]
fn declared_name<'t>(
    props: &DeclaredNames,
    patterns: &'t [Arc<Pattern>],
    steps: &mut RegexSteps<'t>,
    path: &PathNode<'_>,
    at: &mut usize,
    k: &str,
) -> bool {
    // Out of regex steps: counted as declared (the validation fails on the budget anyway).
    props.find(k, at).is_some()
        || patterns
            .iter()
            .any(|p| p.matches(k, steps, || PathNode::key(path, k).render_string(), true))
}

#[inline]
fn has_key(m: &Map<String, Value>, key: &str) -> bool {
    if m.len() <= SMALL_MAP {
        m.keys().any(|k| js::key_eq(k, key))
    } else {
        m.contains_key(key)
    }
}

/// A leaf's keywords in order (see [`Run::leaf`]): `$check` settles the ones the lean path
/// knows (whether they hold, and the site to report at), the rest take the general path. A
/// macro, not a method taking a closure: LLVM kept the closure out of line, a call and a jump
/// table per keyword.
macro_rules! leaf_keywords {
    ($run:ident, $kws:expr, $data:expr, $path:expr, |$kw:ident| $check:expr) => {{
        let mut valid = true;
        for $kw in $kws {
            let ok = match $check {
                Some((true, _)) => continue,
                Some((false, site)) => {
                    if $run.collect {
                        $run.report($path, site);
                    }
                    false
                }
                None => $run.leaf_general($kw, $data, $path),
            };
            if !ok {
                valid = false;
                if !$run.collect {
                    break;
                }
            }
        }
        valid
    }};
}

/// Most declared names of a fused object that takes the small slot array (see
/// [`Run::shape_any_r`]).
const SMALL_SHAPE: usize = 8;

/// How many undeclared keys of an object the fused pass keeps for `additionalProperties` (see
/// [`Run::shape_r`]); objects with more take a second pass over their keys.
const UNDECLARED_KEPT: usize = 4;

/// One validation run.
pub(crate) struct Run<'t> {
    pub tree: &'t Tree,
    pub errors: Vec<Entry>,
    /// Sites this validation built on the spot ([`SiteId::own`]).
    pub own_sites: Vec<Arc<Site>>,
    /// Whether issues are recorded (Ajv's `createErrors`); off inside `not`/`if` and for
    /// `is_valid`, which lets evaluation stop at the first failure.
    pub collect: bool,
    pub dyn_anchors: Vec<(&'t str, NodeId)>,
    pub depth: usize,
    pub prop_name: Option<String>,
    pub too_deep: bool,
    /// What `regress` matches may still spend (see [`crate::Budgets::regex_steps`]).
    pub steps: RegexSteps<'t>,
    /// Non-leaf schema nodes this validation may still evaluate.
    nodes_left: u64,
    /// Issues this validation may collect.
    max_issues: usize,
    /// The first node or issue budget that ran out, and the instance location where it did
    /// (boxed: a word on the stack of every validation, where the budgets rarely run out).
    /// `ManuallyDrop`: [`Run::finish`] takes it, so dropping a run has nothing more to drop —
    /// drop glue for it made dropping every run a call.
    overrun: ManuallyDrop<Option<Box<(Overrun, String)>>>,
    budgets: &'t crate::Budgets,
}

/// A per-validation budget that ran out (besides regex steps, which [`RegexSteps`] tracks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overrun {
    Nodes,
    Issues,
}

impl<'t> Run<'t> {
    pub(crate) fn new(tree: &'t Tree, collect: bool, budgets: &'t crate::Budgets) -> Self {
        Run {
            tree,
            errors: Vec::new(),
            own_sites: Vec::new(),
            collect,
            dyn_anchors: Vec::new(),
            depth: 0,
            prop_name: None,
            too_deep: false,
            steps: RegexSteps {
                left: budgets.regex_steps,
                ran_out: ManuallyDrop::new(None),
            },
            nodes_left: budgets.evaluated_nodes,
            max_issues: budgets.issues,
            overrun: ManuallyDrop::new(None),
            budgets,
        }
    }

    /// Notes that a node or issue budget ran out at `path`, and stops the evaluation: every
    /// node from now on fails at once.
    #[cold]
    #[inline(never)]
    fn out_of(&mut self, what: Overrun, path: &PathNode<'_>) {
        if self.overrun.is_none() {
            *self.overrun = Some(Box::new((what, path.render_string())));
        }
        self.nodes_left = 0;
    }

    /// Ends the run: when a budget ran out, the validation fails and its issue (one per budget,
    /// after the issues collected so far) says which. Returns whether one did.
    #[inline(always)]
    pub(crate) fn finish(&mut self) -> bool {
        if self.steps.ran_out.is_none() && self.overrun.is_none() {
            return false;
        }
        self.report_overruns();
        true
    }

    /// [`Run::finish`] when a budget ran out.
    #[cold]
    #[inline(never)]
    fn report_overruns(&mut self) {
        let ran_out = self.steps.ran_out.take();
        let overrun = self.overrun.take();
        // The budget issue itself is always reported.
        self.max_issues = usize::MAX;
        if let Some(out) = ran_out {
            let (pattern, at) = *out;
            let steps = self.budgets.regex_steps;
            let mut params = params1("pattern", Value::String(pattern.source.to_string()));
            params.insert("stepBudget".into(), Value::from(steps));
            let message = format!(
                "could not be checked against pattern \"{}\": matching ran out of its budget of \
                 {steps} backtracking steps; simplify the pattern (no nested quantifiers such as \
                 (a+)+, no back-references) or shorten the value",
                pattern.source
            );
            self.issue_at(&at, &pattern.schema_path, "pattern", params, message);
        }
        if let Some(out) = overrun {
            let (what, at) = *out;
            let (keyword, limit, message) = match what {
                Overrun::Nodes => {
                    let n = self.budgets.evaluated_nodes;
                    let m = format!(
                        "needs more than {n} schema evaluations: validation stops there; \
                         simplify the schema (anyOf/oneOf branches that $ref each other multiply \
                         the work) or validate a smaller value"
                    );
                    ("maxEvaluations", n, m)
                }
                Overrun::Issues => {
                    let n = self.budgets.issues as u64;
                    let m = format!(
                        "has more than {n} issues: validation stops there; fix the issues \
                         reported so far and validate again"
                    );
                    ("maxIssues", n, m)
                }
            };
            self.issue_at(
                &at,
                "#",
                keyword,
                params1("limit", Value::from(limit)),
                message,
            );
        }
    }

    /// [`Run::issue`] at an instance location already spelled out.
    fn issue_at(
        &mut self,
        pointer: &str,
        schema_path: &str,
        keyword: &str,
        params: Map<String, Value>,
        message: String,
    ) {
        if !self.collect {
            return;
        }
        let id = self.own_site(schema_path, keyword, params, message);
        let mut entry = Entry::at(id, Fill::None, None);
        entry.body_mut().set_text(pointer, "");
        self.errors.push(entry);
    }

    /// Reports an issue at a site prepared at compile time.
    #[inline(never)]
    fn report(&mut self, path: &PathNode<'_>, site: &SiteRef) {
        if !self.collect {
            return;
        }
        if self.prop_name.is_some() {
            return self.report_with(path, site, Fill::None);
        }
        self.push_issue(path, || Entry::at(*site, Fill::None, None), "");
    }

    /// Reports an issue at a site that takes something from the instance (`fill`).
    #[inline(never)]
    fn report_with(&mut self, path: &PathNode<'_>, site: &SiteRef, fill: Fill) {
        if !self.collect {
            return;
        }
        let prop_name = self.prop_name.take();
        self.push_issue(path, || Entry::at(*site, fill, prop_name.as_deref()), "");
        self.prop_name = prop_name;
    }

    /// Reports a `uniqueItems` issue: items `i` and `j` are equal.
    #[inline(never)]
    fn report_pair(&mut self, path: &PathNode<'_>, site: &SiteRef, i: u32, j: u32) {
        if !self.collect {
            return;
        }
        if self.prop_name.is_some() {
            return self.report_with(path, site, Fill::Pair(i, j));
        }
        self.push_issue(path, || Entry::at(*site, Fill::Pair(i, j), None), "");
    }

    /// Reports an issue whose open params slot takes the string `name` (a property's name).
    #[inline(never)]
    fn report_name(&mut self, path: &PathNode<'_>, site: &SiteRef, name: &str) {
        if !self.collect {
            return;
        }
        if self.prop_name.is_none() {
            return self.push_issue(path, || Entry::at(*site, Fill::Name, None), name);
        }
        let prop_name = self.prop_name.take();
        self.push_issue(
            path,
            || Entry::at(*site, Fill::Name, prop_name.as_deref()),
            name,
        );
        self.prop_name = prop_name;
    }

    /// Appends the issue `make` builds, then writes its instance path in place. The list grows
    /// before the issue is built, so the issue is written straight into its slot: built on the
    /// stack first (as `push` must, since it may grow the list in between), it was copied over
    /// in wide loads that read back narrower stores just made, which stalls the CPU.
    #[inline(always)]
    fn push_issue(&mut self, path: &PathNode<'_>, make: impl FnOnce() -> Entry, name: &str) {
        if self.errors.len() >= self.max_issues {
            return self.out_of(Overrun::Issues, path);
        }
        if self.errors.capacity() == 0 {
            // An invalid instance usually has a few issues: skip the small growth steps. A new
            // list, not `reserve`: that goes through the general growth path, twice the code.
            self.errors = Vec::with_capacity(16);
        }
        // `once_with` is `TrustedLen`: `extend` reserves, then builds the issue in place.
        self.errors.extend(std::iter::once_with(make));
        if let Some(last) = self.errors.last_mut() {
            path.render_into(last.body_mut(), name);
        }
    }

    /// An issue whose message or params only the instance decides (`uniqueItems`,
    /// `unevaluatedItems`, the depth limit): its site is built on the spot.
    fn issue(
        &mut self,
        path: &PathNode<'_>,
        schema_path: &str,
        keyword: &str,
        params: Map<String, Value>,
        message: String,
    ) {
        if !self.collect {
            return;
        }
        let id = self.own_site(schema_path, keyword, params, message);
        self.report(path, &id);
    }

    /// A site built on the spot for an issue of this validation (kept beside the tree's).
    fn own_site(
        &mut self,
        schema_path: &str,
        keyword: &str,
        params: Map<String, Value>,
        message: String,
    ) -> SiteId {
        let id = SiteId::own(self.tree.sites.len(), self.own_sites.len());
        self.own_sites
            .push(Arc::new(Site::fixed(schema_path, keyword, params, message)));
        id
    }

    fn deep(&mut self, path: &PathNode<'_>) {
        if !self.too_deep {
            self.too_deep = true;
            let was = self.collect;
            self.collect = true;
            self.issue(
                path,
                "#",
                "maxDepth",
                params1("limit", Value::from(MAX_EVAL_DEPTH)),
                format!("is nested too deeply: validation stops after {MAX_EVAL_DEPTH} levels"),
            );
            self.collect = was;
        }
    }

    /// Evaluates a property name against a `propertyNames` schema.
    fn property_name(&mut self, node: NodeId, key: &str, path: &PathNode<'_>) -> bool {
        let saved = self.prop_name.replace(key.to_owned());
        let v = Value::String(key.to_owned());
        let mut ev = Ev::default();
        let ok = self.node_r(node, &v, path, &mut ev);
        self.prop_name = saved;
        ok
    }

    /// A leaf node ([`ObjNode::leaf`]): what the node function does, in Ajv's order, with the
    /// keywords checked inline — a leaf is most of a typical schema's nodes, and the general
    /// path spends a call and a dispatch per keyword on it. Inlined where it is called (the node
    /// function and the handful of places that hand a child over).
    #[inline(always)]
    fn leaf(&mut self, o: &'t ObjNode, data: &Value, path: &PathNode<'_>) -> bool {
        let mut valid = true;
        if let Some(tc) = &o.type_check {
            if tc.at == TypeAt::Upfront && !type_ok(tc.types, data) {
                self.report(path, &tc.site);
                valid = false;
                if !self.collect {
                    return false;
                }
            }
        }
        let any = leaf_keywords!(self, &o.any, data, path, |kw| match kw {
            Kw::Enum { values, site } => Some((in_enum(values, data), site)),
            Kw::Const { value, site } => Some((js::equal(data, value), site)),
            _ => None,
        });
        if !any {
            valid = false;
            if !self.collect {
                return false;
            }
        }
        let (at, kws) = group_of(o, data);
        if self.late_type(o, at, Late::Before, path) {
            valid = false;
            if !self.collect {
                return false;
            }
        }
        if let Some(kws) = kws {
            // Number formats are not settled inline (the compiler hoisted parts of that check
            // out of the loop, to run even for nodes without one).
            let ok = match data {
                Value::Number(n) => {
                    let x = js::num(n);
                    leaf_keywords!(self, kws, data, path, |kw| match kw {
                        Kw::Limit { cmp, limit, site } => {
                            Some((!limit_violated(*cmp, x, *limit), site))
                        }
                        Kw::MultipleOf { by, site } => Some((!not_multiple(x, *by), site)),
                        _ => None,
                    })
                }
                Value::String(s) => leaf_keywords!(self, kws, data, path, |kw| match kw {
                    Kw::MaxLength { limit, site } => Some((js::len_at_most(s, *limit), site)),
                    Kw::MinLength { limit, site } => Some((js::len_at_least(s, *limit), site)),
                    Kw::Pattern { pattern, site } => Some((
                        pattern.matches(s, &mut self.steps, || path.render_string(), true),
                        site
                    )),
                    Kw::Format { format, site } => Some((
                        format.data_type() != Some(crate::formats::FormatType::String)
                            || format.check_str(s),
                        site,
                    )),
                    _ => None,
                }),
                _ => true,
            };
            if !ok {
                valid = false;
                if !self.collect {
                    return false;
                }
            }
            if self.late_type(o, at, Late::After, path) {
                valid = false;
            }
        }
        valid
    }

    /// Reports the node's group-bound `type` issue if, for data of kind `at`, it comes `when`;
    /// whether it did.
    #[inline(always)]
    fn late_type(&mut self, o: &ObjNode, at: usize, when: Late, path: &PathNode<'_>) -> bool {
        match &o.type_check {
            Some(tc) if o.late[at] == when => {
                self.report(path, &tc.site);
                true
            }
            _ => false,
        }
    }

    /// A keyword the lean path does not check itself (number formats, `formatMaximum` and its
    /// kin), on the general path: out of line, so the lean path keeps no evaluated-state record
    /// (and its clean-up) in its frame.
    #[inline(never)]
    fn leaf_general(&mut self, kw: &'t Kw, data: &Value, path: &PathNode<'_>) -> bool {
        self.kw_r(kw, data, path, &mut Ev::default())
    }

    /// A subschema over a part of the data whose evaluated state nobody reads: a leaf goes
    /// straight to the lean path.
    #[inline(always)]
    fn child_r(&mut self, node: NodeId, v: &Value, path: &PathNode<'_>) -> bool {
        let tree = self.tree;
        match &tree.nodes[node] {
            Node::Obj(o) if o.leaf && self.depth < MAX_EVAL_DEPTH => self.leaf(o, v, path),
            _ => self.node_r(node, v, path, &mut Ev::default()),
        }
    }

    /// An undeclared key under a fused object's `additionalProperties`: `false` reports it,
    /// a schema checks its value.
    #[inline(always)]
    fn additional_r(
        &mut self,
        child: &Child,
        site: &SiteRef,
        k: &str,
        v: &Value,
        path: &PathNode<'_>,
    ) -> bool {
        match child {
            Child::False => {
                if self.collect {
                    self.report_name(path, site, k);
                }
                false
            }
            Child::Node(node) => {
                let p = PathNode::key(path, k);
                self.node_r(*node, v, &p, &mut Ev::default())
            }
        }
    }

    /// `uniqueItems` over `arr`.
    #[inline(always)]
    fn unique_items_r(
        &mut self,
        arr: &[Value],
        scalar_types: Option<u8>,
        site: &SiteRef,
        path: &PathNode<'_>,
    ) -> bool {
        let Some((i, j)) = find_duplicate(arr, scalar_types) else {
            return true;
        };
        // No array in memory has 2^32 items.
        let idx = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.report_pair(path, site, idx(i), idx(j));
        false
    }

    /// `items` over `arr` from `start` (the plain walker, not tracking evaluated items).
    #[inline(never)]
    fn items_r(&mut self, node: NodeId, arr: &[Value], start: usize, path: &PathNode<'_>) -> bool {
        let tree = self.tree;
        let mut valid = true;
        // Every item meets the same node: whether it is a leaf is settled once.
        if let Node::Obj(o) = &tree.nodes[node]
            && o.leaf
            && self.depth < MAX_EVAL_DEPTH
        {
            for (i, item) in arr.iter().enumerate().skip(start) {
                let p = PathNode::index(path, i);
                if !self.leaf(o, item, &p) {
                    valid = false;
                    if !self.collect {
                        return false;
                    }
                }
            }
            return valid;
        }
        for (i, item) in arr.iter().enumerate().skip(start) {
            let p = PathNode::index(path, i);
            if !self.node_r(node, item, &p, &mut Ev::default()) {
                valid = false;
                if !self.collect {
                    return false;
                }
            }
        }
        valid
    }

    /// A fused object ([`Shape`]), with a slot array no bigger than it needs: the array is
    /// cleared on every visit, and most objects declare a few names.
    #[inline(always)]
    fn shape_any_r(&mut self, s: &'t Shape, m: &Map<String, Value>, path: &PathNode<'_>) -> bool {
        if s.names.len() <= SMALL_SHAPE {
            self.shape_r::<SMALL_SHAPE>(s, m, path)
        } else {
            self.shape_r::<{ Shape::MAX_NAMES }>(s, m, path)
        }
    }

    /// A fused object ([`Shape`]): one pass matches the keys to the declared names, then
    /// `required`, `additionalProperties` and `properties` run in that order over the match.
    /// Out of line: its slots would otherwise widen the keyword function's frame.
    #[inline(never)]
    fn shape_r<const SLOTS: usize>(
        &mut self,
        s: &'t Shape,
        m: &Map<String, Value>,
        path: &PathNode<'_>,
    ) -> bool {
        let mut slots: [Option<&Value>; SLOTS] = [None; SLOTS];
        // The undeclared keys, kept as the pass meets them (the first few): in the usual case
        // `additionalProperties` then visits just those, without a second pass over the keys.
        let mut undeclared: [Option<(&String, &Value)>; UNDECLARED_KEPT] = [None; UNDECLARED_KEPT];
        let mut undeclared_count = 0;
        let mut at = 0;
        for (k, v) in m {
            match s.names.find(k, &mut at) {
                Some(d) => {
                    if let Some(slot) = slots.get_mut(d) {
                        *slot = Some(v);
                    }
                }
                None => {
                    if let Some(u) = undeclared.get_mut(undeclared_count) {
                        *u = Some((k, v));
                    }
                    undeclared_count += 1;
                }
            }
        }
        let mut valid = true;
        for (d, r) in &s.required {
            let present = match d {
                Some(d) => slots.get(*d).is_some_and(Option::is_some),
                None => has_key(m, &r.name),
            };
            if present || (s.inherited && js::inherited(&r.name)) {
                continue;
            }
            valid = false;
            if !self.collect {
                return false;
            }
            self.report(path, &r.site);
        }
        if let Some((child, site)) = &s.additional
            && undeclared_count > 0
        {
            // As `additionalProperties` does: in JavaScript key order. Only keys that look like
            // array indexes move in that order, so when neither a declared name nor an
            // undeclared key starts with a digit, the keys kept above already are in it.
            let kept = undeclared_count <= UNDECLARED_KEPT;
            let digits = !kept
                || s.digit_names
                || undeclared
                    .iter()
                    .flatten()
                    .any(|(k, _)| k.as_bytes().first().is_some_and(u8::is_ascii_digit));
            let in_order = !digits || js::in_js_order(m);
            if in_order && kept {
                for &(k, v) in undeclared.iter().flatten() {
                    if !self.additional_r(child, site, k, v, path) {
                        valid = false;
                        if !self.collect {
                            return false;
                        }
                    }
                }
            } else {
                let entries = Entries::of(m, in_order);
                let mut at = 0;
                for (k, v) in (&entries).iter_mut_or_ref() {
                    if s.names.find(k, &mut at).is_some() {
                        continue;
                    }
                    if !self.additional_r(child, site, k, v, path) {
                        valid = false;
                        if !self.collect {
                            return false;
                        }
                    }
                }
            }
        }
        for (d, node) in &s.props {
            let Some(name) = s.names.get(*d) else {
                continue;
            };
            let ok = match slots.get(*d).copied().flatten() {
                Some(v) => {
                    let p = if s.plain {
                        PathNode::plain_key(path, name)
                    } else {
                        PathNode::key(path, name)
                    };
                    self.child_r(*node, v, &p)
                }
                None if s.inherited && js::inherited(name) => {
                    let p = PathNode::key(path, name);
                    self.node_r(*node, &JS_FUNCTION, &p, &mut Ev::default())
                }
                None => true,
            };
            if !ok {
                valid = false;
                if !self.collect {
                    return false;
                }
            }
        }
        valid
    }

    fn dyn_target(&self, anchor: &str) -> Option<NodeId> {
        self.dyn_anchors
            .iter()
            .find(|(a, _)| *a == anchor)
            .map(|(_, n)| *n)
    }
}

/// `iter()` for shared references and `iter_mut()` for exclusive ones, under one name.
trait IterEither {
    type Iter;
    fn iter_mut_or_ref(self) -> Self::Iter;
}

impl<'a> IterEither for &'a Vec<Value> {
    type Iter = std::slice::Iter<'a, Value>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter()
    }
}

impl<'a> IterEither for &'a mut Vec<Value> {
    type Iter = std::slice::IterMut<'a, Value>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter_mut()
    }
}

impl<'a> IterEither for &'a Map<String, Value> {
    type Iter = serde_json::map::Iter<'a>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter()
    }
}

impl<'a> IterEither for &'a mut Map<String, Value> {
    type Iter = serde_json::map::IterMut<'a>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter_mut()
    }
}

/// An object's entries in JavaScript order; borrows the map when it is already in that order.
enum Entries<'a> {
    Map(&'a Map<String, Value>),
    Sorted(Vec<(&'a String, &'a Value)>),
}

impl<'a> Entries<'a> {
    /// The entries of `m`, whose keys `in_order` says are already in JavaScript order (or not).
    fn of(m: &'a Map<String, Value>, in_order: bool) -> Self {
        if in_order {
            Entries::Map(m)
        } else {
            Entries::Sorted(
                js::ordered_keys(m.keys())
                    .into_iter()
                    .filter_map(|k| m.get_key_value(k.as_str()))
                    .collect(),
            )
        }
    }
}

enum EntriesIter<'a, 'b> {
    Map(serde_json::map::Iter<'a>),
    Sorted(std::slice::Iter<'b, (&'a String, &'a Value)>),
}

impl<'a> Iterator for EntriesIter<'a, '_> {
    type Item = (&'a String, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            EntriesIter::Map(i) => i.next(),
            EntriesIter::Sorted(i) => i.next().copied(),
        }
    }
}

impl<'a, 'b> IterEither for &'b Entries<'a> {
    type Iter = EntriesIter<'a, 'b>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        match self {
            Entries::Map(m) => EntriesIter::Map(m.iter()),
            Entries::Sorted(v) => EntriesIter::Sorted(v.iter()),
        }
    }
}

evaluator!(node_r, obj_r, kw_r, kw_cold_r, by_ref,);
evaluator!(node_m, obj_m, kw_m, kw_cold_m, by_mut, mut);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Issue;
    use serde_json::json;

    #[test]
    fn renders_instance_paths_as_json_pointers() {
        assert_eq!(PathNode::ROOT.render().instance_path(), "");
        let root = PathNode::ROOT;
        let a = PathNode::key(&root, "a/b~c");
        let i = PathNode::index(&a, 1207);
        let z = PathNode::index(&i, 0);
        let e = PathNode::key(&z, "prénom");
        assert_eq!(e.render().instance_path(), "/a~1b~0c/1207/0/prénom");
        assert_eq!(i.render().instance_path(), "/a~1b~0c/1207");
        let short = PathNode::key(&root, "prénom");
        let short_i = PathNode::index(&short, 42);
        assert!(short_i.render().text_is_inline());
        assert_eq!(short_i.render().instance_path(), "/prénom/42");
        let empty = PathNode::key(&root, "");
        assert_eq!(empty.render().instance_path(), "/");
        let declared = PathNode::plain_key(&short_i, "x");
        assert_eq!(declared.render().instance_path(), "/prénom/42/x");
    }

    /// `uniqueItems` over strings only finds the pair Ajv's generated code reports: walking down
    /// from the end, the first string seen before, with the index it was last seen at.
    #[test]
    fn unique_strings_find_the_pair_ajv_reports() {
        let ajv = |items: &[Value]| {
            let mut seen: std::collections::HashMap<&str, usize> = Default::default();
            for i in (0..items.len()).rev() {
                let Value::String(s) = &items[i] else {
                    continue;
                };
                if let Some(&j) = seen.get(s.as_str()) {
                    return Some((i, j));
                }
                seen.insert(s, i);
            }
            None
        };
        let pool = [
            json!("a"),
            json!("b"),
            json!(1),
            json!("b"),
            json!(null),
            json!("a"),
        ];
        let mut found = 0;
        for mask in 0u32..(1 << 6) {
            for rot in 0..6 {
                let items: Vec<Value> = (0..6)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| pool[(i + rot) % 6].clone())
                    .collect();
                let want = ajv(&items);
                assert_eq!(find_duplicate(&items, Some(ty::STRING)), want, "{items:?}");
                found += usize::from(want.is_some());
            }
        }
        assert!(found > 50, "{found}");
    }

    /// Keys and names of every length up to past the inline limit, at both ends of the path:
    /// the word-sized copies write exactly their bytes, no more.
    #[test]
    fn short_copies_of_every_length_keep_their_neighbours() {
        let text = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
        let root = PathNode::ROOT;
        for n in 0..=text.len() {
            let key = &text[..n];
            let first = PathNode::key(&root, key);
            let second = PathNode::key(&first, "k");
            for name in ["", "x", &text[..n.min(20)]] {
                let mut t = Issue::new("", "#", "test", Map::new(), "");
                second.render_into(t.body_mut(), name);
                assert_eq!(t.instance_path(), format!("/{key}/k"), "{n}");
                assert_eq!(t.text_parts().1, name, "{n}");
                let mut u = Issue::new("", "#", "test", Map::new(), "");
                first.render_into(u.body_mut(), name);
                assert_eq!(u.instance_path(), format!("/{key}"), "{n}");
                assert_eq!(u.text_parts().1, name, "{n}");
            }
        }
    }

    #[test]
    fn writes_a_name_after_the_path_inline_or_on_the_heap() {
        let root = PathNode::ROOT;
        let a = PathNode::key(&root, "opts");
        for name in ["", "x", "a/b", "a-name-long-enough-to-spill-over"] {
            let mut t = Issue::new("", "#", "test", Map::new(), "");
            a.render_into(t.body_mut(), name);
            assert_eq!(t.instance_path(), "/opts");
            assert_eq!(t.text_parts().1, name);
        }
        let deep = PathNode::key(&a, "a~b");
        let mut t = Issue::new("", "#", "test", Map::new(), "");
        deep.render_into(t.body_mut(), "x");
        assert_eq!(t.instance_path(), "/opts/a~0b");
        assert_eq!(t.text_parts().1, "x");
    }

    #[test]
    fn renders_deep_paths_without_recursion() {
        fn nest(depth: usize, parent: &PathNode<'_>) -> String {
            if depth == 0 {
                return parent.render().instance_path().to_owned();
            }
            let p = PathNode::index(parent, depth % 10);
            nest(depth - 1, &p)
        }
        let s = js::grow(|| nest(3000, &PathNode::ROOT));
        assert_eq!(s.len(), 6000);
        assert!(s.starts_with("/0/9/8/"));
    }
}
