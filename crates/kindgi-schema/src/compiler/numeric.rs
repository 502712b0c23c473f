//! The numeric keywords of [`Compiler`]: the number bounds, `multipleOf`, and the count
//! limits of strings, arrays and objects (one shape in Ajv: a number compared with a count).
//!
//! One family per file, called from [`Compiler::keyword`]; each keyword is a method of its own.

use serde_json::{Map, Value};

use crate::CompileError;
use crate::issue::Site;
use crate::js;
use crate::js::js_number_value;
use crate::tree::{Cmp, Kw, params1};

use super::{Compiler, err};

impl<'a> Compiler<'a> {
    /// `maximum`, `minimum`, `exclusiveMaximum`, `exclusiveMinimum`.
    #[inline]
    pub(super) fn limit(
        &mut self,
        k: &str,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// `multipleOf`.
    #[inline]
    pub(super) fn multiple_of(
        &mut self,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }

    /// The count limits: `maxLength`/`minLength` (characters), `maxItems`/`minItems`, `maxProperties`/`minProperties` — one arm in Ajv, sharing their message shape.
    #[inline]
    pub(super) fn count_limit(
        &mut self,
        k: &str,
        v: &Value,
        path: Box<str>,
        out: &mut Vec<Kw>,
    ) -> Result<(), CompileError> {
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
        Ok(())
    }
}
