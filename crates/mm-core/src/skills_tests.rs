use std::fs;
use std::path::Path;

use serde_json::json;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::*;

fn folder() -> TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

fn put(dir: &Path, relative: &str, content: &str) {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(path, content).unwrap_or_else(|e| panic!("{e}"));
}

/// A `SKILL.md` with this front matter and body.
fn skill(dir: &Path, folder: &str, front: &str, body: &str) {
    put(
        dir,
        &format!("{folder}/SKILL.md"),
        &format!("---\n{front}---\n{body}"),
    );
}

/// Loads `folders` (relative to `root`) and gives the warnings with `root/` cut off.
fn load_in(root: &Path, folders: &[&str]) -> (Catalogue, Vec<String>) {
    let folders: Vec<PathBuf> = folders.iter().map(|f| root.join(f)).collect();
    let (catalogue, warnings) = load(&folders);
    let prefix = format!("{}/", root.display());
    let warnings = warnings.iter().map(|w| w.replace(&prefix, "")).collect();
    (catalogue, warnings)
}

async fn read_skill(catalogue: Catalogue, args: Value) -> (Outcome, String) {
    let tool = ReadSkillTool::new(Arc::new(catalogue));
    let args = tool
        .params()
        .validate(&args.to_string())
        .unwrap_or_else(|e| panic!("{:?}", e.problems));
    let ctx = ToolCtx::new(std::env::temp_dir(), CancellationToken::new());
    let mut out = Output::new(1 << 20);
    let outcome = tool.run(&args, &ctx, &mut out).await;
    (outcome, out.finish().text)
}

#[test]
fn the_catalogue_is_one_line_per_skill() {
    let root = folder();
    let dir = root.path();
    skill(
        dir,
        "skills/deploy",
        "name: deploy\ndescription: Deploy a service.\nkeywords: [release, ship]\n",
        "",
    );
    skill(
        dir,
        "skills/health",
        "name: health-check\ndescription: >\n  Check a service\n  and say how it is.\n",
        "",
    );
    let (catalogue, warnings) = load_in(dir, &["skills"]);
    assert_eq!(warnings, Vec::<String>::new());
    assert_eq!(catalogue.names(), ["deploy", "health-check"]);
    assert_eq!(
        catalogue.prompt_section(),
        "\n\nSkills:\n\
         - deploy: Deploy a service. (release, ship)\n\
         - health-check: Check a service and say how it is.\n"
    );
}

#[test]
fn no_skills_add_nothing_to_the_prompt() {
    let root = folder();
    let dir = root.path();
    fs::create_dir_all(dir.join("empty/not-a-skill")).unwrap_or_else(|e| panic!("{e}"));
    let (catalogue, warnings) = load_in(dir, &["missing", "empty"]);
    assert!(catalogue.is_empty());
    assert_eq!(catalogue.prompt_section(), "");
    assert_eq!(warnings, Vec::<String>::new());
    assert_eq!(load(&[]), (Catalogue::default(), vec![]));
}

#[test]
fn a_file_named_as_a_folder_is_a_warning() {
    let root = folder();
    put(root.path(), "skills", "not a folder");
    let (catalogue, warnings) = load_in(root.path(), &["skills"]);
    assert!(catalogue.is_empty());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("skills: cannot read the skills folder: "),
        "{warnings:?}"
    );
}

