//! sse
