//! A compact GBNF grammar for constrained mode on llama-server.
//!
//! llama-server turns a `response_format` JSON schema into a grammar that allows whitespace
//! between every token, and small models use it: they pad with newlines and tabs until
//! `max_tokens` (docs/local-model.md). The grammar written here accepts the same replies with no
//! whitespace at all — `{"tool":"NAME","arguments":{…}}` or `{"answer":"…"}` — which also takes
//! about half the tokens. It covers flat argument objects whose properties are strings, integers,
//! numbers, booleans or enums; for anything else [`grammar`] returns `None` and the JSON schema
//! is sent instead.

use serde_json::{Map, Value};

use crate::tools::ToolSpec;

/// Shared rules: JSON strings, numbers and booleans, without whitespace.
const PRIMITIVES: &str = r#"string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
integer ::= "-"? ("0" | [1-9] [0-9]{0,15})
number ::= integer ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,4})?
boolean ::= "true" | "false"
"#;

/// The grammar for these tools and their (strict) argument schemas, with `{"answer": …}` as
/// one more choice when `answer`; `None` when a schema is beyond this small writer.
pub(crate) fn grammar(tools: &[ToolSpec], schemas: &[Value], answer: bool) -> Option<String> {
    let mut rules = Vec::new();
    let mut alternatives = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let arguments = arguments_rule(&format!("args{i}"), schemas.get(i)?, &mut rules)?;
        let head = literal(&format!(
            r#""tool":{},"arguments":"#,
            Value::String(tool.name.clone())
        ));
        rules.push(format!("call{i} ::= {head} {arguments}"));
        alternatives.push(format!("call{i}"));
    }
    if answer {
        alternatives.push("answer".to_owned());
    }
    if alternatives.is_empty() {
        return None;
    }
    let mut out = format!("root ::= \"{{\" ({}) \"}}\"\n", alternatives.join(" | "));
    if answer {
        out.push_str(&format!("answer ::= {} string\n", literal(r#""answer":"#)));
    }
    for rule in rules {
        out.push_str(&rule);
        out.push('\n');
    }
    out.push_str(PRIMITIVES);
    Some(out)
}

/// Rules for one arguments object; returns the name of its rule.
fn arguments_rule(name: &str, schema: &Value, rules: &mut Vec<String>) -> Option<String> {
    let schema = schema.as_object()?;
    if schema.get("type").is_some_and(|t| t != "object") {
        return None;
    }
    let empty = Map::new();
    let properties = match schema.get("properties") {
        None => &empty,
        Some(p) => p.as_object()?,
    };
    let required: Vec<&str> = match schema.get("required") {
        None => Vec::new(),
        Some(r) => r
            .as_array()?
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()?,
    };
    // Required properties first (declared order), then the optional ones.
    let mut members = Vec::new();
    let mut optional = Vec::new();
    for (i, (key, property)) in properties.iter().enumerate() {
        let value = value_rule(property)?;
        let member = format!("{name}-{i}");
        rules.push(format!(
            "{member} ::= {} {value}",
            literal(&format!("{}:", Value::String(key.clone())))
        ));
        if required.contains(&key.as_str()) {
            members.push(member);
        } else {
            optional.push(member);
        }
    }
    if required.iter().any(|key| !properties.contains_key(*key)) {
        return None;
    }
    let body = if members.is_empty() {
        // The first optional member present has no comma before it.
        let firsts: Vec<String> = (0..optional.len())
            .map(|i| {
                let tail: String = optional[i + 1..]
                    .iter()
                    .map(|m| format!(" (\",\" {m})?"))
                    .collect();
                format!("{}{tail}", optional[i])
            })
            .collect();
        if firsts.is_empty() {
            String::new()
        } else {
            format!("({})?", firsts.join(" | "))
        }
    } else {
        let mut body = members.join(" \",\" ");
        for member in &optional {
            body.push_str(&format!(" (\",\" {member})?"));
        }
        body
    };
    if body.is_empty() {
        rules.push(format!("{name} ::= \"{{}}\""));
    } else {
        rules.push(format!("{name} ::= \"{{\" {body} \"}}\""));
    }
    Some(name.to_owned())
}

/// The rule (or inline alternatives) for one property's value.
fn value_rule(property: &Value) -> Option<String> {
    if let Some(values) = property.get("enum") {
        let values = values.as_array().filter(|v| !v.is_empty())?;
        let literals: Vec<String> = values.iter().map(|v| literal(&v.to_string())).collect();
        return Some(format!("({})", literals.join(" | ")));
    }
    match property.get("type")?.as_str()? {
        "string" => Some("string".to_owned()),
        "integer" => Some("integer".to_owned()),
        "number" => Some("number".to_owned()),
        "boolean" => Some("boolean".to_owned()),
        _ => None,
    }
}

/// A GBNF string literal matching `text` exactly.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({}),
        }
    }

    #[test]
    fn snapshot() {
        let schemas = vec![
            json!({"type": "object", "properties": {
                "version": {"type": "string"},
                "channel": {"type": "string", "enum": ["stable", "beta"]},
                "dry_run": {"type": "boolean"},
            }, "required": ["version", "channel"]}),
            json!({"type": "object", "properties": {}}),
        ];
        let grammar = grammar(&[spec("release"), spec("ping")], &schemas, true).unwrap_or_default();
        let rules: Vec<&str> = grammar.lines().take(9).collect();
        let mut expected = vec![
            r#"root ::= "{" (call0 | call1 | answer) "}""#,
            r#"answer ::= "\"answer\":" string"#,
        ];
        // serde_json's map order decides the member numbering; both orders are valid grammars.
        let keys: Vec<String> = schemas[0]["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        if keys == ["version", "channel", "dry_run"] {
            expected.extend([
                r#"args0-0 ::= "\"version\":" string"#,
                r#"args0-1 ::= "\"channel\":" ("\"stable\"" | "\"beta\"")"#,
                r#"args0-2 ::= "\"dry_run\":" boolean"#,
                r#"args0 ::= "{" args0-0 "," args0-1 ("," args0-2)? "}""#,
            ]);
        } else {
            expected.extend([
                r#"args0-0 ::= "\"channel\":" ("\"stable\"" | "\"beta\"")"#,
                r#"args0-1 ::= "\"dry_run\":" boolean"#,
                r#"args0-2 ::= "\"version\":" string"#,
                r#"args0 ::= "{" args0-0 "," args0-2 ("," args0-1)? "}""#,
            ]);
        }
        expected.extend([
            r#"call0 ::= "\"tool\":\"release\",\"arguments\":" args0"#,
            r#"args1 ::= "{}""#,
            r#"call1 ::= "\"tool\":\"ping\",\"arguments\":" args1"#,
        ]);
        assert_eq!(rules, expected, "{grammar}");
        assert!(grammar.ends_with(PRIMITIVES));
    }

    #[test]
    fn a_call_only_grammar_offers_no_answer() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(
            grammar(&[], &[], false),
            None,
            "no tool, no answer: nothing to write"
        );
        let grammar =
            grammar(&[spec("t")], std::slice::from_ref(&schema), false).unwrap_or_default();
        assert!(
            grammar.starts_with("root ::= \"{\" (call0) \"}\"\n"),
            "{grammar}"
        );
        assert!(!grammar.contains("answer"), "{grammar}");
    }

    #[test]
    fn optional_only_members() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "number"}}});
        let grammar = grammar(&[spec("t")], &[schema], true).unwrap_or_default();
        assert!(
            grammar.contains(r#"args0 ::= "{" (args0-0 ("," args0-1)? | args0-1)? "}""#),
            "{grammar}"
        );
    }

    #[test]
    fn unsupported_schemas_fall_back() {
        let cases = [
            json!({"type": "object", "properties": {"list": {"type": "array", "items": {"type": "string"}}}}),
            json!({"type": "object", "properties": {"nested": {"type": "object"}}}),
            json!({"type": "object", "properties": {"any": {}}}),
            json!({"type": "object", "properties": {}, "required": ["missing"]}),
            json!({"type": "string"}),
            json!("not a schema"),
        ];
        for schema in cases {
            assert_eq!(
                grammar(&[spec("t")], std::slice::from_ref(&schema), true),
                None,
                "{schema}"
            );
        }
        assert_eq!(
            grammar(&[spec("t")], &[], true),
            None,
            "no schema for the tool"
        );
    }

    #[test]
    fn literals_are_escaped() {
        assert_eq!(literal("a\"b\\c\nd\u{1}"), r#""a\"b\\c\nd\x01""#);
        let schema = json!({"type": "object", "properties": {"q": {"enum": ["say \"hi\"", 3, true]}}, "required": ["q"]});
        let grammar = grammar(&[spec("t")], &[schema], true).unwrap_or_default();
        assert!(
            grammar.contains(r#"args0-0 ::= "\"q\":" ("\"say \\\"hi\\\"\"" | "3" | "true")"#),
            "{grammar}"
        );
    }
}