#[test]
fn keywords_are_a_list_or_a_comma_separated_text() {
    let root = folder();
    let dir = root.path();
    skill(
        dir,
        "s/a",
        "name: a\ndescription: A.\nkeywords: [one, \"two words\"]\n",
        "",
    );
    skill(
        dir,
        "s/b",
        "name: b\ndescription: B.\nkeywords: one, two ,, three\n",
        "",
    );
    skill(
        dir,
        "s/c",
        "name: c\ndescription: C.\nkeywords:\n  - x\n  - 12\n",
        "",
    );
    skill(dir, "s/d", "name: d\ndescription: D.\nkeywords:\n", "");
    let (catalogue, warnings) = load_in(dir, &["s"]);
    assert_eq!(warnings, Vec::<String>::new());
    let keywords: Vec<&[String]> = catalogue.skills().iter().map(Skill::keywords).collect();
    assert_eq!(
        keywords,
        [
            &["one", "two words"][..],
            &["one", "two", "three"],
            &["x", "12"],
            &[]
        ]
        .map(|k| k.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .iter()
        .map(Vec::as_slice)
        .collect::<Vec<_>>()
    );
}

#[test]
fn a_folder_that_is_itself_a_skill_and_other_keys() {
    let root = folder();
    let dir = root.path();
    skill(
        dir,
        "one",
        "name: one\nlicense: MIT\nmetadata:\n  owner: [a, {b: c}]\ndescription: The one.\n",
        "Body.\n",
    );
    skill(
        dir,
        "one/nested",
        "name: nested\ndescription: Not scanned.\n",
        "",
    );
    let (catalogue, warnings) = load_in(dir, &["one", "one"]);
    assert_eq!(warnings, Vec::<String>::new());
    assert_eq!(catalogue.names(), ["one"]);
    assert_eq!(catalogue.skills()[0].dir(), dir.join("one"));
}

#[test]
fn malformed_files_are_warnings_and_the_rest_loads() {
    let root = folder();
    let dir = root.path();
    skill(dir, "skills/a-good", "name: good\ndescription: Fine.\n", "");
    put(dir, "skills/b-plain/SKILL.md", "# Just Markdown\n");
    put(dir, "skills/c-open/SKILL.md", "---\nname: open\n");
    skill(dir, "skills/d-noname", "description: Nameless.\n", "");
    skill(dir, "skills/e-nodesc", "name: nodesc\n", "");
    skill(
        dir,
        "skills/f-badyaml",
        "name: bad\ndescription: a: b\n",
        "",
    );
    skill(dir, "skills/g-list", "- name\n- description\n", "");
    skill(
        dir,
        "skills/h-badname",
        "name: two words\ndescription: D.\n",
        "",
    );
    skill(
        dir,
        "skills/i-twice",
        "name: twice\nname: again\ndescription: D.\n",
        "",
    );
    skill(
        dir,
        "skills/j-nested",
        "name: {x: 1}\ndescription: D.\n",
        "",
    );
    skill(dir, "skills/k-empty", "", "");
    skill(
        dir,
        "skills/l-keywords",
        "name: kw\ndescription: D.\nkeywords: {a: b}\n",
        "",
    );
    let (catalogue, warnings) = load_in(dir, &["skills"]);
    assert_eq!(catalogue.names(), ["good"]);
    assert_eq!(
        warnings,
        [
            "skills/b-plain/SKILL.md:1: no front matter: start with a line `---`, then `name:` and `description:`, then `---`",
            "skills/c-open/SKILL.md:1: the front matter opened here is not closed: end it with a line `---`",
            "skills/d-noname/SKILL.md:3: name: missing",
            "skills/e-nodesc/SKILL.md:3: description: missing",
            "skills/f-badyaml/SKILL.md:3: invalid YAML: mapping values are not allowed in this context (column 15)",
            "skills/g-list/SKILL.md:2: the front matter must be `key: value` lines",
            "skills/h-badname/SKILL.md:2: name: \"two words\" is not a skill name: use letters, digits, `-`, `_` or `.`, at most 64",
            "skills/i-twice/SKILL.md:3: invalid YAML: duplicated key in mapping (column 1)",
            "skills/j-nested/SKILL.md:2: name: expected text",
            "skills/k-empty/SKILL.md:2: name: missing",
            "skills/l-keywords/SKILL.md:4: keywords: expected a list of words or a comma-separated text",
        ]
    );
}

#[test]
fn a_duplicate_name_is_a_warning_and_the_first_wins() {
    let root = folder();
    let dir = root.path();
    skill(
        dir,
        "agent/deploy",
        "name: deploy\ndescription: The agent's.\n",
        "",
    );
    skill(
        dir,
        "home/deploy-too",
        "\nname: deploy\ndescription: The user's.\n",
        "",
    );
    let (catalogue, warnings) = load_in(dir, &["agent", "home"]);
    assert_eq!(catalogue.names(), ["deploy"]);
    assert_eq!(catalogue.skills()[0].description(), "The agent's.");
    assert_eq!(
        warnings,
        [
            "home/deploy-too/SKILL.md:3: name: \"deploy\" is already the skill in agent/deploy/SKILL.md; this one is ignored"
        ]
    );
}

#[tokio::test]
async fn read_skill_gives_the_body_and_the_files() {
    let root = folder();
    let dir = root.path();
    skill(
        dir,
        "skills/deploy",
        "name: deploy\ndescription: Deploy.\n",
        "\n# Deploy\n\nRun `scripts/go.sh`.\n\n",
    );
    put(dir, "skills/deploy/scripts/go.sh", "echo go");
    put(dir, "skills/deploy/notes.md", "notes");
    put(dir, "skills/deploy/.hidden", "not listed");
    let (catalogue, _) = load_in(dir, &["skills"]);
    let tool = ReadSkillTool::new(Arc::new(catalogue.clone()));
    assert_eq!(tool.spec().name, "read_skill");
    assert!(tool.read_only());
    assert_eq!(tool.kind(), ToolKind::Builtin);
    assert_eq!(
        tool.spec().parameters,
        json!({"type": "object", "properties": {
            "name": {"type": "string"},
        }})
    );
    let folder = dir.join("skills/deploy");
    let expected = format!(
        "# Deploy\n\nRun `scripts/go.sh`.\n\nFiles in {}:\n- notes.md\n- scripts/go.sh\n",
        folder.display()
    );
    assert_eq!(
        read_skill(catalogue.clone(), json!({"name": "deploy"})).await,
        (Outcome::Success, expected.clone())
    );
    // The body is read at call time, and case is forgiven.
    skill(
        dir,
        "skills/deploy",
        "name: deploy\ndescription: Deploy.\n",
        "Now this.",
    );
    let expected = format!(
        "Now this.\n\nFiles in {}:\n- notes.md\n- scripts/go.sh\n",
        folder.display()
    );
    assert_eq!(
        read_skill(catalogue, json!({"name": "Deploy"})).await,
        (Outcome::Success, expected)
    );
}

#[tokio::test]
async fn read_skill_says_when_there_are_no_other_files_and_caps_the_list() {
    let root = folder();
    let dir = root.path();
    skill(dir, "s/alone", "name: alone\ndescription: A.\n", "Body.");
    skill(dir, "s/many", "name: many\ndescription: M.\n", "Body.");
    for i in 0..60 {
        put(dir, &format!("s/many/f{i:02}.txt"), "");
    }
    let (catalogue, _) = load_in(dir, &["s"]);
    let (outcome, text) = read_skill(catalogue.clone(), json!({"name": "alone"})).await;
    assert_eq!(outcome, Outcome::Success);
    assert_eq!(
        text,
        format!(
            "Body.\n\nNo other files in {}.\n",
            dir.join("s/alone").display()
        )
    );
    let (_, text) = read_skill(catalogue, json!({"name": "many"})).await;
    assert!(
        text.contains("\n- f49.txt\n(only the first 50 are listed)\n"),
        "{text}"
    );
    assert!(!text.contains("f50.txt"), "{text}");
}

#[tokio::test]
async fn an_unknown_skill_is_answered_with_the_names_closest_first() {
    let root = folder();
    let dir = root.path();
    skill(dir, "s/a", "name: release\ndescription: R.\n", "");
    skill(dir, "s/b", "name: status-report\ndescription: S.\n", "");
    skill(dir, "s/c", "name: deploy\ndescription: D.\n", "");
    let (catalogue, _) = load_in(dir, &["s"]);
    assert_eq!(
        read_skill(catalogue, json!({"name": "deplo"})).await,
        (
            Outcome::Failed,
            "No skill named \"deplo\". Skills: deploy, release, status-report.".into()
        )
    );
    assert_eq!(
        read_skill(Catalogue::default(), json!({"name": "x"})).await,
        (
            Outcome::Failed,
            "No skill named \"x\". There are no skills.".into()
        )
    );
}

#[test]
fn nesting_in_other_keys_is_skipped_and_hostile_depth_is_a_warning() {
    let root = folder();
    let dir = root.path();
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let front = |n: usize| format!("name: n{n}\ndescription: D.\nmetadata: {}\n", nest(n));
    skill(dir, "s/a", &front(20), "");
    skill(dir, "s/b", &front(50_000), "");
    let (catalogue, warnings) = load_in(dir, &["s"]);
    assert_eq!(catalogue.names(), ["n20"]);
    assert_eq!(
        warnings,
        ["s/b/SKILL.md:4: invalid YAML: recursion limit exceeded (column 266)"]
    );
}

#[test]
fn the_example_skill_loads_into_one_short_line() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/skills");
    let (catalogue, warnings) = load(&[folder]);
    assert_eq!(warnings, Vec::<String>::new());
    let section = catalogue.prompt_section();
    assert_eq!(
        section,
        "\n\nSkills:\n\
         - health-check: Check how a service is doing. (status, down, slow)\n"
    );
    assert_eq!(section.len(), 77);
}

