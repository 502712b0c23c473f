//! `GET /v1/identity/whoami` (`OA:WhoamiResult`): whom the caller's key authenticates —
//! its tenant (the wire UUID), `actor`, `principal` and `userId` for a person's key, the
//! key's `tokenId`, `role` and the `projectId` it is limited to, and `reviewerRole` when the
//! key's person has an active row on the tenant's reviewer roster (the official sets it so a
//! client gates the approvals surface without a second call; this runtime's keys carry no
//! reviewer-role claim). This runtime has no sessions or scopes, so `scopes` is always empty
//! and the session fields are absent.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use kindgi_store::tokens::PrincipalKind;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::projects::tenant_uuid;
use crate::routes::key_holder::{KeyHolder, principal_json};
use crate::routes::reviewer::{Roster, key_person};
use crate::state::AppState;

/// The identity routes.
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/identity/whoami", get(whoami))
}

async fn whoami(State(roster): State<Roster>, caller: KeyHolder) -> Result<Json<Value>, ApiError> {
    let record = &caller.key.record;
    let reviewer = match key_person(&caller) {
        Some(user) => roster
            .0
            .reviewer_for_user(&caller.tenant, &user)
            .await
            .map_err(|e| ApiError::internal(&e))?
            .filter(|r| r.deactivated_at.is_none()),
        None => None,
    };
    let mut body = json!({
        "tenantId": tenant_uuid(&caller.tenant),
        "scopes": [],
        "actor": caller.actor(),
        "tokenId": record.token_id,
        "role": record.role.as_str(),
    });
    let Some(obj) = body.as_object_mut() else {
        return Ok(Json(body));
    };
    if let Some(p) = caller.principal() {
        obj.insert("principal".into(), principal_json(p));
        if p.kind == PrincipalKind::User {
            obj.insert("userId".into(), json!(p.id));
        }
    }
    if let Some(project) = &record.project_id {
        obj.insert("projectId".into(), json!(project));
    }
    if let Some(r) = reviewer {
        obj.insert("reviewerRole".into(), json!(r.role.as_str()));
    }
    Ok(Json(body))
}
