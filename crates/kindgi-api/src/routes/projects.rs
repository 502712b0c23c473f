//! `/v1/projects`: list, get, create and rename the tenant's projects (`OA:Project`), and
//! `GET /v1/projects/default`, which the official CLI reads before a publish without
//! `--project`. Reads take any key of the tenant; writes take a tenant admin. This runtime
//! has no orgs: an `orgId` is `404 org-not-found`.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use kindgi_core::ports::{DirectoryWrite, ProjectRecord};
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::{Projects, default_project_id, project_json, project_not_found};
use crate::query::QueryString;
use crate::routes::key_holder::{KeyHolder, denied, object_body};
use crate::state::AppState;

/// The project routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/projects", get(list).post(create))
        .route("/v1/projects/default", get(get_default))
        .route("/v1/projects/{project_id}", get(get_one).patch(rename))
}

async fn get_default(
    State(projects): State<Projects>,
    caller: KeyHolder,
) -> Result<Json<Value>, ApiError> {
    let id = default_project_id(&caller.tenant);
    let p = projects.get(&caller.tenant, &id).await?;
    p.map(|p| Json(project_json(&p)))
        .ok_or_else(|| project_not_found(&id))
}

async fn get_one(
    State(projects): State<Projects>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let p = projects.get(&caller.tenant, &id).await?;
    p.map(|p| Json(project_json(&p)))
        .ok_or_else(|| project_not_found(&id))
}

/// The Default project first, then the stored ones by id; `?nameContains=` filters by name.
async fn list(
    State(projects): State<Projects>,
    caller: KeyHolder,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.first("limit"));
    let after: Option<String> = decode_cursor(q.first("cursor"))?;
    if let Some(org) = q.non_empty("orgId") {
        return Err(org_not_found(org));
    }
    let needle = q.non_empty("nameContains").map(str::to_lowercase);
    let tenant = &caller.tenant;
    let default_id = default_project_id(tenant);
    let mut all = Vec::new();
    if after.is_none() {
        all.extend(projects.get(tenant, &default_id).await?);
    }
    let stored = projects
        .0
        .projects(tenant, after.as_deref(), limit + 1)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    all.extend(stored.into_iter().filter(|p| p.id != default_id));
    let more = all.len() > limit;
    all.truncate(limit);
    // After the Default project the cursor is "": every stored id sorts after it.
    let next = more
        .then(|| {
            all.last().map(|p| {
                encode_cursor(&if p.id == default_id {
                    ""
                } else {
                    p.id.as_str()
                })
            })
        })
        .flatten();
    let data = all
        .iter()
        .filter(|p| {
            needle
                .as_ref()
                .is_none_or(|n| p.name.to_lowercase().contains(n.as_str()))
        })
        .map(project_json)
        .collect();
    Ok(Json(page(data, next, Map::new())))
}

fn org_not_found(org: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "org-not-found",
        format!(
            "No org with id \"{org}\" in this tenant: this runtime has no orgs; leave `orgId` out"
        ),
    )
    .with_details(json!({"orgId": org}))
}

fn require_admin(caller: &KeyHolder, action: &str) -> Result<(), ApiError> {
    if caller.is_admin() {
        return Ok(());
    }
    Err(denied(
        format!("Only a tenant admin may {action}; use an admin key of this tenant"),
        action,
        "project",
        "not-tenant-admin",
    ))
}

/// The fields a create or rename may carry, checked.
struct ProjectFields {
    name: Option<String>,
    slug: Option<String>,
    description: Option<String>,
}

