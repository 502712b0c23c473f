//! Kindgi's `/v1` REST API (axum).
//!
//! * [`router`] builds the whole API over an [`AppState`]: the registries on the Platform
//!   API wire — `/v1/tools`, `/v1/flows`, `/v1/agents`, `/v1/guardrails` ([`routes`]) — and
//!   `GET /v1/projects/default`. [`AppState::read_only_registry`] makes the registries refuse
//!   writes (`409 registry-read-only`, for `kindgi dev`). [`router_with`] merges more routes
//!   (runs) written against the same state, so they share the middleware:
//!   request ids, error envelopes, `Idempotency-Key` replays, the 1 MiB body limit and the
//!   trailing-slash redirect.
//! * Authentication is per route, with the [`auth::Tenant`] extractor (bearer API key →
//!   tenant). Public routes: `GET /health` and `GET /v1/openapi.json`.
//! * Errors are [`error::ApiError`]s, rendered as `{"error": {"code", "message", "details"?,
//!   "requestId"}}` by the request-id middleware.
//! * [`serve`] runs the router on a listener with `kindgi-serve` (header, idle and body
//!   timeouts, connection caps, a bounded drain) until a stop; [`testing`] holds an
//!   in-process client for tests.
//!
//! * [`routes`]: tools, MCP endpoints (and their resources/prompts proxies) and
//!   conversations; a host sets [`AppState::allow_stdio_mcp`] and [`AppState::agent_exists`].
//!
//! Routes, codes and examples: `docs/api.md`.

pub mod auth;
pub mod cpu;
pub mod error;
pub mod flows;
pub mod idempotency;
pub mod json_body;
pub mod page;
pub mod projects;
pub mod request_id;
pub mod routes;
pub mod runs;
pub mod state;
pub mod testing;
pub mod version_cache;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

pub use error::ApiError;
pub use state::AppState;

/// Largest request body accepted (413 `payload-too-large` above it).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// The OpenAPI 3.1 document served at `/v1/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("openapi.json");

/// The API over `state`.
pub fn router(state: AppState) -> Router {
    router_with(state, Router::new())
}

/// The API plus `extra` routes (written against [`AppState`]), all under the same middleware.
pub fn router_with(state: AppState, extra: Router<AppState>) -> Router {
    Router::new()
        .route(
            "/health",
            get(|| async { axum::Json(serde_json::json!({ "ok": true })) }),
        )
        .route("/v1/openapi.json", get(openapi))
        .merge(routes::tools::routes())
        .merge(routes::flows::routes())
        .merge(routes::agents::routes())
        .merge(routes::guardrails::routes())
        .merge(routes::projects::routes())
        .merge(routes::env::routes().merge(routes::secrets::routes()))
        .merge(routes::mcp::routes())
        .merge(routes::conversations::routes())
        .merge(routes::tokens::routes().merge(routes::service_accounts::routes()))
        .merge(extra)
        .fallback(fallback)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            idempotency::middleware,
        ))
        .layer(axum::middleware::from_fn(request_id::middleware))
        .with_state(state)
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI_JSON).into_response()
}

/// Unknown routes: a trailing slash is redirected (301) to the path without it; anything
/// else is `404 not-found`.
async fn fallback(request: Request) -> Response {
    let path = request.uri().path();
    if path.len() > 1 && path.ends_with('/') {
        let mut target = path.trim_end_matches('/').to_owned();
        if target.is_empty() {
            target.push('/');
        }
        if let Some(q) = request.uri().query() {
            target.push('?');
            target.push_str(q);
        }
        return (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, target)]).into_response();
    }
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not-found",
        format!("No route for {} {}", request.method(), truncate_path(path)),
    )
    .into_response()
}

fn truncate_path(p: &str) -> String {
    p.chars().take(200).collect()
}

/// Serve `app` on `listener` under `limits` (timeouts, connection caps, grace; see
/// [`kindgi_serve::Limits`]) until `stop` is cancelled, then drain: in-flight requests
/// finish, and whatever is still open when the grace period ends is dropped. A request body
/// slower than [`kindgi_serve::Limits::body_timeout`] is answered `408 request-timeout`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: kindgi_serve::Limits,
    stop: kindgi_serve::CancellationToken,
) -> kindgi_serve::Drained {
    let service = hyper_util::service::TowerToHyperService::new(app);
    match limits.body_timeout {
        Some(limit) => {
            let service = kindgi_serve::BodyTimeout::new(service, limit, move |headers| {
                body_timeout_answer(headers, limit)
            });
            kindgi_serve::serve(listener, service, limits, stop).await
        }
        None => kindgi_serve::serve(listener, service, limits, stop).await,
    }
}

/// `408 request-timeout` in the `/v1` envelope, with the request id the middleware gave.
fn body_timeout_answer(headers: &header::HeaderMap, limit: std::time::Duration) -> Response {
    let id = headers
        .get(request_id::HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let error = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        "request-timeout",
        format!(
            "The request body did not arrive within {} ms; send it at once, or retry",
            limit.as_millis()
        ),
    )
    .with_details(serde_json::json!({ "limitMs": limit.as_millis() as u64 }));
    let mut response = axum::Json(error.envelope(&id)).into_response();
    *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
    if let Ok(v) = header::HeaderValue::from_str(&id) {
        response.headers_mut().insert(request_id::HEADER, v);
    }
    response
}
