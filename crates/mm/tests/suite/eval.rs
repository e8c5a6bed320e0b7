//! `mm eval` against the scripted model server. The seed suite answers right for some cases and
//! wrong for others in each mode; a helpdesk suite gives, in declared mode, one run of each
//! failure class (junk of several kinds among them), an answer that fails its check, and a
//! `history` case. The tables are exactly the expected ones (mean seconds aside), a run counts
//! only when the script really ran with exactly the expected argv and the answer is a real one,
//! and the JSON, the chart and `--compare` say the same.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mm_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};

fn call(name: &str, args: Value) -> Reply {
    Reply::tool_call(name, args.to_string())
}

fn bash(command: &str) -> Reply {
    call("bash", json!({"command": command}))
}

fn text(t: &str) -> Reply {
    Reply::text(t)
}

fn seed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../eval/seed.yaml")
}

/// Mean seconds vary: the `mean s` column of the first table becomes `T`.
fn mask_times(table: &str) -> String {
    let mut column = None;
    let mut out = Vec::new();
    for line in table.lines() {
        let mut cells: Vec<String> = line.split(" | ").map(str::to_string).collect();
        if line.is_empty() || !line.starts_with('|') {
            column = None;
        } else if let Some(at) = cells.iter().position(|c| c == "mean s") {
            column = Some(at);
        } else if let Some(at) = column.filter(|_| !line.starts_with("|---")) {
            if let Some(cell) = cells.get_mut(at) {
                *cell = "T".into();
            }
        }
        out.push(cells.join(" | "));
    }
    out.join("\n") + "\n"
}

/// `mm eval SUITES…` against `server` (`extra` after the suites), in `dir` as home; returns
/// stdout and stderr.
fn eval_suites(
    server: &ScriptedServer,
    dir: &Path,
    suites: &[PathBuf],
    extra: &[&str],
) -> (String, String) {
    let out = eval_command(server, dir, suites, extra).assert().success();
    let output = out.get_output();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `mm eval SUITES` in `dir` against `server`, with no ambient MM_* settings.
fn eval_command(
    server: &ScriptedServer,
    dir: &Path,
    suites: &[PathBuf],
    extra: &[&str],
) -> Command {
    let mut cmd = Command::cargo_bin("mm").expect("mm");
    cmd.current_dir(dir)
        .env("HOME", dir)
        .env("TMPDIR", dir)
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("MM_AGENT")
        .env_remove("MM_MODEL")
        .env_remove("MM_BASE_URL")
        .arg("eval")
        .args(suites)
        .args(["--base-url", &server.base_url(), "-m", "scripted", "--out"])
        .arg(dir.join("out"))
        .args(extra);
    cmd
}

/// The seed suite, one run per case and language.
fn eval(server: &ScriptedServer, dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["--runs", "1"];
    args.extend(extra);
    eval_suites(server, dir, &[seed()], &args).0
}

fn results(dir: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/results.json")).expect("results.json"),
    )
    .expect("json")
}

#[test]
fn the_seed_suite_gives_exactly_the_expected_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    // In table order: skill, MCP, declared; release, pkgtest, status, capital, haiku; en, fr.
    let mut script = vec![
        // skill + bash
        bash("./scripts/release.sh 1.4.2 --channel=beta"),
        text("done"),
        bash("./scripts/release.sh 1.4.2 --channel beta"), // not the argv asked for
        text("done"),
        call("read_skill", json!({"name": "pkgtest"})),
        bash("./scripts/pkgtest.sh greet"),
        text("done"),
        text("I cannot run tests."), // nothing ran
        bash("./scripts/status.sh billing"),
        text("running"),
        bash("./scripts/status.sh Billing"), // the script ran, with another argument
        text("running"),
        text("Paris."),
        bash("echo Paris"), // bash ran, no tool's program did: still no call
        text("Paris."),
        text("Waves..."),
        bash("./scripts/status.sh billing"), // a call where none was wanted
        text("Waves..."),
    ];
    // MCP: the declared tools through mm serve, same names.
    script.extend([
        call("release", json!({"version": "1.4.2", "channel": "beta"})),
        text("done"),
        call("release", json!({"version": "1.4.2 beta"})), // invalid: never reaches a script
        text("done"),
        call("pkgtest", json!({"package": "greet"})),
        text("done"),
        call("pkgtest", json!({"package": "greet"})),
        text("done"),
        call("status", json!({"service": "billing"})),
        text("running"),
        call("status", json!({"service": "billing-svc"})),
        text("running"),
        text("Paris."),
        text("Paris."),
        text("Waves..."),
        text("Vagues..."),
    ]);
    // declared: every case right, the French release after one invalid call.
    script.extend([
        call("release", json!({"version": "1.4.2", "channel": "beta"})),
        text("done"),
        call("release", json!({"version": "1.4.2", "channel": "Beta!"})),
        call("release", json!({"version": "1.4.2", "channel": "beta"})),
        text("done"),
        call("pkgtest", json!({"package": "greet"})),
        text("done"),
        call("pkgtest", json!({"package": "greet"})),
        text("done"),
        call("status", json!({"service": "billing"})),
        text("running"),
        call("status", json!({"service": "billing"})),
        text("running"),
        text("Paris."),
        text("Paris."),
        text("Waves..."),
        text("Vagues..."),
    ]);
    let server = ScriptedServer::start(script);
    let table = eval(&server, dir.path(), &[]);
    assert_eq!(
        server.replies_left(),
        0,
        "every scripted reply was asked for"
    );
    let expected = "\
| model | mode | actions right | no-tool questions right | no-tool answered without a call | mean s | error | loop | unwanted_call | no_call | wrong_tool | wrong_args | junk | bad_answer | junk printed |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| scripted | skill + bash | 3/6 50% [19–81] | 3/4 75% [30–95] | 3/4 75% [30–95] | T | 0 | 0 | 1 | 1 | 0 | 2 | 0 | 0 | 0 |
| scripted | MCP | 4/6 67% [30–90] | 4/4 100% [51–100] | 4/4 100% [51–100] | T | 0 | 0 | 0 | 1 | 0 | 1 | 0 | 0 | 0 |
| scripted | declared | 6/6 100% [61–100] | 4/4 100% [51–100] | 4/4 100% [51–100] | T | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |

| model | case | language | skill + bash | MCP | declared |
|---|---|---|---|---|---|
| scripted | seed/release | en | 1/1 | 1/1 | 1/1 |
| scripted | seed/release | fr | 0/1 (1 wrong_args) | 0/1 (1 no_call) | 1/1 |
| scripted | seed/pkgtest | en | 1/1 | 1/1 | 1/1 |
| scripted | seed/pkgtest | fr | 0/1 (1 no_call) | 1/1 | 1/1 |
| scripted | seed/status | en | 1/1 | 1/1 | 1/1 |
| scripted | seed/status | fr | 0/1 (1 wrong_args) | 0/1 (1 wrong_args) | 1/1 |
| scripted | seed/capital | en | 1/1 | 1/1 | 1/1 |
| scripted | seed/capital | fr | 1/1 | 1/1 | 1/1 |
| scripted | seed/haiku | en | 1/1 | 1/1 | 1/1 |
| scripted | seed/haiku | fr | 0/1 (1 unwanted_call) | 1/1 | 1/1 |
";
    assert_eq!(mask_times(&table), expected, "{table}");

    // Every run in the JSON, with what the wrapper recorded and why it failed.
    let results = results(dir.path());
    assert_eq!(results["suites"], json!(["seed"]));
    let runs = results["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 30);
    assert_eq!(runs[1]["mode"], "skill");
    assert_eq!(runs[1]["case"], "seed/release");
    assert_eq!(runs[1]["language"], "fr");
    assert_eq!(runs[1]["failure"], "wrong_args");
    assert_eq!(
        runs[1]["recorded"],
        json!([{"program": "release.sh", "argv": ["1.4.2", "--channel", "beta"]}])
    );
    assert_eq!(runs[11]["mode"], "mcp");
    assert_eq!(runs[11]["failure"], "no_call");
    assert_eq!(
        runs[11]["recorded"],
        json!([]),
        "an invalid call runs nothing"
    );
    // What the model read back: mm serve's answer to the invalid call.
    assert_eq!(runs[11]["tool_results"][0]["ok"], false);
    assert_eq!(runs[21]["calls"].as_array().map(Vec::len), Some(2));
    assert!(runs.iter().all(|r| r["error"].is_null()), "{runs:#?}");
    assert!(
        runs.iter()
            .all(|r| r["judged"] == true && r["seed"].is_null()),
        "{runs:#?}"
    );
    let chart = std::fs::read_to_string(dir.path().join("out/chart.svg")).expect("chart");
    assert!(chart.starts_with("<svg") && chart.contains(">6/10<") && chart.contains(">10/10<"));

    // --compare: the same suite again, declared only, every answer "no idea" this time.
    std::fs::copy(
        dir.path().join("out/results.json"),
        dir.path().join("old.json"),
    )
    .expect("copy");
    let wrong = ScriptedServer::start((0..10).map(|_| text("no idea")).collect());
    let old = dir.path().join("old.json");
    let table = eval(
        &wrong,
        dir.path(),
        &[
            "--mode",
            "declared",
            "--compare",
            old.to_str().expect("utf-8"),
        ],
    );
    let masked = mask_times(&table);
    assert!(
        masked.contains("| scripted | declared | 0/6 0% [0–39] | 4/4 100% [51–100] | 4/4 100% [51–100] | T | 0 | 0 | 0 | 6 | 0 | 0 | 0 | 0 | 0 |"),
        "{table}"
    );
    assert!(
        masked.contains("| model | mode | actions before | actions now | no-tool questions before | no-tool questions now |\n|---|---|---|---|---|---|\n| scripted | declared | 6/6 | 0/6 | 4/4 | 4/4 |\n"),
        "{table}"
    );
}

