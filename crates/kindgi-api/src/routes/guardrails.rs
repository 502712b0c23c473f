//! `/v1/guardrails` (unversioned, platform-api.md §5):
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/guardrails` | `201 {guardrailId}`; `400 validation-failed` (not a guardrail, per `guardrail.schema.json` 1.1.0); `422 guardrail-config-invalid` (`config` does not fit its check); `409 guardrail-already-registered` |
//! | `GET /v1/guardrails?limit&cursor&name` | page of `OA:Guardrail`, by id |
//! | `GET /v1/guardrails/{id}` | the guardrail; `404 guardrail-not-found` (also once unregistered) |
//! | `POST /v1/guardrails/{id}/unregister` | `{guardrailId, unregistered: true}`; `404` when there is none |
//! | `GET /v1/guardrails/{id}/outcomes` | `501 guardrail-outcomes-not-supported` |
//!
//! A guardrail's `config` is checked against its check's config schema: the built-in
//! checks' (`must-cite`, `never-call-tool`, … as `@kindgi/guardrails` 0.1.10 ships them), or
//! the `configSchema` the definition carries for a pack check. Issues are
//! `{path: "/config/…", message: "config.… <Ajv message>."}`, as the reference words them.
//!
//! A key limited to a project ([`crate::key_project`]) registers in that project only (a
//! body naming another is refused before the route), lists only its project's guardrails,
//! and reading or unregistering another project's is `403 permission-denied` naming
//! `guardrail:<id>`, as the registries answer.
//!
//! Beyond the reference: `stage` and `scope.tools` ([`super::guardrail_extension`]), checked
//! with the rest (`400 validation-failed`), stored, and served back.

use std::sync::LazyLock;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_schema::{CompileOptions, Mode, Side, Validator};
use kindgi_spec::guardrail::GuardrailDefinition;
use kindgi_store::definitions::{DefinitionKind, NewDefinition, SOURCE_API};
use serde_json::{Map, Value, json};

use crate::auth::{Caller, Tenant};
use crate::cpu;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::key_project::KeyProject;
use crate::routes::guardrail_extension::Extension;
use crate::routes::registry::{self, Writable};
use crate::state::AppState;

/// The properties of `OA:Guardrail`, in order.
const WIRE_KEYS: &[&str] = &[
    "id",
    "projectId",
    "name",
    "description",
    "kind",
    "check",
    "config",
    "action",
    "severity",
    "scope",
    "budget",
    "judgeCapabilities",
    "stage",
];

static GUARDRAIL_SCHEMA: LazyLock<Option<Validator>> = LazyLock::new(|| {
    let schema: Value =
        serde_json::from_str(include_str!("../schemas/guardrail.schema.json")).ok()?;
    compile(&schema)
});

fn compile(schema: &Value) -> Option<Validator> {
    kindgi_schema::compile(
        schema,
        CompileOptions {
            mode: Mode::Pack,
            side: Side::Output,
        },
    )
    .ok()
}

/// The guardrail routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/guardrails", post(register).get(list))
        .route("/v1/guardrails/{id}", get(get_one))
        .route("/v1/guardrails/{id}/unregister", post(unregister))
        .route("/v1/guardrails/{id}/outcomes", get(outcomes))
}

fn path_error(e: PathRejection) -> ApiError {
    ApiError::bad_input(format!("The path is not valid: {e}"))
}

fn not_found(id: &str, suffix: &str) -> ApiError {
    let message = if suffix.is_empty() {
        format!("No guardrail registered with id \"{id}\"")
    } else {
        format!("No guardrail \"{id}\"{suffix}")
    };
    ApiError::new(StatusCode::NOT_FOUND, "guardrail-not-found", message)
        .with_details(json!({"guardrailId": id}))
}

/// The built-in checks' config schemas (`@kindgi/guardrails` `CONFIG_SCHEMAS`).
fn built_in_config_schema(check: &str) -> Option<Value> {
    let object = |properties: Value, required: &[&str]| {
        let mut s =
            json!({"type": "object", "properties": properties, "additionalProperties": false});
        if !required.is_empty() {
            s["required"] = json!(required);
        }
        s
    };
    let strings =
        json!({"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}});
    Some(match check {
        "must-cite" => object(
            json!({"minCitations": {"type": "integer", "minimum": 1}, "sourcePattern": {"type": "string", "minLength": 1}}),
            &[],
        ),
        "never-call-tool" => object(
            json!({"tools": {"type": "array", "minItems": 1, "items": {"anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "object", "properties": {"id": {"type": "string", "minLength": 1}, "version": {"type": "string"}}, "required": ["id"]}
            ]}}}),
            &["tools"],
        ),
        "max-tool-calls" => object(json!({"max": {"type": "integer", "minimum": 0}}), &[]),
        "output-matches" => object(
            json!({"pattern": {"type": "string", "minLength": 1}, "flags": {"type": "string", "pattern": "^[dgimsuyv]*$"}, "negate": {"type": "boolean"}}),
            &["pattern"],
        ),
        "tool-order" => object(json!({"sequence": strings}), &["sequence"]),
        "required-substring" | "forbidden-substring" => object(
            json!({"patterns": strings, "caseSensitive": {"type": "boolean"}}),
            &["patterns"],
        ),
        _ => return None,
    })
}

/// `/config/rules/0` → `config.rules.0`.
fn setting_name(pointer: &str) -> String {
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

/// Every way the guardrail's `config` does not fit its check's schema (none when the check
/// has no known schema, or the schema does not compile: that is the pack's to fix).
pub fn config_problems(guardrail: &GuardrailDefinition) -> Vec<Value> {
    let schema = built_in_config_schema(&guardrail.check)
        .or_else(|| guardrail.config_schema.clone().map(Value::Object));
    let Some(validator) = schema.as_ref().and_then(compile) else {
        return Vec::new();
    };
    let config = Value::Object(guardrail.config.clone().unwrap_or_default());
    match validator.validate(&config) {
        Ok(()) => Vec::new(),
        Err(issues) => issues
            .iter()
            .map(|i| {
                let path = format!("/config{}", i.instance_path());
                let message = format!("{} {}.", setting_name(&path), i.message());
                json!({"path": path, "message": message})
            })
            .collect(),
    }
}

/// Checks a guardrail body (without `projectId`).
fn check(mut definition: Map<String, Value>) -> Result<GuardrailDefinition, ApiError> {
    let extension = Extension::take(&mut definition);
    let mut value = Value::Object(definition);
    let mut issues = Vec::new();
    if let Some(validator) = GUARDRAIL_SCHEMA.as_ref()
        && let Err(found) = validator.validate(&value)
    {
        issues.extend(
            found
                .iter()
                .map(|i| json!({"path": i.instance_path(), "message": i.message()})),
        );
    }
    issues.extend(extension.issues(value.get("check").and_then(Value::as_str)));
    if !issues.is_empty() {
        return Err(registry::validation_failed("Guardrail definition", issues));
    }
    if let Value::Object(m) = &mut value {
        extension.restore(m);
    }
    let guardrail: GuardrailDefinition = serde_json::from_value(value).map_err(|e| {
        registry::validation_failed(
            "Guardrail definition",
            vec![json!({"path": "", "message": e.to_string()})],
        )
    })?;
    let problems = config_problems(&guardrail);
    if let Some(first) = problems.first() {
        let first = first["message"].as_str().unwrap_or_default();
        let more = if problems.len() > 1 {
            format!(" (and {} more)", problems.len() - 1)
        } else {
            String::new()
        };
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "guardrail-config-invalid",
            format!(
                "Guardrail \"{}\" doesn't fit check \"{}\": {}{more}.",
                guardrail.id,
                guardrail.check,
                first.trim_end_matches('.')
            ),
        )
        .with_details(json!({"issues": problems})));
    }
    Ok(guardrail)
}

async fn register(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    _writable: Writable,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (project_id, definition) = registry::split_publish_body(&state, &tenant, &body).await?;
    let stored = Value::Object(definition.clone());
    let guardrail = cpu::run(move || check(definition)).await??;
    let new = NewDefinition {
        id: guardrail.id.clone(),
        version: String::new(),
        project_id: Some(project_id),
        definition: stored,
        annotations: None,
        source: SOURCE_API.to_owned(),
    };
    match state
        .definitions
        .publish(&tenant, DefinitionKind::Guardrail, &new)
        .await
    {
        Ok(_) => Ok((
            StatusCode::CREATED,
            Json(json!({"guardrailId": guardrail.id})),
        )),
        Err(kindgi_store::definitions::DefinitionError::Store(e)) => Err(ApiError::from(e)),
        Err(_) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "guardrail-already-registered",
            format!("Guardrail \"{}\" is already registered", guardrail.id),
        )
        .with_details(json!({"guardrailId": guardrail.id}))),
    }
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(q): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let mut query = registry::list_query(q.as_deref())?;
    query.include_retired = false;
    let mut found = state
        .definitions
        .list(&caller.tenant, DefinitionKind::Guardrail, &query)
        .await?;
    // A key limited to a project lists that project's (after paging, as the registries do).
    found
        .items
        .retain(|r| caller.reaches(r.project_id.as_deref()));
    let mut page = registry::list_page(WIRE_KEYS, &found.items, found.has_more)?;
    if let Some(Value::Array(data)) = page.get_mut("data") {
        for (item, record) in data.iter_mut().zip(&found.items) {
            add_pack_check(item, record)?;
        }
    }
    Ok(Json(page))
}

/// `403 permission-denied` naming `guardrail:<id>` when `record` is of a project the
/// caller's key does not reach.
fn check_reaches(
    caller: &Caller,
    record: &kindgi_store::definitions::DefinitionRecord,
    action: &str,
) -> Result<(), ApiError> {
    caller.check_reaches(
        record.project_id.as_deref(),
        action,
        &format!("guardrail:{}", record.id),
    )
}

async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path(id) = path.map_err(path_error)?;
    let record = state
        .definitions
        .get_guardrail(&caller.tenant, &id)
        .await?
        .ok_or_else(|| not_found(&id, ""))?;
    check_reaches(&caller, &record, "read")?;
    let mut item = registry::wire(WIRE_KEYS, &record)?;
    add_pack_check(&mut item, &record)?;
    Ok(Json(item))
}

/// A pack's guardrail is registered from its pack index, which names its check `checkId`
/// (absent: the guardrail's own id, pack-index.schema.json) and has no `check`: `OA:Guardrail`
/// requires `check`, so it is served as the index's `checkId`, else the guardrail's `id`.
fn add_pack_check(
    item: &mut Value,
    record: &kindgi_store::definitions::DefinitionRecord,
) -> Result<(), ApiError> {
    let Value::Object(out) = item else {
        return Ok(());
    };
    if out.contains_key("check") {
        return Ok(());
    }
    let definition = record.definition().map_err(|e| ApiError::internal(&e))?;
    let check = definition
        .get("checkId")
        .or_else(|| definition.get("id"))
        .and_then(Value::as_str)
        .unwrap_or(&record.id)
        .to_owned();
    out.insert("check".into(), Value::String(check));
    Ok(())
}

async fn unregister(
    State(state): State<AppState>,
    caller: Caller,
    _writable: Writable,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path(id) = path.map_err(path_error)?;
    let tenant = &caller.tenant;
    if let Some(record) = state.definitions.get_guardrail(tenant, &id).await? {
        check_reaches(&caller, &record, "write")?;
    }
    let changed = state
        .definitions
        .set_unregistered(tenant, DefinitionKind::Guardrail, &id, "", true)
        .await?;
    if changed != Some(true) {
        return Err(not_found(&id, " to unregister"));
    }
    Ok(Json(json!({"guardrailId": id, "unregistered": true})))
}

async fn outcomes(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path(id) = path.map_err(path_error)?;
    // Another project's guardrail is refused as its read is, before the 501.
    if caller.project_id.is_some()
        && let Some(record) = state.definitions.get_guardrail(&caller.tenant, &id).await?
    {
        check_reaches(&caller, &record, "read")?;
    }
    Err(ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "guardrail-outcomes-not-supported",
        "This deployment doesn't record guardrail outcomes.",
    )
    .with_details(json!({"guardrailId": id})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guardrail_schema_compiles() {
        assert!(GUARDRAIL_SCHEMA.is_some());
    }

    #[test]
    fn built_in_config_is_checked_with_the_reference_wording() {
        let g: GuardrailDefinition = serde_json::from_value(json!({
            "id": "acme.cite", "kind": "zero-llm", "check": "must-cite",
            "config": {"minCitations": 0}, "action": {"on-violation": "halt"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let problems = config_problems(&g);
        assert_eq!(
            problems,
            vec![
                json!({"path": "/config/minCitations", "message": "config.minCitations must be >= 1."})
            ]
        );
    }
}
