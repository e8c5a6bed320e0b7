use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::{parse_agent, parse_shape};
use crate::args::{ParamSpec, ParamType};
use crate::config::{AgentConfig, McpTransport, ToolCallMode, placeholders};

fn parse(name: &str, text: &str) -> Result<AgentConfig, String> {
    parse_agent(Path::new(name), text).map_err(|e| e.to_string())
}

/// The config of a well-formed file, keys that are not built yet included.
fn ok(text: &str) -> AgentConfig {
    match parse_shape(Path::new("/srv/agents/ops.md"), text) {
        Ok((config, _)) => config,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// The error of `ops.md` holding `front` as front matter.
fn front_err(front: &str) -> String {
    match parse("ops.md", &format!("---\n{front}---\nBody.\n")) {
        Ok(_) => panic!("no error for:\n{front}"),
        Err(e) => e,
    }
}

/// `name: front matter => "expected error"`, one test per line of the table.
macro_rules! errors {
    ($($name:ident: $front:expr => $expected:expr;)*) => {
        $(
            #[test]
            fn $name() {
                assert_eq!(front_err($front), $expected);
            }
        )*
    };
}

const TOOL: &str = "tools:\n  release:\n    description: Publish.\n";

errors! {
    yaml_syntax: "name: ops\nmodel: a: b\n" =>
        "ops.md:3: invalid YAML: mapping values are not allowed in this context (column 9)";
    yaml_tab: "tools:\n\trelease: {}\n" =>
        "ops.md:3: invalid YAML: tabs disallowed within this context (block indentation) (column 2)";
    yaml_duplicate_key: "model: a\nmodel: b\n" =>
        "ops.md:3: invalid YAML: duplicated key in mapping (column 1)";
    not_a_mapping: "- a\n- b\n" =>
        "ops.md:2: expected a mapping of keys (like `model: qwen3`), found a list";
    unknown_top_key: "name: ops\nmodle: qwen\n" =>
        "ops.md:3: modle: unknown key; did you mean `model`?";
    unknown_top_key_case: "Base-URL: http://x\n" =>
        "ops.md:2: Base-URL: unknown key; did you mean `base_url`?";
    unknown_top_key_far: "flavour: x\n" =>
        "ops.md:2: flavour: unknown key; expected one of: name, model, base_url, api_key_env, tool_calls, yolo, allow, builtins, tools, skills, mcp, hooks, limits, sandbox, presentation, instructions";
    unknown_tool_key: &format!("{TOOL}    descripton: x\n    command: [./r.sh]\n") =>
        "ops.md:5: tools.release.descripton: unknown key; did you mean `description`?";
    unknown_param_key: &format!("{TOOL}    parameters:\n      v: {{type: string, requird: false}}\n    command: [./r.sh]\n") =>
        "ops.md:6: tools.release.parameters.v.requird: unknown key; did you mean `required`?";
    unknown_limits_key: "limits:\n  max_turn: 3\n" =>
        "ops.md:3: limits.max_turn: unknown key; did you mean `max_turns`?";
    unknown_hook_event: "hooks:\n  pre_tool_call: []\n" =>
        "ops.md:3: hooks.pre_tool_call: unknown key; did you mean `preToolCall`?";
    wrong_type_bool: "yolo: maybe\n" =>
        "ops.md:2: yolo: expected true or false, found \"maybe\"";
    wrong_type_string: "model: 7\n" =>
        "ops.md:2: model: expected a string, found 7; quote it: \"7\"";
    negative_limit: "limits:\n  max_turns: -1\n" =>
        "ops.md:3: limits.max_turns: must be at least 1, found -1";
    zero_limit: "limits: {loop: 0}\n" =>
        "ops.md:2: limits.loop: must be at least 1, found 0";
    bash_rule_that_allows_nothing: "allow: [status, \"bash:ls *.txt\"]\n" =>
        "ops.md:2: allow[1]: \"bash:ls *.txt\" would allow nothing: a bash rule is the words of \
         one simple command, optionally ending in * (like \"bash:git status*\"), with no \
         operator, $, quote left open or pattern character before the final *; see \
         docs/permissions.md";
    limit_not_number: "limits: {max_tokens: lots}\n" =>
        "ops.md:2: limits.max_tokens: expected a whole number, found \"lots\"";
    huge_limit: "limits: {max_tokens: 99999999999}\n" =>
        "ops.md:2: limits.max_tokens: 99999999999 is too large (at most 4294967295)";
    bad_sandbox: "name: ops\nsandbox: workspaces\n" =>
        "ops.md:3: sandbox: unknown sandbox mode `workspaces`; did you mean `workspace`? sandbox modes are: workspace, off, best-effort";
    presentation_unknown_key: "presentation:\n  closing: false\n" =>
        "ops.md:3: presentation.closing: unknown key; did you mean `closing_sentence`?";
    presentation_bad_schema: "presentation:\n  schema: keyword\n" =>
        "ops.md:3: presentation.schema: unknown schema style `keyword`; did you mean `keywords`? schema styles are: sentences, keywords";
    presentation_not_a_boolean: "presentation:\n  closing_sentence: no\n" =>
        "ops.md:3: presentation.closing_sentence: expected true or false, found \"no\"";
    sandbox_not_a_string: "sandbox: true\n" =>
        "ops.md:2: sandbox: unknown sandbox mode true; sandbox modes are: workspace, off, best-effort";
    mcp_sandbox_bad: "mcp:\n  files:\n    command: [./srv]\n    sandbox: bestefort\n" =>
        "ops.md:5: mcp.files.sandbox: unknown sandbox mode `bestefort`; did you mean `best-effort`? sandbox modes are: workspace, off, best-effort";
    mcp_protocol_bad: "mcp:\n  web:\n    url: http://127.0.0.1:9/mcp\n    protocol: moden\n" =>
        "ops.md:5: mcp.web.protocol: unknown protocol `moden`; did you mean `modern`? protocols are: auto, modern, legacy";
    mcp_protocol_misspelt_key: "mcp:\n  web:\n    url: http://127.0.0.1:9/mcp\n    protocl: modern\n" =>
        "ops.md:5: mcp.web.protocl: unknown key; did you mean `protocol`?";
    mcp_sandbox_on_url: "mcp:\n  web:\n    url: http://127.0.0.1:9/mcp\n    sandbox: workspace\n" =>
        "ops.md:5: mcp.web.sandbox: `sandbox` is for `command` servers (mm runs no process for a `url` server)";
    bad_tool_calls: "tool_calls: nativ\n" =>
        "ops.md:2: tool_calls: unknown mode `nativ`; did you mean `native`? modes are: native, constrained, auto";
    unknown_builtin: "builtins: [bash, read_fle]\n" =>
        "ops.md:2: builtins[1]: unknown built-in `read_fle`; did you mean `read_file`? built-ins are: bash, read_file, write_file, edit_file, list_files, grep, read_skill, web_fetch, todo";
    builtin_twice: "builtins:\n  - bash\n  - bash\n" =>
        "ops.md:4: builtins[1]: `bash` is listed twice";
    bad_base_url: "base_url: localhost:8080\n" =>
        "ops.md:2: base_url: \"localhost:8080\" is not an http(s) URL; write like http://127.0.0.1:8080/v1";
    api_key_in_env: "api_key_env: sk-12345\n" =>
        "ops.md:2: api_key_env: \"sk-12345\" is not an environment variable name; give the name of the variable that holds the key, like OPENAI_API_KEY";
    instructions_in_markdown: "instructions: hi\n" =>
        "ops.md:2: instructions: only a .yaml agent file has `instructions:`; in Markdown the body after the front matter is the instructions";
    reserved_tool_name: "builtins: [read_file]\ntools:\n  bash:\n    description: x\n    command: [x]\n" =>
        "ops.md:4: tools.bash: `bash` is reserved: it is the name of a built-in tool (reserved even when that built-in is turned off); choose another name";
    invalid_tool_name: "tools:\n  re.lease:\n    description: x\n    command: [x]\n" =>
        "ops.md:3: tools.re.lease: invalid tool name `re.lease`: use 1 to 64 letters, digits, `_` or `-`";
    long_tool_name: &format!("tools:\n  {}:\n    description: x\n    command: [x]\n", "a".repeat(65)) =>
        format!("ops.md:3: tools.{0}: invalid tool name `{0}`: use 1 to 64 letters, digits, `_` or `-`", "a".repeat(65));
    missing_description: "tools:\n  release:\n    command: [x]\n" =>
        "ops.md:3: tools.release.description: missing: say what the tool does; the model reads it to decide when to call it";
    empty_description: "tools:\n  release:\n    description: \"  \"\n    command: [x]\n" =>
        "ops.md:4: tools.release.description: may not be empty";
    missing_command: TOOL =>
        "ops.md:3: tools.release.command: missing: give the program and its arguments, like [\"./run.sh\", \"{{arg}}\"]";
    placeholder_in_program: &format!("{TOOL}    parameters:\n      v: {{type: string}}\n    command:\n      - ./{{{{v}}}}.sh\n") =>
        "ops.md:8: tools.release.command[0]: the program may not contain a placeholder";
    unknown_placeholder: &format!("{TOOL}    parameters:\n      version: {{type: string}}\n      channel: {{type: string}}\n    command: [./r.sh, \"{{{{ vers }}}}\"]\n") =>
        "ops.md:8: tools.release.command[1]: unknown placeholder {{vers}}; did you mean {{version}}? parameters are: version, channel";
    placeholder_without_params: &format!("{TOOL}    command: [./r.sh, \"--x={{{{x}}}}\"]\n") =>
        "ops.md:5: tools.release.command[1]: unknown placeholder {{x}}; the tool has no parameters";
    bad_param_type: &format!("{TOOL}    parameters:\n      v: {{type: str}}\n    command: [x]\n") =>
        "ops.md:6: tools.release.parameters.v.type: unknown type `str`; did you mean `string`? types are: string, integer, number, boolean";
    missing_param_type: &format!("{TOOL}    parameters:\n      v: {{description: x}}\n    command: [x]\n") =>
        "ops.md:6: tools.release.parameters.v.type: missing: one of string, integer, number, boolean";
    param_shorthand: &format!("{TOOL}    parameters:\n      v: string\n    command: [x]\n") =>
        "ops.md:6: tools.release.parameters.v: expected a mapping, like {type: string}";
    enum_type_mismatch: &format!("{TOOL}    parameters:\n      n:\n        type: integer\n        enum: [1, two]\n    command: [x]\n") =>
        "ops.md:8: tools.release.parameters.n.enum[1]: \"two\" is not an integer";
    enum_string_number: &format!("{TOOL}    parameters:\n      v: {{type: string, enum: [1.0, \"2\"]}}\n    command: [x]\n") =>
        "ops.md:6: tools.release.parameters.v.enum[0]: 1.0 is not a string; quote it: \"1.0\"";
    empty_enum: &format!("{TOOL}    parameters:\n      v: {{type: string, enum: []}}\n    command: [x]\n") =>
        "ops.md:6: tools.release.parameters.v.enum: an enum needs at least one value";
    default_not_in_enum: &format!("{TOOL}    parameters:\n      channel:\n        type: string\n        enum: [stable, beta]\n        default: alpha\n    command: [x]\n") =>
        "ops.md:9: tools.release.parameters.channel.default: \"alpha\" is not one of the enum values: stable, beta";
    default_wrong_type: &format!("{TOOL}    parameters:\n      n: {{type: boolean, default: 1}}\n    command: [x]\n") =>
        "ops.md:6: tools.release.parameters.n.default: 1 is not a boolean (true or false)";
    default_and_required: &format!("{TOOL}    parameters:\n      n: {{type: integer, default: 1, required: true}}\n    command: [x]\n") =>
        "ops.md:6: tools.release.parameters.n.required: a parameter with a `default` is optional; remove `required: true` or the default";
    empty_command: &format!("{TOOL}    command: []\n") =>
        "ops.md:5: tools.release.command: the command may not be empty; give the program and its arguments";
    string_command: &format!("{TOOL}    command: ./release.sh --fast\n") =>
        "ops.md:5: tools.release.command: expected a list, one argv entry per element, like [\"./run.sh\", \"--fast\"]; no shell splits a string";
    command_number_entry: &format!("{TOOL}    command: [./r.sh, 3]\n") =>
        "ops.md:5: tools.release.command[1]: expected a string, found 3; quote it: \"3\"";
    bad_timeout: &format!("{TOOL}    command: [x]\n    timeout: 5 min\n") =>
        "ops.md:6: tools.release.timeout: \"5 min\" is not a duration; write like 60s, 2m, 500ms, 1h or a number of seconds";
    zero_timeout: &format!("{TOOL}    command: [x]\n    timeout: 0\n") =>
        "ops.md:6: tools.release.timeout: 0 is not a duration; write like 60s, 2m, 500ms, 1h or a number of seconds";
    bad_hook_regex: "hooks:\n  preToolCall:\n    - match: \"release|(bash\"\n      command: [./guard.sh]\n" =>
        "ops.md:4: hooks.preToolCall[0].match: invalid regex: unclosed group";
    hook_without_command: "hooks:\n  postToolCall:\n    - match: bash\n" =>
        "ops.md:4: hooks.postToolCall[0].command: missing: the hook's argv list";
    mcp_url_and_command: "mcp:\n  proj: {url: \"http://127.0.0.1:3000/mcp\", command: [srv]}\n" =>
        "ops.md:3: mcp.proj: give either `url` (an HTTP server) or `command` (a stdio server), not both";
    mcp_neither: "mcp:\n  proj: {prefix: p}\n" =>
        "ops.md:3: mcp.proj: missing `url` (an HTTP server) or `command` (a stdio server)";
    mcp_headers_on_stdio: "mcp:\n  fs:\n    command: [srv]\n    headers: {A: b}\n" =>
        "ops.md:5: mcp.fs.headers: `headers` is for `url` servers";
    mcp_unknown_key: "mcp:\n  fs:\n    comand: [srv]\n" =>
        "ops.md:4: mcp.fs.comand: unknown key; did you mean `command`?";
    tools_as_list: "tools: [Read, Grep]\n" =>
        "ops.md:2: tools: expected a mapping of tool names to tools, found a list; to choose built-in tools, use `builtins:`";
    too_long_timeout: &format!("{TOOL}    command: [x]\n    timeout: 25h\n") =>
        "ops.md:6: tools.release.timeout: \"25h\" is longer than the maximum, 24h";
    mcp_zero_timeout: "mcp:\n  proj: {url: \"http://127.0.0.1:3000/mcp\", timeout: 0}\n" =>
        "ops.md:3: mcp.proj.timeout: 0 is not a duration; write like 60s, 2m, 500ms, 1h or a number of seconds";
    builtin_not_yet: "builtins: [bash, web_fetch]\n" =>
        "ops.md:2: builtins[1]: the built-in `web_fetch` is not supported yet in this version of mm; remove the key; built-ins available now: bash, read_file, write_file, edit_file, list_files, grep, read_skill";
    shape_errors_come_first: "builtins: [todo]\nlimits: {loop: 0}\n" =>
        "ops.md:3: limits.loop: must be at least 1, found 0";
    skills_not_list: "skills: 3\n" =>
        "ops.md:2: skills: expected a list, found 3";
}

#[test]
fn deep_nesting_is_refused() {
    let text = format!("---\n{}x\n---\n", "- ".repeat(1000));
    assert_eq!(
        parse("ops.md", &text).unwrap_err(),
        "ops.md:2: nested too deeply (more than 32 levels)"
    );
}

#[test]
fn unclosed_front_matter() {
    assert_eq!(
        parse("ops.md", "---\nname: ops\nBody\n").unwrap_err(),
        "ops.md:1: the front matter opened here is not closed: end it with a line `---`"
    );
}

#[test]
fn yaml_file_errors_count_from_line_one() {
    assert_eq!(
        parse("ops.yaml", "name: ops\nyolo: 3\n").unwrap_err(),
        "ops.yaml:2: yolo: expected true or false, found 3"
    );
}

#[test]
fn unreadable_file() {
    let err = super::load_agent(Path::new("/nonexistent/ops.md"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("/nonexistent/ops.md: cannot read the agent file: "),
        "{err}"
    );
}

/// The example of SPEC §1, verbatim.
const SPEC_EXAMPLE: &str = r#"---
name: ops                                   # optional, shown in the UI
model: qwen3.5-4b                           # model id sent to the server
base_url: http://127.0.0.1:8080/v1          # any OpenAI-compatible endpoint (default shown)
api_key_env: OPENAI_API_KEY                 # optional: env var that holds the key
tool_calls: auto                            # native | constrained (JSON-schema output) | auto
yolo: false                                 # true: nothing asks for consent
allow: [status, "bash:git status*"]         # optional: calls that never ask
builtins: [bash, read_file, list_files]     # optional: built-ins to offer (default: all)
tools:
  release:
    description: Publish a release of the product to a channel.
    parameters:
      version: {type: string, description: "The version, like 1.4.2."}
      channel: {type: string, enum: [stable, beta]}
      dry_run: {type: boolean, required: false}
    command: ["./scripts/release.sh", "{{version}}", "--channel={{channel}}", "--dry-run={{dry_run}}"]
    timeout: 60s                            # optional, default 120s
skills: [./skills]                          # optional: folders of Agent Skills (SKILL.md)
mcp:                                        # optional: MCP servers
  proj: {url: "http://127.0.0.1:3000/mcp"}
  fs:   {command: ["mcp-server-fs", "."], prefix: ""}
hooks:                                      # optional
  preToolCall:  [{match: "release|bash", command: ["./hooks/guard.sh"]}]
  postToolCall: [{command: ["./hooks/audit.sh"]}]
limits: {max_turns: 30, max_output: 8000, loop: 5, max_tokens: 2048}   # optional
---
You are the release assistant of ACME. ...
"#;

#[test]
fn spec_example_parses_fully() {
    let c = ok(SPEC_EXAMPLE);
    assert_eq!(c.path, Some(PathBuf::from("/srv/agents/ops.md")));
    assert_eq!(c.name.as_deref(), Some("ops"));
    assert_eq!(c.model, "qwen3.5-4b");
    assert_eq!(c.base_url, "http://127.0.0.1:8080/v1");
    assert_eq!(c.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    assert_eq!(c.tool_calls, ToolCallMode::Auto);
    assert!(!c.yolo);
    assert_eq!(c.allow, ["status", "bash:git status*"]);
    assert_eq!(
        c.builtins,
        Some(vec!["bash".into(), "read_file".into(), "list_files".into()])
    );
    assert_eq!(c.instructions, "You are the release assistant of ACME. ...");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    let [tool] = c.tools.as_slice() else {
        panic!("{:?}", c.tools)
    };
    assert_eq!(tool.name, "release");
    assert_eq!(
        tool.description,
        "Publish a release of the product to a channel."
    );
    assert_eq!(tool.command[1], "{{version}}");
    assert_eq!(
        tool.program,
        PathBuf::from("/srv/agents/scripts/release.sh")
    );
    assert_eq!(tool.timeout, Duration::from_secs(60));
    assert!(tool.params.deny_unknown);
    let spec = |name: &str,
                ty,
                required,
                description: Option<&str>,
                enum_values: Option<Vec<serde_json::Value>>| ParamSpec {
        name: name.into(),
        ty,
        description: description.map(Into::into),
        required,
        enum_values,
        default: None,
        schema: None,
    };
    assert_eq!(
        tool.params.params,
        [
            spec(
                "version",
                ParamType::String,
                true,
                Some("The version, like 1.4.2."),
                None
            ),
            spec(
                "channel",
                ParamType::String,
                true,
                None,
                Some(vec![json!("stable"), json!("beta")])
            ),
            spec("dry_run", ParamType::Boolean, false, None, None),
        ]
    );

    assert_eq!(c.skills, [PathBuf::from("/srv/agents/skills")]);
    let [proj, fs] = c.mcp.as_slice() else {
        panic!("{:?}", c.mcp)
    };
    assert_eq!(proj.name, "proj");
    assert_eq!(proj.tool_prefix, "proj_");
    assert_eq!(
        proj.transport,
        McpTransport::Http {
            url: "http://127.0.0.1:3000/mcp".into(),
            headers: vec![]
        }
    );
    assert_eq!(fs.tool_prefix, "");
    assert_eq!(
        fs.transport,
        McpTransport::Stdio {
            command: vec!["mcp-server-fs".into(), ".".into()],
            program: PathBuf::from("mcp-server-fs"),
            env: vec![],
        }
    );
    let [pre] = c.hooks.pre_tool_call.as_slice() else {
        panic!()
    };
    let matcher = pre.matcher.as_ref().unwrap();
    assert_eq!(matcher.pattern(), "release|bash");
    assert!(matcher.is_match("bash") && matcher.is_match("release"));
    assert!(!matcher.is_match("bash_extra"));
    assert_eq!(pre.program, PathBuf::from("/srv/agents/hooks/guard.sh"));
    assert_eq!(pre.timeout, Duration::from_secs(60));
    let [post] = c.hooks.post_tool_call.as_slice() else {
        panic!()
    };
    assert!(post.matcher.is_none());
    assert_eq!(c.limits, crate::config::Limits::default());
}

#[test]
fn markdown_without_front_matter_is_all_instructions() {
    let c = ok("\n# Ops\n\nYou help.\n");
    assert_eq!(c.instructions, "# Ops\n\nYou help.");
    assert_eq!(c.model, "default");
    assert_eq!(c.base_url, "http://127.0.0.1:8080/v1");
    assert!(c.tools.is_empty() && c.builtins.is_none());
}

#[test]
fn empty_front_matter_and_empty_values_are_defaults() {
    let c = ok("---\n---\nHi\n");
    assert_eq!(c.instructions, "Hi");
    let c = ok("---\n# just a comment\nmodel:\ntools:\nlimits:\n---\n");
    assert_eq!(c.model, "default");
    assert_eq!(c.instructions, "");
    assert!(c.tools.is_empty());
    let c = ok("\u{feff}---\r\nmodel: m\r\n---\r\nBody\r\n");
    assert_eq!((c.model.as_str(), c.instructions.as_str()), ("m", "Body"));
}

#[test]
fn yaml_file_with_instructions() {
    let text = "model: m\ntool_calls: constrained\nyolo: true\ninstructions: |\n  You help.\n  Be brief.\nlimits: {max_turns: 3}\n";
    for name in ["/a/ops.yaml", "/a/ops.YML"] {
        let c = parse(name, text).unwrap();
        assert_eq!(c.instructions, "You help.\nBe brief.");
        assert_eq!(c.tool_calls, ToolCallMode::Constrained);
        assert!(c.yolo);
        assert_eq!(c.limits.max_turns, 3);
        assert_eq!(c.limits.max_tokens, 2048);
    }
    assert_eq!(parse("/a/ops.yaml", "").unwrap().instructions, "");
}

#[test]
fn program_resolution() {
    let text = "---\ntools:\n  a: {description: x, command: [./bin/a]}\n  b: {description: x, command: [make, x]}\n  c: {description: x, command: [/usr/bin/c]}\n  d: {description: x, command: [../tools/d.sh]}\n---\n";
    let c = ok(text);
    let programs: Vec<_> = c.tools.iter().map(|t| t.program.clone()).collect();
    assert_eq!(
        programs,
        [
            PathBuf::from("/srv/agents/bin/a"),
            PathBuf::from("make"),
            PathBuf::from("/usr/bin/c"),
            PathBuf::from("/srv/agents/../tools/d.sh"),
        ]
    );
    // A relative agent path is anchored at the current directory.
    let c = parse("ops.md", text).unwrap();
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(c.tools[0].program, cwd.join("bin/a"));
}

#[test]
fn tools_and_parameters_keep_file_order() {
    let c = ok(
        "---\ntools:\n  zeta:\n    description: z\n    parameters:\n      b: {type: integer}\n      a: {type: number, default: 1.5}\n    command: [z, \"{{b}}\", \"{{ a }}\"]\n  alpha:\n    description: a\n    command: [a]\n    timeout: 1m30s\n---\n",
    );
    let names: Vec<_> = c.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha"]);
    let params = &c.tools[0].params.params;
    assert_eq!(params[0].name, "b");
    assert_eq!(params[1].name, "a");
    assert_eq!(params[1].default, Some(json!(1.5)));
    assert!(!params[1].required, "a default makes a parameter optional");
    assert_eq!(c.tools[0].timeout, Duration::from_secs(120));
    assert_eq!(c.tools[1].timeout, Duration::from_secs(90));
}

#[test]
fn unused_parameter_is_a_warning() {
    let c = ok(
        "---\ntools:\n  t:\n    description: x\n    parameters:\n      v: {type: string}\n    command: [x]\n---\n",
    );
    let warnings: Vec<_> = c.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "/srv/agents/ops.md:6: tools.t.parameters.v: no command entry uses {{v}}: the model's value is ignored"
        ]
    );
}

#[test]
fn durations() {
    let cases = [
        ("500ms", 500),
        ("60s", 60_000),
        ("2m", 120_000),
        ("1h", 3_600_000),
        ("1.5s", 1_500),
        ("45", 45_000),
        ("24h", 86_400_000),
    ];
    for (text, ms) in cases {
        let c = ok(&format!(
            "---\ntools:\n  t: {{description: x, command: [x], timeout: \"{text}\"}}\n---\n"
        ));
        assert_eq!(c.tools[0].timeout, Duration::from_millis(ms), "{text}");
    }
    let c = ok("---\nlimits: {reply_timeout: 90s}\n---\n");
    assert_eq!(c.limits.reply_timeout, Duration::from_secs(90));
    let c = ok("---\ntools:\n  t: {description: x, command: [x], timeout: 2.5}\n---\n");
    assert_eq!(c.tools[0].timeout, Duration::from_millis(2500));
    for bad in ["", "s", "5 s", "1.2.3s", "-1s", "0s", "5d", "0.1ms"] {
        let text = format!(
            "---\ntools:\n  t: {{description: x, command: [x], timeout: \"{bad}\"}}\n---\n"
        );
        assert!(parse("ops.md", &text).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn placeholder_syntax() {
    let names = |s: &str| {
        placeholders(s)
            .into_iter()
            .map(|(_, n)| n.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names("--channel={{channel}}"), ["channel"]);
    assert_eq!(names("{{ a }}-{{b}}"), ["a", "b"]);
    assert_eq!(names("{{{x}}}"), ["x"]);
    assert_eq!(names("{{ open"), Vec::<String>::new());
    assert_eq!(placeholders("v={{ x }}!")[0].0, 2..9);
}

#[test]
fn did_you_mean_threshold() {
    use crate::text::did_you_mean;
    let keys = ["description", "parameters", "command", "timeout"];
    assert_eq!(did_you_mean("descripton", keys), Some("description"));
    assert_eq!(did_you_mean("params", keys), Some("parameters"));
    assert_eq!(did_you_mean("cmd", keys), None);
    assert_eq!(did_you_mean("zzz", keys), None);
}

/// No input makes the parser panic: truncations of a full file at every byte, and junk.
#[test]
fn no_panic_on_any_input() {
    let mut inputs: Vec<String> = Vec::new();
    for (i, _) in SPEC_EXAMPLE.char_indices() {
        inputs.push(SPEC_EXAMPLE[..i].to_string());
        inputs.push(format!("{}{}", &SPEC_EXAMPLE[..i], &SPEC_EXAMPLE[i + 1..]));
    }
    let junk = [
        "---\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n---\n",
        "---\n&a [*a]\n---\n",
        "---\n*unknown\n---\n",
        "---\n? [a, b]\n: c\n---\n",
        "---\n!!int abc\n---\n",
        "---\nmodel: !!int abc\n---\n",
        "---\ntools: {t: {description: x, command: [x], timeout: 1e400s}}\n---\n",
        "---\ntools: {t: {description: x, command: [\"\"]}}\n---\n",
        "---\ntools: {t: {description: x, command: [\"a\\0b\"]}}\n---\n",
        "---\n---\n---\n",
        "---\n...\nmodel: x\n---\n",
        "---\na: 1\n--- \n",
        "\u{0}\u{1}\u{feff}",
        "---\n\"\\uD800\"\n---\n",
    ];
    inputs.extend(junk.iter().map(|s| s.to_string()));
    inputs.push(format!(
        "---\n{}1{}\n---\n",
        "[".repeat(300),
        "]".repeat(300)
    ));
    inputs.push(format!("---\nmodel: {}\n---\n", "x".repeat(100_000)));
    inputs.push(format!("---\nmodel: {}x\n---\n", "- ".repeat(200_000)));
    inputs.push(format!("---\n{}x\n---\n", "- ".repeat(200_000)));
    inputs.push(format!("---\n{}x\n---\n", "- ".repeat(1_000_000)));
    inputs.push(format!("---\n{}\n---\n", "{a: ".repeat(250)));
    inputs.push(format!("---\n{}x\n---\n", "a: ".repeat(200_000)));
    for input in &inputs {
        for name in ["ops.md", "ops.yaml"] {
            let _ = parse(name, input);
        }
    }
}

#[test]
fn anchors_prefixes_and_hook_timeouts() {
    let c = ok("---\nx-common: &guard {command: [./g.sh]}\nhooks:\n  preToolCall: [*guard]\n---\n");
    assert_eq!(
        c.hooks.pre_tool_call[0].program,
        PathBuf::from("/srv/agents/g.sh")
    );
    let (c, _) = parse_shape(
        Path::new("/a/ops.yaml"),
        "hooks:\n  preToolCall:\n    - {command: &h [./h.sh], timeout: 5s}\n  postToolCall:\n    - {command: *h}\nmcp:\n  files: {command: [srv], prefix: fs, env: {A: b}}\n",
    )
    .unwrap();
    assert_eq!(c.hooks.pre_tool_call[0].timeout, Duration::from_secs(5));
    assert_eq!(c.hooks.post_tool_call[0].command, ["./h.sh"]);
    assert_eq!(c.hooks.post_tool_call[0].program, PathBuf::from("/a/h.sh"));
    assert_eq!(c.mcp[0].tool_prefix, "fs_");
    assert_eq!(c.mcp[0].protocol, crate::config::McpProtocol::Auto);
    assert!(
        matches!(&c.mcp[0].transport, McpTransport::Stdio { env, .. } if env == &[("A".to_string(), "b".to_string())])
    );
}

/// Random files over an alphabet of YAML's significant characters: errors, never panics.
#[test]
fn no_panic_on_random_input() {
    const ALPHABET: &[&str] = &[
        "---\n",
        "\n",
        " ",
        "  ",
        "-",
        ":",
        "[",
        "]",
        "{",
        "}",
        ",",
        "\"",
        "'",
        "&a",
        "*a",
        "!!",
        "|",
        ">",
        "#",
        "?",
        "tools",
        "release",
        "command",
        "{{",
        "}}",
        "description",
        "x",
        "1",
        "\t",
        "parameters",
        "type",
        "enum",
        "default",
        "hooks",
        "mcp",
        "url",
        "\u{e9}",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let len = next() % 60;
        let text: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        let _ = parse("ops.md", &format!("---\n{text}\n---\n"));
        let _ = parse("ops.yaml", &text);
    }
}

#[test]
fn an_mcp_server_can_be_pinned_to_an_era() {
    use crate::config::McpProtocol;
    for (text, protocol) in [
        ("auto", McpProtocol::Auto),
        ("modern", McpProtocol::Modern),
        ("legacy", McpProtocol::Legacy),
    ] {
        let (c, _) = parse_shape(
            Path::new("/a/ops.yaml"),
            &format!("mcp:\n  web: {{url: \"http://127.0.0.1:9/mcp\", protocol: {text}}}\n"),
        )
        .unwrap();
        assert_eq!(c.mcp[0].protocol, protocol, "{text}");
    }
}

#[test]
fn sandbox_is_off_unless_the_file_says() {
    use crate::SandboxMode;
    assert_eq!(ok("---\nname: ops\n---\n").sandbox, SandboxMode::Off);
    for (text, mode) in [
        ("workspace", SandboxMode::Workspace),
        ("best-effort", SandboxMode::BestEffort),
        ("off", SandboxMode::Off),
    ] {
        assert_eq!(
            ok(&format!("---\nsandbox: {text}\n---\n")).sandbox,
            mode,
            "{text}"
        );
    }
    // An MCP server is confined only by its own key, whatever the agent's.
    let c = ok(
        "---\nsandbox: workspace\nmcp:\n  a: {command: [./a]}\n  b: {command: [./b], sandbox: workspace}\n---\n",
    );
    assert_eq!(c.mcp[0].sandbox, SandboxMode::Off);
    assert_eq!(c.mcp[1].sandbox, SandboxMode::Workspace);
}

#[test]
fn presentation_is_spec_unless_the_file_says() {
    use crate::{Presentation, SchemaStyle};
    let default = ok("---\nname: ops\n---\n").presentation;
    assert_eq!(default, Presentation::default());
    assert!(default.closing_sentence);
    assert_eq!(default.schema, SchemaStyle::Sentences);
    let c = ok("---\npresentation:\n  closing_sentence: false\n  schema: keywords\n---\n");
    assert!(!c.presentation.closing_sentence);
    assert_eq!(c.presentation.schema, SchemaStyle::Keywords);
    // One key given: the other keeps its default.
    let c = ok("---\npresentation: {schema: keywords}\n---\n");
    assert!(c.presentation.closing_sentence);
}
