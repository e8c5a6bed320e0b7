use serde_json::{Value, json};

use super::*;

fn param(name: &str, ty: ParamType) -> ParamSpec {
    ParamSpec {
        name: name.into(),
        ty,
        description: None,
        required: true,
        enum_values: None,
        default: None,
        schema: None,
    }
}

fn optional(mut spec: ParamSpec) -> ParamSpec {
    spec.required = false;
    spec
}

fn declared(params: Vec<ParamSpec>) -> Params {
    Params {
        params,
        deny_unknown: true,
    }
}

/// `release(version, channel: stable|beta, dry_run?)` from the SPEC.
fn release() -> Params {
    declared(vec![
        ParamSpec {
            description: Some("The version, like 1.4.2.".into()),
            ..param("version", ParamType::String)
        },
        ParamSpec {
            enum_values: Some(vec![json!("stable"), json!("beta")]),
            ..param("channel", ParamType::String)
        },
        optional(param("dry_run", ParamType::Boolean)),
    ])
}

/// Validates `$raw` against a single parameter `x` of type `$ty`; `=> value` or `!> "problem"`.
macro_rules! coercion {
    ($($name:ident: $ty:ident $raw:literal => $expected:expr;)*) => {$(
        #[test]
        fn $name() {
            let params = declared(vec![param("x", ParamType::$ty)]);
            let args = params.validate($raw).unwrap_or_else(|e| panic!("{:?}", e.problems));
            assert_eq!(args.get("x"), Some(&json!($expected)), "{}", $raw);
        }
    )*};
    ($($name:ident: $ty:ident $raw:literal !> $problem:literal;)*) => {$(
        #[test]
        fn $name() {
            let params = declared(vec![param("x", ParamType::$ty)]);
            let invalid = params.validate($raw).expect_err($raw);
            assert_eq!(invalid.problems, [$problem], "{}", $raw);
            assert_eq!(invalid.raw, $raw);
        }
    )*};
}

coercion! {
    integer_stays: Integer r#"{"x":3}"# => 3;
    integer_from_string: Integer r#"{"x":"3"}"# => 3;
    integer_from_negative_string: Integer r#"{"x":"-12"}"# => -12;
    integer_from_integral_float: Integer r#"{"x":3.0}"# => 3;
    number_stays: Number r#"{"x":2.5}"# => 2.5;
    number_from_string: Number r#"{"x":"2.5"}"# => 2.5;
    number_from_integer_string: Number r#"{"x":"2"}"# => 2;
    boolean_stays: Boolean r#"{"x":false}"# => false;
    boolean_from_string: Boolean r#"{"x":"true"}"# => true;
    boolean_from_upper_string: Boolean r#"{"x":"TRUE"}"# => true;
    boolean_from_false_string: Boolean r#"{"x":"False"}"# => false;
    string_stays: String r#"{"x":"a b"}"# => "a b";
    string_from_integer: String r#"{"x":3}"# => "3";
    string_from_float: String r#"{"x":2.5}"# => "2.5";
    string_from_boolean: String r#"{"x":true}"# => "true";
    object_in_json_string_decoded_once: Integer r#""{\"x\":\"3\"}""# => 3;
    string_from_number_keeps_its_spelling: String r#"{"x":1.50}"# => "1.50";
    string_from_long_number_keeps_every_digit: String r#"{"x":9007199254740993.0}"# => "9007199254740993.0";
    integer_at_i64_max: Integer r#"{"x":9223372036854775807}"# => 9_223_372_036_854_775_807_i64;
    integer_at_i64_min_string: Integer r#"{"x":"-9223372036854775808"}"# => i64::MIN;
    integer_from_exponent: Integer r#"{"x":1e3}"# => 1000;
    number_exact_short: Number r#"{"x":0.1}"# => 0.1;
    number_exact_with_trailing_zeros: Number r#"{"x":"2.500"}"# => 2.5;
    number_exact_large_integer_float: Number r#"{"x":1e20}"# => 1e20;
    number_negative_zero: Number r#"{"x":-0.0}"# => -0.0;
}

