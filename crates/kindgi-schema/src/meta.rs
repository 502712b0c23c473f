//! The bundled meta-schemas (the JSON Schema organisation's documents, as Ajv 8.20 ships them)
//! and schema validation against them ("schema is invalid: …").

use serde_json::Value;
use std::sync::LazyLock;

use crate::CompileError;
use crate::compiler::{Compiler, Settings};
use crate::dialect::Dialect;
use crate::eval::{Ev, PathNode, Run};
use crate::tree::Tree;
use crate::uri::normalize_id;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Bool(true))
}

static DRAFT06: LazyLock<Value> =
    LazyLock::new(|| parse(include_str!("../meta/json-schema-draft-06.json")));
static DRAFT07: LazyLock<Value> =
    LazyLock::new(|| parse(include_str!("../meta/json-schema-draft-07.json")));
static D2019: LazyLock<Vec<Value>> = LazyLock::new(|| {
    [
        include_str!("../meta/2019-09/schema.json"),
        include_str!("../meta/2019-09/meta/core.json"),
        include_str!("../meta/2019-09/meta/applicator.json"),
        include_str!("../meta/2019-09/meta/validation.json"),
        include_str!("../meta/2019-09/meta/meta-data.json"),
        include_str!("../meta/2019-09/meta/format.json"),
        include_str!("../meta/2019-09/meta/content.json"),
    ]
    .into_iter()
    .map(parse)
    .collect()
});
static D2020: LazyLock<Vec<Value>> = LazyLock::new(|| {
    [
        include_str!("../meta/2020-12/schema.json"),
        include_str!("../meta/2020-12/meta/core.json"),
        include_str!("../meta/2020-12/meta/applicator.json"),
        include_str!("../meta/2020-12/meta/unevaluated.json"),
        include_str!("../meta/2020-12/meta/validation.json"),
        include_str!("../meta/2020-12/meta/meta-data.json"),
        include_str!("../meta/2020-12/meta/format-annotation.json"),
        include_str!("../meta/2020-12/meta/content.json"),
    ]
    .into_iter()
    .map(parse)
    .collect()
});

/// The meta-schema documents an Ajv instance for `dialect` has registered.
pub(crate) fn documents(dialect: Dialect) -> Vec<&'static Value> {
    match dialect {
        Dialect::Draft06 => vec![&*DRAFT06, &*DRAFT07],
        Dialect::Draft07 => vec![&*DRAFT07],
        Dialect::Draft2019 => D2019.iter().collect(),
        Dialect::Draft2020 => D2020.iter().collect(),
    }
}

fn meta_settings() -> Settings {
    Settings {
        dialect: Dialect::Draft07,
        strict: false,
        use_defaults: false,
        inline_refs: true,
        validate_formats: false,
        extra_keywords: &[],
    }
}

fn build(dialect: Dialect, first: usize) -> Option<Tree> {
    let mut docs = documents(dialect);
    if first >= docs.len() {
        return None;
    }
    docs.swap(0, first);
    let class = if dialect == Dialect::Draft06 {
        Dialect::Draft07
    } else {
        dialect
    };
    let set = Settings {
        dialect: class,
        ..meta_settings()
    };
    Compiler::new(docs, Vec::new(), set).ok()?.compile().ok()
}

static TREES: LazyLock<[Option<Tree>; 4]> = LazyLock::new(|| {
    [
        build(Dialect::Draft06, 0),
        build(Dialect::Draft07, 0),
        build(Dialect::Draft2019, 0),
        build(Dialect::Draft2020, 0),
    ]
});

fn tree_for(dialect: Dialect) -> Option<&'static Tree> {
    let i = match dialect {
        Dialect::Draft06 => 0,
        Dialect::Draft07 => 1,
        Dialect::Draft2019 => 2,
        Dialect::Draft2020 => 3,
    };
    TREES[i].as_ref()
}

/// Ajv's `validateSchema` for a schema compiled by the Ajv class of `class`, whose default
/// meta-schema is `default_meta`.
pub(crate) fn validate_schema(
    schema: &Value,
    class: Dialect,
    default_meta: Dialect,
) -> Result<(), CompileError> {
    let meta = match schema.get("$schema") {
        None => default_meta,
        Some(Value::String(s)) => {
            let id = normalize_id(s);
            let registered: Vec<Dialect> = match class {
                Dialect::Draft06 => vec![Dialect::Draft06, Dialect::Draft07],
                d => vec![d],
            };
            match registered.into_iter().find(|d| d.meta_uri() == id) {
                Some(d) => d,
                None => {
                    return Err(CompileError::new(format!(
                        "no schema with key or ref \"{s}\""
                    )));
                }
            }
        }
        Some(_) => return Err(CompileError::new("$schema must be a string")),
    };
    let Some(tree) = tree_for(meta) else {
        return Ok(());
    };
    let mut run = Run::new(tree, true, &crate::Budgets::DEFAULT);
    let mut ev = Ev::default();
    let valid = run.node_r(tree.root, schema, &PathNode::ROOT, &mut ev);
    // A budget that runs out makes the schema invalid, its issue saying which.
    if !run.finish() && valid {
        return Ok(());
    }
    if run.too_deep {
        return Err(CompileError::new(format!(
            "schema is nested too deeply: more than {} levels",
            crate::eval::MAX_EVAL_DEPTH
        )));
    }
    let text: Vec<String> = run
        .errors
        .iter()
        .map(|e| e.view(&tree.sites, &run.own_sites).to_string())
        .collect();
    Err(CompileError::new(format!(
        "schema is invalid: {}",
        text.join(", ")
    )))
}
