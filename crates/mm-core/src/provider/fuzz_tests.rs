//! Fuzz-style tests of every parser of what the model server sends: error bodies, SSE, the wire
//! JSON and its assembly into a reply, tool calls written as text, `<think>` blocks and
//! constrained replies — and, end to end, the client reading bodies from a scripted server.
//!
//! Deterministic and bounded, so they run in the suite: each parser gets a corpus of realistic
//! inputs, every prefix of each (a reply cut anywhere, even inside a character), and a fixed
//! number of mutants from a fixed-seed xorshift generator (byte flips, multi-byte and control
//! characters, broken UTF-8, the parser's own keywords, truncation, deletion, duplication,
//! splicing of two inputs), fed in random chunk splits where the parser streams. No input may
//! panic; a panic is reported with the input, escaped. Where an invariant is cheap and part of
//! the contract (one-line error text, chunking that changes nothing) it is checked too.

use std::collections::HashSet;
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use futures::FutureExt;
use mm_test_support::{Reply as Scripted, ScriptedServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::assemble::{Assembler, CallIds};
use super::constrained::{self, AnswerStream, Reply};
use super::errors::{error_text, one_line, overflow_detail, root_cause};
use super::text_calls::{self, TextGate};
use super::think::{self, ThinkSplitter};
use super::wire::{Choice, ChoiceMessage, Completion, Props};
use super::{ChatRequest, ChatResponse, Message, Provider, ProviderConfig, StreamDelta, ToolCall};
use crate::config::ToolCallMode;
use crate::sse::{SseEvent, SseParser};
use crate::tools::ToolSpec;

/// Mutants per parser (on top of every prefix of every corpus entry).
const MUTANTS: usize = 3000;
/// Mutants per kind of body in the end-to-end test (each is one HTTP exchange).
const E2E_MUTANTS: usize = 120;

// ---------------------------------------------------------------------------------------------
// The generator and the mutations.

/// xorshift64*: small, fast, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Characters that have broken text handling before: multi-byte, replacement, NUL, controls,
/// Unicode whitespace and line breaks, JSON escapes.
const SPICE: &[&str] = &[
    "é",
    "€",
    "😀",
    "\u{FFFD}",
    "\0",
    "\u{1}",
    "\u{7f}",
    "\u{1b}[2J",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "\u{3000}",
    "\u{feff}",
    "\u{200d}",
    "日本語",
    "\r",
    "\n",
    "\r\n",
    "\t",
    " ",
    "\\",
    "\"",
    "\\u",
    "\\ud83d",
    "\\ud83d\\ude00",
    "\\u00e9",
];

/// Bytes that are not UTF-8, or only the start of a character.
const BROKEN_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\x80\x80",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
];

fn insert(out: &mut Vec<u8>, at: usize, piece: &[u8]) {
    out.splice(at..at, piece.iter().copied());
}

/// One to four random edits of `input`.
fn mutate(rng: &mut Rng, input: &[u8], corpus: &[&str], dictionary: &[&str]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let len = out.len();
        let at = rng.below(len + 1);
        match rng.below(11) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = rng.next() as u8;
            }
            2 | 3 => insert(&mut out, at, rng.pick(SPICE).as_bytes()),
            4 => insert(&mut out, at, BROKEN_UTF8[rng.below(BROKEN_UTF8.len())]),
            5 | 6 => insert(&mut out, at, rng.pick(dictionary).as_bytes()),
            7 => out.truncate(at),
            8 => {
                let end = at + rng.below(len - at + 1).min(32);
                out.drain(at..end);
            }
            9 => {
                let end = at + rng.below((len - at).min(64) + 1);
                let piece = out[at..end].to_vec();
                let to = rng.below(len + 1);
                insert(&mut out, to, &piece);
            }
            _ => {
                let other = rng.pick(corpus).as_bytes();
                let from = rng.below(other.len() + 1);
                out.truncate(at);
                out.extend_from_slice(&other[from..]);
            }
        }
    }
    out
}

/// Every input one parser gets: the corpus, every prefix of each entry (cut at every byte, so
/// inside characters too), and `mutants` mutants (of the corpus, or of earlier mutants).
fn inputs(seed: u64, corpus: &[&str], dictionary: &[&str], mutants: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    let mut all: Vec<Vec<u8>> = Vec::new();
    for entry in corpus {
        for cut in 0..=entry.len() {
            all.push(entry.as_bytes()[..cut].to_vec());
        }
    }
    let prefixes = all.len();
    for _ in 0..mutants {
        let base = if all.len() > prefixes && rng.below(3) == 0 {
            all[prefixes + rng.below(all.len() - prefixes)].clone()
        } else {
            rng.pick(corpus).as_bytes().to_vec()
        };
        all.push(mutate(&mut rng, &base, corpus, dictionary));
    }
    all
}

