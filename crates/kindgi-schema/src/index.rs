//! The resource index of the documents being compiled: which URI (`$id`), anchor (`$anchor`,
//! `$dynamicAnchor`, draft-07 `$id: "#x"`) names which subschema, and each subschema's base URI.
//! `$ref` resolution reads only this index; nothing is fetched.

use serde_json::Value;
use std::collections::HashMap;

use crate::CompileError;
use crate::path::{escape_pointer, percent_decode, unescape_pointer};
use crate::uri::{normalize_id, resolve, split_fragment};

/// A subschema: document number and JSON Pointer inside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Loc {
    pub doc: usize,
    pub ptr: String,
}

#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Absolute URI (no fragment) → resource root.
    pub ids: HashMap<String, Loc>,
    /// `uri#anchor` → subschema.
    pub anchors: HashMap<String, Loc>,
    /// Base URI of every indexed subschema.
    pub bases: HashMap<Loc, String>,
    /// The base URI of each document's root.
    pub roots: Vec<String>,
}

const ARRAY_KEYWORDS: &[&str] = &["items", "allOf", "anyOf", "oneOf", "prefixItems"];
const PROPS_KEYWORDS: &[&str] = &[
    "$defs",
    "definitions",
    "properties",
    "patternProperties",
    "dependencies",
    "dependentSchemas",
];
const SKIP_KEYWORDS: &[&str] = &[
    "default",
    "enum",
    "const",
    "required",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "multipleOf",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "examples",
];

fn valid_anchor(a: &str) -> bool {
    let mut c = a.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || matches!(x, '-' | '.' | '_'))
}

impl Index {
    pub(crate) fn add_document(&mut self, doc: usize, root: &Value) -> Result<(), CompileError> {
        let base = root
            .get("$id")
            .and_then(Value::as_str)
            .map(|s| normalize_id(s).to_owned())
            .unwrap_or_default();
        self.roots.push(base.clone());
        let loc = Loc {
            doc,
            ptr: String::new(),
        };
        self.ids.entry(base.clone()).or_insert_with(|| loc.clone());
        // An explicit walk stack: schemas may be nested arbitrarily deep.
        let mut stack: Vec<(&Value, String, String, bool)> =
            vec![(root, String::new(), base, true)];
        while let Some((v, ptr, parent_base, is_root)) = stack.pop() {
            let Some(obj) = v.as_object() else { continue };
            let mut b = parent_base.clone();
            if let Some(id) = obj.get("$id").and_then(Value::as_str) {
                let full = normalize_id(&resolve(&parent_base, normalize_id(id))).to_owned();
                if !is_root {
                    let here = Loc {
                        doc,
                        ptr: ptr.clone(),
                    };
                    if full.contains('#') {
                        self.anchors.entry(full.clone()).or_insert(here);
                    } else {
                        if let Some(prev) = self.ids.get(&full) {
                            if *prev != here {
                                return Err(CompileError::new(format!(
                                    "reference \"{full}\" resolves to more than one schema"
                                )));
                            }
                        }
                        self.ids.insert(full.clone(), here);
                    }
                }
                b = full;
            }
            // Ajv's `getSchemaRefs` skips the root: its anchors are neither checked nor registered.
            for key in ["$anchor", "$dynamicAnchor"] {
                if is_root {
                    break;
                }
                if let Some(a) = obj.get(key).and_then(Value::as_str) {
                    if !valid_anchor(a) {
                        return Err(CompileError::new(format!("invalid anchor \"{a}\"")));
                    }
                    let full = resolve(&b, &format!("#{a}"));
                    self.anchors.entry(full).or_insert(Loc {
                        doc,
                        ptr: ptr.clone(),
                    });
                }
            }
            self.bases.insert(
                Loc {
                    doc,
                    ptr: ptr.clone(),
                },
                b.clone(),
            );
            for (k, child) in obj {
                let kp = format!("{ptr}/{}", escape_pointer(k));
                match child {
                    Value::Array(items) if ARRAY_KEYWORDS.contains(&k.as_str()) => {
                        for (i, it) in items.iter().enumerate() {
                            stack.push((it, format!("{kp}/{i}"), b.clone(), false));
                        }
                    }
                    Value::Object(m) if PROPS_KEYWORDS.contains(&k.as_str()) => {
                        for (pk, pv) in m {
                            stack.push((
                                pv,
                                format!("{kp}/{}", escape_pointer(pk)),
                                b.clone(),
                                false,
                            ));
                        }
                    }
                    Value::Object(_) if !SKIP_KEYWORDS.contains(&k.as_str()) => {
                        stack.push((child, kp, b.clone(), false));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// The base URI of a subschema (the nearest `$id` above it).
    pub(crate) fn base_of(&self, loc: &Loc) -> String {
        if let Some(b) = self.bases.get(loc) {
            return b.clone();
        }
        self.roots.get(loc.doc).cloned().unwrap_or_default()
    }

    /// Resolves a `$ref` written in a subschema whose base URI is `base`.
    pub(crate) fn resolve_ref(&self, docs: &[&Value], base: &str, reference: &str) -> Option<Loc> {
        let full = resolve(base, normalize_id(reference));
        if let Some(l) = self.ids.get(&full) {
            return Some(l.clone());
        }
        if let Some(l) = self.anchors.get(&full) {
            return Some(l.clone());
        }
        let (uri, frag) = split_fragment(&full);
        let res = self.ids.get(uri)?;
        let frag = frag.unwrap_or("");
        if frag.is_empty() {
            return Some(res.clone());
        }
        if !frag.starts_with('/') {
            return None;
        }
        let mut v = pointer(docs.get(res.doc)?, &res.ptr)?;
        let mut ptr = res.ptr.clone();
        for part in frag[1..].split('/') {
            let key = unescape_pointer(&percent_decode(part));
            v = match v {
                Value::Object(m) => m.get(&key)?,
                Value::Array(a) => a.get(key.parse::<usize>().ok()?)?,
                _ => return None,
            };
            ptr.push('/');
            ptr.push_str(&escape_pointer(&key));
        }
        Some(Loc { doc: res.doc, ptr })
    }
}

/// The value at a JSON Pointer.
pub(crate) fn pointer<'v>(root: &'v Value, ptr: &str) -> Option<&'v Value> {
    if ptr.is_empty() {
        return Some(root);
    }
    root.pointer(ptr)
}
