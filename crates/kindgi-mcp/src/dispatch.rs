//! MCP dispatch: an MCP server's tools as [`ToolDispatcher`]s (transport
//! [`ToolTransport::Mcp`]), ready for a runtime's tool catalogue.
//!
//! Each listed tool becomes an [`InProcessTool::mcp`]: the runtime validates input and
//! output against the server's schemas in MCP mode and calls the server through the
//! [`McpSource`] (the connected [`crate::McpClient`]) with a timeout; an MCP tool never runs
//! in a dry run (seed 004). The transport, not the manifest, decides that: a server's tool is
//! an MCP tool whatever it says about itself.

use std::sync::Arc;
use std::time::Duration;

use kindgi_tools::dispatch::{InProcessTool, ToolDispatcher, ToolTransport};

use crate::error::McpError;
use crate::source::McpSource;
use crate::tools::mcp_tools;

/// Lists `source`'s tools and makes each a dispatcher whose calls go to the server, each
/// bounded by `call_timeout`.
pub async fn mcp_dispatchers(
    source: Arc<dyn McpSource>,
    call_timeout: Duration,
) -> Result<Vec<Arc<dyn ToolDispatcher>>, McpError> {
    let tools = mcp_tools(source, call_timeout).await?;
    Ok(tools
        .into_iter()
        .map(|tool| {
            let d: Arc<dyn ToolDispatcher> = Arc::new(InProcessTool::mcp(tool));
            debug_assert_eq!(d.transport(), ToolTransport::Mcp);
            d
        })
        .collect())
}
