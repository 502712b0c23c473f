//! The reference keywords of [`Compiler`]: `$ref` (inlined or compiled as a function of its
//! own, following a target that is only a `$ref`), `$dynamicRef`/`$recursiveRef` and their anchors.
//!
//! One family per file, called from [`Compiler::keyword`]; each keyword is a method of its own.

use serde_json::Value;
use std::collections::HashSet;

use crate::CompileError;
use crate::index::Loc;
use crate::tree::{Kw, Merge, Sub};
use crate::uri::normalize_id;

use super::{Compiler, Cx, ISt, PSt, Sub2, err, has_ref, merge_items, merge_props, strict_err};

impl<'a> Compiler<'a> {
    /// `$dynamicAnchor` (2020-12) and `$recursiveAnchor` (2019-09): registers the anchor of this resource for the dynamic references below it.
    #[inline]
    pub(super) fn dynamic_anchor(
        &mut self,
        cx: &mut Cx,
        k: &str,
        v: &Value,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let strict = self.strict(cx);
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
        Ok(())
    }

    /// `$dynamicRef` and `$recursiveRef`: the anchor to follow at run time, with this resource as the fallback.
    #[inline]
    pub(super) fn dynamic_ref(
        &mut self,
        cx: &mut Cx,
        k: &str,
        v: &Value,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    pub(super) fn reference(&mut self, cx: &mut Cx, r: &str) -> Result<Kw, CompileError> {
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
