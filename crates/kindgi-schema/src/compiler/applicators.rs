//! The in-place applicators of [`Compiler`]: `not`, `anyOf`/`oneOf`/`allOf`, and `if` with
//! `then`/`else`; what their branches evaluate is merged for the unevaluated keywords.
//!
//! One family per file, called from [`Compiler::keyword`]; each keyword is a method of its own.

use serde_json::{Map, Value};

use crate::CompileError;
use crate::issue::Site;
use crate::tree::{Kw, Merge, Sub, params1};

use super::{Compiler, Cx, Sub2, err, merge_items, merge_props, strict_err};

impl<'a> Compiler<'a> {
    /// `not`: a subschema that must fail (or a plain failure when it always passes).
    #[inline]
    pub(super) fn not(
        &mut self,
        cx: &mut Cx,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        if self.always_valid(cx, v)? {
            out.push(Kw::Fail {
                site: self
                    .sites
                    .add(Site::fixed(path, "not", Map::new(), "must NOT be valid")),
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
                site: self
                    .sites
                    .add(Site::fixed(path, "not", Map::new(), "must NOT be valid")),
            });
        }
        Ok(())
    }

    /// `anyOf`, `oneOf` and `allOf`: the branches, with what each one evaluates merged into this schema's.
    #[inline]
    pub(super) fn combination(
        &mut self,
        cx: &mut Cx,
        k: &str,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `if` with its `then` and `else` (nothing when neither constrains).
    #[inline]
    pub(super) fn if_then_else(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let strict = self.strict(cx);
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
        Ok(())
    }
}
