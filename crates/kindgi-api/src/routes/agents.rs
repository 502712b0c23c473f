//! `/v1/agents`: publish agents (`OA:PublishAgentBody` → `201 {agentId, version}`) and read,
//! unregister and reinstate their versions ([`super::registry`]). A definition is checked
//! against `agent.schema.json` 1.6.0 with our own engine (every issue, Ajv's wording: a
//! bare-string tool is `/tools/0 must be object`) and then read as
//! [`kindgi_spec::agent::AgentDefinition`]. A duplicate version is
//! `409 agent-already-registered` naming `details.nextFreeVersion`. Each tool range is
//! pinned to the version it resolves to now (`pins.tools`); an agent whose ranges do not
//! all resolve, or that reads prompt or settings blocks (this runtime has none), is stored
//! unpinned.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use kindgi_schema::{CompileOptions, Mode, Side, Validator};
use kindgi_spec::agent::{AgentDefinition, Instructions};
use kindgi_store::definitions::{DefinitionKind, next_free_version};
use serde_json::{Map, Value, json};

use crate::auth::Tenant;
use crate::cpu;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::routes::registry::{self, Kind, Writable};
use crate::state::AppState;

/// The agent kind.
pub static AGENTS: Kind = Kind {
    store: DefinitionKind::Agent,
    title: "Agent",
    path: "/v1/agents",
    id_field: "agentId",
    not_found: "agent-not-found",
    gone: "agent-gone",
    already_registered: "agent-already-registered",
    project_mismatch: "agent-project-mismatch",
    wire_keys: &[
        "id",
        "version",
        "projectId",
        "name",
        "description",
        "instructions",
        "parameters",
        "settings",
        "modelSettings",
        "capabilities",
        "tools",
        "retrieval",
        "memory",
        "guardrails",
        "preferredProvider",
        "preferredModel",
        "conversationPolicy",
        "budget",
        "tags",
        "output",
        "toolErrors",
        "pins",
        "derivedFrom",
        "unregisteredAt",
        "pinsDigest",
    ],
};

/// `agent.schema.json` 1.6.0, compiled once (`None` if it ever failed to compile: the
/// definition is then only read as the Rust type).
static AGENT_SCHEMA: LazyLock<Option<Validator>> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(include_str!("../schemas/agent.schema.json")).ok()?;
    kindgi_schema::compile(
        &schema,
        CompileOptions {
            mode: Mode::Pack,
            side: Side::Output,
        },
    )
    .map_err(|e| tracing::error!(error = %e, "agent.schema.json does not compile"))
    .ok()
});

/// The agent routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(AGENTS.path, post(publish))
        .merge(registry::routes(&AGENTS))
}

/// Checks an agent definition; `Err` is `400 validation-failed` with
/// `details.issues[{path, message}]` (`path` a JSON Pointer into the definition).
pub fn check_agent(mut definition: Map<String, Value>) -> Result<AgentDefinition, ApiError> {
    // `conversationPolicy.hitl` goes beyond agent.schema.json 1.6.0 (whose
    // ConversationPolicy takes no other keys): checked with the runtime's rules (the
    // reference's messages), then the rest with the schema.
    let hitl = take_hitl(&mut definition);
    if let Some(policy) = definition.get("conversationPolicy") {
        let mut with_hitl = policy.clone();
        if let (Some(h), Value::Object(m)) = (&hitl, &mut with_hitl) {
            m.insert("hitl".into(), h.clone());
        }
        let issues = kindgi_runtime::agent::hitl::check_conversation_policy(&with_hitl);
        if !issues.is_empty() {
            let issues = issues
                .iter()
                .map(|i| json!({"path": i.path, "message": i.message}))
                .collect();
            return Err(registry::validation_failed("Agent definition", issues));
        }
    }
    let mut value = Value::Object(definition);
    if let Some(validator) = AGENT_SCHEMA.as_ref() {
        if let Err(issues) = validator.validate(&value) {
            let issues = issues
                .iter()
                .map(|i| json!({"path": i.instance_path(), "message": i.message()}))
                .collect();
            return Err(registry::validation_failed("Agent definition", issues));
        }
    }
    if let (Some(h), Some(Value::Object(m))) = (hitl, value.get_mut("conversationPolicy")) {
        m.insert("hitl".into(), h);
    }
    serde_json::from_value(value).map_err(|e| {
        registry::validation_failed(
            "Agent definition",
            vec![json!({"path": "", "message": e.to_string()})],
        )
    })
}

/// Takes `conversationPolicy.hitl` out of a definition (when the policy is an object).
fn take_hitl(definition: &mut Map<String, Value>) -> Option<Value> {
    match definition.get_mut("conversationPolicy") {
        Some(Value::Object(m)) => m.remove("hitl"),
        _ => None,
    }
}

