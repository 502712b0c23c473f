//! The MCP servers a host names: each is connected once at start (`kindgi_mcp::McpClient`)
//! and its tools become MCP dispatchers in the runtime's catalogue
//! (`kindgi_mcp::mcp_dispatchers`, transport MCP: never run in a dry run), listed in the API
//! registry for the server's tenant. A server that cannot be reached is a warning: the host
//! starts without its tools.

use std::sync::Arc;

use kindgi_mcp::{ConnectOptions, DEFAULT_CALL_TIMEOUT, McpClient, McpSource, mcp_dispatchers};

use crate::config::McpServer;
use crate::packs::say;
use crate::register::Registrar;

/// Connects `server` and registers its tools; the number registered (0 after a warning).
pub async fn start(name: &str, server: &McpServer, registrar: &Registrar) -> usize {
    let client = match McpClient::connect(&server.endpoint, ConnectOptions::default()).await {
        Ok(c) => c,
        Err(e) => {
            say(
                name,
                &format!("warning: MCP server left out: {e}; its tools are not registered"),
            );
            return 0;
        }
    };
    let source: Arc<dyn McpSource> = Arc::new(client);
    match mcp_dispatchers(source, DEFAULT_CALL_TIMEOUT).await {
        Ok(tools) => {
            let n = tools.len();
            for tool in tools {
                registrar
                    .list_manifest(&server.tenant, tool.manifest())
                    .await;
                registrar
                    .runtime()
                    .tools()
                    .insert_for(Some(&server.tenant), tool);
            }
            say(
                name,
                &format!(
                    "MCP server {} registered for tenant \"{}\": {n} tool(s)",
                    server.endpoint, server.tenant
                ),
            );
            n
        }
        Err(e) => {
            say(
                name,
                &format!("warning: MCP server left out: {e}; its tools are not registered"),
            );
            0
        }
    }
}
