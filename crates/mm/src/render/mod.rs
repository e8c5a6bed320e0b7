//! Rendering of turn events: `human` (stderr echo for people), `json` (stream-json lines).

pub mod human;
pub mod json;