/// `bytes` cut at random places (sometimes byte by byte).
fn byte_chunks<'b>(rng: &mut Rng, bytes: &'b [u8]) -> Vec<&'b [u8]> {
    let longest = if rng.below(8) == 0 {
        1
    } else {
        1 + rng.below(24)
    };
    let mut chunks = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at((1 + rng.below(longest)).min(rest.len()));
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// `text` cut at random character boundaries (sometimes character by character).
fn text_chunks<'t>(rng: &mut Rng, text: &'t str) -> Vec<&'t str> {
    let longest = if rng.below(8) == 0 {
        1
    } else {
        1 + rng.below(24)
    };
    let mut chunks = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut at = (1 + rng.below(longest)).min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (chunk, tail) = rest.split_at(at);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// Runs `run`; a panic fails the test with the parser's name and the input, escaped.
fn check(parser: &str, input: &dyn Debug, run: impl FnOnce()) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(run)) {
        panic!("{parser} panicked on {input:?}: {}", panic_message(&*panic));
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)")
}

/// The longest line [`one_line`] makes (its cut, plus the ellipsis).
fn line_limit() -> usize {
    one_line(&"x".repeat(10_000)).chars().count()
}

/// `text` is one line for the user: no line break nor other whitespace than single spaces.
fn assert_one_line(text: &str) {
    assert!(
        !text.chars().any(|c| c.is_whitespace() && c != ' '),
        "not one line: {text:?}"
    );
}

/// One line, no longer than [`line_limit`].
fn assert_short_line(text: &str, limit: usize) {
    assert_one_line(text);
    assert!(
        text.chars().count() <= limit,
        "longer than {limit} characters: {text:?}"
    );
}

fn tools() -> Vec<ToolSpec> {
    let spec = |name: &str, properties: Value| ToolSpec {
        name: name.to_owned(),
        description: format!("The {name} tool."),
        parameters: json!({"type": "object", "properties": properties}),
    };
    vec![
        spec(
            "read_file",
            json!({"path": {"type": "string"}, "limit": {"type": "integer"}}),
        ),
        spec("bash", json!({"command": {"type": "string"}})),
        spec(
            "release",
            json!({"version": {"type": "string"}, "dry_run": {"type": "boolean"}, "tags": {"type": "array"}}),
        ),
    ]
}