coercion! {
    integer_refuses_fraction_string: Integer r#"{"x":"3.5"}"# !> r#"x: "3.5" is not an integer"#;
    integer_refuses_fraction: Integer r#"{"x":3.5}"# !> "x: 3.5 is not an integer";
    integer_refuses_word: Integer r#"{"x":"three"}"# !> r#"x: "three" is not an integer"#;
    integer_refuses_boolean: Integer r#"{"x":true}"# !> "x: expected an integer, got a boolean";
    number_refuses_word: Number r#"{"x":"two"}"# !> r#"x: "two" is not a number"#;
    number_refuses_nan: Number r#"{"x":"NaN"}"# !> r#"x: "NaN" is not a number"#;
    boolean_refuses_yes: Boolean r#"{"x":"yes"}"# !> r#"x: "yes" is not a boolean (true or false)"#;
    boolean_refuses_one: Boolean r#"{"x":1}"# !> "x: expected a boolean, got a number";
    string_refuses_array: String r#"{"x":["a"]}"# !> "x: expected a string, got an array";
    string_refuses_object: String r#"{"x":{"a":1}}"# !> "x: expected a string, got an object";
    integer_refuses_array: Integer r#"{"x":[3]}"# !> "x: expected an integer, got an array";
    null_for_required: String r#"{"x":null}"# !> "x: null is not allowed (required)";
    missing_required: String r#"{}"# !> "x: missing (required)";
    empty_is_no_arguments: String "" !> "x: missing (required)";
    unknown_name_with_suggestion: String r#"{"x":"a","X_":"b"}"# !> "X_: unknown parameter (did you mean x?)";
    garbage: String "version=1.4.2" !> "the arguments are not valid JSON (expected value at line 1 column 1)";
    array_of_arguments: String r#"["a"]"# !> "the arguments must be a JSON object, not an array";
    string_decoded_once_only: String r#""\"{}\"""# !> "the arguments must be a JSON object, not a string";
    integer_past_i64: Integer r#"{"x":9223372036854775808}"# !> "x: 9223372036854775808 is not an integer in the 64-bit range (-9223372036854775808 to 9223372036854775807)";
    integer_string_past_i64: Integer r#"{"x":"18446744073709551616"}"# !> r#"x: "18446744073709551616" is not an integer in the 64-bit range (-9223372036854775808 to 9223372036854775807)"#;
    integer_float_past_i64: Integer r#"{"x":1e19}"# !> "x: 1e19 is not an integer in the 64-bit range (-9223372036854775808 to 9223372036854775807)";
    integer_float_losing_digits: Integer r#"{"x":9007199254740993.0}"# !> "x: 9007199254740993.0 cannot be passed exactly: as a 64-bit number it becomes 9007199254740992";
    number_losing_digits: Number r#"{"x":0.10000000000000000001}"# !> "x: 0.10000000000000000001 cannot be passed exactly: as a 64-bit number it becomes 0.1";
    number_string_losing_digits: Number r#"{"x":"3.141592653589793238"}"# !> "x: 3.141592653589793238 cannot be passed exactly: as a 64-bit number it becomes 3.141592653589793";
    number_huge_integer_losing_digits: Number r#"{"x":123456789012345678901}"# !> "x: 123456789012345678901 cannot be passed exactly: as a 64-bit number it becomes 1.2345678901234568e20";
}

