use serde_json::json;

use super::*;

fn tools() -> Vec<ToolSpec> {
    let spec = |name: &str, properties: Value| ToolSpec {
        name: name.to_owned(),
        description: String::new(),
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
            json!({"version": {"type": "string"}, "dry_run": {"type": "boolean"}}),
        ),
    ]
}

fn call(name: &str, arguments: &str) -> TextCall {
    TextCall {
        name: name.to_owned(),
        arguments: arguments.to_owned(),
    }
}

/// Arguments compared as JSON values: key order is not part of the contract.
fn normalize(calls: &[TextCall]) -> Vec<(String, Value)> {
    calls
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                serde_json::from_str(&c.arguments).unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// `case!(name: input => text, [(tool, args), …])`: the text left and the calls found.
macro_rules! cases {
    ($($name:ident: $input:expr => $text:expr, [$(($tool:expr, $args:expr)),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                let (text, calls) = extract($input, &tools());
                let expected: Vec<TextCall> = vec![$(call($tool, $args)),*];
                assert_eq!(normalize(&calls), normalize(&expected), "calls of {:?}", $input);
                assert_eq!(text, $text, "text of {:?}", $input);
            }
        )*
    };
}

cases! {
    plain_text: "Hello there." => "Hello there.", [];
    hermes_one: "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>"
        => "", [("bash", r#"{"command":"ls"}"#)];
    hermes_with_text_around: "Let me look.\n<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}</tool_call>\nDone"
        => "Let me look.\n\nDone", [("bash", r#"{"command":"ls"}"#)];
    hermes_two: "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}</tool_call>\n<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}</tool_call>"
        => "", [("bash", r#"{"command":"ls"}"#), ("read_file", r#"{"path":"a"}"#)];
    hermes_unclosed_at_end: "<tool_call>\n{\"name\":\"bash\",\"arguments\":{\"command\":\"pwd\"}}"
        => "", [("bash", r#"{"command":"pwd"}"#)];
    hermes_string_arguments: "<tool_call>{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}</tool_call>"
        => "", [("bash", r#"{"command":"ls"}"#)];
    hermes_unknown_tool_alone_is_a_call_to_answer: "<tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call>"
        => "", [("nope", "{}")];
    hermes_unknown_tool_in_prose_stays_text: "See <tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call>"
        => "See <tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call>", [];
    hermes_not_json_stays_text: "<tool_call>call bash please</tool_call>"
        => "<tool_call>call bash please</tool_call>", [];
    // Nothing but calls: the unknown one is answered by the pipeline, the known one runs.
    hermes_one_known_one_unknown: "<tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}</tool_call>"
        => "", [("nope", "{}"), ("bash", r#"{"command":"ls"}"#)];
    hermes_known_and_unknown_in_prose: "First <tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}</tool_call>"
        => "First <tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call>", [("bash", r#"{"command":"ls"}"#)];
    qwen_xml: "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n<parameter=limit>\n20\n</parameter>\n</function>\n</tool_call>"
        => "", [("read_file", r#"{"limit":20,"path":"src/main.rs"}"#)];
    qwen_xml_without_outer_tags: "I will run it.\n<function=bash>\n<parameter=command>\necho 'a < b'\n</parameter>\n</function>"
        => "I will run it.", [("bash", r#"{"command":"echo 'a < b'"}"#)];
    qwen_xml_multiline_string_kept: "<function=bash><parameter=command>\nline1\nline2\n</parameter></function>"
        => "", [("bash", r#"{"command":"line1\nline2"}"#)];
    qwen_xml_string_param_that_looks_like_json: "<function=release><parameter=version>1.0</parameter><parameter=dry_run>true</parameter></function>"
        => "", [("release", r#"{"dry_run":true,"version":"1.0"}"#)];
    qwen_xml_unclosed: "<tool_call>\n<function=bash>\n<parameter=command>\nls\n"
        => "", [("bash", r#"{"command":"ls"}"#)];
    qwen_xml_unknown_alone_is_a_call_to_answer: "<function=nope><parameter=x>1</parameter></function>"
        => "", [("nope", r#"{"x":"1"}"#)];
    mistral_list: "[TOOL_CALLS][{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}]"
        => "", [("bash", r#"{"command":"ls"}"#), ("read_file", r#"{"path":"x"}"#)];
    mistral_args_form: "[TOOL_CALLS]bash[ARGS]{\"command\": \"ls -l\"}"
        => "", [("bash", r#"{"command":"ls -l"}"#)];
    mistral_args_form_twice: "[TOOL_CALLS]bash[ARGS]{\"command\":\"a\"}[TOOL_CALLS]read_file[ARGS]{\"path\":\"b\"}"
        => "", [("bash", r#"{"command":"a"}"#), ("read_file", r#"{"path":"b"}"#)];
    mistral_call_id_form: "[TOOL_CALLS]bash[CALL_ID]abc123[ARGS]{\"command\":\"a\"}"
        => "", [("bash", r#"{"command":"a"}"#)];
    mistral_unknown_alone_is_a_call_to_answer: "[TOOL_CALLS]nope[ARGS]{}" => "", [("nope", "{}")];
    llama_parameters: "{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    llama_arguments_fenced: "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```"
        => "", [("read_file", r#"{"path":"a.txt"}"#)];
    llama_python_tag: "<|python_tag|>{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    llama_openai_shape: "{\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    // A skill's name called as a tool (seen on every model in skill mode): answered, not shown.
    llama_unknown_alone_is_a_call_to_answer: "{\"name\": \"health-check\", \"parameters\": {}}"
        => "", [("health-check", "{}")];
    // Real replies of Qwen2.5-Coder-0.5B-Instruct (greedy, llama.cpp's server, 2026-12-04).
    real_qwen05_call_then_response: "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n{\"response\": \"running, version 2.3.1, up 4 days, error rate 0.02%\"}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    real_qwen05_call_then_invented_calls: "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n{\"name\": \"version\", \"arguments\": {\"version\": \"2.3.1\"}}\n{\"name\": \"up\", \"arguments\": {\"days\": 4}}"
        => "", [("read_file", r#"{"path":"a"}"#)];
    real_qwen05_function_name_tags: "<function-name>release</function-name>\n<arguments>version=1.2, dry_run=true</arguments>"
        => "", [("release", r#"{"version":"1.2","dry_run":true}"#)];
    function_name_tags_json: "<function-name>bash</function-name><arguments>{\"command\": \"ls\"}</arguments>"
        => "", [("bash", r#"{"command":"ls"}"#)];
    function_name_tags_unknown_alone: "<function-name>convert</function-name>\n<arguments>amount=12, from=in, to=cm</arguments>"
        => "", [("convert", r#"{"amount":"12","from":"in","to":"cm"}"#)];
    real_qwen15_fenced_pretty_json: "```json\n{\n  \"name\": \"release\",\n  \"arguments\": {\n    \"version\": \"2.0.1\",\n    \"dry_run\": false\n  }\n}\n```"
        => "", [("release", r#"{"version":"2.0.1","dry_run":false}"#)];
    // The same reply when mm stopped the stream as soon as the call was complete (streamed by
    // llama-server, 2026-12-05): the closing fence never came.
    real_qwen15_fenced_cut_before_the_closing_fence: "```json\n{\n  \"name\": \"release\",\n  \"arguments\": {\n    \"version\": \"1.4.2\",\n    \"channel\": \"beta\",\n    \"dry_run\": false\n  }\n}\n"
        => "", [("release", r#"{"version":"1.4.2","channel":"beta","dry_run":false}"#)];
    // Qwen2.5-Coder-1.5B, streamed by llama-server (2026-12-06, eval/agents/bookshop, "Which of
    // your shops has La Place (ISBN 9782070377220) in stock?"): its call inside `<tools>`, cut
    // where mm stopped reading (mm showed it as "the tool list written out" before).
    real_qwen15_call_in_a_tools_tag: "<tools>\n{\"name\": \"release\", \"arguments\": {\"version\": \"9782070377220\"}}"
        => "", [("release", r#"{"version":"9782070377220"}"#)];
    // Qwen2.5-Coder-1.5B (2026-12-06, eval/agents/bookshop, "Is my order 77104 on its way?"):
    // its call in doubled braces, then an answer it made up; mm asked for an answer instead.
    real_qwen15_call_in_doubled_braces: "{{\"name\": \"read_file\", \"arguments\": {\"path\": \"77104\"}}}Yes, your order 77104 is on its way."
        => "", [("read_file", r#"{"path":"77104"}"#)];
    // Qwen2.5-Coder-0.5B (2026-12-07, eval/agents/shipping, after a call that worked): its
    // next call one `}` short, the end of its reply; mm showed it as the answer before.
    real_qwen05_call_one_brace_short: "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    cut_short_unknown_alone_is_a_call_to_answer: "{\"name\": \"devolver\", \"arguments\": {\"pedido\": 58213, \"motivo\": \"lata\"}"
        => "", [("devolver", r#"{"pedido":58213,"motivo":"lata"}"#)];
    cut_inside_a_string_stays_text: "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls"
        => "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls", [];
    cut_short_data_stays_text: "{\"version\": \"1.2\", \"notes\": {\"a\": 1}"
        => "{\"version\": \"1.2\", \"notes\": {\"a\": 1}", [];
    // Python's dict for the JSON (Llama-3.2 and Qwen models write it so).
    python_dict_call: "{'name': 'bash', 'arguments': {'command': 'ls'}}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    python_dict_in_tool_call: "<tool_call>\n{'name': 'release', 'arguments': {'version': '1.2', 'dry_run': True}}\n</tool_call>"
        => "", [("release", r#"{"version":"1.2","dry_run":true}"#)];
    python_dict_unknown_alone_is_a_call_to_answer: "{'name': 'health-check', 'arguments': {}}"
        => "", [("health-check", "{}")];
    python_dict_in_prose_stays_text: "I'd run {'name': 'bash', 'arguments': {'command': 'ls'}} now."
        => "I'd run {'name': 'bash', 'arguments': {'command': 'ls'}} now.", [];
    other_keys_for_a_known_tool: "{\"tool\": \"bash\", \"args\": {\"command\": \"ls\"}}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    function_name_as_a_string: "{\"function\": \"bash\", \"arguments\": {\"command\": \"ls\"}}"
        => "", [("bash", r#"{"command":"ls"}"#)];
    other_keys_for_an_unknown_name_stay_text: "{\"tool\": \"Alice\", \"input\": {\"age\": 3}}"
        => "{\"tool\": \"Alice\", \"input\": {\"age\": 3}}", [];
    // The forms of the model makers' own tool-use guides: Llama 3.2's and Gemma 3's list of
    // Python calls, Gemma 3's `tool_code` block with `print(…)`, Phi-4-mini's `functools[…]`.
    python_list_of_calls: "[bash(command=\"ls\"), read_file(path='a.txt', limit=3)]"
        => "", [("bash", r#"{"command":"ls"}"#), ("read_file", r#"{"path":"a.txt","limit":3}"#)];
    tool_code_print_default_api: "```tool_code\nprint(default_api.bash(command=\"ls\"))\n```"
        => "", [("bash", r#"{"command":"ls"}"#)];
    functools_list: "functools[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]"
        => "", [("bash", r#"{"command":"ls"}"#)];
    list_of_unknown_calls_stays_text: "[max(1, 2), min(3, 4)]" => "[max(1, 2), min(3, 4)]", [];
    print_of_text_stays_text: "print(\"hello\")" => "print(\"hello\")", [];
    doubled_braces_data_stays_text: "{{\"a\": 1}}" => "{{\"a\": 1}}", [];
    tag_wrapped_call_closed: "<function_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</function_call>"
        => "", [("bash", r#"{"command":"ls"}"#)];
    tag_wrapped_unknown_alone_is_a_call_to_answer: "<tools>{\"name\": \"disponibilite\", \"arguments\": {}}</tools>"
        => "", [("disponibilite", "{}")];
    // The tools the model was shown, written out: a definition, not a call.
    tag_wrapped_definition_stays_text: "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"bash\", \"description\": \"Run\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}}\n</tools>"
        => "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"bash\", \"description\": \"Run\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}}\n</tools>", [];
    tagged_prose_stays_text: "<b>Yes</b>, in stock." => "<b>Yes</b>, in stock.", [];
    python_call_keywords: "release(version=\"1.4.2\", dry_run=false)"
        => "", [("release", r#"{"version":"1.4.2","dry_run":false}"#)];
    python_call_positional: "read_file(\"src/main.rs\", 20)"
        => "", [("read_file", r#"{"path":"src/main.rs","limit":20}"#)];
    python_call_json_object: "bash({\"command\": \"ls -l\"})"
        => "", [("bash", r#"{"command":"ls -l"}"#)];
    python_call_fenced_two_lines: "```python\nbash(command=\"ls\")\nread_file(path='a, b')\n```"
        => "", [("bash", r#"{"command":"ls"}"#), ("read_file", r#"{"path":"a, b"}"#)];
    name_colon_json: "release: {\"version\": \"1.4.2\"}"
        => "", [("release", r#"{"version":"1.4.2"}"#)];
    python_call_of_unknown_stays_text: "print(\"hello\")" => "print(\"hello\")", [];
    prose_with_colon_stays_text: "Note: {the braces} stay" => "Note: {the braces} stay", [];
    prose_starting_with_a_tool_name_stays_text: "bash is a shell (a program)." => "bash is a shell (a program).", [];
    json_without_arguments_stays_text: "{\"name\": \"bash\"}" => "{\"name\": \"bash\"}", [];
    json_inside_prose_stays_text: "Call it like {\"name\": \"bash\", \"arguments\": {}} next time."
        => "Call it like {\"name\": \"bash\", \"arguments\": {}} next time.", [];
    data_json_stays_text: "{\"version\": \"1.2\"}" => "{\"version\": \"1.2\"}", [];
}

#[test]
fn no_tools_means_no_calls() {
    let input = "<tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call>";
    assert_eq!(extract(input, &[]), (input.to_owned(), Vec::new()));
}

fn gate_run(chunks: &[&str], tools: &[ToolSpec]) -> String {
    let mut gate = TextGate::default();
    let mut raw = String::new();
    let mut shown = String::new();
    for chunk in chunks {
        raw.push_str(chunk);
        shown.push_str(gate.advance(&raw));
    }
    let (text, _) = extract(&raw, tools);
    shown.push_str(gate.finish(&raw, &text));
    shown
}

#[test]
fn gate_shows_plain_text_as_it_comes_and_all_of_it() {
    let mut gate = TextGate::default();
    // A first word is held until it cannot be a `name(…)` call.
    assert_eq!(gate.advance("Hel"), "");
    assert_eq!(gate.advance("Hello <"), "Hello ");
    assert_eq!(gate.advance("Hello <b>"), "<b>");
    assert_eq!(
        gate_run(&["Hel", "lo <", "b> [x", "]"], &tools()),
        "Hello <b> [x]"
    );
}

#[test]
fn gate_hides_calls() {
    let chunks = [
        "Let me look.\n<tool",
        "_call>{\"name\":\"bash\",",
        "\"arguments\":{\"command\":\"ls\"}}</tool_call>",
    ];
    assert_eq!(gate_run(&chunks, &tools()), "Let me look.\n");
    let chunks = [
        "{\"name\": \"bash\", ",
        "\"parameters\": {\"command\": \"ls\"}}",
    ];
    assert_eq!(gate_run(&chunks, &tools()), "");
}

#[test]
fn gate_holds_a_call_in_a_tag_of_the_models_own() {
    let chunks = [
        "<tool",
        "s>\n{\"",
        "name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
    ];
    assert_eq!(gate_run(&chunks, &tools()), "");
    assert!(starts_with_complete_call(&chunks.concat()));
    assert!(starts_with_complete_call(
        "{{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}"
    ));
    // A tag followed by prose is shown, all of it.
    assert_eq!(
        gate_run(&["<b", ">Yes</b>", ", in stock."], &tools()),
        "<b>Yes</b>, in stock."
    );
    assert_eq!(gate_run(&["<é", "> x"], &tools()), "<é> x");
}

#[test]
fn gate_shows_held_text_that_was_no_call() {
    assert_eq!(gate_run(&["{\"a\"", ": 1}"], &tools()), "{\"a\": 1}");
    let unknown = [
        "Try <tool_call>{\"name\":\"x\",",
        "\"arguments\":{}}</tool_call>",
    ];
    assert_eq!(gate_run(&unknown, &tools()), unknown.concat());
}

#[test]
fn gate_holds_fenced_json_but_not_other_code() {
    let chunks = [
        "```",
        "json\n{\"name\": \"bash\", ",
        "\"arguments\": {\"command\": \"ls\"}}\n```",
    ];
    assert_eq!(gate_run(&chunks, &tools()), "");
    let mut gate = TextGate::default();
    assert_eq!(gate.advance("```"), "");
    assert_eq!(gate.advance("```rust\n"), "");
    assert_eq!(gate.advance("```rust\nfn main"), "```rust\nfn main");
    assert_eq!(
        gate_run(&["```json\n{\"a\": 1}\n```"], &tools()),
        "```json\n{\"a\": 1}\n```"
    );
}

#[test]
fn gate_holds_lists_of_calls_and_tool_code_but_not_bracketed_prose() {
    for chunks in [
        &["[", "bash(command=", "\"ls\")]"][..],
        &[
            "[{\"name\": \"bash\", ",
            "\"arguments\": {\"command\": \"ls\"}}]",
        ],
        &["funct", "ools[{\"name\": \"bash\", \"arguments\": {}}]"],
        &["```tool", "_code\nprint(bash(command=\"ls\"))\n```"],
    ] {
        assert_eq!(gate_run(chunks, &tools()), "", "{chunks:?}");
    }
    assert_eq!(
        gate_run(&["[1] First", " point."], &tools()),
        "[1] First point."
    );
    assert_eq!(
        gate_run(&["[the docs](https://x.y) say so"], &tools()),
        "[the docs](https://x.y) say so"
    );
}

#[test]
fn a_reply_that_starts_with_a_call_and_goes_on_is_that_call() {
    let tools = tools();
    // Real (Qwen2.5-Coder-0.5B): the call, then a half-written invented one, cut.
    let broken = "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n{\"name\": \"error rate\", \"arguments\": {\"value\": \"0.02%\"}";
    assert_eq!(
        normalize(&extract(broken, &tools).1),
        normalize(&[call("bash", r#"{"command":"ls"}"#)])
    );
    // A reply that starts with a call of a tool that does not exist and goes on is text.
    let unknown = "{\"name\": \"weather\", \"arguments\": {}} and more";
    assert!(extract(unknown, &tools).1.is_empty());
}

#[test]
fn the_stream_can_stop_once_a_call_is_complete() {
    for done in [
        "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
        "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n{\"name\":",
        "```json\n{\"name\": \"nope\", \"parameters\": {}}\n",
        "<tool_call>\n{\"name\": \"bash\", \"arguments\": {}}\n</tool_call>\n<tool",
        "<function=bash><parameter=command>ls</parameter></function>",
        "<function-name>bash</function-name><arguments>command=ls</arguments>",
    ] {
        assert!(starts_with_complete_call(done), "{done}");
    }
    for not_yet in [
        "{\"name\": \"bash\", \"arguments\": {\"command\": \"l",
        "{\"version\": \"1.2\"}",
        "The answer: {\"name\": \"bash\", \"arguments\": {}}",
        "<tool_call>\n{\"name\": \"bash\"",
        "```json\n",
    ] {
        assert!(!starts_with_complete_call(not_yet), "{not_yet}");
    }
}

#[test]
fn gate_holds_a_reply_that_opens_like_a_python_call() {
    assert_eq!(gate_run(&["release(", "version=\"1\")"], &tools()), "");
    assert_eq!(
        gate_run(&["release: ", "{\"version\": \"1\"}"], &tools()),
        ""
    );
    assert_eq!(
        gate_run(&["Hello", " there", ": yes"], &tools()),
        "Hello there: yes"
    );
}
