//! Integration suites; each module is one area.

mod provider;
