//! Server-sent events: bytes in, events out. The one parser for model servers (the provider)
//! and MCP servers (Streamable HTTP).
//!
//! Follows the WHATWG rules: lines end in `\n`, `\r\n` or `\r`; a blank line ends an event;
//! `data:` lines (with or without the space) are joined with `\n`; lines starting with `:` are
//! comments (keep-alives); `event` names the event; `id` sets the last event id (kept across
//! events, sent back as `Last-Event-ID` on reconnection; an id holding NUL is ignored);
//! `retry` (digits only) sets the reconnection delay; other fields are ignored.
//! Bytes may be split anywhere, even inside a UTF-8 character or between `\r` and `\n`: a line is
//! only decoded once complete.

/// One event: its `data` lines joined, and its `event` name when given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
    /// The last event id when this event was dispatched.
    pub id: Option<String>,
    /// The event was larger than the parser's limit ([`SseParser::with_limit`]): its data was
    /// dropped (it is empty here).
    pub oversized: bool,
}

/// Incremental parser; feed it with [`push`](Self::push), then call [`finish`](Self::finish).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    /// The previous byte was a `\r` that ended a line: a `\n` right after it belongs to it.
    after_cr: bool,
    data: Option<String>,
    event: Option<String>,
    last_id: Option<String>,
    retry: Option<std::time::Duration>,
    /// The most bytes one line or one event's data may hold (`None`: no limit).
    limit: Option<usize>,
    /// The event being read went past `limit`.
    oversized: bool,
    /// The line being read went past `limit` (the rest of it is dropped).
    line_cut: bool,
}