#[test]
fn keywords_are_capped_so_a_skill_cannot_blow_up_every_request() {
    let dir = folder();
    let many: Vec<String> = (0..120_000).map(|n| format!("k{n}")).collect();
    skill(
        dir.path(),
        "skills/big",
        &format!(
            "name: big\ndescription: Big.\nkeywords: [{}, {}]\n",
            "x".repeat(41),
            many.join(", ")
        ),
        "Body.\n",
    );
    let (catalogue, warnings) = load_in(dir.path(), &["skills"]);
    assert_eq!(
        catalogue.prompt_section(),
        "\n\nSkills:\n- big: Big. (k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11)\n"
    );
    assert_eq!(
        warnings,
        [
            "skills/big/SKILL.md:4: keywords: 119989 of 120001 keywords left out (1 longer than 40 characters, 119988 past the first 12): every keyword is in every request"
        ]
    );
}

#[test]
fn a_fifo_named_skill_md_is_refused_not_waited_for() {
    let dir = folder();
    fs::create_dir_all(dir.path().join("skills/pipe")).unwrap_or_else(|e| panic!("{e}"));
    skill(
        dir.path(),
        "skills/ok",
        "name: ok\ndescription: Fine.\n",
        "Body.\n",
    );
    nix::unistd::mkfifo(
        &dir.path().join("skills/pipe/SKILL.md"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (catalogue, _) = load_in(&root, &["skills"]);
        let names: Vec<String> = catalogue.names().into_iter().map(String::from).collect();
        let _ = tx.send(names);
    });
    let names = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("loading the skills blocked on a FIFO"));
    assert_eq!(names, ["ok"]);
}

