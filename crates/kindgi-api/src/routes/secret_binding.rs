//! Binding a secret to a definition is an act that needs a right: registering a tool whose
//! `needsSpec.secrets` or any `secretRef` names a secret, or an MCP endpoint whose `secretRef`
//! (top level, `auth.secretRef`, a header's) does, needs a tenant admin or a key holding
//! `secrets:use`. Without it a member key could send any of the tenant's secrets to any host
//! it names. The refusal is `403 permission-denied` naming the capability and the secret.

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use super::key_holder::KeyHolder;
use crate::error::ApiError;
use crate::projects::tenant_uuid;

/// The capability that lets a non-admin key bind secrets to what it registers.
pub const SECRETS_USE: &str = "secrets:use";

/// The deepest a definition is walked for `secretRef` (bodies are already depth-limited).
const MAX_DEPTH: usize = 64;

/// Every `secretRef.name` anywhere under `value`, in document order.
pub fn secret_refs(value: &Value, out: &mut Vec<String>) {
    walk(value, out, 0);
}

fn walk(value: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(m) => {
            if let Some(name) = m
                .get("secretRef")
                .and_then(|r| r.get("name"))
                .and_then(Value::as_str)
            {
                out.push(name.to_owned());
            }
            for v in m.values() {
                walk(v, out, depth + 1);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| walk(v, out, depth + 1)),
        _ => {}
    }
}

/// The secrets a tool manifest binds: the keys of `needsSpec.secrets` and every
/// `secretRef.name` in its `spec`.
pub fn tool_secrets(manifest: &Map<String, Value>) -> Vec<String> {
    let mut names: Vec<String> = manifest
        .get("needsSpec")
        .and_then(|n| n.get("secrets"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(spec) = manifest.get("spec") {
        secret_refs(spec, &mut names);
    }
    names
}

/// `Ok` when `caller` may bind `secrets` to what it registers (`what`: `tool <id>`,
/// `MCP endpoint <id>`); else the `403` naming the first secret and `secrets:use`.
pub fn require(caller: &KeyHolder, secrets: &[String], what: &str) -> Result<(), ApiError> {
    let Some(first) = secrets.first() else {
        return Ok(());
    };
    if caller.is_admin() || caller.key.held_capabilities().holds(SECRETS_USE) {
        return Ok(());
    }
    let message = format!(
        "Bearer token is missing the `{SECRETS_USE}` capability required to bind the secret `{first}` to {what}: register it with a tenant admin's key, or with a key minted with `{SECRETS_USE}`"
    );
    Err(
        ApiError::new(StatusCode::FORBIDDEN, "permission-denied", message.clone()).with_details(
            json!({
                "action": SECRETS_USE,
                "resource": format!("tenant:{}", tenant_uuid(&caller.tenant)),
                "reason": message,
                "capability": SECRETS_USE,
                "secret": first,
            }),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_secret_ref() {
        let m = json!({
            "needsSpec": {"secrets": {"A": {}}},
            "spec": {"authorization": {"secretRef": {"envName": "e", "name": "B"}},
                     "headers": [{"name": "x", "secretRef": {"envName": "e", "name": "C"}}]}
        });
        let names = tool_secrets(m.as_object().unwrap_or(&Map::new()));
        assert_eq!(names, vec!["A", "B", "C"]);
        let mut out = Vec::new();
        secret_refs(&json!({"auth": {"secretRef": {"name": "D"}}}), &mut out);
        assert_eq!(out, vec!["D"]);
    }
}
