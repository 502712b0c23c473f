//! Kindgi: MCP servers as a tool source.
//!
//! An `mcpEndpoint` ([`Endpoint`]: `mcp+stdio://…`, `mcp+http(s)://…`, `mcp+sse(s)://…`) is
//! connected with [`McpClient`] — the official Rust MCP SDK (`rmcp`) for the protocol, with
//! our own stdio process handling (stderr kept for errors, garbage on stdout fatal) and our
//! own legacy SSE transport (rmcp dropped it). Behind the [`McpSource`] trait it lists the
//! server's tools as [`ToolManifest`](kindgi_spec::ToolManifest)s (`transport: "mcp"`,
//! never read-only) and calls them with a timeout; [`mcp_tools`] turns them into runtime
//! [`Tool`](kindgi_tools::Tool)s and [`mcp_dispatchers`] into the runtime's
//! [`ToolDispatcher`](kindgi_tools::dispatch::ToolDispatcher)s (transport MCP). Every failure — a server that
//! exits, hangs or prints garbage — is an [`McpError`] naming the endpoint, never a hang.
//! [`ConnectOptions::egress`] applies the host's address policy to the HTTP transports
//! (`kindgi server` sets it for endpoints a tenant registered).

pub mod auth;
mod client;
mod diag;
pub mod dispatch;
pub mod egress;
pub mod endpoint;
pub mod error;
pub mod manifest;
pub mod source;
mod sse;
mod stdio;
pub mod tools;

pub use auth::{AuthHeaders, AuthPlan};
pub use client::{ConnectOptions, DEFAULT_TIMEOUT, McpClient};
pub use dispatch::mcp_dispatchers;
pub use egress::check_endpoint;
pub use endpoint::Endpoint;
pub use error::McpError;
pub use manifest::{
    ManifestOptions, ServerIdentity, kebab_case, manifest_from_mcp_tool, mcp_tool_name,
};
pub use source::{CallOutcome, McpSource};
pub use tools::{DEFAULT_CALL_TIMEOUT, mcp_handler, mcp_tools};
