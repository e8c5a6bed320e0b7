//! The integration tests of mm-core, one binary (see `suite/`).

mod suite;