/// Two calls of one reply never share an id (ids answer calls in the history).
fn assert_unique_ids(response: &ChatResponse) {
    let mut ids = HashSet::new();
    for call in &response.tool_calls {
        assert!(
            ids.insert(call.id.as_str()),
            "two calls share the id {:?}: {response:?}",
            call.id
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Corpora.

/// Error bodies as servers send them: llama.cpp, OpenAI, Ollama, vLLM, LM Studio, proxies.
const ERROR_BODIES: &[&str] = &[
    r#"{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}"#,
    r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#,
    r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
    r#"{"error":"model \"qwen3:8b\" not found, try pulling it first"}"#,
    r#"{"error":{"message":"the input length exceeds the context length","type":"api_error","param":null,"code":null}}"#,
    r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
    r#"{"error":"Trying to keep the first 5213 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
    r#"{"detail":"Not Found"}"#,
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n",
    "Internal Server Error",
    "",
    "request (é4476 tokens) exceeds the available context size (€4096 tokens)",
    r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#,
    r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#,
    "{\"error\":{\"code\":500,\"message\":\"😀 failed to parse tool call: ü\\n\\tat line 1\",\"type\":\"server_error\"}}",
    r#"[{"error":{"code":400,"message":"The input token count (40000) exceeds the maximum number of tokens allowed (32768).","status":"INVALID_ARGUMENT"}}]"#,
    r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    r#"{"error":{"message":null,"code":"context_window_exceeded","n_ctx":-1,"n_prompt_tokens":1e400}}"#,
];

const ERROR_WORDS: &[&str] = &[
    "exceeds the available context size",
    " tokens",
    " tokens)",
    "(",
    ")",
    "(18446744073709551615 tokens)",
    "(99999999999999999999 tokens)",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "{\"error\":",
    "{\"error\":{\"message\":",
    "\"message\":",
    "\"detail\":",
    "\"code\":",
    "\"type\":",
    "\"n_ctx\":",
    "\"n_prompt_tokens\":",
    "18446744073709551615",
    "-1",
    "1e400",
    "null",
    "[",
    "]",
    "{",
    "}",
    "\"",
    ",",
    ":",
    "\\n",
    "\\u0000",
    "\\ud800",
];

/// SSE bodies: llama.cpp, OpenAI, Ollama, vLLM habits and quirks.
const SSE_STREAMS: &[&str] = &[
    // llama.cpp: reasoning_content, content, finish, usage with timings, [DONE].
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"object\":\"chat.completion.chunk\"}\n\n\
     data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"reasoning_content\":\"Let me é\"}}]}\n\n\
     data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hello 😀\"}}]}\n\n\
     data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"usage\":{\"completion_tokens\":5,\"prompt_tokens\":10,\"total_tokens\":15},\"timings\":{\"prompt_n\":10,\"predicted_per_second\":40.1}}\n\n\
     data: [DONE]\n\n",
    // OpenAI: streamed tool-call fragments, CRLF line ends, a usage-only chunk.
    "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_abc\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]},\"finish_reason\":null}],\"usage\":null}\r\n\r\n\
     data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"pa\"}}]},\"finish_reason\":null}]}\r\n\r\n\
     data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":\\\"é.txt\\\"}\"}}]},\"finish_reason\":null}]}\r\n\r\n\
     data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n\
     data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7}}\r\n\r\n\
     data: [DONE]\r\n\r\n",
    // Ollama: whole calls with object arguments, `reasoning`, lone CR line ends.
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":\"hmm\",\"tool_calls\":[{\"id\":\"call_x\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}}]},\"finish_reason\":null}]}\r\r\
     data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_y\",\"index\":0,\"function\":{\"name\":\"bash\",\"arguments\":{\"command\":\"pwd\"}}}]},\"finish_reason\":\"tool_calls\"}]}\r\r\
     data: [DONE]\r\r",
    // Comments, keep-alives, other fields, an event name, multi-line data.
    ": keep-alive\n\n:\n\nid: 7\nretry: 1000\nevent: message\ndata: {\"choices\":[{\"delta\":\n\
     data: {\"content\":\"two lines\"}}]}\n\n: ping\r\ndata:{\"choices\":[{\"delta\":{\"content\":\"é\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n",
    // An error inside a 200 stream.
    "data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n\
     data: {\"error\":{\"code\":400,\"message\":\"request (5000 tokens) exceeds the available context size (4096 tokens)\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":5000,\"n_ctx\":4096}}\n\n",
    "event: error\ndata: {\"error\":{\"message\":\"upstream é timeout\",\"type\":\"server_error\"}}\n\n",
    // Events glued together without their blank lines.
    "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\ndata: [DONE]\n\n",
    // A server that ignored `stream: true` and sent one JSON reply.
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"whole reply\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}",
    // Inline reasoning and a call written as text, streamed in pieces.
    "data: {\"choices\":[{\"delta\":{\"content\":\"<thi\"}}]}\n\n\
     data: {\"choices\":[{\"delta\":{\"content\":\"nk>\\nplan </th\"}}]}\n\n\
     data: {\"choices\":[{\"delta\":{\"content\":\"ink>\\n<tool_call>\\n{\\\"name\\\": \\\"bash\\\", \\\"arguments\\\": {\\\"command\\\": \\\"ls\\\"}}\\n</tool_call>\"},\"finish_reason\":\"stop\"}]}\n\n\
     data: [DONE]\n\n",
    // A constrained answer streamed in pieces, a `\u` escape cut between chunks.
    "data: {\"choices\":[{\"delta\":{\"content\":\"{\\\"answer\\\": \\\"caf\\\\u00\"}}]}\n\n\
     data: {\"choices\":[{\"delta\":{\"content\":\"e9 \\\\ud83d\\\\ude00\\\"}\"},\"finish_reason\":\"stop\"}]}\n\n\
     data: [DONE]\n\n",
];

const SSE_WORDS: &[&str] = &[
    "data: ",
    "data:",
    "\n\n",
    "\r\n\r\n",
    "\r\r",
    ": keep-alive\n",
    "event: error\n",
    "data: [DONE]\n\n",
    "[DONE]",
    "{\"choices\":[{\"delta\":{\"content\":\"",
    "\"}}]}",
    "\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"",
    "\"finish_reason\":\"stop\"",
    "{\"error\":{\"message\":\"",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "null",
];

/// Whole replies and single chunks.
const COMPLETIONS: &[&str] = &[
    r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15},"timings":{"predicted_n":5}}"#,
    r#"{"choices":[{"message":{"content":"","reasoning":"think é","tool_calls":[{"id":"a","index":0,"function":{"name":"bash","arguments":{"command":"ls"}}},{"id":"a","index":0,"function":{"name":"bash","arguments":{"command":"pwd"}}}]},"finish_reason":"stop"}]}"#,
    r#"{"choices":[{"message":{"content":"<think>x</think>{\"tool\":\"bash\",\"arguments\":{\"command\":\"ls\"}}"},"finish_reason":"stop"}]}"#,
    r#"{"choices":[{"message":{"content":"<tool_call>\n<function=release>\n<parameter=version>\n1.0\n</parameter>\n<parameter=dry_run>\ntrue\n</parameter>\n</function>\n</tool_call>"}}]}"#,
    r#"{"choices":[{"message":{"tool_calls":[{"function":{"arguments":"{}"}},{"function":{"name":"","arguments":null}}]}}]}"#,
    r#"{"choices":null,"usage":{"prompt_tokens":null,"completion_tokens":3,"total_tokens":null}}"#,
    r#"{"choices":[],"usage":{"prompt_tokens":18446744073709551615,"completion_tokens":1}}"#,
    r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"bash","arguments":"{\"comm"}}]}}]}"#,
    r#"{"choices":[{"delta":{"content":"{\"answer\": \"done \\u00e9\"}","reasoning_content":""},"finish_reason":"length"}]}"#,
    r#"{"error":{"message":"request (9000 tokens) exceeds the available context size (8192 tokens)","n_ctx":8192}}"#,
    r#"{"choices":[{"message":{"content":"[TOOL_CALLS]release[CALL_ID]x1[ARGS]{\"version\":\"2\"}"}},{"message":{"content":" second choice"}}]}"#,
];

