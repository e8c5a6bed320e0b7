//! constrained
