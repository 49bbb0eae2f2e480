//! MCP client manager (stdio and streamable HTTP servers, namespacing, grants).
//!
//! Not implemented yet: MCP support arrives with its own issue. The crate exists so the workspace
//! layout and dependency direction are fixed from the start; nothing in the product calls it.
