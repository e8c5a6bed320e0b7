//! picomcp's integration tests: raw JSON-RPC over the stdio and Streamable HTTP transports.

// Test helpers outside `#[test]` functions are not covered by clippy.toml's in-test allowance.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
