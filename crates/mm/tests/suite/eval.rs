//! `mm eval eval/seed.yaml` against the scripted model server, answering right for some cases
//! and wrong for others: the table is exactly the expected one (mean seconds aside), a run
//! counts only when the script really ran with exactly the expected argv, and the JSON, the
//! chart and `--compare` say the same.

use std::path::PathBuf;

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

/// Mean seconds vary: `(1.2 s)` becomes `(T)`.
fn mask_times(table: &str) -> String {
    let mut out = String::new();
    let mut rest = table;
    while let Some(start) = rest.find(" (") {
        let Some(end) = rest[start..].find(" s)") else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(" (T)");
        rest = &rest[start + end + 3..];
    }
    out.push_str(rest);
    out
}

fn eval(server: &ScriptedServer, dir: &std::path::Path, extra: &[&str]) -> String {
    let mut cmd = Command::cargo_bin("mm").expect("mm");
    cmd.current_dir(dir)
        .env("HOME", dir)
        .env("TMPDIR", dir)
        .env_remove("MM_AGENT")
        .env_remove("MM_MODEL")
        .env_remove("MM_BASE_URL")
        .arg("eval")
        .arg(seed())
        .args([
            "--runs",
            "1",
            "--base-url",
            &server.base_url(),
            "-m",
            "scripted",
            "--out",
        ])
        .arg(dir.join("out"))
        .args(extra);
    let out = cmd.assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
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
| model | skill + bash | MCP | declared |
|---|---|---|---|
| scripted | 6/10 (T) | 8/10 (T) | 10/10 (T) |

| model | case | language | skill + bash | MCP | declared |
|---|---|---|---|---|---|
| scripted | release | en | 1/1 (T) | 1/1 (T) | 1/1 (T) |
| scripted | release | fr | 0/1 (T) | 0/1 (T) | 1/1 (T) |
| scripted | pkgtest | en | 1/1 (T) | 1/1 (T) | 1/1 (T) |
| scripted | pkgtest | fr | 0/1 (T) | 1/1 (T) | 1/1 (T) |
| scripted | status | en | 1/1 (T) | 1/1 (T) | 1/1 (T) |
| scripted | status | fr | 0/1 (T) | 0/1 (T) | 1/1 (T) |
| scripted | capital | en | 1/1 (T) | 1/1 (T) | 1/1 (T) |
| scripted | capital | fr | 1/1 (T) | 1/1 (T) | 1/1 (T) |
| scripted | haiku | en | 1/1 (T) | 1/1 (T) | 1/1 (T) |
| scripted | haiku | fr | 0/1 (T) | 1/1 (T) | 1/1 (T) |
";
    assert_eq!(mask_times(&table), expected, "{table}");

    // Every run in the JSON, with what the wrapper recorded.
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/results.json")).expect("results.json"),
    )
    .expect("json");
    let runs = results["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 30);
    assert_eq!(runs[1]["mode"], "skill");
    assert_eq!(runs[1]["case"], "release");
    assert_eq!(runs[1]["language"], "fr");
    assert_eq!(
        runs[1]["recorded"],
        json!([{"program": "release.sh", "argv": ["1.4.2", "--channel", "beta"]}])
    );
    assert_eq!(runs[11]["mode"], "mcp");
    assert_eq!(
        runs[11]["recorded"],
        json!([]),
        "an invalid call runs nothing"
    );
    assert_eq!(runs[21]["calls"].as_array().map(Vec::len), Some(2));
    assert!(runs.iter().all(|r| r["error"].is_null()), "{runs:#?}");
    let chart = std::fs::read_to_string(dir.path().join("out/chart.svg")).expect("chart");
    assert!(chart.starts_with("<svg") && chart.contains(">6/10<") && chart.contains(">10/10<"));

    // --compare: the same suite again, declared only, every answer wrong this time.
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
    assert!(masked.contains("| scripted | 4/10 (T) |"), "{table}");
    assert!(
        masked.contains("| model | mode | before | now |\n|---|---|---|---|\n| scripted | declared | 10/10 (T) | 4/10 (T) |\n"),
        "{table}"
    );
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
        table.starts_with("| model | declared |\n|---|---|\n| scripted | 0/1 (T) |\n"),
        "{table}"
    );
    assert!(
        table.contains("(interrupted: only the finished runs are counted)"),
        "{table}"
    );
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/results.json")).expect("results.json"),
    )
    .expect("json");
    assert_eq!(results["interrupted"], true);
    assert_eq!(results["runs"].as_array().map(Vec::len), Some(1));
}