async fn publish(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    _writable: Writable,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (project_id, definition) = registry::split_publish_body(&state, &tenant, &body).await?;
    let stored = Value::Object(definition.clone());
    let agent = cpu::run(move || check_agent(definition)).await??;
    let annotations = pins(&state, &tenant, &agent).await;
    match registry::publish(&state, &tenant, &AGENTS, project_id, stored, annotations).await {
        Ok(record) => Ok((
            StatusCode::CREATED,
            Json(json!({"agentId": record.id, "version": record.version})),
        )),
        Err(e) if e.code == AGENTS.already_registered => {
            Err(already_registered(&state, &tenant, &agent).await?)
        }
        Err(e) => Err(e),
    }
}

/// `409 agent-already-registered`, naming the next free version.
async fn already_registered(
    state: &AppState,
    tenant: &str,
    agent: &AgentDefinition,
) -> Result<ApiError, ApiError> {
    let versions = state
        .definitions
        .versions(tenant, DefinitionKind::Agent, &agent.id)
        .await?;
    let next = next_free_version(versions.iter().map(|r| r.version.as_str()));
    let suggestion = next
        .as_ref()
        .map(|n| format!("; publish it as {n}, the next free version"))
        .unwrap_or_default();
    let mut details = json!({"agentId": agent.id, "version": agent.version});
    if let (Some(n), Some(obj)) = (next, details.as_object_mut()) {
        obj.insert("nextFreeVersion".into(), Value::String(n));
    }
    Ok(ApiError::new(
        StatusCode::CONFLICT,
        "agent-already-registered",
        format!(
            "Agent \"{}\" version \"{}\" is already registered, and versions never change{suggestion}",
            agent.id, agent.version
        ),
    )
    .with_details(details))
}

/// `{pins, pinsDigest}` when every tool range resolves and no block is read.
async fn pins(state: &AppState, tenant: &str, agent: &AgentDefinition) -> Option<Value> {
    let reads_blocks = matches!(agent.instructions, Instructions::Prompt(_))
        || agent.settings.as_ref().is_some_and(|s| !s.is_empty())
        || agent.model_settings.is_some();
    if reads_blocks {
        return None;
    }
    let mut tools = BTreeMap::new();
    for tool in &agent.tools {
        let resolved = state
            .registry
            .resolve(tenant, &tool.id, Some(&tool.version))
            .await
            .ok()?;
        tools.insert(tool.id.clone(), resolved.resolved_version);
    }
    let empty: BTreeMap<String, String> = BTreeMap::new();
    let pins = json!({"tools": tools, "prompts": empty, "settings": empty});
    let digest = registry::pins_digest(&pins);
    Some(json!({"pins": pins, "pinsDigest": digest}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_schema_compiles_and_refuses_a_bare_string_tool() {
        assert!(AGENT_SCHEMA.is_some());
        let mut a = json!({
            "id": "acme.a", "version": "1.0.0", "name": "A", "instructions": "Hi.",
            "capabilities": [{}], "tools": ["acme.t"], "retrieval": [], "guardrails": []
        });
        let e = check_agent(a.as_object().cloned().unwrap_or_default()).err();
        assert_eq!(e.map(|e| e.code), Some("validation-failed"));
        a["tools"] = json!([{"id": "acme.t", "version": "^1"}]);
        assert!(check_agent(a.as_object().cloned().unwrap_or_default()).is_ok());
    }

    #[test]
    fn hitl_is_checked_with_the_reference_messages_and_kept() {
        let mut a = json!({
            "id": "acme.a", "version": "1.0.0", "name": "A", "instructions": "Hi.",
            "capabilities": [{}], "tools": [{"id": "acme.t", "version": "^1"}],
            "retrieval": [], "guardrails": [],
            "conversationPolicy": {"historyLimit": 5, "hitl": {"tools": {"overrides": {"acme.t": "always_ask"}}, "onTimeout": "auto-approve"}}
        });
        let e = check_agent(a.as_object().cloned().unwrap_or_default()).err();
        let e = e.map(|e| (e.code, e.message));
        assert_eq!(e.as_ref().map(|e| e.0), Some("validation-failed"), "{e:?}");
        assert!(
            e.as_ref().is_some_and(|e| e.1.contains(
                "/conversationPolicy/hitl/onTimeout: hitl.onTimeout 'auto-approve' isn't supported"
            )),
            "{e:?}"
        );
        a["conversationPolicy"]["hitl"]["onTimeout"] = json!("escalate");
        let ok = check_agent(a.as_object().cloned().unwrap_or_default()).ok();
        let hitl = ok.and_then(|d| d.conversation_policy).and_then(|p| p.hitl);
        assert_eq!(
            hitl,
            Some(
                json!({"tools": {"overrides": {"acme.t": "always_ask"}}, "onTimeout": "escalate"})
            )
        );
    }
}
