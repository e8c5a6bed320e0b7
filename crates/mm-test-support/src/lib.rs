//! Test support for mm.
