//! picomcp: a small, strict library for writing MCP servers.
