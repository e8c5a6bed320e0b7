//! Where mm keeps its data (sessions, the prompt history, the trusted folders).

use std::path::PathBuf;

/// `$XDG_DATA_HOME/mm`, else `~/.local/share/mm` (XDG: a relative `XDG_DATA_HOME` is ignored).
pub fn data_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    match xdg {
        Some(dir) => Some(dir.join("mm")),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|home| PathBuf::from(home).join(".local/share/mm")),
    }
}