const COMPLETION_WORDS: &[&str] = &[
    "\"choices\":",
    "\"message\":",
    "\"delta\":",
    "\"content\":",
    "\"reasoning_content\":",
    "\"tool_calls\":",
    "\"function\":",
    "\"name\":",
    "\"arguments\":",
    "\"index\":",
    "\"id\":",
    "\"usage\":",
    "\"prompt_tokens\":",
    "\"total_tokens\":0",
    "\"finish_reason\":",
    "18446744073709551615",
    "4294967295",
    "4294967296",
    "-1",
    "1.5",
    "null",
    "true",
    "{}",
    "[]",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
];

/// Streams as a list of chunks, each chunk mutated on its own.
const CHUNK_STREAMS: &[&[&str]] = &[
    &[
        r#"{"choices":[{"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","function":{"name":"read_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_def","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#,
    ],
    &[
        r#"{"choices":[{"delta":{"reasoning_content":"Think"}}]}"#,
        r#"{"choices":[{"delta":{"content":"<think>more</th"}}]}"#,
        r#"{"choices":[{"delta":{"content":"ink>An answer é"}}]}"#,
        r#"{"choices":[{"delta":{"content":" 😀"},"finish_reason":"stop"}]}"#,
    ],
    &[
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"bash","arguments":"{\"command\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"ls\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"call_1","function":{"name":"bash","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"call_1","function":{"name":"bash","arguments":"{}"}}]}}]}"#,
    ],
    &[
        r#"{"choices":[{"delta":{"content":"{\"answer\""}}]}"#,
        r#"{"choices":[{"delta":{"content":": \"caf\\u00"}}]}"#,
        r#"{"choices":[{"delta":{"content":"e9\"}"},"finish_reason":"stop"}]}"#,
    ],
];

/// llama-server's `/props` and what other servers answer there.
const PROPS: &[&str] = &[
    r#"{"default_generation_settings":{"n_ctx":8192,"params":{"temperature":0.8}},"total_slots":1,"model_path":"m.gguf","chat_template_caps":{"supports_tools":true,"supports_tool_calls":false},"build_info":"b6000"}"#,
    r#"{"n_ctx":4096}"#,
    r#"{"default_generation_settings":null,"chat_template_caps":{"supports_tool_calls":"yes"},"n_ctx":-5}"#,
    "Not Found",
    "<html><body>404 page not found</body></html>",
];

/// Reply texts: inline reasoning, calls written as text in every recognised form, constrained
/// replies, and text that only looks like them.
const CONTENTS: &[&str] = &[
    "<think>\nThe user wants the file.\n</think>\n\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/main.rs\"}}\n</tool_call>",
    "I'll run it.\n<tool_call>\n<function=bash>\n<parameter=command>\nls -la\n</parameter>\n</function>\n</tool_call>",
    "<function=read_file><parameter=path>a.txt</parameter><parameter=limit>10</parameter></function>",
    "[TOOL_CALLS][{\"name\": \"bash\", \"arguments\": {\"command\": \"pwd\"}}]",
    "[TOOL_CALLS]release[CALL_ID]abc123[ARGS]{\"version\": \"1.2.0\", \"dry_run\": true}",
    "{\"name\": \"bash\", \"parameters\": {\"command\": \"echo hé\"}}",
    "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"é.txt\"}}",
    "```json\n[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}, {\"function\": {\"name\": \"read_file\", \"arguments\": \"{}\"}}]\n```",
    "Here is the answer: 42. The <think> tag is literal here, and so is [TOOL_CALLS] alone.",
    "reasoning without an opening tag</think>\nThe answer.",
    "<think>unterminated reasoning 😀 </thi",
    "{\"tool\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
    "{\"tool\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"}",
    "{\"answer\": \"Line one\\nline two \\u00e9 \\ud83d\\ude00 \\\"quoted\\\" done\"}",
    "{\"answer\": \"cut sho",
    "  {  \"answer\" :  \"spaced \\u00",
    "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call> unknown tool stays text",
    "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"a\"}}{\"name\": \"bash\", \"arguments\": {\"command\": \"b\"}}",
    "<tool_call><function=release><parameter=tags>[\"a\", \"é\"]<parameter=dry_run>yes</function>",
];

