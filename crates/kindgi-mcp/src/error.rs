//! Why talking to an MCP server failed. Every variant names the endpoint and says what to do.

/// A failure reaching or talking to an MCP server (not a tool's own `isError` result).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("invalid MCP endpoint \"{endpoint}\": {reason}")]
    InvalidEndpoint { endpoint: String, reason: String },

    #[error("could not start the MCP server {endpoint}: {reason}")]
    Spawn { endpoint: String, reason: String },

    /// The host's egress policy refuses the endpoint's address; nothing was connected.
    #[error("the MCP server {endpoint} may not be reached: {refused}")]
    Egress {
        endpoint: String,
        #[source]
        refused: kindgi_tools::egress::EgressError,
    },

    #[error("could not connect to the MCP server {endpoint}: {reason}")]
    Connect { endpoint: String, reason: String },

    #[error("the MCP server {endpoint} did not answer {what} within {ms}ms")]
    Timeout {
        endpoint: String,
        what: String,
        ms: u64,
    },

    /// The server went away (exited, closed the stream, wrote garbage).
    #[error("the MCP server {endpoint} closed the connection during {what}{detail}")]
    Closed {
        endpoint: String,
        what: String,
        detail: String,
    },

    /// The server answered with a JSON-RPC error or something that is not the expected result.
    #[error("the MCP server {endpoint} refused {what}: {message}")]
    Protocol {
        endpoint: String,
        what: String,
        message: String,
    },

    #[error("the MCP server {endpoint} has no tool named \"{name}\" (it lists: {available})")]
    UnknownTool {
        endpoint: String,
        name: String,
        available: String,
    },
}

impl McpError {
    /// The endpoint the error is about.
    pub fn endpoint(&self) -> &str {
        match self {
            McpError::InvalidEndpoint { endpoint, .. }
            | McpError::Spawn { endpoint, .. }
            | McpError::Connect { endpoint, .. }
            | McpError::Egress { endpoint, .. }
            | McpError::Timeout { endpoint, .. }
            | McpError::Closed { endpoint, .. }
            | McpError::Protocol { endpoint, .. }
            | McpError::UnknownTool { endpoint, .. } => endpoint,
        }
    }
}
