//! `mm eval --suggest-names` (docs/eval.md): the model names the agent's tools and their
//! parameters itself (a few samples per tool, the current names hidden); the proposals become
//! variants, each run on every case; the one chosen is the best on the *train* cases (even
//! positions in the suite), and it is scored against the agent's own names on the
//! *validation* cases (odd positions), which played no part in choosing it. The agent-file
//! patch is printed, never applied.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use mm_core::provider::{ChatRequest, Message, Provider, ProviderConfig};
use mm_core::{AgentConfig, DeclaredToolConfig, ToolCallMode, ToolSpec};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::report::RunRecord;
use super::variant::{AS_DECLARED, ParamChange, ToolChange, Variant};

/// Proposals asked per tool.
pub const SAMPLES: u32 = 5;
/// The temperature of the samples: they must differ for "most consistent" to mean something.
const TEMPERATURE: f64 = 0.7;

const SYSTEM: &str = "You name the tools of an AI assistant. A good name is short, in English, \
lowercase words joined by underscores, and says what the tool does (a verb first) or what kind \
of value the parameter holds (like `version`, never an example value such as `1.4.2`).";

/// One proposal for one tool: its name, and a name per parameter (in the tool's order).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Proposal {
    pub tool: String,
    pub params: Vec<String>,
}

