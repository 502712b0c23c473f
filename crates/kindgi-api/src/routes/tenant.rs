//! `GET|PATCH /v1/tenant` (`OA:Tenant`, `OA:TenantPatch`): the caller's tenant, its id the
//! wire UUID derived from its name (so it never changes), its name and slug as last set, or
//! the tenant's name (and that name as a slug) until someone sets them. Renaming takes a
//! tenant admin; a slug another tenant has is `409 tenant-slug-taken`. A suspended or closing
//! tenant's `state` says so ([`crate::tenant_state`]); an active one's is absent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use kindgi_core::ports::{DirectoryWrite, TenantSettings, TenantState, TenantStates};
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::projects::{Projects, tenant_uuid};
use crate::routes::key_holder::{KeyHolder, denied, iso, object_body};
use crate::routes::projects::check_slug;
use crate::state::AppState;

/// The tenant routes.
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/tenant", get(get_tenant).patch(rename))
}

/// A tenant name as a slug: lowercase, anything else a single hyphen.
fn slug_of(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_end_matches('-').chars().take(63).collect();
    if slug.is_empty() {
        "tenant".into()
    } else {
        slug
    }
}

async fn settings(projects: &Projects, tenant: &str) -> Result<TenantSettings, ApiError> {
    let stored = projects
        .0
        .tenant_settings(tenant)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    Ok(stored.unwrap_or_else(|| TenantSettings {
        tenant: tenant.to_owned(),
        name: tenant.to_owned(),
        slug: slug_of(tenant),
        created_at: 0,
        updated_at: 0,
    }))
}

async fn get_tenant(
    State(state): State<AppState>,
    State(projects): State<Projects>,
    caller: KeyHolder,
) -> Result<Json<Value>, ApiError> {
    let s = settings(&projects, &caller.tenant).await?;
    let mut tenant = json!({
        "id": tenant_uuid(&s.tenant),
        "name": s.name,
        "slug": s.slug,
        "createdAt": iso(s.created_at),
        "updatedAt": iso(s.updated_at),
    });
    // `state` is absent while active (`OA:Tenant.state`).
    let standing = crate::tenant_state::states(&state)
        .tenant_standing(&caller.tenant)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    if standing.state() != TenantState::Active {
        tenant["state"] = json!(standing.state().as_str());
    }
    Ok(Json(tenant))
}

async fn rename(
    State(projects): State<Projects>,
    caller: KeyHolder,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    if !caller.is_admin() {
        return Err(denied(
            "Only a tenant admin may rename the tenant; use an admin key of this tenant",
            "rename",
            "tenant",
            "not-tenant-admin",
        ));
    }
    let body = object_body(&body, false)?;
    if let Some(field) = body.keys().find(|k| *k != "name" && *k != "slug") {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "unknown-field",
            format!("Unknown field `{field}`; a tenant takes only `name` and `slug`"),
        )
        .with_details(json!({"field": field})));
    }
    let field = |f: &str| match body.get(f) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::bad_input(format!("`{f}` must be a string"))
            .with_details(json!({"field": f}))),
    };
    let (name, slug) = (field("name")?, field("slug")?);
    if name
        .as_deref()
        .is_some_and(|n| n.trim().is_empty() || n.chars().count() > 100)
    {
        return Err(
            ApiError::bad_input("`name` must be 1 to 100 characters, not only spaces")
                .with_details(json!({"field": "name"})),
        );
    }
    if let Some(s) = &slug {
        check_slug(s)?;
    }
    let mut s = settings(&projects, &caller.tenant).await?;
    let before = s.clone();
    s.name = name.unwrap_or(s.name);
    s.slug = slug.unwrap_or(s.slug);
    if s == before {
        return Ok(StatusCode::NO_CONTENT);
    }
    s.updated_at = kindgi_store::now_millis();
    if s.created_at == 0 {
        s.created_at = s.updated_at;
    }
    match projects.0.put_tenant_settings(&s).await {
        Ok(DirectoryWrite::Written) => Ok(StatusCode::NO_CONTENT),
        Ok(DirectoryWrite::SlugTaken) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "tenant-slug-taken",
            format!("Another tenant has the slug \"{}\"; choose another", s.slug),
        )
        .with_details(json!({"slug": s.slug}))),
        Err(e) => Err(ApiError::internal(&e)),
    }
}
