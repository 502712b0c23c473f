//! The four JSON Schema dialects and the keywords each Ajv class knows, in Ajv's order.

use serde_json::Value;

/// A JSON Schema dialect Kindgi validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    Draft06,
    Draft07,
    Draft2019,
    Draft2020,
}

impl Dialect {
    pub(crate) fn meta_uri(self) -> &'static str {
        match self {
            Dialect::Draft06 => "http://json-schema.org/draft-06/schema",
            Dialect::Draft07 => "http://json-schema.org/draft-07/schema",
            Dialect::Draft2019 => "https://json-schema.org/draft/2019-09/schema",
            Dialect::Draft2020 => "https://json-schema.org/draft/2020-12/schema",
        }
    }

    /// Whether the Ajv class tracks evaluated properties/items (`unevaluated*`, `next` keywords).
    pub(crate) fn modern(self) -> bool {
        matches!(self, Dialect::Draft2019 | Dialect::Draft2020)
    }

    /// The dialect a `$schema` value names (Kindgi's rule: one trailing `#` is dropped; absent
    /// means 2020-12).
    pub fn from_schema(schema: &Value) -> Result<Dialect, String> {
        let Some(s) = schema.as_object().and_then(|o| o.get("$schema")) else {
            return Ok(Dialect::Draft2020);
        };
        let found = s
            .as_str()
            .and_then(|u| match u.strip_suffix('#').unwrap_or(u) {
                "https://json-schema.org/draft/2020-12/schema" => Some(Dialect::Draft2020),
                "https://json-schema.org/draft/2019-09/schema" => Some(Dialect::Draft2019),
                "http://json-schema.org/draft-07/schema" => Some(Dialect::Draft07),
                "http://json-schema.org/draft-06/schema" => Some(Dialect::Draft06),
                _ => None,
            });
        found.ok_or_else(|| {
            format!(
                "The schema's $schema {} isn't a JSON Schema dialect Kindgi validates: draft-06, draft-07, 2019-09 or 2020-12.",
                serde_json::to_string(s).unwrap_or_default()
            )
        })
    }
}

/// Keywords with no code (`RULES.keywords` but not `RULES.all`).
const PLAIN: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "$vocabulary",
    "definitions",
    "$async",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
];

/// Draft-06 and draft-07's rules, in Ajv's registration order.
const RULES_DRAFT7: &[&str] = &[
    "$comment",
    "id",
    "$ref",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "multipleOf",
    "maxLength",
    "minLength",
    "pattern",
    "maxProperties",
    "minProperties",
    "required",
    "maxItems",
    "minItems",
    "uniqueItems",
    "type",
    "nullable",
    "const",
    "enum",
    "not",
    "anyOf",
    "oneOf",
    "allOf",
    "if",
    "then",
    "else",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
    "additionalItems",
    "items",
    "contains",
    "format",
    "formatMaximum",
    "formatMinimum",
    "formatExclusiveMaximum",
    "formatExclusiveMinimum",
];
/// Draft 2019-09's rules, in Ajv's registration order.
const RULES_2019: &[&str] = &[
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "$comment",
    "id",
    "$ref",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "multipleOf",
    "maxLength",
    "minLength",
    "pattern",
    "maxProperties",
    "minProperties",
    "required",
    "maxItems",
    "minItems",
    "uniqueItems",
    "type",
    "nullable",
    "const",
    "enum",
    "not",
    "anyOf",
    "oneOf",
    "allOf",
    "if",
    "then",
    "else",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
    "additionalItems",
    "items",
    "contains",
    "format",
    "dependentRequired",
    "dependentSchemas",
    "maxContains",
    "minContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "formatMaximum",
    "formatMinimum",
    "formatExclusiveMaximum",
    "formatExclusiveMinimum",
];
/// Draft 2020-12's rules, in Ajv's registration order.
const RULES_2020: &[&str] = &[
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "$comment",
    "id",
    "$ref",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "multipleOf",
    "maxLength",
    "minLength",
    "pattern",
    "maxProperties",
    "minProperties",
    "required",
    "maxItems",
    "minItems",
    "uniqueItems",
    "type",
    "nullable",
    "const",
    "enum",
    "not",
    "anyOf",
    "oneOf",
    "allOf",
    "if",
    "then",
    "else",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
    "prefixItems",
    "items",
    "contains",
    "format",
    "dependentRequired",
    "dependentSchemas",
    "maxContains",
    "minContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "formatMaximum",
    "formatMinimum",
    "formatExclusiveMaximum",
    "formatExclusiveMinimum",
];

