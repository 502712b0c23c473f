//! MCP tools as runtime [`Tool`]s: the listed manifest plus a handler that calls the server.
//! Invocation (`kindgi_tools::invoke`) validates input and output against the server's
//! schemas in MCP mode, as for any tool with `transport: "mcp"`.

use kindgi_spec::ToolManifest;
use kindgi_tools::{Handler, HandlerError, Tool, ToolContext};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

use crate::error::McpError;
use crate::manifest::mcp_tool_name;
use crate::source::McpSource;

/// The default bound on one tool call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The handler for one listed tool: calls it on `source` within `timeout`. The call ends
/// early with `aborted` when the context's signal fires. A result with `isError` fails
/// with the server's text.
pub fn mcp_handler(
    source: Arc<dyn McpSource>,
    manifest: &ToolManifest,
    timeout: Duration,
) -> Handler {
    let name: Arc<str> = Arc::from(mcp_tool_name(manifest));
    Arc::new(move |input: Value, ctx: ToolContext| {
        let source = source.clone();
        let name = name.clone();
        Box::pin(async move {
            if ctx.signal.is_cancelled() {
                return Err(HandlerError::msg("aborted"));
            }
            tokio::select! {
                biased;
                () = ctx.signal.cancelled() => Err(HandlerError::msg("aborted")),
                outcome = source.call_tool(&name, input, timeout) => match outcome {
                    Ok(outcome) if outcome.is_error => Err(HandlerError::msg(format!(
                        "MCP tool \"{name}\" at {} reported an error: {}",
                        source.endpoint(),
                        outcome.error_text()
                    ))),
                    Ok(outcome) => Ok(outcome.value),
                    Err(e) => Err(HandlerError::msg(e.to_string())),
                },
            }
        })
    })
}

/// Lists `source`'s tools and wraps each as a [`Tool`] whose handler calls the server.
pub async fn mcp_tools(
    source: Arc<dyn McpSource>,
    call_timeout: Duration,
) -> Result<Vec<Tool>, McpError> {
    let manifests = source.list_tools().await?;
    Ok(manifests
        .into_iter()
        .map(|manifest| {
            let handler = mcp_handler(source.clone(), &manifest, call_timeout);
            Tool::from_parts(manifest, handler)
        })
        .collect())
}
