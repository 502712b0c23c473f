//! The walker's code, written once and stamped out twice by [`evaluator!`] (invoked at the end
//! of `eval.rs`): over `&Value` (`node_r`, `kw_r`, …) and over `&mut Value` (`node_m`, …,
//! filling `default`s as it goes). Split into macros by part so each is read on its own: the
//! node walk, the keyword dispatch (hot: every keyword of every node), the out-of-line
//! applicators, and the larger keywords by family in a module per walker (`by_ref`,
//! `by_mut`). A keyword split out of a dispatch is `#[inline(always)]`: the dispatch compiles as
//! the one function it was. The expansions land in `eval.rs`, so they name its items.

/// One walker: `$node`/`$obj` (a node), `$kw` (a keyword), `$cold` (the rarer keywords) as
/// methods of `Run`, and `$parts`, a module of the larger keywords; `mut` for the walker that
/// fills defaults.
macro_rules! evaluator {
    ($node:ident, $obj:ident, $kw:ident, $cold:ident, $parts:ident, $($m:tt)?) => {
        evaluator_node!($node, $obj, $kw, $($m)?);
        evaluator_kw!($node, $kw, $cold, $parts, $($m)?);
        evaluator_cold!($node, $cold, $parts, $($m)?);
        /// The larger keywords of one walker, each called from its dispatch.
        mod $parts {
            use super::*;

            evaluator_items!($node, $($m)?);
            evaluator_properties!($node, $($m)?);
            evaluator_applicators!($node, $($m)?);
            evaluator_unevaluated!($node, $($m)?);
        }
    };
}

/// A node: its budget and depth checks, then its keywords in Ajv's order.
macro_rules! evaluator_node {
    ($node:ident, $obj:ident, $kw:ident, $($m:tt)?) => {
impl<'t> Run<'t> {
    pub(crate) fn $node(&mut self, id: NodeId, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev) -> bool {
        let tree = self.tree;
        match &tree.nodes[id] {
            Node::True | Node::Pending => true,
            Node::False { site } => {
                self.report(path, site);
                false
            }
            Node::Obj(o) if o.leaf => {
                // Same limit as below, without the bookkeeping: a leaf does not descend.
                if self.depth >= MAX_EVAL_DEPTH {
                    self.deep(path);
                    return false;
                }
                self.leaf(o, &*data, path)
            }
            Node::Obj(o) => {
                if self.nodes_left == 0 {
                    self.out_of(Overrun::Nodes, path);
                    return false;
                }
                self.nodes_left -= 1;
                self.depth += 1;
                if self.depth > MAX_EVAL_DEPTH {
                    self.depth -= 1;
                    self.deep(path);
                    return false;
                }
                // Deep schemas recurse deeply: grow the stack instead of overflowing it. An
                // optimised level takes a few KiB at most, so checking every 8th stays well inside
                // the red zone; unoptimised builds have far bigger frames and check every level.
                #[allow(clippy::modulo_one)] // 1 in unoptimised builds: check every level
                let ok = if self.depth % STACK_CHECK_EVERY == 0 {
                    stacker::maybe_grow(STACK_RED_ZONE, STACK_GROW, || self.$obj(o, data, path, ev))
                } else {
                    self.$obj(o, data, path, ev)
                };
                self.depth -= 1;
                ok
            }
        }
    }

    #[inline(always)]
    fn $obj(&mut self, o: &'t ObjNode, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev) -> bool {
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
        for kw in &o.any {
            if !self.$kw(kw, &$($m)? *data, path, ev) {
                valid = false;
                if !self.collect {
                    return false;
                }
            }
        }
        // At most one type group applies to the data: find it directly. A `type` that is one
        // group's (`TypeAt::Group`) is reported at that group's turn in Ajv's order — before or
        // after the data's own group.
        let (at, kws) = group_of(o, &*data);
        if self.late_type(o, at, Late::Before, path) {
            valid = false;
            if !self.collect {
                return false;
            }
        }
        if let Some(kws) = kws {
            if let Some(d) = &o.defaults {
                eval_step!(@defaults self, d, data, $($m)?);
            }
            for kw in kws {
                if !eval_step!(@hot self, kw, data, path, ev, $kw, $($m)?) {
                    valid = false;
                    if !self.collect {
                        return false;
                    }
                }
            }
            if self.late_type(o, at, Late::After, path) {
                valid = false;
            }
        }
        valid
    }

}
    };
}

