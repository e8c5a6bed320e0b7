//! Markdown front matter (`---` … `---`), split the same way for agent files and `SKILL.md`.

pub(crate) enum FrontMatter<'a> {
    /// The file does not start with a `---` line.
    Absent,
    Closed {
        yaml: &'a str,
        body: &'a str,
        /// The line (1-based) of the closing `---`.
        close_line: usize,
    },
    Unclosed,
}

/// Splits a Markdown file at its front matter, by one rule: a first line `---` and
/// the next line `---` (trailing spaces and `\r` ignored); a byte-order mark before it is
/// skipped. The YAML starts on line 2.
pub(crate) fn split_front_matter(text: &str) -> FrontMatter<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {
            let start = first.len();
            let mut pos = start;
            for (i, line) in lines.enumerate() {
                if line.trim_end() == "---" {
                    return FrontMatter::Closed {
                        yaml: text.get(start..pos).unwrap_or(""),
                        body: text.get(pos + line.len()..).unwrap_or(""),
                        close_line: i + 2,
                    };
                }
                pos += line.len();
            }
            FrontMatter::Unclosed
        }
        _ => FrontMatter::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_split_at_the_closing_line() {
        let FrontMatter::Closed {
            yaml,
            body,
            close_line,
        } = split_front_matter("\u{feff}---\r\nname: x\nb: 2\n--- \nBody\n")
        else {
            panic!("closed front matter");
        };
        assert_eq!((yaml, body, close_line), ("name: x\nb: 2\n", "Body\n", 4));
        assert!(matches!(
            split_front_matter("# title\n"),
            FrontMatter::Absent
        ));
        assert!(matches!(split_front_matter(""), FrontMatter::Absent));
        assert!(matches!(
            split_front_matter("---\nname: x\n"),
            FrontMatter::Unclosed
        ));
    }
}
