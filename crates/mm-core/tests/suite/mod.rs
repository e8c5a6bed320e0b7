//! Integration suites; each module is one area.

mod mcp;
mod provider;