const CONTENT_WORDS: &[&str] = &[
    "<think>",
    "</think>",
    "</thi",
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "<function=bash>",
    "</function>",
    "<parameter=",
    "<parameter=command>",
    "</parameter>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "<|python_tag|>",
    "```",
    "```json\n",
    "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
    "{\"tool\": \"bash\", \"arguments\": ",
    "{\"answer\": \"",
    "\"arguments\"",
    "\"parameters\"",
    "\"name\"",
    "\"function\"",
    "\\u",
    "\\ud83d",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
];

// ---------------------------------------------------------------------------------------------
// What the client does with the parsers' output (mirroring `client.rs`, whose methods are
// private to it; `the_client_reads_any_body` drives the real ones end to end).

/// `Provider::reported_failure`: an `{"error": …}` inside a 200 reply or stream.
fn read_reported_error(error: &Value, limit: usize) {
    let wrapped = json!({ "error": error });
    let raw = error.to_string();
    for n_ctx in [None, Some(8192)] {
        if let Some(detail) = overflow_detail(Some(&wrapped), &raw, n_ctx) {
            assert_one_line(&detail);
        }
    }
    assert_short_line(&error_text(Some(&wrapped), &raw), limit);
}

/// `Provider::take_event`: one event's data as completions (one JSON value, or one per line).
fn event_completions(data: &str) -> Vec<Completion> {
    let data = data.trim();
    if data.is_empty() || data == "[DONE]" {
        return Vec::new();
    }
    match serde_json::from_str(data) {
        Ok(completion) => vec![completion],
        Err(_) => data
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .take_while(|line| *line != "[DONE]")
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect(),
    }
}

/// Feeds completions to an assembler (an error stops the reply, as in the client), finishes it.
fn assemble(
    completions: impl IntoIterator<Item = Completion>,
    constrained: bool,
    whole: bool,
    limit: usize,
) -> ChatResponse {
    let tools = tools();
    let mut assembler = Assembler::new(constrained);
    let mut on_delta = |_: StreamDelta| {};
    for completion in completions {
        if let Some(error) = &completion.error {
            read_reported_error(error, limit);
            break;
        }
        if whole {
            assembler.push_whole(completion, &mut on_delta);
        } else {
            assembler.push(completion, &mut on_delta);
        }
    }
    let response = assembler.finish(&tools, &CallIds::default(), &mut on_delta);
    assert_unique_ids(&response);
    response
}

fn parse_sse(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    events
}

