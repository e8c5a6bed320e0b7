//! Transports: newline-delimited JSON-RPC over stdio, and Streamable HTTP.

pub mod http;
pub mod stdio;
