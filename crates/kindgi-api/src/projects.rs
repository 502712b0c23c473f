//! Projects: every tenant has its *Default* project, whose id is a UUID derived from the
//! tenant (v5), so it is stable across restarts, processes and databases without being
//! stored (it gets a row only once renamed), and the projects `POST /v1/projects` made, kept
//! in the [`ProjectDirectory`] port. A body or query `projectId` must be a UUID
//! (`400 bad-input`) and name one of them (`404 project-not-found`, platform-api.md §1.6):
//! [`check_project_id`] knows only the Default project (for the checks that have no store at
//! hand); [`Projects::check`] knows them all.
//!
//! Tenants are names here (`acme`); on the wire a `tenantId` is a UUID (`format: uuid`, which
//! the official SDK checks): [`tenant_uuid`] derives a stable one from the name.

use std::sync::Arc;

use axum::extract::FromRef;
use axum::http::StatusCode;
use kindgi_core::ports::{ProjectDirectory, ProjectRecord};
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::state::AppState;

/// The namespace of wire tenant ids derived from tenant names (a fixed random UUID).
const TENANT_NAMESPACE: uuid::Uuid =
    uuid::Uuid::from_u128(0x3e0f_9a7d_5c21_4b86_a4d3_17c9_e2b0_6f58);

/// `tenant` as the wire's `tenantId` (`format: uuid`; the official SDK refuses anything
/// else): the tenant itself when it is a UUID, else a UUID v5 derived from its name, stable
/// across restarts and databases.
pub fn tenant_uuid(tenant: &str) -> String {
    match uuid::Uuid::parse_str(tenant) {
        Ok(u) => u.to_string(),
        Err(_) => uuid::Uuid::new_v5(
            &TENANT_NAMESPACE,
            format!("kindgi-tenant:{tenant}").as_bytes(),
        )
        .to_string(),
    }
}

/// The id of `tenant`'s Default project (core's one copy; the store resolves a call's
/// values under it too).
pub use kindgi_core::ids::default_project_id;

/// Checks a `projectId` the caller sent: `None` is the Default project; anything else must
/// be a UUID naming it. Returns the project id to record.
pub fn check_project_id(tenant: &str, project_id: Option<&str>) -> Result<String, ApiError> {
    let default = default_project_id(tenant);
    let Some(id) = project_id else {
        return Ok(default);
    };
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(
            ApiError::bad_input("`projectId` must be a project id (a UUID)")
                .with_details(json!({"field": "projectId"})),
        );
    }
    if id.eq_ignore_ascii_case(&default) {
        return Ok(default);
    }
    Err(project_not_found(id))
}

/// `404 project-not-found` naming `id`.
pub fn project_not_found(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "project-not-found",
        format!("No project with id \"{id}\" in this tenant"),
    )
    .with_details(json!({"projectId": id}))
}

/// The tenant's projects as handlers take them (`State<Projects>`): the directory over the
/// server's database.
#[derive(Debug, Clone)]
pub struct Projects(pub Arc<dyn ProjectDirectory>);

impl FromRef<AppState> for Projects {
    fn from_ref(state: &AppState) -> Projects {
        Projects(Arc::new(kindgi_store::projects::ProjectStore::new(
            state.db.clone(),
        )))
    }
}

impl Projects {
    /// [`check_project_id`], and a stored project of `tenant` is accepted too.
    pub async fn check(&self, tenant: &str, project_id: Option<&str>) -> Result<String, ApiError> {
        match check_project_id(tenant, project_id) {
            Err(e) if e.code == "project-not-found" => {
                let id = project_id.unwrap_or_default().to_ascii_lowercase();
                match self.stored(tenant, &id).await? {
                    Some(p) => Ok(p.id),
                    None => Err(e),
                }
            }
            other => other,
        }
    }

    /// The stored project `id` of `tenant`.
    pub async fn stored(&self, tenant: &str, id: &str) -> Result<Option<ProjectRecord>, ApiError> {
        self.0
            .project(tenant, id)
            .await
            .map_err(|e| ApiError::internal(&e))
    }

    /// Project `id` of `tenant` as stored, or its Default project when it has no row.
    pub async fn get(&self, tenant: &str, id: &str) -> Result<Option<ProjectRecord>, ApiError> {
        let id = id.to_ascii_lowercase();
        if let Some(p) = self.stored(tenant, &id).await? {
            return Ok(Some(p));
        }
        Ok((id == default_project_id(tenant)).then(|| virtual_default(tenant)))
    }
}

/// The Default project before anyone renamed it: derived, so its times are the Unix epoch.
pub fn virtual_default(tenant: &str) -> ProjectRecord {
    ProjectRecord {
        tenant: tenant.to_owned(),
        id: default_project_id(tenant),
        name: "Default".into(),
        slug: "default".into(),
        description: None,
        created_at: 0,
        updated_at: 0,
    }
}

/// The `OA:Project` body of a project.
pub fn project_json(p: &ProjectRecord) -> Value {
    let mut v = json!({
        "id": p.id,
        "tenantId": tenant_uuid(&p.tenant),
        "name": p.name,
        "slug": p.slug,
        "isDefault": p.id == default_project_id(&p.tenant),
        "createdAt": kindgi_runtime::record::format_millis(p.created_at),
        "updatedAt": kindgi_runtime::record::format_millis(p.updated_at),
    });
    if let (Some(d), Some(o)) = (&p.description, v.as_object_mut()) {
        o.insert("description".into(), json!(d));
    }
    v
}
