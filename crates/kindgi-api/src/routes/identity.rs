//! `GET /v1/identity/whoami` (`OA:WhoamiResult`): whom the caller's key authenticates —
//! its tenant (the wire UUID), `actor`, `principal` and `userId` for a person's key, the
//! key's `tokenId`, `role` and the `projectId` it is limited to. This runtime has no
//! sessions or scopes, so `scopes` is always empty and the session fields are absent.

use axum::routing::get;
use axum::{Json, Router};
use kindgi_store::tokens::PrincipalKind;
use serde_json::{Value, json};

use crate::projects::tenant_uuid;
use crate::routes::key_holder::{KeyHolder, principal_json};
use crate::state::AppState;

/// The identity routes.
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/identity/whoami", get(whoami))
}

async fn whoami(caller: KeyHolder) -> Json<Value> {
    let record = &caller.key.record;
    let mut body = json!({
        "tenantId": tenant_uuid(&caller.tenant),
        "scopes": [],
        "actor": caller.actor(),
        "tokenId": record.token_id,
        "role": record.role.as_str(),
    });
    let Some(obj) = body.as_object_mut() else {
        return Json(body);
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
    Json(body)
}