fn content_chunk(text: &str) -> Completion {
    Completion {
        choices: vec![Choice {
            delta: Some(ChoiceMessage {
                content: Some(text.to_owned()),
                ..ChoiceMessage::default()
            }),
            ..Choice::default()
        }],
        ..Completion::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The parsers.

/// `error_text`, `overflow_detail` (and the digits in llama-server's message), `one_line`,
/// `root_cause`, on bodies of non-2xx answers and on `{"error"}` objects of 200 replies.
#[test]
fn error_bodies() {
    let limit = line_limit();
    for bytes in inputs(1, ERROR_BODIES, ERROR_WORDS, MUTANTS) {
        let body = String::from_utf8_lossy(&bytes);
        check("the error-body readers", &body, || {
            let parsed: Option<Value> = serde_json::from_str(&body).ok();
            let text = error_text(parsed.as_ref(), &body);
            assert!(!text.is_empty());
            assert_short_line(&text, limit);
            for n_ctx in [None, Some(4096), Some(u64::MAX)] {
                if let Some(detail) = overflow_detail(parsed.as_ref(), &body, n_ctx) {
                    assert_one_line(&detail);
                }
            }
            if let Some(parsed) = &parsed {
                read_reported_error(parsed, limit);
                if let Some(error) = parsed.get("error") {
                    read_reported_error(error, limit);
                }
            }
            assert_short_line(&one_line(&body), limit);
            let cause = root_cause(&std::io::Error::other(body.to_string()));
            assert_short_line(&cause, limit);
        });
    }
}

/// `SseParser::push` and `finish` on bodies cut anywhere (inside characters, between `\r` and
/// `\n`): the events are those of the whole body at once. Then each event as the client reads it:
/// JSON completions into an `Assembler`, errors through the error readers.
#[test]
fn sse_streams() {
    let limit = line_limit();
    let mut rng = Rng::new(2);
    for bytes in inputs(2, SSE_STREAMS, SSE_WORDS, MUTANTS) {
        let chunks = byte_chunks(&mut rng, &bytes);
        let constrained = rng.below(2) == 0;
        check("the SSE parser", &String::from_utf8_lossy(&bytes), || {
            let at_once = parse_sse(&[&bytes]);
            let chunked = parse_sse(&chunks);
            assert_eq!(at_once, chunked, "chunks: {chunks:?}");
            let completions: Vec<Completion> = at_once
                .iter()
                .map_while(|event| (event.data.trim() != "[DONE]").then_some(&event.data))
                .flat_map(|data| event_completions(data))
                .collect();
            assemble(completions, constrained, false, limit);
        });
    }
}

/// The wire types (`Completion`, its choices, messages, tool-call deltas and usage) from any JSON
/// text, each completion into an `Assembler` as a whole reply (`push_whole`) and as a stream
/// chunk (`push`), in both modes; `Props` and what is read of it.
#[test]
fn completions_and_props() {
    let limit = line_limit();
    for bytes in inputs(3, COMPLETIONS, COMPLETION_WORDS, MUTANTS) {
        let text = String::from_utf8_lossy(&bytes);
        check("the wire types and the assembler", &text, || {
            let Ok(completion) = serde_json::from_str::<Completion>(&text) else {
                return;
            };
            for constrained in [false, true] {
                assemble([completion.clone()], constrained, true, limit);
                assemble(
                    [completion.clone(), completion.clone()],
                    constrained,
                    false,
                    limit,
                );
            }
        });
    }
    let mut rng = Rng::new(4);
    let pieces: Vec<&str> = CHUNK_STREAMS
        .iter()
        .flat_map(|s| s.iter().copied())
        .collect();
    for case in 0..MUTANTS {
        let stream = rng.pick(CHUNK_STREAMS);
        let chunks: Vec<String> = stream
            .iter()
            .map(|chunk| {
                if rng.below(3) == 0 {
                    String::from_utf8_lossy(&mutate(
                        &mut rng,
                        chunk.as_bytes(),
                        &pieces,
                        COMPLETION_WORDS,
                    ))
                    .into_owned()
                } else {
                    (*chunk).to_owned()
                }
            })
            .collect();
        let constrained = case % 2 == 0;
        check("the assembler on a stream", &chunks, || {
            let completions = chunks
                .iter()
                .filter_map(|chunk| serde_json::from_str::<Completion>(chunk).ok());
            assemble(completions, constrained, false, limit);
        });
    }
    for bytes in inputs(5, PROPS, COMPLETION_WORDS, MUTANTS / 3) {
        let text = String::from_utf8_lossy(&bytes);
        check("Props", &text, || {
            // What `props::read` takes of it.
            let props: Props = serde_json::from_str(&text).unwrap_or_default();
            let _ =
                props.default_generation_settings.is_some() || props.chat_template_caps.is_some();
            let _ = props
                .chat_template_caps
                .as_ref()
                .and_then(|caps| caps.supports_tool_calls);
            let _ = props.n_ctx();
        });
    }
}

/// `text_calls::extract` (every form: Hermes/Qwen JSON, Qwen3-Coder XML, Mistral, bare JSON,
/// fences, python tag) with and without tools, and `TextGate` on the reply as it grows.
#[test]
fn text_tool_calls() {
    let tools = tools();
    let mut rng = Rng::new(6);
    for bytes in inputs(6, CONTENTS, CONTENT_WORDS, MUTANTS) {
        let content = String::from_utf8_lossy(&bytes);
        let chunks = text_chunks(&mut rng, &content);
        check("the text tool-call reader", &content, || {
            let (text, calls) = text_calls::extract(&content, &tools);
            if calls.is_empty() {
                assert_eq!(text, content, "no call found, yet the text changed");
            }
            // A call of a name that is no tool only comes from a reply that is nothing but
            // calls (the pipeline answers it).
            for call in &calls {
                assert!(
                    tools.iter().any(|t| t.name == call.name) || text.is_empty(),
                    "a call of an unknown tool in a reply with text: {call:?} {text:?}"
                );
            }
            assert_eq!(
                text_calls::extract(&content, &[]),
                (content.to_string(), Vec::new())
            );
            let mut gate = TextGate::default();
            let mut so_far = String::new();
            let mut shown = String::new();
            for chunk in &chunks {
                so_far.push_str(chunk);
                shown.push_str(gate.advance(&so_far));
                assert!(so_far.starts_with(&shown), "shown {shown:?} of {so_far:?}");
            }
            let _ = gate.finish(&so_far, &text);
        });
    }
}

/// `ThinkSplitter` streamed in any chunking gives what the whole reply at once gives;
/// `think::strip_unopened` leaves the end of the text.
#[test]
fn think_blocks() {
    let mut rng = Rng::new(7);
    let split = |chunks: &[&str]| {
        let mut splitter = ThinkSplitter::default();
        let (mut reasoning, mut text) = (String::new(), String::new());
        for chunk in chunks {
            let routed = splitter.push(chunk);
            reasoning.push_str(&routed.reasoning);
            text.push_str(&routed.text);
        }
        let routed = splitter.finish();
        reasoning.push_str(&routed.reasoning);
        text.push_str(&routed.text);
        (reasoning, text)
    };
    for bytes in inputs(7, CONTENTS, CONTENT_WORDS, MUTANTS) {
        let content = String::from_utf8_lossy(&bytes);
        let chunks = text_chunks(&mut rng, &content);
        check("the think splitter", &content, || {
            assert_eq!(split(&[&content]), split(&chunks), "chunks: {chunks:?}");
            assert!(content.ends_with(think::strip_unopened(&content)));
        });
    }
}

/// `constrained::parse_reply` (and the partial answer of a reply cut short), `AnswerStream` on
/// the reply as it grows, and `constrained::messages` with the model's replies sent back.
#[test]
fn constrained_replies() {
    let tools = tools();
    let mut rng = Rng::new(8);
    for bytes in inputs(8, CONTENTS, CONTENT_WORDS, MUTANTS) {
        let content = String::from_utf8_lossy(&bytes);
        let chunks = text_chunks(&mut rng, &content);
        check("the constrained-reply reader", &content, || {
            let reply = constrained::parse_reply(&content);
            if let Reply::Other(text) = &reply {
                assert_eq!(*text, content);
            }
            let mut stream = AnswerStream::default();
            let mut so_far = String::new();
            for chunk in &chunks {
                so_far.push_str(chunk);
                let _ = stream.advance(&so_far);
            }
            let final_text = match &reply {
                Reply::Answer(text) | Reply::Other(text) => text.as_str(),
                Reply::Call { .. } => "",
            };
            let _ = stream.finish(&so_far, final_text);
            let history = [
                Message::User("hi".into()),
                Message::Assistant {
                    content: Some(content.to_string()),
                    tool_calls: Vec::new(),
                },
                Message::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "call_1".into(),
                        name: content.to_string(),
                        arguments: content.to_string(),
                    }],
                },
            ];
            let _ = constrained::messages(&history, &tools, &[]);
        });
    }
}

