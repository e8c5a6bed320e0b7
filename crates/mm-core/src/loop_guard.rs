//! The loop detector (SPEC §7).