fn check_fields(body: &Map<String, Value>, allowed: &[&str]) -> Result<ProjectFields, ApiError> {
    if let Some(field) = body.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "unknown-field",
            format!(
                "Unknown field `{field}`; a project takes {}",
                allowed.join(", ")
            ),
        )
        .with_details(json!({"field": field})));
    }
    if let Some(org) = body.get("orgId").and_then(Value::as_str) {
        return Err(org_not_found(org));
    }
    let text = |field: &str| -> Result<Option<String>, ApiError> {
        match body.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::bad_input(format!("`{field}` must be a string"))
                .with_details(json!({"field": field}))),
        }
    };
    let name = text("name")?;
    if name
        .as_deref()
        .is_some_and(|n| n.trim().is_empty() || n.chars().count() > 100)
    {
        return Err(
            ApiError::bad_input("`name` must be 1 to 100 characters, not only spaces")
                .with_details(json!({"field": "name"})),
        );
    }
    let slug = text("slug")?;
    if let Some(s) = &slug {
        check_slug(s)?;
    }
    Ok(ProjectFields {
        name,
        slug,
        description: text("description")?,
    })
}

/// A slug: 1 to 63 lowercase letters, digits and single hyphens, not at either end.
pub fn check_slug(slug: &str) -> Result<(), ApiError> {
    let ok = !slug.is_empty()
        && slug.len() <= 63
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-')
        && !slug.contains("--");
    if ok {
        return Ok(());
    }
    Err(ApiError::bad_input(format!(
        "`slug` \"{slug}\" must be 1 to 63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit"
    ))
    .with_details(json!({"field": "slug"})))
}

fn slug_conflict(slug: &str) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "slug-conflict",
        format!("Another project of this tenant has the slug \"{slug}\"; choose another"),
    )
    .with_details(json!({"slug": slug}))
}

/// Writes `p`, refusing a slug another project has (the Default project's included, which
/// may have no row).
async fn write(projects: &Projects, p: &ProjectRecord) -> Result<(), ApiError> {
    let default = projects
        .get(&p.tenant, &default_project_id(&p.tenant))
        .await?;
    if default.is_some_and(|d| d.id != p.id && d.slug == p.slug) {
        return Err(slug_conflict(&p.slug));
    }
    match projects.0.put_project(p).await {
        Ok(DirectoryWrite::Written) => Ok(()),
        Ok(DirectoryWrite::SlugTaken) => Err(slug_conflict(&p.slug)),
        Err(e) => Err(ApiError::internal(&e)),
    }
}

async fn create(
    State(projects): State<Projects>,
    caller: KeyHolder,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_admin(&caller, "create a project")?;
    let body = object_body(&body, false)?;
    let fields = check_fields(
        &body,
        &["name", "slug", "description", "orgId", "isDefault"],
    )?;
    if body.get("isDefault") == Some(&Value::Bool(true)) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "project-default-already-exists",
            "This tenant already has its Default project; leave `isDefault` out",
        ));
    }
    let (Some(name), Some(slug)) = (fields.name, fields.slug) else {
        let missing = if body.contains_key("name") {
            "slug"
        } else {
            "name"
        };
        return Err(ApiError::bad_input(format!("`{missing}` is required"))
            .with_details(json!({"field": missing})));
    };
    let now = kindgi_store::now_millis();
    let p = ProjectRecord {
        tenant: caller.tenant.clone(),
        id: uuid::Uuid::new_v4().to_string(),
        name,
        slug,
        description: fields.description,
        created_at: now,
        updated_at: now,
    };
    write(&projects, &p).await?;
    Ok((StatusCode::CREATED, Json(json!({"id": p.id}))).into_response())
}

async fn rename(
    State(projects): State<Projects>,
    caller: KeyHolder,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    require_admin(&caller, "change a project")?;
    let body = object_body(&body, false)?;
    let fields = check_fields(&body, &["name", "slug", "description", "orgId"])?;
    let Some(mut p) = projects.get(&caller.tenant, &id).await? else {
        return Err(project_not_found(&id));
    };
    let before = p.clone();
    p.name = fields.name.unwrap_or(p.name);
    p.slug = fields.slug.unwrap_or(p.slug);
    p.description = fields.description.or(p.description);
    if p == before {
        return Ok(StatusCode::NO_CONTENT);
    }
    let now = kindgi_store::now_millis();
    p.updated_at = now;
    if p.created_at == 0 {
        // The Default project's first row: it was derived until now.
        p.created_at = now;
    }
    write(&projects, &p).await?;
    Ok(StatusCode::NO_CONTENT)
}