/// Keywords with a definition, in the order Ajv registers them (`RULES.all`).
pub(crate) fn rules(d: Dialect) -> &'static [&'static str] {
    match d {
        Dialect::Draft06 | Dialect::Draft07 => RULES_DRAFT7,
        Dialect::Draft2019 => RULES_2019,
        Dialect::Draft2020 => RULES_2020,
    }
}

/// Whether `key` is a rule (a keyword with a definition) in the dialect.
pub(crate) fn is_rule(d: Dialect, key: &str) -> bool {
    rules(d).contains(&key)
}

/// Whether `key` is any keyword the Ajv class knows.
pub(crate) fn is_keyword(d: Dialect, key: &str) -> bool {
    PLAIN.contains(&key) || is_rule(d, key)
}

/// The JSON types a keyword applies to (its group), `None` for the any-type group.
pub(crate) fn keyword_types(key: &str) -> Option<&'static str> {
    Some(match key {
        "maximum" | "minimum" | "exclusiveMaximum" | "exclusiveMinimum" | "multipleOf" => "number",
        "maxLength"
        | "minLength"
        | "pattern"
        | "formatMaximum"
        | "formatMinimum"
        | "formatExclusiveMaximum"
        | "formatExclusiveMinimum" => "string",
        "format" => "number,string",
        "maxProperties"
        | "minProperties"
        | "required"
        | "propertyNames"
        | "additionalProperties"
        | "dependencies"
        | "properties"
        | "patternProperties"
        | "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedProperties" => "object",
        "maxItems" | "minItems" | "uniqueItems" | "prefixItems" | "items" | "additionalItems"
        | "contains" | "maxContains" | "minContains" | "unevaluatedItems" => "array",
        _ => return None,
    })
}

/// Group keywords in evaluation order.
pub(crate) fn group(d: Dialect, group: &str) -> &'static [&'static str] {
    match (group, d) {
        ("number", _) => &[
            "maximum",
            "minimum",
            "exclusiveMaximum",
            "exclusiveMinimum",
            "multipleOf",
            "format",
        ],
        ("string", _) => &[
            "maxLength",
            "minLength",
            "pattern",
            "format",
            "formatMaximum",
            "formatMinimum",
            "formatExclusiveMaximum",
            "formatExclusiveMinimum",
        ],
        ("array", Dialect::Draft06 | Dialect::Draft07) => &[
            "maxItems",
            "minItems",
            "additionalItems",
            "items",
            "contains",
            "uniqueItems",
        ],
        ("array", Dialect::Draft2019) => &[
            "maxItems",
            "minItems",
            "additionalItems",
            "items",
            "contains",
            "uniqueItems",
            "maxContains",
            "minContains",
            "unevaluatedItems",
        ],
        ("array", Dialect::Draft2020) => &[
            "maxItems",
            "minItems",
            "prefixItems",
            "items",
            "contains",
            "uniqueItems",
            "maxContains",
            "minContains",
            "unevaluatedItems",
        ],
        ("object", Dialect::Draft06 | Dialect::Draft07) => &[
            "maxProperties",
            "minProperties",
            "required",
            "propertyNames",
            "additionalProperties",
            "dependencies",
            "properties",
            "patternProperties",
        ],
        ("object", _) => &[
            "maxProperties",
            "minProperties",
            "required",
            "propertyNames",
            "additionalProperties",
            "dependencies",
            "properties",
            "patternProperties",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        ],
        (_, Dialect::Draft06 | Dialect::Draft07) => &[
            "$comment", "id", "$ref", "type", "nullable", "const", "enum", "not", "anyOf", "oneOf",
            "allOf", "if", "then", "else",
        ],
        _ => &[
            "$dynamicAnchor",
            "$dynamicRef",
            "$recursiveAnchor",
            "$recursiveRef",
            "$comment",
            "id",
            "$ref",
            "type",
            "nullable",
            "const",
            "enum",
            "not",
            "anyOf",
            "oneOf",
            "allOf",
            "if",
            "then",
            "else",
        ],
    }
}
