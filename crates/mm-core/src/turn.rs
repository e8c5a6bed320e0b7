//! The turn loop.

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Done,
    MaxTurns,
    Loop,
    Cancelled,
}

pub struct TurnOptions;
pub struct TurnResult;

pub async fn run_turn() {}
