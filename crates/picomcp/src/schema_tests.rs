use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::*;

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Search {
    /// owner/name
    repo: String,
    query: String,
    #[schemars(range(max = 50))]
    #[serde(default = "ten")]
    limit: u32,
    #[serde(default)]
    state: Option<State>,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum State {
    Open,
    Closed,
}

fn ten() -> u32 {
    10
}

fn errors(args: serde_json::Value) -> Vec<String> {
    let schema = CompiledSchema::compile(&schema_for::<Search>()).unwrap();
    schema.validate(&args).err().unwrap_or_default()
}

macro_rules! cases {
    ($($name:ident: $args:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(errors($args), $want as Vec<&str>);
        }
    )*};
}

cases! {
    valid_with_default: json!({"repo": "a/b", "query": "x"}) => vec![];
    too_big: json!({"repo": "a/b", "query": "x", "limit": 51}) => vec!["limit: Too big: expected number to be <=50"];
    wrong_type: json!({"repo": 1, "query": "x"}) => vec!["repo: Invalid input: expected string, received number"];
    missing: json!({"repo": "a/b"}) => vec!["query: Required"];
    unknown_field: json!({"repo": "a/b", "query": "x", "unknown_field": 1}) => vec!["unknown_field: Unrecognized key"];
    not_int: json!({"repo": "a/b", "query": "x", "limit": 1.5}) => vec!["limit: Invalid input: expected int, received number"];
    pattern: json!({"repo": "a/b", "query": "x", "label": "A"}) => vec!["label: Invalid string: must match pattern /^[a-z]+$/"];
    root_not_object: json!([1]) => vec!["Invalid input: expected object, received array"];
}

#[test]
fn enum_names_the_options() {
    let lines = errors(json!({"repo": "a/b", "query": "x", "state": "merged"}));
    assert_eq!(
        lines,
        vec![r#"state: Invalid option: expected one of "open"|"closed""#]
    );
}

#[test]
fn nested_paths_are_dotted() {
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Outer {
        items: Vec<Inner>,
    }
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Inner {
        #[schemars(length(min = 1))]
        name: String,
    }
    let schema = CompiledSchema::compile(&schema_for::<Outer>()).unwrap();
    let lines = schema
        .validate(&json!({"items": [{"name": "a"}, {"name": ""}]}))
        .unwrap_err();
    assert_eq!(
        lines,
        vec!["items.1.name: Too small: expected string to have >=1 characters"]
    );
}

#[test]
fn schema_is_2020_12_without_root_title() {
    let s = schema_for::<Search>();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(s.get("title").is_none());
    assert_eq!(s["properties"]["limit"]["default"], 10);
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["properties"]["repo"]["description"], "owner/name");
}

#[test]
fn messages_are_prefixed_with_the_tool() {
    assert_eq!(
        invalid_arguments(
            "search_issues",
            &["limit: Too big: expected number to be <=50".into()]
        ),
        "Invalid arguments for tool \"search_issues\":\nlimit: Too big: expected number to be <=50"
    );
}