/// The helpdesk agent: `ticket`, `status` and `restart`, each a script printing one line.
fn helpdesk(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let folder = dir.join("helpdesk");
    std::fs::create_dir_all(&folder).expect("mkdir");
    let agent = r#"---
model: scripted
base_url: http://127.0.0.1:9/v1
tools:
  ticket:
    description: Open a ticket.
    parameters:
      title: {type: string}
      priority: {type: string, enum: [low, high]}
    command: ["./ticket.sh", "{{title}}", "--priority={{priority}}"]
  status:
    description: Report the status of a service.
    parameters:
      service: {type: string}
    command: ["./status.sh", "{{service}}"]
  restart:
    description: Restart a service.
    parameters:
      service: {type: string}
    command: ["./restart.sh", "{{service}}"]
---
You are the helpdesk assistant.
"#;
    std::fs::write(folder.join("mm.md"), agent).expect("agent");
    for (name, body) in [
        ("ticket.sh", "printf 'Opened T-1042: %s\\n' \"$1\""),
        (
            "status.sh",
            "echo \"$1: running, version 2.3.1, up 4 days, error rate 0.02%\"",
        ),
        ("restart.sh", "echo \"$1 restarted\""),
    ] {
        let path = folder.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let suite = r#"# Every failure class once, in declared mode (crates/mm/tests/suite/eval.rs).
agent: mm.md
runs: 1
modes: [declared]
cases:
  - id: ticket
    prompts:
      en: The VPN is down for everyone. Open a high priority ticket.
      fr: Le VPN est en panne pour tout le monde. Ouvre un ticket de priorité haute.
      de: Das VPN ist für alle ausgefallen. Öffne ein Ticket mit hoher Priorität.
      es: La VPN no funciona para nadie. Abre un ticket de prioridad alta.
      it: La VPN non funziona per nessuno. Apri un ticket ad alta priorità.
    expect: {program: ticket.sh, argv_any: [["VPN down", "--priority=high"], ["VPN down for everyone", "--priority=high"]]}
    answer: {contains_any: [T-1042]}
  - id: status
    prompts:
      en: What is the status of the billing service?
      fr: Quel est l'état du service billing ?
      de: Wie ist der Status des Dienstes billing?
      es: ¿Cuál es el estado del servicio billing?
      it: Qual è lo stato del servizio billing?
      pt: Qual é o estado do serviço billing?
    expect: {program: status.sh, argv: [billing]}
    answer: {contains_any: ["2.3.1"]}
  - id: capital
    prompts:
      en: What is the capital of France?
      fr: Quelle est la capitale de la France ?
      de: Was ist die Hauptstadt von Frankreich?
      es: ¿Cuál es la capital de Francia?
    expect: no_call
    answer: {matches: "(?i)paris"}
  - id: restart
    history:
      en: [The billing service is slow since this morning.]
      fr: [Le service billing est lent depuis ce matin.]
    prompts: {en: Restart it., fr: Redémarre-le.}
    expect: {program: restart.sh, argv: [billing]}
    answer: {not_contains: [error]}
"#;
    let path = folder.join("suite.yaml");
    std::fs::write(&path, suite).expect("suite");
    path
}

#[test]
fn every_failure_class_and_a_history_case() {
    let dir = tempfile::tempdir().expect("tempdir");
    let suite = helpdesk(dir.path());
    let ticket = |title: &str| call("ticket", json!({"title": title, "priority": "high"}));
    let status = |service: &str| call("status", json!({"service": service}));
    // mm itself never prints junk (its turn loop asks once more, then shows the output of the
    // last call, or no answer): a junk case gives junk twice, and the eval reads mm's verdict
    // from the result line. `--max-turns 3` bounds every run.
    let known_call_in_prose = r#"Next: {"name": "status", "arguments": {"service": "vpn"}}"#;
    let script = vec![
        // ticket en: right.
        ticket("VPN down"),
        text("I opened ticket T-1042 for the VPN outage."),
        // ticket fr: wrong_tool.
        status("vpn"),
        text("Le VPN fonctionne."),
        // ticket de: wrong_args.
        ticket("VPN"),
        text("Ticket T-1042 eröffnet."),
        // ticket es: junk, a call written inside the answer, twice.
        ticket("VPN down"),
        text(known_call_in_prose),
        text(known_call_in_prose),
        // ticket it: junk, mm's answer to the invalid first call copied as the answer (the third
        // reply is the last max_turns allows: no retry).
        call("ticket", json!({"title": "VPN down"})),
        ticket("VPN down"),
        text("The call to ticket was not run: its arguments are invalid."),
        // status en: junk, the output pasted, twice.
        status("billing"),
        text("billing: running, version 2.3.1, up 4 days, error rate 0.02%"),
        text("billing: running, version 2.3.1, up 4 days, error rate 0.02%"),
        // status fr: bad_answer (no version).
        status("billing"),
        text("Le service billing fonctionne."),
        // status de: junk, a refusal after a call that worked, twice.
        status("billing"),
        text("Es tut mir leid, aber ich kann Ihnen dabei nicht helfen."),
        text("Es tut mir leid, aber ich kann Ihnen dabei nicht helfen."),
        // status es: junk, cut at max_tokens, twice.
        status("billing"),
        text("El servicio billing está funcionando, versión 2.3.1, desde")
            .with_finish_reason("length"),
        text("Funciona con normalidad desde hace cuatro").with_finish_reason("length"),
        // status it: loop (max_turns 3).
        status("billing"),
        status("auth"),
        status("search"),
        // status pt: error.
        Reply::status(400, r#"{"error": {"message": "bad request"}}"#),
        // capital en: right.
        text("Paris."),
        // capital fr: unwanted_call.
        status("billing"),
        text("Paris."),
        // capital de: junk, a bare fragment of the prompt, twice: no answer.
        text("Hauptstadt von Frankreich"),
        text("Hauptstadt von Frankreich"),
        // capital es: junk, the tool list, twice: no answer.
        text(r#"<tools>[{"type": "function", "function": {"name": "status"}}]</tools>"#),
        text(r#"<tools>[{"type": "function", "function": {"name": "status"}}]</tools>"#),
        // restart en: the earlier turn restarts; the judged one runs nothing: no_call.
        call("restart", json!({"service": "billing"})),
        text("I restarted billing."),
        text("Done, it is restarted."),
        // restart fr: the earlier turn checks the status; the judged one restarts: right.
        status("billing"),
        text("Le service billing fonctionne, version 2.3.1."),
        call("restart", json!({"service": "billing"})),
        text("Le service billing a redémarré."),
    ];
    let server = ScriptedServer::start(script);
    let (table, stderr) = eval_suites(
        &server,
        dir.path(),
        std::slice::from_ref(&suite),
        &["--max-turns", "3"],
    );
    assert_eq!(server.replies_left(), 0, "{stderr}");
    let expected = "\
| model | mode | actions right | no-tool questions right | no-tool answered without a call | mean s | error | loop | unwanted_call | no_call | wrong_tool | wrong_args | junk | bad_answer | junk printed |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| scripted | declared | 2/13 15% [4–42] | 1/4 25% [5–70] | 1/4 25% [5–70] | T | 1 | 1 | 1 | 1 | 1 | 1 | 7 | 1 | 0 |

| model | case | language | declared |
|---|---|---|---|
| scripted | helpdesk/ticket | en | 1/1 |
| scripted | helpdesk/ticket | fr | 0/1 (1 wrong_tool) |
| scripted | helpdesk/ticket | de | 0/1 (1 wrong_args) |
| scripted | helpdesk/ticket | es | 0/1 (1 junk: call_as_text) |
| scripted | helpdesk/ticket | it | 0/1 (1 junk: copied_mm_message) |
| scripted | helpdesk/status | en | 0/1 (1 junk: copied_tool_output) |
| scripted | helpdesk/status | fr | 0/1 (1 bad_answer) |
| scripted | helpdesk/status | de | 0/1 (1 junk: refusal) |
| scripted | helpdesk/status | es | 0/1 (1 junk: truncated) |
| scripted | helpdesk/status | it | 0/1 (1 loop) |
| scripted | helpdesk/status | pt | 0/1 (1 error) |
| scripted | helpdesk/capital | en | 1/1 |
| scripted | helpdesk/capital | fr | 0/1 (1 unwanted_call) |
| scripted | helpdesk/capital | de | 0/1 (1 junk: copied_prompt) |
| scripted | helpdesk/capital | es | 0/1 (1 junk: tool_list) |
| scripted | helpdesk/restart | en | 0/1 (1 no_call) |
| scripted | helpdesk/restart | fr | 1/1 |
";
    assert_eq!(mask_times(&table), expected, "{table}\n{stderr}");
    assert!(
        stderr.contains("helpdesk/status es #1: wrong (junk: truncated)"),
        "{stderr}"
    );

    let results = results(dir.path());
    let runs = results["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 17);
    let run = |case: &str, language: &str| -> &Value {
        runs.iter()
            .find(|r| r["case"] == format!("helpdesk/{case}") && r["language"] == language)
            .expect("the run")
    };
    assert_eq!(run("ticket", "en")["ok"], true);
    assert_eq!(run("ticket", "en")["failure"], Value::Null);
    assert_eq!(run("ticket", "en")["expects_call"], true);
    assert_eq!(
        run("ticket", "en")["recorded"],
        json!([{"program": "ticket.sh", "argv": ["VPN down", "--priority=high"]}])
    );
    assert_eq!(
        run("ticket", "en")["tool_results"],
        json!([{"name": "ticket", "ok": true, "exit_code": 0, "content": "Opened T-1042: VPN down\n"}])
    );
    let copied = run("ticket", "it");
    assert_eq!(copied["junk"], "copied_mm_message");
    assert_eq!(copied["tool_results"][0]["ok"], false);
    assert!(
        copied["tool_results"][0]["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("The call to ticket was not run")),
        "{copied}"
    );
    assert_eq!(run("status", "fr")["failure"], "bad_answer");
    assert_eq!(
        run("status", "fr")["answer_check"],
        "contains none of [\"2.3.1\"]"
    );
    assert_eq!(run("status", "es")["truncated"], true);
    assert_eq!(run("status", "es")["junk"], "truncated");
    assert_eq!(run("status", "it")["stop_reason"], "max_turns");
    assert_eq!(run("status", "pt")["failure"], "error");
    assert!(run("status", "pt")["error"].is_string());
    assert_eq!(run("capital", "en")["expects_call"], false);

    // The history case: the earlier turn ran (with its own log), and its call was not judged.
    let restart = run("restart", "en");
    assert_eq!(restart["failure"], "no_call");
    assert_eq!(restart["recorded"], json!([]));
    assert_eq!(
        restart["earlier"][0]["prompt"],
        "The billing service is slow since this morning."
    );
    assert_eq!(
        restart["earlier"][0]["recorded"],
        json!([{"program": "restart.sh", "argv": ["billing"]}])
    );
    let restarted = run("restart", "fr");
    assert_eq!(restarted["ok"], true);
    assert_eq!(
        restarted["earlier"][0]["recorded"],
        json!([{"program": "status.sh", "argv": ["billing"]}])
    );
    assert_eq!(
        restarted["recorded"],
        json!([{"program": "restart.sh", "argv": ["billing"]}])
    );
    // The judged turn went on with the earlier one's conversation (`--resume`).
    let has = |request: &Value, content: &str| {
        request["messages"].as_array().is_some_and(|m| {
            m.iter()
                .any(|m| m["content"].as_str().is_some_and(|c| c.contains(content)))
        })
    };
    let requests = server.requests();
    let judged = requests
        .iter()
        .find(|r| has(r, "Restart it."))
        .expect("the judged turn's request");
    assert!(
        has(judged, "The billing service is slow since this morning."),
        "{judged}"
    );
    // Sessions are the eval's own, not the user's.
    assert!(!dir.path().join(".local/share/mm/sessions").exists());
    // No temperature asked for: none sent.
    assert!(
        requests
            .iter()
            .all(|r| r.get("temperature").is_none() && r.get("seed").is_none())
    );
}

/// A one-case suite of the ops example, named by its folder.
fn tiny(dir: &Path, name: &str, runs: u32) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).expect("mkdir");
    let agent = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/mm.md");
    let suite = format!(
        "agent: {}\nruns: {runs}\nmodes: [declared]\ncases:\n  - id: capital\n    prompts: {{en: What is the capital of France?}}\n    expect: no_call\n",
        agent.display()
    );
    let path = folder.join("suite.yaml");
    std::fs::write(&path, suite).expect("suite");
    path
}

#[test]
fn suites_run_in_one_plan_and_each_run_gets_its_own_seed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let suites = [tiny(dir.path(), "tiny", 3), tiny(dir.path(), "other", 1)];
    let server = ScriptedServer::start((0..4).map(|_| text("Paris.")).collect());
    let (table, stderr) = eval_suites(
        &server,
        dir.path(),
        &suites,
        &["--temperature", "0.7", "--seed", "7"],
    );
    assert!(!stderr.contains("greedy"), "{stderr}");
    let sent: Vec<(Value, Value)> = server
        .requests()
        .iter()
        .map(|r| (r["temperature"].clone(), r["seed"].clone()))
        .collect();
    assert_eq!(
        sent,
        [(0.7, 8), (0.7, 9), (0.7, 10), (0.7, 8)].map(|(t, s)| (json!(t), json!(s)))
    );
    let masked = mask_times(&table);
    assert!(
        masked.contains(
            "| scripted | declared | — | 4/4 100% [51–100] | 4/4 100% [51–100] | T | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |"
        ),
        "{table}"
    );
    assert!(
        masked.contains("| scripted | tiny/capital | en | 3/3 |"),
        "{table}"
    );
    assert!(
        masked.contains("| scripted | other/capital | en | 1/1 |"),
        "{table}"
    );
    let results = results(dir.path());
    assert_eq!(results["suites"], json!(["tiny", "other"]));
    assert_eq!(results["temperature"], 0.7);
    assert_eq!(results["seed"], 7);
    let seeds: Vec<Value> = results["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["seed"].clone())
        .collect();
    assert_eq!(seeds, [json!(8), json!(9), json!(10), json!(8)]);

    // Without a temperature, several runs of a case are one run several times: said on stderr.
    let server = ScriptedServer::start((0..4).map(|_| text("Paris.")).collect());
    let (_, stderr) = eval_suites(&server, dir.path(), &suites, &[]);
    assert!(
        stderr.contains("greedy") && stderr.contains("--temperature 0.7"),
        "{stderr}"
    );
    assert!(server.requests().iter().all(|r| r.get("seed").is_none()));
}

#[test]
fn ctrl_c_keeps_the_runs_that_are_done() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The first run answers; the second waits for ever.
    let server = ScriptedServer::start(vec![text("no"), Reply::hang()]);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("TMPDIR", dir.path())
        .arg("eval")
        .arg(seed())
        .args([
            "--runs",
            "1",
            "--mode",
            "declared",
            "--base-url",
            &server.base_url(),
        ])
        .args(["-m", "scripted", "--out"])
        .arg(dir.path().join("out"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mm eval");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while server.request_count() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the second run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(130));
    let table = mask_times(&String::from_utf8_lossy(&output.stdout));
    assert!(
        table.contains(
            "| scripted | declared | 0/1 0% [0–79] | — | — | T | 0 | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 0 |\n"
        ),
        "{table}"
    );
    assert!(
        table.contains("(interrupted: only the finished runs are counted)"),
        "{table}"
    );
    let results = results(dir.path());
    assert_eq!(results["interrupted"], true);
    assert_eq!(results["runs"].as_array().map(Vec::len), Some(1));
}

/// Interrupting `mm eval` while a run's tool is running leaves nothing behind: the eval stops
/// its `mm` with SIGTERM (a SIGKILL would orphan the tool, which leads a process group of its
/// own), and that `mm` kills the tool's group before it exits.
#[test]
fn an_interrupted_eval_leaves_no_tool_process_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(&agent).expect("mkdir");
    std::fs::write(
        agent.join("mm.md"),
        "---\ntools:\n  sleepers:\n    description: Sleeps.\n    parameters: {}\n    command: [\"./sleepers\"]\n---\nTest.\n",
    )
    .expect("agent");
    // The tool writes its pids where the test looks (the eval runs a copy of the folder).
    let script =
        super::signals::SLEEPERS.replace(r#"here="$(dirname "$0")""#, r#"here="$PIDS_DIR""#);
    let sleepers = agent.join("sleepers");
    std::fs::write(&sleepers, script).expect("script");
    let mut permissions = std::fs::metadata(&sleepers).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&sleepers, permissions).expect("chmod");
    let suite = agent.join("suite.yaml");
    std::fs::write(
        &suite,
        "agent: mm.md\nruns: 1\nmodes: [declared]\ncases:\n  - id: sleep\n    prompts: {en: Sleep.}\n    expect: no_call\n",
    )
    .expect("suite");
    let server = ScriptedServer::start(vec![call("sleepers", json!({})), text("done")]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("TMPDIR", dir.path())
        .env("PIDS_DIR", dir.path())
        .arg("eval")
        .arg(&suite)
        .args(["--base-url", &server.base_url(), "-m", "scripted", "--out"])
        .arg(dir.path().join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mm eval");
    let (group, sleeps) = super::signals::running_group(dir.path());
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let status = super::signals::exit_status(&mut child);
    assert_eq!(status.code(), Some(130));
    super::signals::assert_group_gone(group, &sleeps);
}

/// A one-case suite of the ops example: the release to beta, in English.
fn release_suite(dir: &Path) -> PathBuf {
    let agent = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/mm.md");
    let suite = format!(
        "name: ops\nagent: {}\nruns: 1\nmodes: [declared]\ncases:\n  - id: release\n    prompts: {{en: Publish version 1.4.2 to the beta channel.}}\n    expect: {{program: release.sh, argv: [\"1.4.2\", \"--channel=beta\"]}}\n    answer: {{contains_any: [\"1.4.2\"]}}\n",
        agent.display()
    );
    let path = dir.join("suite.yaml");
    std::fs::write(&path, suite).expect("suite");
    path
}

/// The tool named `name` in a request body, and the body without its tools.
fn split_tools(body: &Value, name: &str) -> (Value, Value) {
    let tools = body["tools"].as_array().expect("tools");
    let tool = tools
        .iter()
        .find(|t| t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {tools:?}"))
        .clone();
    let mut rest = body.clone();
    rest.as_object_mut().expect("object").remove("tools");
    (tool["function"].clone(), rest)
}

#[test]
fn each_builtin_variant_changes_exactly_what_it_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let suite = release_suite(dir.path());
    let variants = [
        ("declared", "release"),
        ("no-closing", "release"),
        ("prefix", "proj_release"),
        ("mcp-description", "release"),
        ("keywords", "release"),
        ("stand-in", "proj_release"),
    ];
    let mut script = Vec::new();
    for (_, name) in variants {
        script.push(call(name, json!({"version": "1.4.2", "channel": "beta"})));
        script.push(text("Version 1.4.2 is out on the beta channel."));
    }
    let server = ScriptedServer::start(script);
    let (table, stderr) = eval_suites(&server, dir.path(), &[suite], &["--variants", "builtin"]);
    assert!(stderr.contains("6 runs (models × variants"), "{stderr}");

    // The first request of each run: the same body but for the tools.
    let requests = server.requests();
    let firsts: Vec<&Value> = requests
        .iter()
        .filter(|r| r["messages"].as_array().is_some_and(|m| m.len() == 2))
        .collect();
    assert_eq!(firsts.len(), 6, "{requests:?}");
    let sentences = json!({"type": "object", "properties": {
        "version": {"type": "string", "description": "The version, like 1.4.2. Required."},
        "channel": {"type": "string", "description": "The release channel. Required. One of: stable, beta."},
        "dry_run": {"type": "boolean", "description": "Only show what would be done. Optional."},
    }});
    let keywords = json!({"type": "object", "properties": {
        "version": {"type": "string", "description": "The version, like 1.4.2."},
        "channel": {"type": "string", "description": "The release channel.", "enum": ["stable", "beta"]},
        "dry_run": {"type": "boolean", "description": "Only show what would be done."},
    }, "required": ["version", "channel"]});
    let described = "Publish a release of the product to a channel.";
    let closing = "Give each parameter as its own field.";
    let expected = [
        json!({"name": "release", "description": format!("{described} {closing}"), "parameters": sentences}),
        json!({"name": "release", "description": described, "parameters": sentences}),
        json!({"name": "proj_release", "description": format!("{described} {closing}"), "parameters": sentences}),
        json!({"name": "release", "description": format!("MCP tool from server proj: {described} {closing}"), "parameters": sentences}),
        json!({"name": "release", "description": format!("{described} {closing}"), "parameters": keywords}),
        json!({"name": "proj_release", "description": format!("MCP tool from server proj: {described}"), "parameters": sentences}),
    ];
    let (_, declared_rest) = split_tools(firsts[0], "release");
    for ((variant, name), (body, want)) in variants.iter().zip(firsts.iter().zip(&expected)) {
        let (tool, rest) = split_tools(body, name);
        assert_eq!(&tool, want, "{variant}");
        assert_eq!(rest, declared_rest, "{variant}: only the tools differ");
        let names: Vec<&str> = body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        let prefix = if name.starts_with("proj_") {
            "proj_"
        } else {
            ""
        };
        for tool in ["release", "pkgtest", "status"] {
            assert!(
                names.contains(&format!("{prefix}{tool}").as_str()),
                "{variant}: {names:?}"
            );
        }
    }

    // One row per variant, every run right: the argv is the same whatever the names.
    let masked = mask_times(&table);
    for (variant, _) in variants {
        assert!(
            masked.contains(&format!(
                "| scripted | declared: {variant} | 1/1 100% [21–100] | — | — | T | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |"
            )),
            "{variant}:\n{table}"
        );
    }
    assert!(
        masked.contains("| model | case | language | declared: declared | declared: no-closing | declared: prefix | declared: mcp-description | declared: keywords | declared: stand-in |"),
        "{table}"
    );
    assert!(
        masked.contains("| scripted | ops/release | en | 1/1 | 1/1 | 1/1 | 1/1 | 1/1 | 1/1 |"),
        "{table}"
    );
    let results = results(dir.path());
    let rows: Vec<&str> = results["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|r| r["variant"].as_str())
        .collect();
    assert_eq!(rows, variants.map(|(v, _)| v));
}

#[test]
fn a_variant_file_renames_tools_and_parameters_and_the_argv_is_judged_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let suite = release_suite(dir.path());
    let file = dir.path().join("variants.yaml");
    std::fs::write(
        &file,
        "variants:\n  - name: short\n    schema: keywords\n    tools:\n      release:\n        name: publish\n        description: Ship a version.\n        parameters:\n          channel: {name: track, description: Where it goes.}\n",
    )
    .expect("variants");
    let server = ScriptedServer::start(vec![
        call("release", json!({"version": "1.4.2", "channel": "beta"})),
        text("Version 1.4.2 is out on the beta channel."),
        // Renamed: the old names are not tools any more, the new ones run the same command.
        call("publish", json!({"version": "1.4.2", "track": "beta"})),
        text("Version 1.4.2 is out on the beta channel."),
    ]);
    let args = ["--variants", file.to_str().expect("utf-8")];
    let (table, _) = eval_suites(&server, dir.path(), std::slice::from_ref(&suite), &args);
    let requests = server.requests();
    let (tool, _) = split_tools(&requests[2], "publish");
    assert_eq!(
        tool,
        json!({"name": "publish", "description": "Ship a version. Give each parameter as its own field.",
            "parameters": {"type": "object", "properties": {
                "version": {"type": "string", "description": "The version, like 1.4.2."},
                "track": {"type": "string", "description": "Where it goes.", "enum": ["stable", "beta"]},
                "dry_run": {"type": "boolean", "description": "Only show what would be done."},
            }, "required": ["version", "track"]}})
    );
    let masked = mask_times(&table);
    assert!(
        masked.contains("| scripted | declared: declared | 1/1 100% [21–100] |"),
        "{table}"
    );
    assert!(
        masked.contains("| scripted | declared: short | 1/1 100% [21–100] |"),
        "{table}"
    );
    let recorded: Vec<Value> = results(dir.path())["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["recorded"][0]["argv"].clone())
        .collect();
    assert_eq!(
        recorded,
        [
            json!(["1.4.2", "--channel=beta"]),
            json!(["1.4.2", "--channel=beta"])
        ]
    );

    // What does not fit the agent is a usage error that names it, before any run.
    for (text, want) in [
        (
            "variants:\n  - name: x\n    tools: {relase: {name: y}}\n",
            "variant `x`: tools.relase: the agent has no tool `relase`; did you mean `release`?",
        ),
        (
            "variants:\n  - name: x\n    tools: {release: {parameters: {chanel: {name: c}}}}\n",
            "`release` has no parameter `chanel`; did you mean `channel`?",
        ),
        (
            "variants:\n  - name: x\n    tools: {release: {name: status}}\n",
            "variant `x`: two tools would be named `status`",
        ),
        (
            "variants:\n  - name: x\n    schema: keyword\n",
            "variants[0].schema: `keyword` is not one of: sentences, keywords",
        ),
        (
            "variants:\n  - name: x\n    closing: false\n",
            "unknown field `closing`",
        ),
    ] {
        std::fs::write(&file, text).expect("variants");
        let out = Command::cargo_bin("mm")
            .expect("mm")
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .args(["eval"])
            .arg(&suite)
            .args(["--base-url", &server.base_url(), "--variants"])
            .arg(&file)
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains(want), "{text}: {stderr}");
    }
}

#[test]
fn suggested_names_are_chosen_on_train_cases_scored_on_the_others_and_patched_not_applied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/mm.md");
    let before = std::fs::read_to_string(&agent).expect("agent");
    let suite = dir.path().join("suite.yaml");
    std::fs::write(
        &suite,
        format!(
            "name: ops\nagent: {}\nruns: 1\ncases:\n  - id: release\n    prompts: {{en: Publish version 1.4.2 to the beta channel.}}\n    expect: {{program: release.sh, argv: [\"1.4.2\", \"--channel=beta\"]}}\n  - id: status\n    prompts: {{en: Is billing up?}}\n    expect: {{program: status.sh, argv: [billing]}}\n",
            agent.display()
        ),
    )
    .expect("suite");
    let names = |tool: &str, params: &[&str]| {
        let mut args = json!({"tool": tool});
        for (i, p) in params.iter().enumerate() {
            args[format!("parameter_{}", i + 1)] = json!(p);
        }
        call("names", args)
    };
    let mut script = Vec::new();
    script.extend((0..5).map(|_| names("Publish Release", &["version", "channel", "dry_run"])));
    script.extend((0..5).map(|_| names("run_tests", &["package"])));
    for name in [
        "service_name",
        "name",
        "service_name",
        "name",
        "service_name",
    ] {
        script.push(names("service_status", &[name]));
    }
    let answer = || text("All good: it is done and running.");
    script.extend([
        // The agent's own names: both cases right.
        call("release", json!({"version": "1.4.2", "channel": "beta"})),
        answer(),
        call("status", json!({"service": "billing"})),
        answer(),
        // The model's names: the train case right, the validation case wrong.
        call(
            "publish_release",
            json!({"version": "1.4.2", "channel": "beta"}),
        ),
        answer(),
        call("service_status", json!({"service_name": "Billing"})),
        answer(),
    ]);
    let server = ScriptedServer::start(script);
    let (table, stderr) = eval_suites(&server, dir.path(), &[suite], &["--suggest-names"]);
    assert!(
        stderr.contains("asking scripted for names of `release` (5 samples)"),
        "{stderr}"
    );

    // The naming requests: held to a schema, sampled, the names themselves not shown.
    let requests = server.requests();
    for (i, request) in requests[..15].iter().enumerate() {
        // llama-server (the scripted server has /props): a grammar of the one call.
        let grammar = request["grammar"].as_str().unwrap_or_default();
        assert!(grammar.contains("\"parameter_1\\\":\" string"), "{request}");
        assert_eq!(request["temperature"], 0.7);
        assert_eq!(request["seed"], json!(1 + i % 5));
    }
    let question = requests[0]["messages"][1]["content"]
        .as_str()
        .expect("question");
    assert!(
        question.contains("- parameter_1 (string): The version, like 1.4.2."),
        "{question}"
    );
    assert!(
        question.contains("- parameter_2 (string; one of: stable, beta)"),
        "{question}"
    );
    assert!(
        !question.contains("dry_run") && !question.contains("channel:"),
        "{question}"
    );

    // Declared mode only (the suite names no modes: all three otherwise), each run once.
    assert_eq!(
        results(dir.path())["runs"].as_array().expect("runs").len(),
        4
    );
    let masked = mask_times(&table);
    assert!(
        masked.contains("| scripted | declared: declared | 2/2 100% [34–100] |"),
        "{table}"
    );
    assert!(
        masked.contains("| scripted | declared: suggested | 1/2 50% [9–91] |"),
        "{table}"
    );
    assert!(
        table.contains("| the agent's own | 1/1 | 1/1 |\n| suggested | 1/1 | 0/1 (chosen) |\n"),
        "{table}"
    );
    assert!(
        table.contains("do no better than the agent's own"),
        "{table}"
    );
    // The names voted most: publish_release, run_tests, service_status(service_name).
    assert!(
        table.contains("-  release:\n+  publish_release:\n"),
        "{table}"
    );
    assert!(table.contains("-  pkgtest:\n+  run_tests:\n"), "{table}");
    assert!(
        table.contains("-  status:\n+  service_status:\n"),
        "{table}"
    );
    assert!(
        table.contains("+      service_name: {type: string"),
        "{table}"
    );
    assert!(
        table.contains("+    command: [\"./scripts/status.sh\", \"{{service_name}}\"]"),
        "{table}"
    );
    assert!(!table.contains("suggested-whole"), "{table}");
    let file = std::fs::read_to_string(dir.path().join("out/ops-names.yaml")).expect("names");
    assert!(
        file.contains("release: {\"name\":\"publish_release\"}"),
        "{file}"
    );
    // Never applied.
    assert_eq!(std::fs::read_to_string(&agent).expect("agent"), before);
}

/// `--language` runs only the prompts in that language (a suite in four languages measured in
/// one); a language no case has is a usage error, not an empty table.
#[test]
fn language_runs_only_the_prompts_in_that_language() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/mm.md");
    std::fs::create_dir_all(dir.path().join("geo")).expect("mkdir");
    let suite = dir.path().join("geo/suite.yaml");
    std::fs::write(
        &suite,
        format!(
            "agent: {}\nruns: 1\nmodes: [declared]\ncases:\n  - id: capital\n    prompts: {{en: What is the capital of France?, fr: Quelle est la capitale de la France ?}}\n    expect: no_call\n",
            agent.display()
        ),
    )
    .expect("suite");
    let server = ScriptedServer::start(vec![text("Paris.")]);
    let (table, _) = eval_suites(
        &server,
        dir.path(),
        std::slice::from_ref(&suite),
        &["--language", "fr"],
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].to_string();
    assert!(sent.contains("Quelle est la capitale"), "{sent}");
    assert!(
        table.contains("| scripted | geo/capital | fr | 1/1 |"),
        "{table}"
    );
    assert!(!table.contains("| en |"), "{table}");

    let out = eval_command(
        &server,
        dir.path(),
        std::slice::from_ref(&suite),
        &["--language", "de"],
    )
    .assert()
    .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("--language de: no case of these suites has a prompt in `de`"),
        "{stderr}"
    );
}
