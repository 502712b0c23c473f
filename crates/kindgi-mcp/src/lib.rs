//! Kindgi: MCP servers as a tool source.
