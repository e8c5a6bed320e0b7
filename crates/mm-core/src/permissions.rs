//! Consent: whether a call runs without asking, asks the user, or is refused.

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

/// Asks the user about one call; `None` when there is no one to ask (print mode, no terminal).
pub trait ConsentAsker: Send + Sync {
    fn ask(&self, tool: &str, summary: &str) -> Option<bool>;
}

/// The consent rules of an agent: `yolo` and `allow:`.
#[derive(Debug, Clone, Default)]
pub struct Permissions {
    pub yolo: bool,
    pub allow: Vec<String>,
}