/// The keyword dispatch, with the common keywords inline.
macro_rules! evaluator_kw {
    ($node:ident, $kw:ident, $cold:ident, $parts:ident, $($m:tt)?) => {
impl<'t> Run<'t> {
    fn $kw(&mut self, kw: &'t Kw, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev) -> bool {
        let track = self.tree.track;
        match kw {
            Kw::Ref(sub) => {
                let mut child = Ev::default();
                let ok = self.$node(sub.node, data, path, &mut child);
                if track {
                    apply_merge(ev, &child, sub.props, sub.items, ok);
                }
                ok
            }
            Kw::Const { value, site } => {
                if js::equal(&*data, value) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::Enum { values, site } => {
                if in_enum(values, &*data) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::Limit { cmp, limit, site } => {
                let Value::Number(n) = &*data else { return true };
                if !limit_violated(*cmp, js::num(n), *limit) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::MultipleOf { by, site } => {
                let Value::Number(n) = &*data else { return true };
                if !not_multiple(js::num(n), *by) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::Format { format, site } => {
                let ok = match &*data {
                    Value::String(s) => format.data_type() != Some(crate::formats::FormatType::String) || format.check_str(s),
                    Value::Number(n) => format.data_type() != Some(crate::formats::FormatType::Number) || format.check_num(n),
                    _ => true,
                };
                if ok {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::MaxLength { limit, site } => {
                let Value::String(s) = &*data else { return true };
                if js::len_at_most(s, *limit) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::MinLength { limit, site } => {
                let Value::String(s) = &*data else { return true };
                if js::len_at_least(s, *limit) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::Pattern { pattern, site } => {
                let Value::String(s) = &*data else { return true };
                if pattern.matches(s, &mut self.steps, || path.render_string(), true) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::MaxItems { limit, site } | Kw::MinItems { limit, site } => {
                let Value::Array(a) = &*data else { return true };
                let max = matches!(kw, Kw::MaxItems { .. });
                let len = a.len() as f64;
                if (max && len <= *limit) || (!max && len >= *limit) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::MaxProperties { limit, site } | Kw::MinProperties { limit, site } => {
                let Value::Object(m) = &*data else { return true };
                let max = matches!(kw, Kw::MaxProperties { .. });
                let len = m.len() as f64;
                if (max && len <= *limit) || (!max && len >= *limit) {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::Tuple { items } => $parts::tuple(self, items, data, path, ev, track),
            Kw::ItemsFrom { start, child, site } => $parts::items_from(self, start, child, site, data, path, ev, track),
            Kw::UniqueItems { scalar_types, site } => {
                let Value::Array(arr) = &*data else { return true };
                self.unique_items_r(arr, *scalar_types, site, path)
            }
            Kw::Required { names } => {
                let Value::Object(m) = &*data else { return true };
                let mut valid = true;
                for n in names {
                    if has_key(m, &n.name) || js::inherited(&n.name) {
                        continue;
                    }
                    valid = false;
                    if !self.collect {
                        return false;
                    }
                    self.report(path, &n.site);
                }
                valid
            }
            Kw::AdditionalProperties { child, props, patterns, site } => $parts::additional_properties(self, child, props, patterns, site, data, path, ev, track),
            Kw::Properties { props, plain, names } => $parts::properties(self, props, plain, names, data, path, ev, track),
            Kw::Shape(shape) => eval_step!(@shape self, shape, data, path, ev, $kw, $($m)?),
            _ => self.$cold(kw, data, path, ev),
        }
    }

}
    };
}

/// The applicators and rarer keywords.
macro_rules! evaluator_cold {
    ($node:ident, $cold:ident, $parts:ident, $($m:tt)?) => {
impl<'t> Run<'t> {
    /// The applicators and rarer keywords, out of line: keeping them out of `$kw` keeps its
    /// stack frame small, and `$kw` runs for every keyword of every node.
    #[inline(never)]
    fn $cold(&mut self, kw: &'t Kw, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev) -> bool {
        let track = self.tree.track;
        match kw {
            Kw::DynamicAnchor { anchor, target } => {
                if self.dyn_target(anchor).is_none() {
                    self.dyn_anchors.push((&**anchor, *target));
                }
                true
            }
            Kw::DynamicRef { anchor, use_anchor, fallback, merge_props, merge_items } => {
                let target = if *use_anchor { self.dyn_target(anchor).unwrap_or(*fallback) } else { *fallback };
                let mut child = Ev::default();
                let ok = self.$node(target, data, path, &mut child);
                if track {
                    apply_merge(ev, &child, *merge_props, *merge_items, ok);
                }
                ok
            }
            Kw::Fail { site } => {
                self.report(path, site);
                false
            }
            Kw::Not { node, site } => {
                let before = self.errors.len();
                let was = self.collect;
                self.collect = false;
                let mut child = Ev::default();
                let ok = self.$node(*node, &$($m)? *data, path, &mut child);
                self.collect = was;
                self.errors.truncate(before);
                if ok {
                    self.report(path, site);
                    return false;
                }
                true
            }
            Kw::AnyOf { branches, site } => {
                let before = self.errors.len();
                let mut any = false;
                for b in branches {
                    let mut child = Ev::default();
                    let ok = self.$node(b.node, &$($m)? *data, path, &mut child);
                    if track {
                        apply_merge(ev, &child, b.props, b.items, ok);
                    }
                    any |= ok;
                    // With `unevaluated*` in play every branch's annotations count (Ajv evaluates them all).
                    if any && !track {
                        break;
                    }
                }
                if any {
                    self.errors.truncate(before);
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::OneOf { branches, site } => $parts::one_of(self, branches, site, data, path, ev, track),
            Kw::AllOf { branches } => {
                let mut valid = true;
                for b in branches {
                    let mut child = Ev::default();
                    let ok = self.$node(b.node, &$($m)? *data, path, &mut child);
                    if track {
                        apply_merge(ev, &child, b.props, b.items, ok);
                    }
                    if !ok {
                        valid = false;
                        if !self.collect {
                            return false;
                        }
                    }
                }
                valid
            }
            Kw::If { cond, then, els, sites, merge_cond } => $parts::if_then_else(self, cond, then, els, sites, merge_cond, data, path, ev, track),
            Kw::FormatLimit { format, cmp, limit, site } => {
                let Value::String(s) = &*data else { return true };
                let Some(c) = format.compare(s, limit) else { return true };
                let fail = match cmp {
                    Cmp::Max => c > 0.0,
                    Cmp::Min => c < 0.0,
                    Cmp::ExMax => c >= 0.0,
                    Cmp::ExMin => c <= 0.0,
                };
                if !fail {
                    return true;
                }
                self.report(path, site);
                false
            }
            Kw::Contains { node, min, max, site } => $parts::contains(self, node, min, max, site, data, path, ev, track),
            Kw::UnevaluatedItems { child, at, path: sp } => $parts::unevaluated_items(self, child, at, sp, data, path, ev, track),
            Kw::PropertyNames { node, site } => {
                let Value::Object(m) = &*data else { return true };
                let mut valid = true;
                let keys: Vec<&String> = if js::in_js_order(m) { m.keys().collect() } else { js::ordered_keys(m.keys()) };
                for k in keys {
                    if !self.property_name(*node, k, path) {
                        valid = false;
                        if !self.collect {
                            return false;
                        }
                        self.report_name(path, site, k);
                    }
                }
                valid
            }
            Kw::PropertyDeps { deps } => {
                let Value::Object(m) = &*data else { return true };
                let mut valid = true;
                for (prop, list) in deps {
                    if !(has_key(m, prop) || js::inherited(prop)) {
                        continue;
                    }
                    for (d, site) in list {
                        if has_key(m, d) || js::inherited(d) {
                            continue;
                        }
                        valid = false;
                        if !self.collect {
                            return false;
                        }
                        self.report(path, site);
                    }
                }
                valid
            }
            Kw::PatternProperties { patterns, track: mark } => $parts::pattern_properties(self, patterns, mark, data, path, ev, track),
            Kw::SchemaDeps { deps } => $parts::schema_deps(self, deps, data, path, ev, track),
            Kw::UnevaluatedProperties { child, site } => $parts::unevaluated_properties(self, child, site, data, path, ev),
            // The rest are evaluated by `$kw`.
            _ => true,
        }
    }
}
    };
}

/// The array keywords split out of the dispatch.
macro_rules! evaluator_items {
    ($node:ident, $($m:tt)?) => {
    /// `items` as a tuple (`prefixItems`, or an `items` array before 2020-12).
    #[inline(always)]
    pub(super) fn tuple<'t>(run: &mut Run<'t>, items: &'t [Option<NodeId>], data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        if track {
            merge_i(&mut ev.items, Items::Num(items.len()));
        }
        let Value::Array(arr) = data else { return true };
        let mut valid = true;
        for (i, (item, sch)) in arr.iter_mut_or_ref().zip(items.iter()).enumerate() {
            let Some(node) = sch else { continue };
            let p = PathNode::index(path, i);
            let mut child = Ev::default();
            if !run.$node(*node, item, &p, &mut child) {
                valid = false;
                if !run.collect {
                    return false;
                }
            }
        }
        valid
    }

    /// `items` (or `additionalItems`) over the items after the prefix.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn items_from<'t>(run: &mut Run<'t>, start: &usize, child: &'t Child, site: &'t SiteRef, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        if track {
            ev.items = Items::All;
        }
        let Value::Array(arr) = data else { return true };
        match child {
            Child::False => {
                if arr.len() <= *start {
                    return true;
                }
                run.report(path, site);
                false
            }
            Child::Node(node) => {
                let mut valid = true;
                for (i, item) in arr.iter_mut_or_ref().enumerate().skip(*start) {
                    let p = PathNode::index(path, i);
                    if !eval_step!(@child run, *node, item, &p, $node) {
                        valid = false;
                        if !run.collect {
                            return false;
                        }
                    }
                }
                valid
            }
        }
    }

    /// `contains` with `minContains`/`maxContains`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn contains<'t>(run: &mut Run<'t>, node: &'t Option<NodeId>, min: &f64, max: &Option<f64>, site: &'t SiteRef, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        let Value::Array(arr) = data else { return true };
        let len = arr.len();
        let valid = match node {
            None => (len as f64) >= *min && max.is_none_or(|m| (len as f64) <= m),
            Some(node) => {
                if track {
                    ev.items = Items::All;
                }
                let before = run.errors.len();
                let mut count = 0f64;
                let mut valid = *min == 0.0;
                for (i, item) in arr.iter_mut_or_ref().enumerate() {
                    let p = PathNode::index(path, i);
                    let mut c = Ev::default();
                    let ok = run.$node(*node, item, &p, &mut c);
                    if !ok {
                        continue;
                    }
                    count += 1.0;
                    match max {
                        None => {
                            if count >= *min {
                                valid = true;
                                break;
                            }
                        }
                        Some(mx) => {
                            if count > *mx {
                                valid = false;
                                break;
                            }
                            if count >= *min {
                                valid = true;
                            }
                        }
                    }
                }
                if valid {
                    run.errors.truncate(before);
                }
                valid
            }
        };
        if valid {
            return true;
        }
        run.report(path, site);
        false
    }
    };
}

/// The object keywords split out of the dispatch.
macro_rules! evaluator_properties {
    ($node:ident, $($m:tt)?) => {
    /// `additionalProperties`: the keys neither `properties` nor `patternProperties` declare.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn additional_properties<'t>(run: &mut Run<'t>, child: &'t Child, props: &'t DeclaredNames, patterns: &'t [Arc<Pattern>], site: &'t SiteRef, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        if track {
            ev.props = Props::All;
        }
        let Value::Object(m) = data else { return true };
        let mut at = 0;
        // Order only matters when something is reported: check first, order later.
        let Some(first) = m.keys().position(|k| !declared_name(props, patterns, &mut run.steps, path, &mut at, k)) else {
            return true;
        };
        // The keys before the first undeclared one are declared; when the map already
        // is in JavaScript order they stay first, and need no second look.
        let in_order = js::in_js_order(m);
        let skip = if in_order { first } else { 0 };
        eval_step!(@order m, in_order, $($m)?);
        let mut valid = true;
        for (i, (k, v)) in m.iter_mut_or_ref().skip(skip).enumerate() {
            // In order, the first key left is the undeclared one found above.
            if (!in_order || i > 0) && declared_name(props, patterns, &mut run.steps, path, &mut at, k) {
                continue;
            }
            match child {
                Child::False => {
                    valid = false;
                    if !run.collect {
                        return false;
                    }
                    run.report_name(path, site, k);
                }
                Child::Node(node) => {
                    let p = PathNode::key(path, k);
                    let mut c = Ev::default();
                    if !run.$node(*node, v, &p, &mut c) {
                        valid = false;
                        if !run.collect {
                            return false;
                        }
                    }
                }
            }
        }
        valid
    }

    /// `properties`: each declared name present (or inherited, as JavaScript sees it).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn properties<'t>(run: &mut Run<'t>, props: &'t [(Box<str>, Option<NodeId>)], plain: &bool, names: &'t [Box<str>], data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        if track {
            merge_p(&mut ev.props, &Props::Keys(names.iter().map(|n| n.to_string()).collect()));
        }
        let Value::Object(m) = data else { return true };
        let mut valid = true;
        #[allow(unused_mut)] // not moved by the `&mut` form
        let mut cursor = eval_step!(@cursor m, $($m)?);
        for (name, node) in props {
            let Some(node) = node else { continue };
            let Some(v) = eval_step!(@get m, cursor, name, $($m)?) else {
                if js::inherited(name) {
                    let p = PathNode::key(path, name);
                    let mut c = Ev::default();
                    if !run.node_r(*node, &JS_FUNCTION, &p, &mut c) {
                        valid = false;
                        if !run.collect {
                            return false;
                        }
                    }
                }
                continue;
            };
            let p = if *plain { PathNode::plain_key(path, name) } else { PathNode::key(path, name) };
            if !eval_step!(@child run, *node, v, &p, $node) {
                valid = false;
                if !run.collect {
                    return false;
                }
            }
        }
        valid
    }

    /// `patternProperties`: every key each pattern matches.
    #[inline(always)]
    pub(super) fn pattern_properties<'t>(run: &mut Run<'t>, patterns: &'t [(Arc<Pattern>, Option<NodeId>)], mark: &bool, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        let Value::Object(m) = data else { return true };
        eval_step!(@order m, js::in_js_order(m), $($m)?);
        let mut valid = true;
        for (pat, node) in patterns {
            for (k, v) in m.iter_mut_or_ref() {
                // Out of regex steps: not applied (the budget fails the validation).
                let at = || PathNode::key(path, k).render_string();
                if !pat.matches(k, &mut run.steps, at, false) {
                    continue;
                }
                if let Some(node) = node {
                    let p = PathNode::key(path, k);
                    let mut c = Ev::default();
                    if !run.$node(*node, v, &p, &mut c) {
                        valid = false;
                        if !run.collect {
                            return false;
                        }
                    }
                }
                if *mark && track {
                    merge_p(&mut ev.props, &Props::Keys(vec![k.clone()]));
                }
            }
        }
        valid
    }
    };
}

/// The applicators split out of the out-of-line dispatch.
macro_rules! evaluator_applicators {
    ($node:ident, $($m:tt)?) => {
    /// `oneOf`: exactly one branch passes (`passingSchemas` says which two when more do).
    #[inline(always)]
    pub(super) fn one_of<'t>(run: &mut Run<'t>, branches: &'t [Option<Sub>], site: &'t SiteRef, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        let before = run.errors.len();
        let mut valid = false;
        let mut passing: Value = Value::Null;
        let mut stopped_at = branches.len();
        for (i, b) in branches.iter().enumerate() {
            let (ok, child) = match b {
                None => (true, None),
                Some(sub) => {
                    let mut child = Ev::default();
                    let ok = run.$node(sub.node, &$($m)? *data, path, &mut child);
                    (ok, Some((child, sub)))
                }
            };
            if i > 0 && ok && valid {
                valid = false;
                passing = Value::Array(vec![passing, Value::from(i)]);
                stopped_at = i + 1;
                break;
            }
            if ok {
                valid = true;
                passing = Value::from(i);
                if track {
                    if let Some((child, sub)) = &child {
                        apply_merge(ev, child, sub.props, sub.items, true);
                    }
                }
            } else if track {
                if let Some((_, sub)) = &child {
                    skip_merge(ev, sub.props, sub.items);
                }
            }
        }
        if track {
            for b in branches.iter().skip(stopped_at).flatten() {
                skip_merge(ev, b.props, b.items);
            }
        }
        if valid {
            run.errors.truncate(before);
            return true;
        }
        run.report_with(path, site, Fill::Value(Box::new(passing)));
        false
    }

    /// `if`/`then`/`else`: the condition quietly, then the branch it picks.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn if_then_else<'t>(run: &mut Run<'t>, cond: &NodeId, then: &'t Option<Sub>, els: &'t Option<Sub>, sites: &'t [SiteRef; 2], merge_cond: &(Merge, Merge), data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        let before = run.errors.len();
        let was = run.collect;
        run.collect = false;
        let mut child = Ev::default();
        let c = run.$node(*cond, &$($m)? *data, path, &mut child);
        run.collect = was;
        run.errors.truncate(before);
        if track {
            apply_merge(ev, &child, merge_cond.0, merge_cond.1, c);
        }
        let (branch, other, site) = if c { (then, els, &sites[0]) } else { (els, then, &sites[1]) };
        if track {
            if let Some(o) = other {
                skip_merge(ev, o.props, o.items);
            }
        }
        let Some(b) = branch else { return true };
        let mut child = Ev::default();
        let ok = run.$node(b.node, &$($m)? *data, path, &mut child);
        if track {
            apply_merge(ev, &child, b.props, b.items, ok);
        }
        if ok {
            return true;
        }
        run.report(path, site);
        false
    }

    /// `dependentSchemas` (and `dependencies` with schemas): each present property's schema.
    #[inline(always)]
    pub(super) fn schema_deps<'t>(run: &mut Run<'t>, deps: &'t [(Box<str>, Sub)], data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        let mut valid = true;
        for (prop, sub) in deps {
            let present = match &*data {
                Value::Object(m) => has_key(m, prop) || js::inherited(prop),
                _ => false,
            };
            if !present {
                if track {
                    skip_merge(ev, sub.props, sub.items);
                }
                continue;
            }
            let mut child = Ev::default();
            let ok = run.$node(sub.node, &$($m)? *data, path, &mut child);
            if track {
                apply_merge(ev, &child, sub.props, sub.items, ok);
            }
            if !ok {
                valid = false;
                if !run.collect {
                    return false;
                }
            }
        }
        valid
    }
    };
}

/// `unevaluatedItems` and `unevaluatedProperties`.
macro_rules! evaluator_unevaluated {
    ($node:ident, $($m:tt)?) => {
    /// `unevaluatedItems`: the items no keyword evaluated.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn unevaluated_items<'t>(run: &mut Run<'t>, child: &'t Child, at: &'t ItemsAt, sp: &'t str, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev, track: bool) -> bool {
        let Value::Array(arr) = data else { return true };
        let len = arr.len();
        // `len > items` with JavaScript's coercions.
        let (exceeds, from, limit) = match at {
            ItemsAt::Static(n) => (len > *n, *n, Value::from(*n)),
            ItemsAt::Dynamic => match ev.items {
                Items::Undef => (false, 0, Value::Null),
                Items::All => (len > 1, 1, Value::Bool(true)),
                Items::Num(n) => (len > n, n, Value::from(n)),
            },
        };
        if track {
            ev.items = Items::All;
        }
        if !exceeds {
            return true;
        }
        match child {
            Child::False => {
                let shown = if limit.is_boolean() { "true".to_owned() } else { js::fmt_value(&limit) };
                run.issue(path, sp, "unevaluatedItems", params1("limit", limit), format!("must NOT have more than {shown} items"));
                false
            }
            Child::Node(node) => {
                let mut valid = true;
                for (i, item) in arr.iter_mut_or_ref().enumerate().skip(from) {
                    let p = PathNode::index(path, i);
                    if !eval_step!(@child run, *node, item, &p, $node) {
                        valid = false;
                        if !run.collect {
                            return false;
                        }
                    }
                }
                valid
            }
        }
    }

    /// `unevaluatedProperties`: the keys no keyword evaluated.
    #[inline(always)]
    pub(super) fn unevaluated_properties<'t>(run: &mut Run<'t>, child: &'t Child, site: &'t SiteRef, data: &$($m)? Value, path: &PathNode<'_>, ev: &mut Ev) -> bool {
        let evaluated = std::mem::replace(&mut ev.props, Props::All);
        if evaluated == Props::All {
            return true;
        }
        let Value::Object(m) = data else { return true };
        eval_step!(@order m, js::in_js_order(m), $($m)?);
        let mut valid = true;
        for (k, v) in m.iter_mut_or_ref() {
            if let Props::Keys(keys) = &evaluated {
                if keys.iter().any(|x| x == k) {
                    continue;
                }
            }
            match child {
                Child::False => {
                    valid = false;
                    if !run.collect {
                        return false;
                    }
                    run.report_name(path, site, k);
                }
                Child::Node(node) => {
                    let p = PathNode::key(path, k);
                    let mut c = Ev::default();
                    if !run.$node(*node, v, &p, &mut c) {
                        valid = false;
                        if !run.collect {
                            return false;
                        }
                    }
                }
            }
        }
        valid
    }
    };
}

