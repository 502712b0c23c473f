//! The pack's tools, one module each (the module path is what the index names).

pub mod add_order_note;
pub mod greet;
pub mod lookup_order;
pub mod request_review;
pub mod send_reply;

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

/// The example's orders: `(orderId, status, totalCents)`.
pub const ORDERS: &[(&str, &str, u64)] = &[
    ("ord_1001", "shipped", 4200),
    ("ord_1002", "processing", 1299),
];
