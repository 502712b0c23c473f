//! The string keywords of [`Compiler`]: `format` (and ajv-formats' `formatMaximum` family)
//! and `pattern`.
//!
//! One family per file, called from [`Compiler::keyword`]; each keyword is a method of its own.

use serde_json::{Map, Value};
use std::sync::Arc;

use crate::CompileError;
use crate::formats::Format;
use crate::issue::Site;
use crate::jsregex::compile_at;
use crate::tree::{Cmp, Kw, Pattern, params1};

use super::{Compiler, Cx, err};

impl<'a> Compiler<'a> {
    /// `formatMaximum`, `formatMinimum` and their exclusive forms (ajv-formats), for formats that compare.
    #[inline]
    pub(super) fn format_limit(
        &mut self,
        o: &Map<String, Value>,
        k: &str,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `pattern`.
    #[inline]
    pub(super) fn pattern(
        &mut self,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    pub(super) fn format(
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
}
