//! Route groups.

pub mod conversations;
pub mod mcp;
pub mod mcp_proxy;
pub mod mcp_sync;
pub mod mcp_validate;
pub mod scope_params;
pub mod tools;
