//! Text that a model (or a tool it ran, or a server) wrote, made safe to draw on a terminal:
//! control characters are shown, not obeyed. Without this an escape sequence in a call's
//! arguments could clear the line and make a consent dialog show `git status` while
//! `touch /tmp/x` runs.
//!
//! Escaped: C0 controls (and DEL) as `\x1b`-style hex, C1 controls and the Unicode controls that
//! reorder or hide text (bidi embeddings, overrides and isolates, LRM/RLM/ALM, zero-width
//! joiners are left alone) as `\u{202e}`. [`line`] escapes newlines and tabs too, for one-line
//! places (a call, a dialog); [`block`] keeps `\n` and `\t` for output and prose, and a `\r`
//! only as part of `\r\n`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// For one-line places: every control character escaped, newlines included.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// For multi-line text: newlines and tabs kept, every other control character escaped.
pub fn block(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, keep_layout: bool) -> Cow<'_, str> {
    let mut chars = text.char_indices().peekable();
    let mut out: Option<String> = None;
    while let Some((at, c)) = chars.next() {
        let crlf = c == '\r' && matches!(chars.peek(), Some((_, '\n')));
        let kept = keep_layout && (c == '\n' || c == '\t' || crlf);
        if kept || !needs_escape(c) {
            if let Some(out) = &mut out {
                out.push(c);
            }
            continue;
        }
        let out = out.get_or_insert_with(|| {
            let mut s = String::with_capacity(text.len() + 8);
            s.push_str(&text[..at]);
            s
        });
        push_escaped(out, c);
    }
    match out {
        Some(out) => Cow::Owned(out),
        None => Cow::Borrowed(text),
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// Escapes a byte stream (a tool's output) chunk by chunk: a character split between two
/// chunks is held until it is complete, and bytes that are not UTF-8 are shown as `\xNN`.
#[derive(Debug, Default)]
pub struct Stream {
    pending: Vec<u8>,
}

impl Stream {
    /// The escaped text of `chunk` (with what was held back from the previous one).
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    // A final `\r` may be the start of a `\r\n`: hold it.
                    let (text, held) = match text.strip_suffix('\r') {
                        Some(text) => (text, 1),
                        None => (text, 0),
                    };
                    out.push_str(&block(text));
                    rest = &rest[rest.len() - held..];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    out.push_str(&block(std::str::from_utf8(valid).unwrap_or_default()));
                    match e.error_len() {
                        // An incomplete character at the end: wait for the next chunk.
                        None => {
                            rest = after;
                            break;
                        }
                        Some(n) => {
                            for b in &after[..n] {
                                let _ = write!(out, "\\x{b:02x}");
                            }
                            rest = &after[n..];
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }

    /// What is still held, escaped (at the end of the output).
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.pending);
        let mut out = String::new();
        for chunk in held.utf8_chunks() {
            out.push_str(&line(chunk.valid()));
            for b in chunk.invalid() {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_places_escape_every_control_character() {
        let cases = [
            ("git status", "git status"),
            (
                "git status\x1b[2K\rtouch /tmp/x",
                "git status\\x1b[2K\\rtouch /tmp/x",
            ),
            ("a\nb\tc", "a\\nb\\tc"),
            ("bell\x07 del\x7f nul\0", "bell\\x07 del\\x7f nul\\x00"),
            ("c1 \u{9b}2J", "c1 \\u{9b}2J"),
            ("ls \u{202e}txt.exe", "ls \\u{202e}txt.exe"),
            ("isolate \u{2066}x\u{2069}", "isolate \\u{2066}x\\u{2069}"),
            ("é ü 日本 ✓", "é ü 日本 ✓"),
        ];
        for (text, shown) in cases {
            assert_eq!(line(text), shown, "{text:?}");
        }
        assert!(matches!(line("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn blocks_keep_newlines_tabs_and_crlf_only() {
        assert_eq!(block("a\nb\tc\r\nd"), "a\nb\tc\r\nd");
        assert_eq!(block("50%\rdone\x1b[31m!"), "50%\\rdone\\x1b[31m!");
    }

    #[test]
    fn a_stream_holds_split_characters_and_shows_bad_bytes() {
        let mut s = Stream::default();
        let e_acute = "é".as_bytes();
        let c1 = "\u{9b}".as_bytes();
        assert_eq!(s.push(&[b'a', e_acute[0]]), "a");
        assert_eq!(s.push(&[e_acute[1], c1[0]]), "é");
        assert_eq!(s.push(&[c1[1], 0xff, b'\r']), "\\u{9b}\\xff");
        assert_eq!(s.push(b"\nok\x1b"), "\r\nok\\x1b");
        assert_eq!(s.push(&[0xe6]), "");
        assert_eq!(s.finish(), "\\xe6");
    }
}
