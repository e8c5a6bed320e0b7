use std::sync::Arc;

use mm_test_support::{Reply, ScriptedServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::config::{AgentConfig, Limits};
use crate::hooks::Hooks;
use crate::pipeline::Consent;
use crate::provider::{ProviderConfig, ToolCall};
use crate::skills::Catalogue;

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = SessionStore::new(dir.path().join("sessions"));
    (dir, store)
}

fn meta(cwd: &str) -> SessionMeta {
    SessionMeta {
        cwd: PathBuf::from(cwd),
        agent: "mm.md".into(),
        model: "m".into(),
    }
}

fn lines(session: &Session) -> Vec<Value> {
    std::fs::read_to_string(session.path())
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn options(cwd: &Path) -> TurnOptions {
    TurnOptions {
        cwd: cwd.to_path_buf(),
        limits: Limits::default(),
        consent: Consent::Granted,
        hooks: Hooks::default(),
        events: Arc::new(|_: &Event| {}),
        cancel: CancellationToken::new(),
    }
}

#[tokio::test]
async fn a_turn_is_written_as_it_happens_and_read_back_exactly() {
    let (dir, store) = store();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("bash", r#"{"command":"echo hi"}"#),
        Reply::text("It said hi."),
        Reply::text("Bye."),
    ]);
    let provider = Provider::new(ProviderConfig::new(server.base_url(), "m"))
        .unwrap_or_else(|e| panic!("{e}"));
    let registry = Registry::from_config(&AgentConfig::default(), &Arc::new(Catalogue::default()));
    let mut session = store.create(&meta("/p")).unwrap_or_else(|e| panic!("{e}"));
    let result = session
        .turn(
            &provider,
            &registry,
            "Be brief.",
            "say hi",
            &options(dir.path()),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(result.result, "It said hi.");
    assert_eq!(session.messages().len(), 4, "{:?}", session.messages());

    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    };
    assert_eq!(mode(session.path()), 0o600);
    assert_eq!(mode(store.dir()), 0o700);

    let types: Vec<String> = lines(&session)
        .iter()
        .map(|l| l["type"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        types,
        [
            "session",
            "user",
            "tool_call",
            "tool_result",
            "assistant_message",
            "message",
            "message",
            "message",
            "turn_end"
        ]
    );
    // The system prompt went first in the request, and is not part of the session.
    let first = &server.requests()[0];
    assert_eq!(first["messages"][0]["content"], "Be brief.");

    // The file is locked while a session has it open.
    let (id, messages) = (session.id().to_string(), session.messages().to_vec());
    drop(session);
    let resumed = store.resume(&id).unwrap_or_else(|e| panic!("{e}"));
    assert!(!resumed.interrupted);
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
    assert_eq!(resumed.session.messages(), messages);

    // Going on appends to the same file; the next request carries the earlier turn folded into
    // the new message: its question and answer, not its call and result (turn.rs).
    let mut again = resumed.session;
    again
        .turn(
            &provider,
            &registry,
            "Be brief.",
            "bye",
            &options(dir.path()),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let last = server.requests().pop().unwrap_or_default();
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["system", "user"]);
    let folded = last["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(
        folded.contains("You: It said hi.") && folded.ends_with("My message now: bye"),
        "{folded}"
    );
    // The session itself still holds everything.
    assert_eq!(again.messages().len(), 6);
    let kinds: Vec<Value> = lines(&again).iter().map(|l| l["type"].clone()).collect();
    assert!(kinds.contains(&json!("resumed")));
    assert_eq!(store.list().len(), 1);
    assert_eq!(store.list()[0].turns, 2);
    assert_eq!(store.list()[0].title, "say hi");
}

const CUT_SHORT: &str = r#"{"type":"session","version":1,"id":"x","cwd":"/p","created_ms":1}
{"type":"user","text":"first"}
{"type":"assistant_message","text":"Done.","final":true}
{"type":"message","message":{"role":"assistant","content":"Done."}}
{"type":"turn_end","stop_reason":"done","turns":1,"usage":{}}
{"type":"user","text":"second"}
{"type":"assistant_message","text":"Looking.","final":false}
{"type":"tool_call","id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}
{"type":"tool_result","id":"c1","name":"bash","ok":true,"exit_code":0,"duration_ms":3,"content":"a.txt\n"}
{"type":"tool_call","id":"c2","name":"bash","arguments":"{\"command\":\"sleep 100\"}"}
{"type":"warning","mess"#;

#[test]
fn a_turn_cut_short_is_rebuilt_from_its_events_and_a_cut_line_is_skipped() {
    let read = read_lines(CUT_SHORT.as_bytes());
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let call = |id: &str, command: &str| ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: json!({ "command": command }).to_string(),
    };
    let tool = |id: &str, content: &str| Message::Tool {
        tool_call_id: id.into(),
        name: "bash".into(),
        content: content.into(),
    };
    assert_eq!(
        read.messages,
        vec![
            Message::User("first".into()),
            Message::Assistant {
                content: Some("Done.".into()),
                tool_calls: vec![]
            },
            Message::User("second".into()),
            Message::Assistant {
                content: Some("Looking.".into()),
                tool_calls: vec![call("c1", "ls"), call("c2", "sleep 100")]
            },
            tool("c1", "a.txt\n"),
            tool("c2", UNKNOWN_RESULT),
        ]
    );
    assert_eq!(read.users, ["first", "second"]);
}

#[test]
fn resuming_a_file_cut_short_goes_on_on_a_line_of_its_own() {
    let (_dir, store) = store();
    std::fs::create_dir_all(store.dir()).unwrap_or_else(|e| panic!("{e}"));
    let path = store.dir().join("20260101-000000-abcd.jsonl");
    std::fs::write(&path, CUT_SHORT).unwrap_or_else(|e| panic!("{e}"));
    let resumed = store.resume("20260101").unwrap_or_else(|e| panic!("{e}"));
    assert!(resumed.interrupted);
    assert_eq!(resumed.session.messages().len(), 6);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    // Nothing before was rewritten; the next line stands alone.
    assert!(text.starts_with(CUT_SHORT), "{text}");
    let last = text.lines().last().unwrap_or_default();
    assert!(last.starts_with(r#"{"type":"resumed""#), "{last}");
}

#[test]
fn a_broken_line_in_the_middle_is_a_warning_and_the_rest_still_reads() {
    let text = CUT_SHORT.replace(r#"{"type":"user","text":"second"}"#, "{oops");
    let read = read_lines(text.as_bytes());
    assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
    assert!(
        read.warnings[0].starts_with("line 6: "),
        "{}",
        read.warnings[0]
    );
    assert_eq!(read.users, ["first"]);
}

#[test]
fn sessions_are_found_by_folder_by_id_and_by_a_unique_prefix() {
    let (_dir, store) = store();
    let a = store.create(&meta("/a")).unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let b = store.create(&meta("/b")).unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let a2 = store.create(&meta("/a")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.latest_in(Path::new("/a")).as_deref(), Some(a2.id()));
    assert_eq!(store.latest_in(Path::new("/b")).as_deref(), Some(b.id()));
    assert_eq!(store.latest_in(Path::new("/c")), None);
    // Writing to the older one makes it the latest.
    std::thread::sleep(std::time::Duration::from_millis(20));
    a.note(&json!({"type": "model", "model": "other"}));
    let _ = std::fs::File::open(a.path()).and_then(|f| f.sync_all());
    assert_eq!(store.latest_in(Path::new("/a")).as_deref(), Some(a.id()));

    assert!(matches!(
        store.resume("nope"),
        Err(SessionError::NotFound(_))
    ));
    assert!(matches!(
        store.resume("../../etc/passwd"),
        Err(SessionError::NotFound(_))
    ));
    let year = &a.id()[..4];
    assert!(matches!(
        store.resume(year),
        Err(SessionError::Ambiguous(..))
    ));
    let ids: Vec<String> = store.list().into_iter().map(|s| s.id).collect();
    assert_eq!(ids.len(), 3);
}

#[test]
fn ids_sort_by_time() {
    assert!(new_id(0, 0).starts_with("19700101-000000-"));
    // 2026-12-03 12:11:54 UTC.
    assert!(new_id(1_796_299_914_000, 0).starts_with("20261203-121154-"));
    assert_eq!(civil_from_days(-1), (1969, 12, 31));
    assert_eq!(civil_from_days(19_782), (2024, 2, 29));
}

#[test]
fn a_session_open_in_one_place_cannot_be_resumed_in_another() {
    let (_dir, store) = store();
    let first = store.create(&meta("/p")).unwrap_or_else(|e| panic!("{e}"));
    let id = first.id().to_string();
    assert!(
        matches!(store.resume(&id), Err(SessionError::Busy(ref busy)) if *busy == id),
        "a second writer was let in"
    );
    drop(first);
    let second = store.resume(&id).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(store.resume(&id), Err(SessionError::Busy(_))));
    drop(second);
    assert!(store.resume(&id).is_ok());
}

/// A finished turn whose messages are not a valid conversation: an orphan result (call `x`
/// never made), a call (`c2`) without its result, a result given twice.
const UNREPAIRED: &str = r#"{"type":"session","version":1,"id":"x","cwd":"/p","created_ms":1}
{"type":"user","text":"first"}
{"type":"message","message":{"role":"tool","tool_call_id":"x","name":"bash","content":"orphan"}}
{"type":"message","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"bash","arguments":"{}"},{"id":"c2","name":"bash","arguments":"{}"}]}}
{"type":"message","message":{"role":"tool","tool_call_id":"c1","name":"bash","content":"one"}}
{"type":"message","message":{"role":"tool","tool_call_id":"c1","name":"bash","content":"one again"}}
{"type":"message","message":{"role":"assistant","content":"Done."}}
{"type":"turn_end","stop_reason":"done","turns":2,"usage":{}}
"#;

#[test]
fn a_resumed_conversation_is_repaired_before_it_is_sent() {
    let (_dir, store) = store();
    std::fs::create_dir_all(store.dir()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(store.dir().join("20260101-000000-abcd.jsonl"), UNREPAIRED)
        .unwrap_or_else(|e| panic!("{e}"));
    let resumed = store.resume("20260101").unwrap_or_else(|e| panic!("{e}"));
    let shape: Vec<String> = resumed
        .session
        .messages()
        .iter()
        .map(|m| match m {
            Message::User(t) => format!("user {t}"),
            Message::Assistant { tool_calls, .. } => format!("assistant {}", tool_calls.len()),
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => format!("tool {tool_call_id} {content}"),
            Message::System(_) => "system".into(),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "user first",
            "assistant 2",
            "tool c1 one",
            &format!("tool c2 {UNKNOWN_RESULT}"),
            "assistant 0",
        ]
    );
    assert_eq!(
        resumed.warnings,
        [
            "the conversation was repaired before it is sent again: 2 tool result(s) without their call dropped, 1 call(s) without a result answered as unknown"
        ]
    );
}

/// Every chat API's rule: each assistant message's calls are answered right after it, once
/// each, and no tool result stands anywhere else.
fn valid_conversation(messages: &[Message]) -> Result<(), String> {
    let mut open: Vec<&str> = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        match message {
            Message::Tool { tool_call_id, .. } => {
                match open.iter().position(|id| id == tool_call_id) {
                    Some(i) => {
                        open.remove(i);
                    }
                    None => {
                        return Err(format!(
                            "message {at}: a result for {tool_call_id} out of place"
                        ));
                    }
                }
            }
            other => {
                if !open.is_empty() {
                    return Err(format!(
                        "message {at}: calls {open:?} left without a result"
                    ));
                }
                if let Message::Assistant { tool_calls, .. } = other {
                    open = tool_calls.iter().map(|c| c.id.as_str()).collect();
                }
            }
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("calls {open:?} left without a result at the end"))
    }
}

#[test]
fn corpus_every_conversation_is_repaired_into_a_valid_one() {
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: "{}".into(),
    };
    let alphabet: Vec<Message> = vec![
        Message::User("u".into()),
        Message::Assistant {
            content: Some("a".into()),
            tool_calls: Vec::new(),
        },
        Message::Assistant {
            content: None,
            tool_calls: vec![call("a")],
        },
        Message::Assistant {
            content: None,
            tool_calls: vec![call("a"), call("b")],
        },
        Message::Tool {
            tool_call_id: "a".into(),
            name: "bash".into(),
            content: "ra".into(),
        },
        Message::Tool {
            tool_call_id: "b".into(),
            name: "bash".into(),
            content: "rb".into(),
        },
        Message::Tool {
            tool_call_id: "c".into(),
            name: "bash".into(),
            content: "rc".into(),
        },
    ];
    let mut corpus =
        mm_test_support::Corpus::new("resumed conversations (every sequence of up to 5 messages)");
    let mut sequences: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..5 {
        let longer: Vec<Vec<usize>> = sequences
            .iter()
            .filter(|s| s.len() == sequences.last().map_or(0, Vec::len))
            .flat_map(|s| {
                (0..alphabet.len()).map(move |i| {
                    let mut s = s.clone();
                    s.push(i);
                    s
                })
            })
            .collect();
        sequences.extend(longer);
    }
    for sequence in sequences.iter().filter(|s| !s.is_empty()) {
        let messages: Vec<Message> = sequence.iter().map(|&i| alphabet[i].clone()).collect();
        let (repaired, _) = read::repair(messages.clone());
        let kept = |m: &Message| !matches!(m, Message::Tool { .. });
        let others_kept = messages.iter().filter(|m| kept(m)).collect::<Vec<_>>()
            == repaired.iter().filter(|m| kept(m)).collect::<Vec<_>>();
        let valid = valid_conversation(&repaired);
        corpus.check(sequence, valid.is_ok() && others_kept, || {
            format!("{valid:?}, others kept: {others_kept}")
        });
    }
    corpus.finish();
}
