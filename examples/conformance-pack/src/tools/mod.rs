//! The nine fixture tools, one module each (the module path is what the index names).

pub mod bad_output;
pub mod context;
pub mod defaults;
pub mod echo;
pub mod hold;
pub mod noisy;
pub mod process_env;
pub mod sleep;
pub mod throws;

use kindgi_tools::{Handler, HandlerError, ToolContext};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// Wraps an async JSON handler into the runtime's handler shape.
pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    Arc::new(move |input, ctx| Box::pin(f(input, ctx)))
}
