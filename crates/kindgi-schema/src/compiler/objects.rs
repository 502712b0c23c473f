//! The object keywords of [`Compiler`]: `required`, `properties`, `patternProperties`,
//! `additionalProperties`, `propertyNames`, the dependency keywords and
//! `unevaluatedProperties`.
//!
//! One family per file, called from [`Compiler::keyword`]; each keyword is a method of its own.

use serde_json::{Map, Value};
use std::sync::Arc;

use crate::CompileError;
use crate::issue::{Site, SiteRef};
use crate::js;
use crate::jsregex::compile_at;
use crate::names::DeclaredNames;
use crate::tree::{Child, Kw, Merge, Pattern, RequiredName, Sub, params1};

use super::{
    Compiler, Cx, PSt, Sub2, err, merge_items, merge_props, obj_keys, schema_props, strict_err,
};

impl<'a> Compiler<'a> {
    /// `required` (with strictRequired: each name declared).
    #[inline]
    pub(super) fn required(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let strict = self.strict(cx);
        let Some(a) = v.as_array() else {
            return Err(err("required value must be [\"array\"]"));
        };
        let names: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
        if strict {
            let props = o.get("properties").and_then(Value::as_object);
            for r in &names {
                let in_props = props.is_some_and(|p| p.contains_key(*r) || js::inherited(r));
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
        Ok(())
    }

    /// `propertyNames`.
    #[inline]
    pub(super) fn property_names(
        &mut self,
        cx: &mut Cx,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `additionalProperties`: the names neither `properties` nor `patternProperties` declare.
    #[inline]
    pub(super) fn additional_properties(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `dependencies`, `dependentRequired` and `dependentSchemas`: the property lists and the schemas.
    #[inline]
    pub(super) fn dependencies(
        &mut self,
        cx: &mut Cx,
        k: &str,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `properties`.
    #[inline]
    pub(super) fn properties(
        &mut self,
        cx: &mut Cx,
        v: &Value,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `patternProperties` (strict: no declared property may match a pattern).
    #[inline]
    pub(super) fn pattern_properties(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let strict = self.strict(cx);
        let Some(m) = v.as_object() else {
            return Err(err("patternProperties value must be [\"object\"]"));
        };
        let pats = schema_props(Some(v));
        let mut always = Vec::new();
        for p in &pats {
            always.push(self.always_valid(cx, &m[p.as_str()])?);
        }
        if pats.is_empty() || (always.iter().all(|a| *a) && (!self.track || cx.props == PSt::All)) {
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
        Ok(())
    }

    /// `unevaluatedProperties`: the properties no other keyword evaluated.
    #[inline]
    pub(super) fn unevaluated_properties(
        &mut self,
        cx: &mut Cx,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }
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
