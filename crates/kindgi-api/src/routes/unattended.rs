//! `toolsAllowedUnattended` on a trigger's register or PATCH body (seed 000; beyond the
//! reference): the tool ids whose unattended rule the trigger lifts in its own runs. Every
//! trigger kind (schedules, webhooks, mail) reads it here, so the field, its checks and its
//! refusal are worded once.
//!
//! Only a tenant admin may set it (a project admin's to set, and projects here are the
//! tenant's): anyone else naming it is `403 permission-denied`, whatever the list holds.

use axum::http::StatusCode;
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::routes::key_holder::KeyHolder;

/// The body field.
pub const FIELD: &str = "toolsAllowedUnattended";
/// At most this many tools per trigger.
pub const MAX_TOOLS: usize = 64;
/// A tool id's longest accepted length.
const MAX_TOOL_ID: usize = 200;

/// The field as given (`None`: absent; `Some(vec![])`: `[]` or `null`, clearing it), after
/// checking its shape and that `caller` may set it.
pub fn tools_allowed_unattended(
    caller: &KeyHolder,
    body: &Map<String, Value>,
) -> Result<Option<Vec<String>>, ApiError> {
    let Some(value) = body.get(FIELD) else {
        return Ok(None);
    };
    let tools = parse(value)?;
    if !caller.is_admin() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "permission-denied",
            format!(
                "`{FIELD}` lifts the unattended rule for tools in this trigger's runs and only a tenant admin may set it: ask an admin, or leave it out"
            ),
        )
        .with_details(serde_json::json!({"field": FIELD})));
    }
    Ok(Some(tools))
}

fn parse(value: &Value) -> Result<Vec<String>, ApiError> {
    let bad = |why: &str| ApiError::bad_input(format!("`{FIELD}` {why}"));
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err(bad("must be an array of tool ids")),
    };
    if items.len() > MAX_TOOLS {
        return Err(bad(&format!("names at most {MAX_TOOLS} tools")));
    }
    let mut tools: Vec<String> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let id = item
            .as_str()
            .filter(|s| !s.trim().is_empty() && s.len() <= MAX_TOOL_ID)
            .ok_or_else(|| {
                bad(&format!(
                    "[{i}] must be a tool id (a non-empty string of at most {MAX_TOOL_ID} characters)"
                ))
            })?;
        if !tools.iter().any(|t| t == id) {
            tools.push(id.to_owned());
        }
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        assert_eq!(parse(&json!(null)).ok(), Some(vec![]));
        assert_eq!(
            parse(&json!(["a.b", "a.b", "c"])).ok(),
            Some(vec!["a.b".to_owned(), "c".to_owned()])
        );
        assert!(parse(&json!("a.b")).is_err());
        assert!(parse(&json!([""])).is_err());
        assert!(parse(&json!([1])).is_err());
        assert!(parse(&Value::Array(vec![json!("x"); MAX_TOOLS + 1])).is_err());
    }
}
