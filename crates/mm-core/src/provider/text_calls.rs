//! text_calls