#[test]
fn corpus_no_skill_makes_the_catalogue_large() {
    let mut corpus = mm_test_support::Corpus::new("skill keywords (the catalogue stays small)");
    let lists: Vec<(String, String)> = vec![
        (
            "120000 in a list".into(),
            format!(
                "[{}]",
                (0..120_000)
                    .map(|n| format!("k{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "120000 comma-separated".into(),
            format!(
                "\"{}\"",
                (0..120_000)
                    .map(|n| format!("k{n}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ),
        (
            "one of 100000 characters".into(),
            format!("[{}]", "x".repeat(100_000)),
        ),
        (
            "1000 of 40 characters".into(),
            format!(
                "[{}]",
                (0..1000)
                    .map(|n| format!("{n:040}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "block list of 5000".into(),
            format!(
                "\n{}",
                (0..5000).map(|n| format!("  - k{n}\n")).collect::<String>()
            ),
        ),
        (
            "multi-byte 50000".into(),
            format!(
                "[{}]",
                (0..50_000)
                    .map(|_| "日本語".to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "empty entries".into(),
            format!("\"{}\"", ",".repeat(100_000)),
        ),
        (
            "one long comma text".into(),
            format!("\"{}\"", "word ".repeat(50_000)),
        ),
    ];
    for (what, list) in lists {
        let dir = folder();
        let body = format!("name: s\ndescription: S.\nkeywords: {list}\n");
        skill(dir.path(), "skills/s", &body, "Body.\n");
        let (catalogue, _) = load_in(dir.path(), &["skills"]);
        let section = catalogue.prompt_section();
        corpus.check(
            &what,
            !catalogue.names().is_empty() && section.len() < 12 * 41 + 100,
            || format!("{} bytes in the catalogue", section.len()),
        );
    }
    corpus.finish();
}