impl SseParser {
    /// A parser without a limit.
    #[cfg(test)]
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser that holds at most `limit` bytes of one line or one event's data: past that
    /// the event's data is dropped and it is delivered as [`SseEvent::oversized`], so a server
    /// cannot make mm buffer without end.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            limit: Some(limit),
            ..Self::default()
        }
    }

    fn over(&self, len: usize) -> bool {
        self.limit.is_some_and(|limit| len > limit)
    }

    /// Parses more bytes; returns the events they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.end_line(&line) {
                        events.push(event);
                    }
                }
                _ => {
                    self.after_cr = false;
                    if self.over(self.line.len() + 1) {
                        self.line_cut = true;
                    } else {
                        self.line.push(byte);
                    }
                }
            }
        }
        events
    }

    /// The last event id seen (`id:` field), kept across events.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection delay the server asked for (`retry:` field), if any.
    pub fn retry(&self) -> Option<std::time::Duration> {
        self.retry
    }

    /// Ends the stream: an event left without its blank line is still delivered (many servers
    /// close right after the last `data:` line).
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        let from_line = if line.is_empty() {
            None
        } else {
            self.end_line(&line)
        };
        from_line.or_else(|| self.dispatch())
    }

    fn end_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        let cut = std::mem::take(&mut self.line_cut);
        if line.is_empty() {
            return self.dispatch();
        }
        if line.first() == Some(&b':') {
            return None;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data"
                if cut
                    || self.oversized
                    || self.over(self.data.as_ref().map_or(0, String::len) + value.len()) =>
            {
                self.oversized = true;
                self.data = Some(String::new());
            }
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => {
                self.last_id = Some(value.to_owned()).filter(|id| !id.is_empty());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(std::time::Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let oversized = std::mem::take(&mut self.oversized);
        let data = match self.data.take() {
            Some(_) if oversized => String::new(),
            Some(data) => data,
            None if oversized => String::new(),
            None => return None,
        };
        Some(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
            oversized,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_past_the_limit_is_dropped_and_flagged_and_the_next_one_read() {
        let mut parser = SseParser::with_limit(16);
        let mut events = parser.push(b"data: ");
        for _ in 0..1000 {
            events.extend(parser.push(&[b'x'; 1024]));
        }
        events
            .extend(parser.push(b"\n\ndata: a\ndata: b\n\ndata: 0123456789\ndata: 0123456789\n\n"));
        let shape: Vec<(&str, bool)> = events
            .iter()
            .map(|e| (e.data.as_str(), e.oversized))
            .collect();
        assert_eq!(shape, [("", true), ("a\nb", false), ("", true)]);
        assert!(parser.line.capacity() <= 64, "{}", parser.line.capacity());
    }

    #[test]
    fn corpus_no_event_grows_past_the_limit() {
        let mut corpus = mm_test_support::Corpus::new("SSE events past the limit");
        let limit = 4096;
        let big = "x".repeat(limit * 3);
        let inputs: Vec<(&str, String)> = vec![
            ("one data line", format!("data: {big}\n\n")),
            (
                "many data lines",
                format!(
                    "{}\n",
                    "data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n".repeat(300)
                ),
            ),
            ("no event end", format!("data: {big}")),
            ("a comment", format!(":{big}\n\ndata: ok\n\n")),
            ("an id", format!("id: {big}\ndata: ok\n\n")),
            ("an event name", format!("event: {big}\ndata: ok\n\n")),
            ("an unknown field", format!("{big}: v\ndata: ok\n\n")),
            ("cr line ends", format!("data: {big}\r\r")),
            ("crlf line ends", format!("data: {big}\r\n\r\n")),
        ];
        for (what, input) in inputs {
            for split in [1, 7, 4096] {
                let mut parser = SseParser::with_limit(limit);
                let mut events = Vec::new();
                for chunk in input.as_bytes().chunks(split) {
                    events.extend(parser.push(chunk));
                }
                events.extend(parser.finish());
                let bounded = parser.line.capacity() <= 2 * limit
                    && events.iter().all(|e| e.data.len() <= limit)
                    && parser.last_event_id().is_none_or(|id| id.len() <= limit);
                corpus.check((what, split), bounded, || {
                    format!(
                        "line {} bytes, events {:?}",
                        parser.line.capacity(),
                        events
                            .iter()
                            .map(|e| (e.data.len(), e.oversized))
                            .collect::<Vec<_>>()
                    )
                });
            }
        }
        corpus.finish();
    }

    fn parse_split(input: &[u8], split: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let (a, b) = input.split_at(split.min(input.len()));
        let mut events = parser.push(a);
        events.extend(parser.push(b));
        events.extend(parser.finish());
        events
    }

    fn datas(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let input = "data: {\"a\":1}\r\n\r\n: keep-alive\n\ndata:{\"b\":\"é\"}\n\nevent: x\ndata: one\ndata: two\r\rdata: [DONE]\n\n";
        let bytes = input.as_bytes();
        for split in 0..=bytes.len() {
            let events = parse_split(bytes, split);
            assert_eq!(
                datas(&events),
                vec!["{\"a\":1}", "{\"b\":\"é\"}", "one\ntwo", "[DONE]"],
                "split at {split}"
            );
            assert_eq!(events[2].event.as_deref(), Some("x"));
        }
    }

    #[test]
    fn byte_by_byte() {
        let input = b"data: hello\r\n\r\ndata: world\n\n";
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for byte in input {
            events.extend(parser.push(&[*byte]));
        }
        assert_eq!(datas(&events), vec!["hello", "world"]);
    }

    #[test]
    fn last_event_without_blank_line_is_delivered() {
        assert_eq!(
            datas(&parse_split(b"data: a\n\ndata: b", 0)),
            vec!["a", "b"]
        );
        assert_eq!(
            datas(&parse_split(b"data: a\n\ndata: b\n", 3)),
            vec!["a", "b"]
        );
    }

    #[test]
    fn comments_and_other_fields_are_ignored() {
        let events = parse_split(b": ping\nid: 3\nretry: 10\n\n:x\n\ndata: z\n\n", 5);
        assert_eq!(datas(&events), vec!["z"]);
    }

    #[test]
    fn id_and_retry_are_kept_for_reconnection() {
        let mut parser = SseParser::new();
        let events = parser.push(b"id: 7\nretry: 250\ndata:\n\ndata: x\n\nid\n: c\nretry: 1x\n\n");
        assert_eq!(datas(&events), vec!["", "x"]);
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[1].id.as_deref(), Some("7"), "the id carries over");
        // `id` with no value resets it; a non-numeric retry is ignored.
        assert_eq!(parser.last_event_id(), None);
        assert_eq!(parser.retry(), Some(std::time::Duration::from_millis(250)));
    }

    #[test]
    fn empty_data_line_is_an_event() {
        let events = parse_split(b"data:\n\n", 0);
        assert_eq!(datas(&events), vec![""]);
    }
}
