//! The array keywords of [`Compiler`]: tuples (`prefixItems`, `items` arrays), `items`,
//! `additionalItems`, `contains`, `uniqueItems` and `unevaluatedItems`.
//!
//! One family per file, called from [`Compiler::keyword`]; each keyword is a method of its own.

use serde_json::{Map, Value};

use crate::CompileError;
use crate::dialect::Dialect;
use crate::issue::Site;
use crate::js;
use crate::tree::{Child, ItemsAt, Kw, params1, ty};

use super::{Compiler, Cx, ISt, Sub2, err, merge_items, strict_err, types_of};

impl<'a> Compiler<'a> {
    /// `prefixItems` (2020-12): a tuple.
    #[inline]
    pub(super) fn prefix_items(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let Some(a) = v.as_array() else {
            return Err(err("prefixItems value must be [\"array\"]"));
        };
        self.tuple(cx, o, a, "prefixItems", "items", out)?;
        Ok(())
    }

    /// `items`: a tuple (an array, before 2020-12) or the schema of every item after the prefix.
    #[inline]
    pub(super) fn items(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `additionalItems` after an `items` tuple.
    #[inline]
    pub(super) fn additional_items(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let strict = self.strict(cx);
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
        Ok(())
    }

    /// `contains` with `minContains`/`maxContains`.
    #[inline]
    pub(super) fn contains(
        &mut self,
        cx: &mut Cx,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
        let strict = self.strict(cx);
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
        Ok(())
    }

    /// `uniqueItems`, with the item types it may compare by scalar.
    #[inline]
    pub(super) fn unique_items(
        &mut self,
        o: &Map<String, Value>,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        let scalar =
            !item_types.is_empty() && !item_types.iter().any(|t| *t == "object" || *t == "array");
        let bits = item_types
            .iter()
            .filter_map(|n| ty::by_name(n))
            .fold(0u8, |a, b| a | b);
        out.push(Kw::UniqueItems {
            scalar_types: scalar.then_some(bits),
            site: self.sites.add(Site::pair(path)),
        });
        Ok(())
    }

    /// `unevaluatedItems`: the items no other keyword evaluated.
    #[inline]
    pub(super) fn unevaluated_items(
        &mut self,
        cx: &mut Cx,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
