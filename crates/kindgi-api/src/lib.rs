//! Kindgi's `/v1` REST API (axum).
//!
//! * [`router`] builds the whole API over an [`AppState`], every route group mounted here:
//!   the registries on the Platform API wire — `/v1/tools`, `/v1/flows`, `/v1/agents`,
//!   `/v1/guardrails` ([`routes`]) — `GET /v1/projects/default`, env and secrets, MCP
//!   endpoints, conversations, tokens and service accounts, and the state's runtime's runs
//!   ([`runs`]), approvals and waits. [`AppState::read_only_registry`] makes the registries
//!   refuse writes (`409 registry-read-only`, for `kindgi dev`). All share the middleware:
//!   request ids, error envelopes, `Idempotency-Key` replays, `traceresponse`, `Cache-Control: no-store`
//!   and the 10 MiB body limit (checked before authentication).
//! * Authentication is per route, with the [`auth::Caller`] / [`auth::Tenant`] extractors
//!   (bearer API key → tenant). Public routes: `GET /health` and `GET /v1/openapi.json`.
//!   An unknown route (a trailing slash included) is `401` without a valid key and
//!   `404 route-not-found` with one, as the reference answers — unless it is an operation of
//!   the official Platform API we do not mount: `501 not-served`, naming its family
//!   ([`unserved`]).
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
pub mod body_budget;
pub mod cpu;
pub mod error;
pub mod export_signing;
pub mod idempotency;
mod in_flight;
pub mod json_body;
pub mod key_project;
pub mod page;
mod paged_body;
pub mod projects;
pub mod query;
pub mod redact;
pub mod request_id;
pub mod routes;
pub mod run_wire;
pub mod runs;
pub mod runs_list;
pub mod sse;
pub mod state;
pub mod stream_caps;
pub mod tenant_state;
#[cfg(feature = "testing")]
pub mod testing;
pub mod unserved;
pub mod values_config;
pub mod version_cache;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

pub use error::ApiError;
pub use state::AppState;

/// Largest request body accepted: `requestMaxBytes` of a self-hosted deployment, 10 MiB
/// (`413 request-too-large` above it, before authentication; platform-api.md §1.6).
pub const BODY_LIMIT: usize = 10 * 1024 * 1024;

/// The OpenAPI 3.1 document served at `/v1/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("openapi.json");

/// The API over `state`.
///
/// The middleware wraps the routed API once, from outside (`Router::layer` would wrap every
/// route, and each layer clones everything beneath it, the state included, per request).
pub fn router(state: AppState) -> Router {
    let api = Router::new()
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
        .merge(routes::identity::routes().merge(routes::tenant::routes()))
        .merge(routes::env::routes().merge(routes::secrets::routes()))
        .merge(routes::mcp::routes())
        .merge(routes::providers::routes())
        .merge(routes::conversations::routes())
        .merge(routes::tokens::routes().merge(routes::service_accounts::routes()))
        .merge(runs::routes())
        .merge(routes::reviewers::routes())
        .merge(routes::schedules::routes())
        .merge(routes::connections::routes())
        .merge(routes::mail_triggers::routes().merge(routes::mail_inbound::routes()))
        .merge(routes::audit_bundle::routes())
        .merge(routes::approvals::routes())
        .merge(routes::waits::routes())
        .merge(routes::webhooks::routes().merge(routes::hooks::routes()))
        .fallback(fallback)
        .method_not_allowed_fallback(fallback)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state.clone());
    let layered = tower::ServiceBuilder::new()
        .layer(axum::middleware::from_fn(request_id::middleware))
        .layer(axum::middleware::from_fn(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            std::sync::Arc::new(state.clone()),
            idempotency::middleware,
        ))
        .layer(axum::middleware::from_fn_with_state(
            std::sync::Arc::new(state.clone()),
            key_project::middleware,
        ))
        .layer(axum::middleware::from_fn_with_state(
            std::sync::Arc::new(state),
            tenant_state::middleware,
        ))
        .service(api);
    Router::new().fallback_service(layered)
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI_JSON).into_response()
}

/// A body whose `Content-Length` is over [`BODY_LIMIT`] is refused before anything reads it
/// or checks the key: `413 request-too-large`, without `Cache-Control: no-store`. A body
/// without a length is cut at the limit by the extractors (the same `413`), so no more than
/// the limit is ever buffered.
async fn body_limit(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > BODY_LIMIT as u64) {
        let mut r = ApiError::too_large(BODY_LIMIT).into_response();
        r.extensions_mut().insert(request_id::NoStoreExempt);
        r.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        return r;
    }
    next.run(request).await
}

/// Unknown routes (a wrong method, a trailing slash): `401` without a valid key, else
/// `501 not-served` for an official operation we do not mount ([`unserved`]), else
/// `404 route-not-found` ``No route registered for <METHOD> <path>. …``.
async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    if let Err(e) = auth::authenticate(&state, request.headers()).await {
        return e.into_response();
    }
    unserved::unknown_route(request.method().as_str(), request.uri().path()).into_response()
}

/// `404 route-not-found` ``No route registered for <METHOD> <path>. …`` (a wait token in
/// the path is named by its id: it is a secret).
pub(crate) fn route_not_found(method: &str, path: &str) -> ApiError {
    let path = redact::path_without_token(path);
    let path = path.as_ref();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "route-not-found",
        format!(
            "No route registered for {method} {}. The routes this server has are listed at GET /v1/openapi.json",
            truncate_path(path)
        ),
    )
    .with_details(serde_json::json!({"method": method, "path": truncate_path(path)}))
}

fn truncate_path(p: &str) -> String {
    p.chars().take(200).collect()
}

/// Serve `app` on `listener` under `limits` (timeouts, connection caps, grace; see
/// [`kindgi_serve::Limits`]) until `stop` is cancelled, then drain: in-flight requests
/// finish, and whatever is still open when the grace period ends is dropped. A request body
/// slower than [`kindgi_serve::Limits::body_timeout`] is answered `408 request-timeout`; a
/// body refused before it was read (`401`, `404`, `413`) is read out within
/// [`kindgi_serve::DrainBound`] so the client sees the answer.
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
            let service =
                kindgi_serve::DrainUnread::new(service, kindgi_serve::DrainBound::default());
            kindgi_serve::serve(listener, service, limits, stop).await
        }
        None => {
            let service =
                kindgi_serve::DrainUnread::new(service, kindgi_serve::DrainBound::default());
            kindgi_serve::serve(listener, service, limits, stop).await
        }
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
