//! Reading failures: the one line a user reads for a connection error or an error body, and
//! the recognition of "the prompt does not fit the context" in every server's words.

use serde_json::Value;

/// Error text kept in a message.
const MAX_ERROR_CHARS: usize = 200;

/// The innermost cause: "Connection refused (os error 111)" rather than "error sending request".
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    one_line(&cause.to_string())
}

/// Whitespace collapsed, cut to [`MAX_ERROR_CHARS`].
pub(crate) fn one_line(text: &str) -> String {
    let line = crate::text::one_line(text);
    match line.char_indices().nth(MAX_ERROR_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// The readable part of an error body: `error.message`, `error` (a string), `message`, or the body.
pub(crate) fn error_text(parsed: Option<&Value>, body: &str) -> String {
    let message = parsed.and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(Value::as_str)
    });
    let text = one_line(message.unwrap_or(body));
    if text.is_empty() {
        "(empty body)".to_owned()
    } else {
        text
    }
}

/// When the body says the prompt is too long: a message with the numbers and how to fix it.
pub(crate) fn overflow_detail(
    parsed: Option<&Value>,
    body: &str,
    known_n_ctx: Option<u64>,
) -> Option<String> {
    const SIGNS: [&str; 6] = [
        "exceed_context_size_error",
        "exceeds the available context size",
        "context_length_exceeded",
        "maximum context length",
        "greater than the context length",
        "context window",
    ];
    let lower = body.to_lowercase();
    let code = parsed.and_then(|v| {
        v.pointer("/error/code")
            .or_else(|| v.pointer("/error/type"))
    });
    let is_overflow = SIGNS.iter().any(|s| lower.contains(s))
        || code
            .and_then(Value::as_str)
            .is_some_and(|c| c.contains("context"));
    if !is_overflow {
        return None;
    }
    let number = |key: &str| {
        parsed
            .and_then(|v| v.get("error"))
            .and_then(|e| e.get(key))
            .and_then(Value::as_u64)
    };
    // The message as the server meant it: in the raw body a `≈` is `\u2248`, whose digits
    // would run into the count's ("22484476 tokens" for 4476).
    let message = parsed
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .and_then(Value::as_str)
        })
        .unwrap_or(body);
    let (from_text_prompt, from_text_ctx) = numbers_in_message(message);
    let prompt = number("n_prompt_tokens").or(from_text_prompt);
    let n_ctx = number("n_ctx").or(from_text_ctx).or(known_n_ctx);
    let how = "raise the server's context size (llama-server: -c N; Ollama: num_ctx or \
               OLLAMA_CONTEXT_LENGTH) or start a shorter conversation";
    Some(match (prompt, n_ctx) {
        (Some(prompt), Some(n_ctx)) => {
            format!(
                "the prompt has {prompt} tokens and the server's context is {n_ctx} tokens; {how}"
            )
        }
        _ => format!("the server said: {}; {how}", error_text(parsed, body)),
    })
}