/// A reply's content in any chunking, through the whole assembler (think splitting, the text
/// gate or the answer stream, then calls from the text or the constrained JSON): the reply is
/// the same as from the content in one piece.
#[test]
fn content_in_any_chunking() {
    let limit = line_limit();
    let mut rng = Rng::new(9);
    for bytes in inputs(9, CONTENTS, CONTENT_WORDS, MUTANTS) {
        let content = String::from_utf8_lossy(&bytes);
        let mut chunks = text_chunks(&mut rng, &content);
        if chunks.is_empty() {
            // No chunk at all is a reply without choices, not an empty content.
            chunks.push("");
        }
        let constrained = rng.below(2) == 0;
        check("the assembler on content", &content, || {
            let at_once = assemble([content_chunk(&content)], constrained, false, limit);
            let chunked = assemble(
                chunks.iter().map(|chunk| content_chunk(chunk)),
                constrained,
                false,
                limit,
            );
            assert_eq!(at_once, chunked, "chunks: {chunks:?}");
        });
    }
}

/// The real client (`read_stream`, `take_event`, `take_whole`, `check_status`,
/// `reported_failure`) on mutated SSE bodies, JSON bodies and error statuses from a scripted
/// server: every reply ends in a response or an error, whose message is one line.
#[tokio::test]
async fn the_client_reads_any_body() {
    let mut rng = Rng::new(10);
    let mut bodies = |corpus: &[&str], words: &[&str]| -> Vec<String> {
        (0..E2E_MUTANTS)
            .map(|i| {
                let base = corpus[i % corpus.len()].as_bytes();
                let bytes = if i < corpus.len() {
                    base.to_vec()
                } else {
                    mutate(&mut rng, base, corpus, words)
                };
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .collect()
    };
    let sse = bodies(SSE_STREAMS, SSE_WORDS);
    let whole = bodies(COMPLETIONS, COMPLETION_WORDS);
    let errors = bodies(ERROR_BODIES, ERROR_WORDS);
    const STATUSES: [u16; 10] = [200, 400, 401, 404, 408, 413, 422, 429, 500, 503];
    let mut script = Vec::new();
    let mut cases = Vec::new();
    for (i, body) in sse.iter().enumerate() {
        script.push(Scripted::raw_sse(body.clone()));
        cases.push((format!("SSE {body:?}"), true, i % 2 == 0));
    }
    for (i, body) in whole.iter().enumerate() {
        script.push(Scripted::raw_json(body.clone()));
        cases.push((format!("JSON {body:?}"), i % 2 == 0, i % 3 == 0));
    }
    for (i, body) in errors.iter().enumerate() {
        let status = STATUSES[i % STATUSES.len()];
        script.push(Scripted::status(status, body.clone()));
        cases.push((format!("status {status} {body:?}"), i % 2 == 0, false));
    }
    let server = ScriptedServer::start(script);
    let provider = |stream: bool, mode: ToolCallMode| {
        let mut config = ProviderConfig::new(server.base_url(), "fuzz");
        config.mode = mode;
        config.stream = stream;
        config.retries = 0;
        config.timeout = Duration::from_secs(10);
        Provider::new(config).unwrap_or_else(|error| panic!("provider: {error}"))
    };
    let providers = [
        [
            provider(false, ToolCallMode::Native),
            provider(false, ToolCallMode::Constrained),
        ],
        [
            provider(true, ToolCallMode::Native),
            provider(true, ToolCallMode::Constrained),
        ],
    ];
    let tools = tools();
    let messages = [Message::User("hi".into())];
    let cancel = CancellationToken::new();
    for (case, stream, constrained) in &cases {
        let provider = &providers[usize::from(*stream)][usize::from(*constrained)];
        let request = ChatRequest::new(&messages, &tools, 64);
        let mut on_delta = |_: StreamDelta| {};
        let result = AssertUnwindSafe(provider.chat(&request, &mut on_delta, &cancel))
            .catch_unwind()
            .await;
        match result {
            Err(panic) => panic!("the client panicked on {case}: {}", panic_message(&*panic)),
            Ok(Ok(response)) => assert_unique_ids(&response),
            Ok(Err(error)) => assert_one_line(&error.to_string()),
        }
    }
}
