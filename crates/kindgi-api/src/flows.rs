//! Compatibility shim: `/v1/flows` is now served from the store by every `/v1` router
//! ([`crate::routes::flows`]), so this adds nothing. Kept so callers that merged
//! `flows::routes(runtime)` next to `runs::routes` keep compiling; drop the call.

use axum::Router;
use kindgi_runtime::Runtime;

use crate::state::AppState;

/// An empty router (the flow routes are part of [`crate::router`] now).
pub fn routes(_runtime: Runtime) -> Router<AppState> {
    Router::new()
}
