//! What a key limited to a project (`POST /v1/tokens {projectId}`, platform-api.md §1.2) may
//! do with triggers — schedules (§8), webhook triggers (§9.1) and mail triggers: a new trigger
//! goes in the key's project when the body names none (as a run it starts does,
//! [`crate::runs`]); a list shows that project's triggers only; and a trigger of another
//! project is refused as the official authorizer refuses it, `403 permission-denied`
//! ``Permission denied: the API key is limited to project <id>`` ([`outside`]), as is a flow
//! or agent it would run that is registered in another project ([`check_executes`]: the key
//! has no `execute` on it). What a trigger runs must be registered in the trigger's own
//! project (or in none: a pack's), else `400 reference-out-of-scope`. A body or query naming
//! another project never gets here: the
//! key-project middleware answers it (`403 key-project-mismatch`, [`crate::key_project`]).

use axum::http::StatusCode;
use kindgi_core::definition::DefinitionKind;
use kindgi_store::definitions::Latest;
use serde_json::json;

use super::key_holder::KeyHolder;
use crate::error::ApiError;
use crate::key_project::outside;
use crate::projects::Projects;
use crate::state::AppState;

/// The project a new trigger goes in: the one the body names, else the caller's key's, else
/// the tenant's Default — one of the tenant's (`404 project-not-found` otherwise) that the
/// key reaches.
pub async fn new_trigger_project(
    projects: &Projects,
    caller: &KeyHolder,
    named: Option<&str>,
) -> Result<String, ApiError> {
    let named = named.or(caller.key.record.project_id.as_deref());
    let project = projects.check(&caller.tenant, named).await?;
    reaches(caller, &project, "write")?;
    Ok(project)
}

/// `Ok` unless the caller's key is limited to a project other than `project`; `action`
/// (`read`, `write`) names what was refused.
pub fn reaches(caller: &KeyHolder, project: &str, action: &str) -> Result<(), ApiError> {
    match &caller.key.record.project_id {
        Some(limit) if !limit.eq_ignore_ascii_case(project) => {
            Err(outside(limit, action, &format!("project:{project}")))
        }
        _ => Ok(()),
    }
}

/// The project a list is limited to: the one the query names (the middleware refused
/// another than the key's), else the key's.
pub fn listed_project(caller: &KeyHolder, named: Option<String>) -> Option<String> {
    named.or_else(|| {
        caller
            .key
            .record
            .project_id
            .as_ref()
            .map(|p| p.to_ascii_lowercase())
    })
}

/// What a trigger in `project` would run, checked: `403 permission-denied` (action
/// `execute`, resource `flow:<id>` / `agent:<id>`) when the caller's key is limited to a
/// project and it is registered through the API in another one (as reading it is refused,
/// [`super::registry::check_item`]); else `400 reference-out-of-scope` when it is registered
/// in a project other than the trigger's (`details.issues[{path, kind, id, message}]`, `path`
/// the body field naming it). What a pack or the host put in belongs to no project: every
/// key and every project reaches it.
pub async fn check_executes(
    state: &AppState,
    caller: &KeyHolder,
    project: &str,
    target: (DefinitionKind, &str, Option<&str>),
    path: &str,
) -> Result<(), ApiError> {
    let (kind, id, version) = target;
    let record = match version {
        Some(v) => {
            state
                .definitions
                .get_version(&caller.tenant, kind, id, v)
                .await?
        }
        None => match state.definitions.latest(&caller.tenant, kind, id).await? {
            Latest::Active(r) | Latest::Gone(r) => Some(r),
            Latest::NotFound => None,
        },
    };
    let Some(home) = record.and_then(|r| r.project_id) else {
        return Ok(());
    };
    if let Some(limit) = &caller.key.record.project_id
        && !home.eq_ignore_ascii_case(limit)
    {
        return Err(outside(
            limit,
            "execute",
            &format!("{}:{id}", kind.as_str()),
        ));
    }
    if !home.eq_ignore_ascii_case(project) {
        return Err(out_of_scope(path, kind, id, &home, project));
    }
    Ok(())
}

/// `400 reference-out-of-scope`: `kind` `id`, named at `path`, is registered in project
/// `home`, which the trigger's `project` doesn't reach.
fn out_of_scope(path: &str, kind: DefinitionKind, id: &str, home: &str, project: &str) -> ApiError {
    let what = match kind {
        DefinitionKind::Flow => "Flow",
        DefinitionKind::Agent => "Agent",
        _ => "Item",
    };
    let message = format!(
        "{what} \"{id}\" is registered in project {home}, not in the trigger's project {project}: register the trigger in project {home}, or publish the {} in project {project}",
        kind.as_str()
    );
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "reference-out-of-scope",
        format!("The trigger names what its project doesn't reach: {message}"),
    )
    .with_details(json!({"issues": [{
        "path": path,
        "kind": kind.as_str(),
        "id": id,
        "message": message,
    }]}))
}

/// A trigger's target, checked as schedules and mail triggers register it: the caller may run
/// it ([`check_executes`], `path` the body field naming it), and the tenant has it — else
/// `404 flow-not-found` / `agent-not-found`, worded as `POST /v1/runs` words them. `version`:
/// a flow's exact version; an agent's, or `None` for the version registered when it fires.
pub async fn check_target(
    state: &AppState,
    caller: &KeyHolder,
    project: &str,
    target: (DefinitionKind, &str, Option<&str>),
    path: &str,
) -> Result<(), ApiError> {
    check_executes(state, caller, project, target, path).await?;
    let (kind, id, version) = target;
    let defs = state.runtime.definitions();
    let tenant = caller.tenant.as_str();
    let missing = match kind {
        DefinitionKind::Agent => defs
            .agent(tenant, id, version)
            .await
            .map_err(|e| ApiError::internal(&e))?
            .is_none()
            .then(|| kindgi_runtime::runtime::RuntimeError::AgentNotFound {
                agent_id: id.to_owned(),
                version: version.map(str::to_owned),
            }),
        _ => defs
            .flow(tenant, id, version)
            .await
            .map_err(|e| ApiError::internal(&e))?
            .is_none()
            .then(|| kindgi_runtime::runtime::RuntimeError::FlowNotFound {
                flow_id: id.to_owned(),
                version: version.map(str::to_owned),
            }),
    };
    match missing {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