/// Where the model is.
pub struct Server {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

/// [`SAMPLES`] proposals for `tool`, from requests held to a schema (a constrained reply), each
/// with its own seed (`seed` + sample). A sample the model gets wrong is left out.
pub async fn propose(
    server: &Server,
    tool: &DeclaredToolConfig,
    seed: u64,
    cancel: &CancellationToken,
) -> Result<Vec<Proposal>, String> {
    let slots: Vec<String> = (1..=tool.params.params.len())
        .map(|i| format!("parameter_{i}"))
        .collect();
    let mut properties = Map::new();
    properties.insert("tool".into(), json!({"type": "string"}));
    for slot in &slots {
        properties.insert(slot.clone(), json!({"type": "string"}));
    }
    let mut required = vec![Value::from("tool")];
    required.extend(slots.iter().cloned().map(Value::from));
    let schema = json!({"type": "object", "properties": properties, "required": required,
        "additionalProperties": false});
    let spec = ToolSpec {
        name: "names".into(),
        description: "Your names for the tool and for each of its parameters.".into(),
        parameters: schema.clone(),
    };
    let mut question = format!(
        "A tool of the assistant: {}\nIts parameters:\n",
        tool.description.trim()
    );
    for (slot, p) in slots.iter().zip(&tool.params.params) {
        let mut facts = vec![p.ty.json_name().unwrap_or("any").to_string()];
        if let Some(values) = &p.enum_values {
            let values: Vec<String> = values.iter().map(mm_core::render_value).collect();
            facts.push(format!("one of: {}", values.join(", ")));
        }
        let _ = writeln!(
            question,
            "- {slot} ({}): {}",
            facts.join("; "),
            p.description.as_deref().unwrap_or("").trim()
        );
    }
    question.push_str("What would you call this tool, and each of its parameters?");
    let messages = [Message::System(SYSTEM.into()), Message::User(question)];
    let mut proposals = Vec::new();
    for sample in 0..SAMPLES {
        let mut config = ProviderConfig::new(server.base_url.clone(), server.model.clone());
        config.api_key.clone_from(&server.api_key);
        config.mode = ToolCallMode::Constrained;
        config.stream = false;
        config.temperature = Some(TEMPERATURE);
        config.seed = Some(seed.saturating_add(u64::from(sample)));
        let provider = Provider::new(config).map_err(|e| e.to_string())?;
        let tools = [spec.clone()];
        let mut request = ChatRequest::new(&messages, &tools, 200);
        request.call_only = true;
        let reply = provider
            .chat_with_schemas(&request, std::slice::from_ref(&schema), &mut |_| {}, cancel)
            .await
            .map_err(|e| e.to_string())?;
        let Some(call) = reply.tool_calls.first() else {
            continue;
        };
        let Ok(Value::Object(args)) = serde_json::from_str::<Value>(&call.arguments) else {
            continue;
        };
        let name = |key: &str| args.get(key).and_then(Value::as_str).map(identifier);
        let Some(tool_name) = name("tool").flatten() else {
            continue;
        };
        let params: Option<Vec<String>> = slots.iter().map(|s| name(s).flatten()).collect();
        let Some(params) = params else { continue };
        proposals.push(Proposal {
            tool: tool_name,
            params,
        });
    }
    Ok(proposals)
}

/// `text` as a name: lowercase ASCII letters, digits and `_`, other runs of characters made
/// one `_`; `None` when nothing is left or it does not start with a letter.
fn identifier(text: &str) -> Option<String> {
    let mut out = String::new();
    for c in text.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let out = out
        .trim_end_matches('_')
        .chars()
        .take(48)
        .collect::<String>();
    out.starts_with(|c: char| c.is_ascii_lowercase())
        .then_some(out)
}

/// The candidates from each tool's proposals: `suggested` takes, for the tool's name and for
/// each parameter, the name proposed most often (the most consistent); `suggested-whole` the
/// whole proposal made most often, when it differs. A tool without proposals keeps its names;
/// a name that would clash with another keeps the old one.
pub fn candidates(tools: &[DeclaredToolConfig], proposals: &[Vec<Proposal>]) -> Vec<Variant> {
    let modal = |names: Vec<&String>| -> Option<String> {
        let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
        for n in &names {
            *counts.entry(n).or_default() += 1;
        }
        // The most votes; on a tie the one proposed first.
        let best = counts.values().copied().max()?;
        names.into_iter().find(|n| counts[n] == best).cloned()
    };
    let mut per_slot = Vec::new();
    let mut whole = Vec::new();
    for (tool, props) in tools.iter().zip(proposals) {
        if props.is_empty() {
            per_slot.push(None);
            whole.push(None);
            continue;
        }
        let name = modal(props.iter().map(|p| &p.tool).collect());
        let params: Vec<Option<String>> = (0..tool.params.params.len())
            .map(|i| modal(props.iter().map(|p| &p.params[i]).collect()))
            .collect();
        per_slot.push(Some((name, params)));
        let mut counts: BTreeMap<&Proposal, usize> = BTreeMap::new();
        for p in props {
            *counts.entry(p).or_default() += 1;
        }
        let best = counts.values().copied().max().unwrap_or(0);
        let first = props.iter().find(|p| counts[p] == best).cloned();
        whole.push(first.map(|p| (Some(p.tool), p.params.into_iter().map(Some).collect())));
    }
    let mut out = vec![variant("suggested", tools, &per_slot)];
    let other = variant("suggested-whole", tools, &whole);
    if other.tools != out[0].tools {
        out.push(other);
    }
    out
}

type Names = Option<(Option<String>, Vec<Option<String>>)>;

fn variant(name: &str, tools: &[DeclaredToolConfig], names: &[Names]) -> Variant {
    let mut changes = BTreeMap::new();
    let mut taken: Vec<String> = Vec::new();
    for (tool, names) in tools.iter().zip(names) {
        let Some((new_name, params)) = names else {
            taken.push(tool.name.clone());
            continue;
        };
        let mut change = ToolChange::default();
        let keep = |n: &Option<String>, old: &str, taken: &[String]| match n {
            Some(n)
                if n != old
                    && !taken.contains(n)
                    && !mm_core::tools::BUILTIN_NAMES.contains(&n.as_str()) =>
            {
                Some(n.clone())
            }
            _ => None,
        };
        let others: Vec<String> = tools
            .iter()
            .filter(|t| t.name != tool.name)
            .map(|t| t.name.clone())
            .chain(taken.iter().cloned())
            .collect();
        change.name = keep(new_name, &tool.name, &others);
        taken.push(change.name.clone().unwrap_or_else(|| tool.name.clone()));
        let mut param_names: Vec<String> = Vec::new();
        for (spec, proposed) in tool.params.params.iter().zip(params) {
            let siblings: Vec<String> = tool
                .params
                .params
                .iter()
                .filter(|p| p.name != spec.name)
                .map(|p| p.name.clone())
                .chain(param_names.iter().cloned())
                .collect();
            let new = keep(proposed, &spec.name, &siblings);
            param_names.push(new.clone().unwrap_or_else(|| spec.name.clone()));
            if let Some(new) = new {
                change.parameters.insert(
                    spec.name.clone(),
                    ParamChange {
                        name: Some(new),
                        description: None,
                    },
                );
            }
        }
        if change.name.is_some() || !change.parameters.is_empty() {
            changes.insert(tool.name.clone(), change);
        }
    }
    Variant {
        name: name.into(),
        tools: changes,
        ..Variant::default()
    }
}

/// Whether case `index` of a suite is a train case (else a validation case).
pub fn is_train(index: usize) -> bool {
    index.is_multiple_of(2)
}

/// Right runs of `variant` on the train (or validation) cases of `suite`, and all of them.
fn score(
    suite: &str,
    cases: &[String],
    runs: &[RunRecord],
    variant: &str,
    train: bool,
) -> (u32, u32) {
    let mut k = (0, 0);
    for r in runs.iter().filter(|r| {
        r.suite == suite
            && r.variant.as_deref() == Some(variant)
            && cases
                .iter()
                .position(|c| r.case == format!("{suite}/{c}"))
                .is_some_and(|i| is_train(i) == train)
    }) {
        k.0 += u32::from(r.ok);
        k.1 += 1;
    }
    k
}

/// The candidate chosen on the train cases: the most runs right (the first on a tie, the most
/// consistent names); `None` when there is none.
pub fn chosen(
    suite: &str,
    cases: &[String],
    runs: &[RunRecord],
    candidates: &[Variant],
) -> Option<usize> {
    let mut best: Option<(usize, u32)> = None;
    for (i, c) in candidates.iter().enumerate() {
        let right = score(suite, cases, runs, &c.name, true).0;
        if best.is_none_or(|(_, b)| right > b) {
            best = Some((i, right));
        }
    }
    best.map(|(i, _)| i)
}

/// The verdict on one suite: each candidate's train score, and the validation scores of the
/// agent's own names and of the names chosen (`chosen`, an index into `candidates`).
pub fn report(
    suite: &str,
    cases: &[String],
    runs: &[RunRecord],
    candidates: &[Variant],
    chosen: usize,
    patch: Option<&str>,
    variant_yaml: &str,
) -> String {
    let fraction = |(k, n): (u32, u32)| format!("{k}/{n}");
    let mut text = format!(
        "\n## {suite}: names the model suggests\n\nChosen on the train cases (the suite's \
         1st, 3rd, … case), scored on the validation cases (2nd, 4th, …):\n\n| names | train \
         cases right | validation cases right |\n|---|---|---|\n"
    );
    let _ = writeln!(
        text,
        "| the agent's own | {} | {} |",
        fraction(score(suite, cases, runs, AS_DECLARED, true)),
        fraction(score(suite, cases, runs, AS_DECLARED, false))
    );
    for (i, c) in candidates.iter().enumerate() {
        let validation = if i == chosen {
            format!(
                "{} (chosen)",
                fraction(score(suite, cases, runs, &c.name, false))
            )
        } else {
            "— (not chosen)".into()
        };
        let _ = writeln!(
            text,
            "| {} | {} | {validation} |",
            c.name,
            fraction(score(suite, cases, runs, &c.name, true))
        );
    }
    let chosen_train = score(suite, cases, runs, &candidates[chosen].name, true).0;
    if chosen_train <= score(suite, cases, runs, AS_DECLARED, true).0 {
        text.push_str(
            "\nOn the train cases the model's names do no better than the agent's own: nothing \
             here argues for renaming.\n",
        );
    }
    let chosen = &candidates[chosen];
    if chosen.tools.is_empty() {
        text.push_str("\nThe model's names are the agent's own: nothing to change.\n");
        return text;
    }
    let _ = writeln!(
        text,
        "\nThe names of `{}` as a variant file (`mm eval … --variants FILE`):\n\n```yaml\n{variant_yaml}```",
        chosen.name
    );
    match patch {
        Some(patch) => {
            let _ = writeln!(
                text,
                "\nThe agent-file patch (not applied; `patch -p0 < FILE` applies it):\n\n```diff\n{patch}```"
            );
        }
        None => text.push_str(
            "\n(The agent file is not written in a way mm can patch line by line, e.g. tools or \
             parameters in flow style: rename by hand as the variant file says.)\n",
        ),
    }
    text
}

/// A variant as YAML (JSON is YAML) for a variant file.
pub fn variant_yaml(variant: &Variant) -> String {
    let mut tools = Map::new();
    for (name, change) in &variant.tools {
        let mut t = Map::new();
        if let Some(n) = &change.name {
            t.insert("name".into(), n.clone().into());
        }
        if !change.parameters.is_empty() {
            let params: Map<String, Value> = change
                .parameters
                .iter()
                .filter_map(|(old, p)| p.name.clone().map(|n| (old.clone(), json!({"name": n}))))
                .collect();
            t.insert("parameters".into(), Value::Object(params));
        }
        tools.insert(name.clone(), Value::Object(t));
    }
    let mut text = format!("variants:\n  - name: {}\n    tools:\n", variant.name);
    for (name, value) in tools {
        let _ = writeln!(text, "      {name}: {value}");
    }
    text
}

/// The agent file `path` (text `text`) with `variant`'s names, as a unified diff, or `None`
/// when the file cannot be rewritten line by line into exactly the variant's tools (checked
/// by reading the result as mm would).
pub fn patch(path: &Path, text: &str, config: &AgentConfig, variant: &Variant) -> Option<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let tools_at = lines.iter().position(|l| l.trim_end() == "tools:")?;
    let indent = |l: &str| l.len() - l.trim_start().len();
    let content = |l: &str| !l.trim().is_empty() && !l.trim_start().starts_with('#');
    let end = (tools_at + 1..lines.len())
        .find(|&i| content(&lines[i]) && indent(&lines[i]) == 0 || lines[i].trim_end() == "---")
        .unwrap_or(lines.len());
    let tool_indent = (tools_at + 1..end)
        .find(|&i| content(&lines[i]))
        .map(|i| indent(&lines[i]))?;
    for (old, change) in &variant.tools {
        let start = (tools_at + 1..end).find(|&i| {
            indent(&lines[i]) == tool_indent && key_of(&lines[i]) == Some(old.as_str())
        })?;
        let stop = (start + 1..end)
            .find(|&i| content(&lines[i]) && indent(&lines[i]) <= tool_indent)
            .unwrap_or(end);
        if let Some(new) = &change.name {
            lines[start] = rekey(&lines[start], new);
        }
        for (param, p) in &change.parameters {
            let Some(new) = &p.name else { continue };
            let params_at = (start + 1..stop).find(|&i| key_of(&lines[i]) == Some("parameters"))?;
            let param_indent = (params_at + 1..stop)
                .find(|&i| content(&lines[i]))
                .map(|i| indent(&lines[i]))?;
            let at = (params_at + 1..stop).find(|&i| {
                indent(&lines[i]) == param_indent && key_of(&lines[i]) == Some(param.as_str())
            })?;
            lines[at] = rekey(&lines[at], new);
            for line in &mut lines[start..stop] {
                *line = super::variant::rename_placeholder(line, param, new);
            }
        }
    }
    let mut patched = lines.join("\n");
    if text.ends_with('\n') {
        patched.push('\n');
    }
    // The patch must give exactly the variant's tools.
    let read = mm_core::parse_agent(path, &patched).ok()?;
    let (want, _) = variant.apply(&config.tools, config.presentation).ok()?;
    let same = read.tools.len() == want.len()
        && read
            .tools
            .iter()
            .zip(&want)
            .all(|(a, b)| a.name == b.name && a.command == b.command && a.params == b.params);
    if !same {
        return None;
    }
    let name = path.display();
    let mut diff = format!("--- {name}\n+++ {name}\n");
    for (i, (before, after)) in text.lines().zip(patched.lines()).enumerate() {
        if before != after {
            let _ = write!(diff, "@@ -{0} +{0} @@\n-{before}\n+{after}\n", i + 1);
        }
    }
    Some(diff)
}