#[test]
fn null_for_optional_is_omitted() {
    let params = declared(vec![optional(param("x", ParamType::String))]);
    assert_eq!(
        params.validate(r#"{"x":null}"#).map(ValidArgs::into_map),
        Ok(Map::new())
    );
    assert_eq!(
        params.validate("null").map(ValidArgs::into_map),
        Ok(Map::new())
    );
}

#[test]
fn defaults_fill_omitted_and_null() {
    let params = declared(vec![ParamSpec {
        default: Some(json!(120)),
        ..optional(param("timeout", ParamType::Integer))
    }]);
    for raw in ["", "{}", r#"{"timeout":null}"#] {
        assert_eq!(
            params.validate(raw).map(|a| a["timeout"].clone()),
            Ok(json!(120)),
            "{raw}"
        );
    }
    assert_eq!(
        params
            .validate(r#"{"timeout":"5"}"#)
            .map(|a| a["timeout"].clone()),
        Ok(json!(5))
    );
}

#[test]
fn enum_checked_after_coercion() {
    let params = release();
    let invalid = params
        .validate(r#"{"version":"1","channel":"alpha"}"#)
        .expect_err("alpha");
    assert_eq!(
        invalid.problems,
        [r#"channel: "alpha" is not one of: stable, beta"#]
    );

    let numbers = declared(vec![ParamSpec {
        enum_values: Some(vec![json!(1), json!(2)]),
        ..param("level", ParamType::Integer)
    }]);
    assert_eq!(
        numbers
            .validate(r#"{"level":"2"}"#)
            .map(|a| a["level"].clone()),
        Ok(json!(2))
    );
    assert_eq!(
        numbers
            .validate(r#"{"level":2.0}"#)
            .map(|a| a["level"].clone()),
        Ok(json!(2))
    );
    let invalid = numbers.validate(r#"{"level":"3"}"#).expect_err("3");
    assert_eq!(invalid.problems, ["level: 3 is not one of: 1, 2"]);
}

#[test]
fn unknown_name_far_from_all_has_no_suggestion() {
    let invalid = release()
        .validate(r#"{"version":"1","channel":"beta","zzz":1}"#)
        .expect_err("zzz");
    assert_eq!(invalid.problems, ["zzz: unknown parameter"]);
}

#[test]
fn unknown_names_pass_when_allowed() {
    let params = Params {
        params: vec![param("x", ParamType::String)],
        deny_unknown: false,
    };
    let args = params.validate(r#"{"x":"a","extra":[1]}"#).expect("valid");
    assert_eq!(args.get("extra"), Some(&json!([1])));
}

#[test]
fn every_problem_is_reported() {
    let invalid = release()
        .validate(r#"{"channel":"alpha","dry_run":"yes"}"#)
        .expect_err("invalid");
    assert_eq!(
        invalid.problems,
        [
            "version: missing (required)",
            r#"channel: "alpha" is not one of: stable, beta"#,
            r#"dry_run: "yes" is not a boolean (true or false)"#,
        ]
    );
}

#[test]
fn packed_call_is_answered_with_the_call_quoted() {
    let raw = r#"{"version":"1.4.2 1.4.2, channel beta"}"#;
    let params = release();
    let invalid = params.validate(raw).expect_err("channel is missing");
    assert_eq!(invalid.problems, ["channel: missing (required)"]);
    assert_eq!(
        invalid.render("release", &params),
        r#"The call to release was not run: its arguments are invalid.
- channel: missing (required)
You sent: {"version":"1.4.2 1.4.2, channel beta"}
Parameters:
- version (string, required): The version, like 1.4.2.
- channel (string, required, one of: stable, beta)
- dry_run (boolean, optional)
Call release again with each parameter as its own field."#
    );
}

#[test]
fn garbage_is_quoted_as_sent() {
    let params = declared(vec![ParamSpec {
        default: Some(json!(120)),
        description: Some("Seconds.".into()),
        ..optional(param("timeout", ParamType::Integer))
    }]);
    let invalid = params
        .validate("<timeout>5</timeout>")
        .expect_err("not JSON");
    assert_eq!(
        invalid.render("wait", &params),
        "The call to wait was not run: its arguments are invalid.
- the arguments are not valid JSON (expected value at line 1 column 1)
You sent: <timeout>5</timeout>
Parameters:
- timeout (integer, optional, default 120): Seconds.
Call wait again with each parameter as its own field."
    );
}

#[test]
fn model_schema_has_no_required_nor_enum() {
    let schema = release().model_schema();
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {
            "version": {"type": "string", "description": "The version, like 1.4.2. Required."},
            "channel": {"type": "string", "description": "Required. One of: stable, beta."},
            "dry_run": {"type": "boolean", "description": "Optional."},
        }})
    );
    // The model reads the properties in the declared order.
    let text = serde_json::to_string(&schema).expect("serializes");
    let order: Vec<usize> = ["\"version\"", "\"channel\"", "\"dry_run\""]
        .iter()
        .filter_map(|k| text.find(k))
        .collect();
    assert!(order.is_sorted() && order.len() == 3, "{text}");
}

#[test]
fn model_schema_adds_the_full_stop() {
    let params = declared(vec![ParamSpec {
        description: Some("  Seconds to wait\n before giving up ".into()),
        default: Some(json!(5)),
        ..param("wait", ParamType::Number)
    }]);
    assert_eq!(
        params.model_schema()["properties"]["wait"]["description"],
        json!("Seconds to wait before giving up. Default 5. Optional.")
    );
}

fn mcp_search() -> Params {
    Params::from_json_schema(&json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            "state": {"type": "string", "enum": ["open", "closed"]},
            "labels": {"type": "array", "items": {"type": "string"}},
            "filter": {"$ref": "#/$defs/filter"},
        },
        "required": ["query"],
        "additionalProperties": false,
        "$defs": {"filter": {"type": "object", "properties": {"author": {"type": "string"}},
                             "additionalProperties": false}},
    }))
}

#[test]
fn from_json_schema_reads_the_top_level() {
    let params = mcp_search();
    assert!(params.deny_unknown);
    let names: Vec<_> = params
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.ty, p.required))
        .collect();
    assert_eq!(
        names,
        [
            ("query", ParamType::String, true),
            ("limit", ParamType::Integer, false),
            ("state", ParamType::String, false),
            ("labels", ParamType::Array, false),
            // Read through its `$ref`.
            ("filter", ParamType::Object, false),
        ]
    );
    // The model sees the nested object simplified: types and properties, no `$defs`,
    // `additionalProperties` or `$ref`.
    assert_eq!(
        params.model_schema()["properties"]["filter"],
        json!({"type": "object", "properties": {"author": {"type": "string"}}, "description": "Optional."})
    );
    assert_eq!(params.params[1].default, Some(json!(10)));
    assert_eq!(
        params.params[2].enum_values,
        Some(vec![json!("open"), json!("closed")])
    );
}

#[test]
fn mcp_arguments_are_coerced_then_checked_structurally() {
    let params = mcp_search();
    let args = params
        .validate(r#"{"query":"crash","limit":"20","labels":["bug"],"filter":{"author":"ann"}}"#)
        .expect("valid");
    assert_eq!(
        Value::Object(args.into_map()),
        json!({"query": "crash", "limit": 20, "labels": ["bug"],
                                          "filter": {"author": "ann"}})
    );

    let invalid = params
        .validate(r#"{"query":"crash","limit":60,"labels":["bug",3],"filter":{"who":"ann"}}"#)
        .expect_err("invalid");
    assert_eq!(invalid.problems.len(), 3, "{:?}", invalid.problems);
    assert!(
        invalid.problems[0].starts_with("limit: 60 is greater than the maximum of 50"),
        "{:?}",
        invalid.problems
    );
    assert!(
        invalid.problems[1].starts_with("labels: at /1: 3 is not of type"),
        "{:?}",
        invalid.problems
    );
    assert!(
        invalid.problems[2].starts_with("filter: "),
        "{:?}",
        invalid.problems
    );
}

#[test]
fn mcp_defaults_apply() {
    let args = mcp_search().validate(r#"{"query":"x"}"#).expect("valid");
    assert_eq!(args.get("limit"), Some(&json!(10)));
}

#[test]
fn strict_schema_states_required_and_enum_for_constrained_replies() {
    assert_eq!(
        release().strict_schema(),
        json!({
            "type": "object",
            "properties": {
                "version": {"type": "string"},
                "channel": {"type": "string", "enum": ["stable", "beta"]},
                "dry_run": {"type": "boolean"},
            },
            "required": ["version", "channel"],
            "additionalProperties": false,
        })
    );
}

#[test]
fn a_schema_that_cannot_be_compiled_is_named_and_its_values_pass_unchecked() {
    let params = Params::from_json_schema(&json!({
        "type": "object",
        "properties": {
            "q": {"type": "string", "pattern": "(["},
            "n": {"type": "integer", "maximum": 5}
        }
    }));
    let broken = params.broken_schemas();
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!(broken[0].0, "q");
    assert!(!broken[0].1.is_empty());
    assert!(params.validate(r#"{"q": "(((", "n": 3}"#).is_ok());
    // The other parameter's compiled schema still checks.
    let invalid = params.validate(r#"{"q": "a", "n": 9}"#).unwrap_err();
    assert!(
        invalid.problems.iter().any(|p| p.starts_with("n:")),
        "{invalid:?}"
    );
}