/// llama-server's "request (4476 tokens) exceeds the available context size (4096 tokens)".
fn numbers_in_message(body: &str) -> (Option<u64>, Option<u64>) {
    let Some(at) = body.find("exceeds the available context size") else {
        return (None, None);
    };
    // The digits right before " tokens". Every index here comes from `find` or from trimming
    // whole characters, so each slice is on a character boundary whatever the body holds (a byte
    // offset + 1 after a multi-byte character once panicked here).
    // Digits glued to a letter or a backslash are part of something else (`\u2248`, `x86`).
    let tokens = |text: &str| -> Option<u64> {
        let head = &text[..text.find(" tokens")?];
        let before = head.trim_end_matches(|c: char| c.is_ascii_digit());
        let digits = &head[before.len()..];
        if before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '\\')
        {
            return None;
        }
        digits.parse().ok()
    };
    let before = &body[..at];
    let prompt = before
        .rfind('(')
        .and_then(|open| tokens(&before[open + 1..]));
    let after = &body[at..];
    let n_ctx = after.find('(').and_then(|open| tokens(&after[open + 1..]));
    (prompt, n_ctx)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn llama_overflow_with_numbers() {
        let body = json!({"error": {"code": 400, "message": "request (4476 tokens) exceeds the available context size (4096 tokens)", "type": "exceed_context_size_error", "n_prompt_tokens": 4476, "n_ctx": 4096}});
        let detail = overflow_detail(Some(&body), &body.to_string(), None).unwrap_or_default();
        assert!(
            detail
                .starts_with("the prompt has 4476 tokens and the server's context is 4096 tokens;"),
            "{detail}"
        );
        assert!(detail.contains("-c N") && detail.contains("num_ctx"));
    }

    #[test]
    fn llama_overflow_numbers_from_the_message() {
        let body = json!({"error": {"message": "request (5000 tokens) exceeds the available context size (2048 tokens), try increasing it"}});
        let detail = overflow_detail(Some(&body), &body.to_string(), None).unwrap_or_default();
        assert!(
            detail
                .starts_with("the prompt has 5000 tokens and the server's context is 2048 tokens"),
            "{detail}"
        );
    }

    #[test]
    fn an_escaped_character_before_the_count_is_not_read_as_digits() {
        // `≈` written as JSON's `\u2248`, as a server may escape it.
        let body = r#"{"error":{"message":"request (\u22484476 tokens) exceeds the available context size (4096 tokens)"}}"#;
        let parsed: Value = serde_json::from_str(body).unwrap_or_default();
        let detail = overflow_detail(Some(&parsed), body, None).unwrap_or_default();
        assert!(
            detail
                .starts_with("the prompt has 4476 tokens and the server's context is 4096 tokens"),
            "{detail}"
        );
        // Unparsed, the raw text does not give a wrong number either.
        let detail = overflow_detail(None, body, None).unwrap_or_default();
        assert!(!detail.contains("has 22484476 tokens"), "{detail}");
    }

    #[test]
    fn corpus_no_escape_or_glued_text_is_read_as_a_count() {
        let mut corpus = mm_test_support::Corpus::new("context-size errors (counts never misread)");
        // `(text before each count, whether the JSON-decoded message gives the true counts)`.
        let prefixes = [
            ("\\u2248", true),
            ("\\u00a0", true),
            ("\\ud83d\\ude00", true),
            ("\\u00e9", true),
            ("\\u007e", true),
            ("\\n", true),
            ("\\t", true),
            ("\\/", true),
            ("\\\\", false),
            ("≈", true),
            ("~", true),
            ("about ", true),
            ("x86 ", true),
            ("é", true),
            (" ", true),
            ("", true),
        ];
        for (prefix, decoded_right) in prefixes {
            let message = format!(
                "request ({prefix}4476 tokens) exceeds the available context size ({prefix}4096 tokens)"
            );
            let body = format!(r#"{{"error":{{"message":"{message}"}}}}"#);
            let parsed: Option<Value> = serde_json::from_str(&body).ok();
            for with_json in [true, false] {
                let detail = overflow_detail(parsed.as_ref().filter(|_| with_json), &body, None)
                    .unwrap_or_default();
                // Held: the true counts, or the server's own words; never a wrong count.
                let right = detail.starts_with(
                    "the prompt has 4476 tokens and the server's context is 4096 tokens",
                );
                let quoted = detail.starts_with("the server said:");
                let must_be_right = with_json && parsed.is_some() && decoded_right;
                corpus.check(
                    (prefix, with_json),
                    right || (quoted && !must_be_right),
                    || detail.clone(),
                );
            }
        }
        corpus.finish();
    }

    #[test]
    fn openai_overflow_keeps_the_server_message() {
        let body = json!({"error": {"message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"}});
        let detail =
            overflow_detail(Some(&body), &body.to_string(), Some(8192)).unwrap_or_default();
        assert!(
            detail.starts_with(
                "the server said: This model's maximum context length is 8192 tokens.;"
            ),
            "{detail}"
        );
    }

    #[test]
    fn other_errors_are_not_overflow() {
        let body = json!({"error": {"message": "model not found"}});
        assert_eq!(overflow_detail(Some(&body), &body.to_string(), None), None);
    }

    #[test]
    fn error_text_is_one_short_line() {
        assert_eq!(error_text(None, "  bad\n\n gateway  "), "bad gateway");
        assert_eq!(
            error_text(Some(&json!({"error": "no such model"})), ""),
            "no such model"
        );
        assert_eq!(error_text(None, ""), "(empty body)");
        let long = "x".repeat(500);
        assert_eq!(error_text(None, &long).chars().count(), MAX_ERROR_CHARS + 1);
        let wide = "é".repeat(500);
        assert_eq!(error_text(None, &wide).chars().count(), MAX_ERROR_CHARS + 1);
    }

    #[test]
    fn a_multi_byte_character_before_the_numbers_does_not_panic() {
        for body in [
            "request (é4476 tokens) exceeds the available context size (€4096 tokens)",
            "request (😀 tokens) exceeds the available context size (日本 tokens)",
            "exceeds the available context size (",
            "(é tokens exceeds the available context size é tokens",
        ] {
            let detail = overflow_detail(None, body, None).unwrap_or_default();
            assert!(
                detail.contains("raise the server's context size"),
                "{detail}"
            );
        }
        let detail = overflow_detail(
            None,
            "request (é4476 tokens) exceeds the available context size (€4096 tokens)",
            None,
        );
        assert_eq!(
            detail
                .as_deref()
                .map(|d| d.split(';').next().unwrap_or_default()),
            Some("the prompt has 4476 tokens and the server's context is 4096 tokens")
        );
    }
}
