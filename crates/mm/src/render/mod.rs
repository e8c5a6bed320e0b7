//! Rendering of turn events: `human` (print mode's stderr echo), `live` (interactive mode's
//! screen, with `markdown`), `json` (stream-json lines), and `escape`, which every
//! model-supplied string drawn on a terminal goes through.

pub mod escape;
pub mod human;
pub mod json;
pub mod live;
pub mod markdown;

/// `mm: warning: MESSAGE` on stderr, control characters escaped (a warning may quote a file,
/// a server or a model).
pub fn warn(message: &str) {
    eprintln!("mm: warning: {}", escape::line(message));
}