/// The small steps that differ between the two walkers (filling defaults, key order, map
/// lookups) and the shortcuts of the plain one.
macro_rules! eval_step {
    (@defaults $self:ident, $d:ident, $data:ident, mut) => {
        match &mut *$data {
            Value::Object(m) => {
                let mut added = false;
                for (k, v) in &$d.props {
                    if !m.contains_key(k.as_ref()) {
                        m.insert(k.to_string(), v.clone());
                        added = true;
                    }
                }
                if added {
                    js::reorder(m);
                }
            }
            Value::Array(a) => {
                for (i, v) in &$d.items {
                    // Ajv assigns `data[i]` when undefined; JSON arrays have no holes past the end
                    // except by extension, which fills the gap with `null`-like holes.
                    if *i >= a.len() {
                        a.resize(*i, Value::Null);
                        a.push(v.clone());
                    }
                }
            }
            _ => {}
        }
    };
    (@defaults $self:ident, $d:ident, $data:ident, ) => {
        let _ = $d;
    };
    (@order $m:ident, $in_order:expr, mut) => {
        if !$in_order {
            js::reorder($m);
        }
    };
    (@order $m:ident, $in_order:expr, ) => {
        let $m = Entries::of($m, $in_order);
        let $m = &$m;
    };
    // A subschema applied to a part of the data whose evaluated state nobody reads (`items`,
    // `properties`): a leaf goes straight to the lean path.
    (@child $self:ident, $node_id:expr, $v:expr, $p:expr, $node:ident) => {{
        let tree = $self.tree;
        match &tree.nodes[$node_id] {
            Node::Obj(o) if o.leaf && $self.depth < MAX_EVAL_DEPTH => $self.leaf(o, &*$v, $p),
            _ => $self.$node($node_id, $v, $p, &mut Ev::default()),
        }
    }};
    // A keyword of a type group. The plain walker settles the commonest ones of arrays and
    // objects here: the keyword function's frame, sized for every keyword, costs more than
    // they do.
    (@hot $self:ident, $kw_ref:ident, $data:ident, $path:ident, $ev:ident, $kw:ident, mut) => {
        $self.$kw($kw_ref, &mut *$data, $path, $ev)
    };
    (@hot $self:ident, $kw_ref:ident, $data:ident, $path:ident, $ev:ident, $kw:ident, ) => {
        match ($kw_ref, $data) {
            (Kw::Shape(shape), Value::Object(m))
                if shape.additional.is_some() || m.len() <= SMALL_MAP =>
            {
                $self.shape_any_r(shape, m, $path)
            }
            (Kw::ItemsFrom { start, child: Child::Node(node), .. }, Value::Array(arr))
                if !$self.tree.track =>
            {
                $self.items_r(*node, arr, *start, $path)
            }
            (Kw::MaxItems { limit, site }, Value::Array(arr)) => {
                arr.len() as f64 <= *limit || { $self.report($path, site); false }
            }
            (Kw::MinItems { limit, site }, Value::Array(arr)) => {
                arr.len() as f64 >= *limit || { $self.report($path, site); false }
            }
            (Kw::UniqueItems { scalar_types, site }, Value::Array(arr)) => {
                $self.unique_items_r(arr, *scalar_types, site, $path)
            }
            _ => $self.$kw($kw_ref, $data, $path, $ev),
        }
    };
    // The walker that fills defaults keeps the fused keywords apart (defaults go in as each
    // runs); the plain walker runs the fused form.
    (@shape $self:ident, $shape:ident, $data:ident, $path:ident, $ev:ident, $kw:ident, mut) => {
        eval_step!(@apart $self, $shape, $data, $path, $ev, $kw)
    };
    // Without `additionalProperties`, a big object's keys are not all matched: the declared
    // names are looked up instead.
    (@shape $self:ident, $shape:ident, $data:ident, $path:ident, $ev:ident, $kw:ident, ) => {
        match $data {
            Value::Object(m) if $shape.additional.is_some() || m.len() <= SMALL_MAP => {
                $self.shape_any_r($shape, m, $path)
            }
            _ => eval_step!(@apart $self, $shape, $data, $path, $ev, $kw),
        }
    };
    (@apart $self:ident, $shape:ident, $data:ident, $path:ident, $ev:ident, $kw:ident) => {{
        let mut valid = true;
        for k in &$shape.originals {
            if !$self.$kw(k, $data, $path, $ev) {
                valid = false;
                if !$self.collect {
                    break;
                }
            }
        }
        valid
    }};
    (@cursor $m:ident, mut) => {
        ()
    };
    (@cursor $m:ident, ) => {
        $m.iter()
    };
    (@get $m:ident, $c:ident, $k:ident, mut) => {{
        let _ = $c;
        if $m.len() <= SMALL_MAP {
            $m.iter_mut().find(|(k, _)| js::key_eq(k, $k)).map(|(_, v)| v)
        } else {
            $m.get_mut($k.as_ref())
        }
    }};
    (@get $m:ident, $c:ident, $k:ident, ) => {
        get_next($m, &mut $c, $k)
    };
}
