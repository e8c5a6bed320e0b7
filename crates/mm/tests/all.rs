//! Integration tests of the real `mm` binary against the scripted model server (and, with
//! `MM_E2E=1`, against a real llama.cpp server).
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails by panicking"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "the tests start the binary they test, and its peers, themselves"
)]

mod suite;