/// The key of a block-mapping line (`  name: …` → `name`), when it is a plain one.
fn key_of(line: &str) -> Option<&str> {
    let (key, _) = line.trim_start().split_once(':')?;
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    plain.then_some(key)
}

fn rekey(line: &str, new: &str) -> String {
    let spaces = line.len() - line.trim_start().len();
    let rest = line.trim_start().split_once(':').map_or("", |(_, r)| r);
    format!("{}{new}:{rest}", &line[..spaces])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_identifiers() {
        assert_eq!(
            identifier("Publish Release"),
            Some("publish_release".into())
        );
        assert_eq!(
            identifier(" get-ticket.status "),
            Some("get_ticket_status".into())
        );
        assert_eq!(identifier("3d"), None);
        assert_eq!(identifier("—"), None);
    }

    fn ops() -> (AgentConfig, String) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/mm.md");
        let text = std::fs::read_to_string(&path).expect("ops");
        (mm_core::parse_agent(&path, &text).expect("parses"), text)
    }

    use std::path::PathBuf;

    #[test]
    fn the_most_consistent_names_win_and_clashes_keep_the_old_name() {
        let (config, _) = ops();
        let p = |tool: &str, params: &[&str]| Proposal {
            tool: tool.into(),
            params: params.iter().map(|s| s.to_string()).collect(),
        };
        let proposals = vec![
            vec![
                p("publish", &["version", "channel", "dry"]),
                p("ship", &["ver", "channel", "dry"]),
                p("publish", &["ver", "track", "preview"]),
                p("ship", &["ver", "track", "dry"]),
            ],
            // pkgtest: proposes `status`, the name of another tool: kept as it is.
            vec![p("status", &["pkg"])],
            vec![],
        ];
        let list = candidates(&config.tools, &proposals);
        let release = &list[0].tools["release"];
        // Tie between publish and ship: the first proposed.
        assert_eq!(release.name.as_deref(), Some("publish"));
        assert_eq!(release.parameters["version"].name.as_deref(), Some("ver"));
        assert_eq!(release.parameters["dry_run"].name.as_deref(), Some("dry"));
        // "channel" and "track" tie: channel came first and is the old name: not a change.
        assert!(!release.parameters.contains_key("channel"));
        let pkgtest = &list[0].tools["pkgtest"];
        assert_eq!(pkgtest.name, None);
        assert_eq!(pkgtest.parameters["package"].name.as_deref(), Some("pkg"));
        assert!(!list[0].tools.contains_key("status"));
    }

    #[test]
    fn the_patch_renames_keys_and_placeholders_and_reads_back_as_the_variant() {
        let (config, text) = ops();
        let mut tools = BTreeMap::new();
        let mut parameters = BTreeMap::new();
        parameters.insert(
            "channel".to_string(),
            ParamChange {
                name: Some("track".into()),
                description: None,
            },
        );
        tools.insert(
            "release".to_string(),
            ToolChange {
                name: Some("publish".into()),
                description: None,
                parameters,
            },
        );
        let variant = Variant {
            name: "suggested".into(),
            tools,
            ..Variant::default()
        };
        let path = Path::new("mm.md");
        let diff = patch(path, &text, &config, &variant).expect("a patch");
        assert!(diff.contains("-  release:\n+  publish:\n"), "{diff}");
        assert!(
            diff.contains("+      track: {type: string, enum: [stable, beta]"),
            "{diff}"
        );
        assert!(diff.contains("--channel={{track}}"), "{diff}");
        assert_eq!(diff.matches("@@ -").count(), 3, "{diff}");
        // Flow-style parameters cannot be patched line by line: no patch rather than a wrong one.
        let flow = text.replace(
            "    parameters:\n      service: {type: string, description: \"The service name, like billing.\"}\n",
            "    parameters: {service: {type: string, description: \"The service name, like billing.\"}}\n",
        );
        assert_ne!(flow, text);
        let mut status = BTreeMap::new();
        status.insert(
            "service".to_string(),
            ParamChange {
                name: Some("name".into()),
                description: None,
            },
        );
        let flow_variant = Variant {
            name: "s".into(),
            tools: [(
                "status".to_string(),
                ToolChange {
                    parameters: status,
                    ..ToolChange::default()
                },
            )]
            .into(),
            ..Variant::default()
        };
        let flow_config = mm_core::parse_agent(path, &flow).expect("parses");
        assert_eq!(patch(path, &flow, &flow_config, &flow_variant), None);
    }
}
