//! The tool-source abstraction the runtime programs against: list a server's tools as
//! manifests, call one with a timeout.

use kindgi_spec::ToolManifest;
use kindgi_tools::BoxFuture;
use serde_json::Value;
use std::time::Duration;

use crate::error::McpError;

/// What a `tools/call` produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// `structuredContent` when the server sent it, else the `content` blocks.
    pub value: Value,
    /// The server's `isError`: the tool ran and reported failure.
    pub is_error: bool,
    /// The whole `CallToolResult` as received.
    pub raw: Value,
}

impl CallOutcome {
    /// A one-line account of a failed call: the text blocks, or the content as JSON.
    pub fn error_text(&self) -> String {
        let texts: Vec<&str> = self
            .raw
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        if texts.is_empty() {
            self.value.to_string()
        } else {
            texts.join("\n")
        }
    }
}

/// A source of MCP tools.
pub trait McpSource: Send + Sync {
    /// The endpoint text the manifests carry as `mcpEndpoint`.
    fn endpoint(&self) -> &str;

    /// The server's tools (all pages) as manifests.
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<ToolManifest>, McpError>>;

    /// Calls the MCP tool `name` (the server's name for it) with `input`, waiting at most `timeout`.
    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        input: Value,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>>;
}
