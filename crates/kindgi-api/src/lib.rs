//! Kindgi's `/v1` REST API (axum).
//!
//! * [`router`] builds the whole API over an [`AppState`]; [`router_with`] merges more
//!   routes (flows, runs) written against the same state, so they share the middleware:
//!   request ids, error envelopes, `Idempotency-Key` replays, the 1 MiB body limit and the
//!   trailing-slash redirect.
//! * Authentication is per route, with the [`auth::Tenant`] extractor (bearer API key →
//!   tenant). Public routes: `GET /health` and `GET /v1/openapi.json`.
//! * Errors are [`error::ApiError`]s, rendered as `{"error": {"code", "message", "details"?,
//!   "requestId"}}` by the request-id middleware.
//! * [`serve`] runs the router on a listener until a shutdown signal; [`testing`] holds
//!   an in-process client for tests.
//!
//! Routes, codes and examples: `docs/api.md`.

pub mod auth;
pub mod cpu;
pub mod error;
pub mod flows;
pub mod idempotency;
pub mod json_body;
pub mod request_id;
pub mod routes;
pub mod runs;
pub mod state;
pub mod testing;

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

/// Serve `app` on `listener` until `shutdown` completes, then finish in-flight requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}
