//! Is an answer useless? (placeholder: the full judge lands with `mm eval`'s judging.)

use serde::Serialize;

/// Why an answer is useless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Junk {
    Empty,
    Truncated,
    CopiedPrompt,
    CopiedToolOutput,
    CopiedMmMessage,
    CallAsText,
    ToolList,
    Refusal,
}

impl Junk {
    pub fn describe(self) -> &'static str {
        match self {
            Junk::Empty => "an empty answer",
            Junk::Truncated => "an answer cut at max_tokens",
            Junk::CopiedPrompt => "a copy of the prompt",
            Junk::CopiedToolOutput => "a copy of a tool's output",
            Junk::CopiedMmMessage => "a copy of mm's own message",
            Junk::CallAsText => "a tool call written as text",
            Junk::ToolList => "the tool list",
            Junk::Refusal => "a refusal after a call that worked",
        }
    }
}

/// What an answer is judged against.
pub struct AnswerContext<'a> {
    pub prompts: &'a [&'a str],
    pub tool_outputs: &'a [&'a str],
    pub mm_messages: &'a [&'a str],
    pub names: &'a [&'a str],
    pub truncated: bool,
    pub calls_succeeded: bool,
}

fn norm(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The junk class of `answer`, if it is junk.
pub fn judge(answer: &str, ctx: &AnswerContext<'_>) -> Option<Junk> {
    let text = answer.trim();
    if text.is_empty() {
        return Some(Junk::Empty);
    }
    if ctx.truncated {
        return Some(Junk::Truncated);
    }
    if text.contains("<tools>") || text.contains("\"type\": \"function\"") {
        return Some(Junk::ToolList);
    }
    if (text.starts_with('{') || text.starts_with("```") || text.starts_with('['))
        && text.contains("\"name\"")
    {
        return Some(Junk::CallAsText);
    }
    let n = norm(text);
    if ctx.prompts.iter().any(|p| norm(p) == n) {
        return Some(Junk::CopiedPrompt);
    }
    if ctx.tool_outputs.iter().any(|o| norm(o) == n) {
        return Some(Junk::CopiedToolOutput);
    }
    if ctx.mm_messages.iter().any(|m| norm(m) == n) {
        return Some(Junk::CopiedMmMessage);
    }
    None
}
