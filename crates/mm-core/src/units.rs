//! Units as mm writes them (a leaf).

use std::time::Duration;

/// A duration in whole milliseconds, as every `duration_ms` and `*_ms` field carries it
/// (saturating: no duration mm measures comes near `u64::MAX`).
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
