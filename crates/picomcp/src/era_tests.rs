use serde_json::json;

use super::*;

fn modern_params(version: &str) -> Value {
    json!({"name": "t", "_meta": {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: {"elicitation": {}},
    }})
}

fn headers<'a>(version: &'a str, method: &'a str, name: Option<&'a str>) -> Headers<'a> {
    Headers {
        version: Some(version),
        method: Some(method),
        name,
    }
}

fn refused(r: Result<Era, Refusal>) -> (u16, i64) {
    match r {
        Err(r) => (r.status, r.error.code),
        Ok(era) => panic!("expected a refusal, got {era:?}"),
    }
}

#[test]
fn a_request_without_the_modern_meta_is_legacy() {
    for (method, params) in [
        ("initialize", Some(json!({"protocolVersion": "2025-11-25"}))),
        ("tools/list", None),
        (
            "tools/call",
            Some(json!({"name": "t", "_meta": {"progressToken": 1}})),
        ),
    ] {
        assert!(matches!(
            classify(method, params.as_ref(), None),
            Ok(Era::Legacy)
        ));
        let legacy_header = Headers {
            version: Some("2025-11-25"),
            ..Headers::default()
        };
        assert!(matches!(
            classify(method, params.as_ref(), Some(legacy_header)),
            Ok(Era::Legacy)
        ));
    }
}

#[test]
fn a_request_with_the_modern_meta_is_modern_and_read() {
    let mut p = modern_params("2026-07-28");
    p["_meta"][META_LOG_LEVEL] = json!("warning");
    let Ok(Era::Modern(m)) = classify("tools/call", Some(&p), None) else {
        panic!("modern")
    };
    assert_eq!(m.version, "2026-07-28");
    assert!(m.has_capability("elicitation"));
    assert!(!m.has_capability("sampling"));
    assert_eq!(m.log_level, Some(LogLevel::Warning));
    // With the headers that mirror it.
    let h = headers("2026-07-28", "tools/call", Some("t"));
    assert!(matches!(
        classify("tools/call", Some(&p), Some(h)),
        Ok(Era::Modern(_))
    ));
}

#[test]
fn bad_modern_meta_is_invalid_params() {
    for meta in [
        json!({META_PROTOCOL_VERSION: "2026-07-28"}),
        json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: []}),
        json!({META_PROTOCOL_VERSION: 7, META_CLIENT_CAPABILITIES: {}}),
        json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}, META_LOG_LEVEL: "loud"}),
    ] {
        let p = json!({"_meta": meta});
        assert_eq!(
            refused(classify("tools/list", Some(&p), None)),
            (400, code::INVALID_PARAMS)
        );
    }
    // A modern version header without the body's `_meta`.
    let h = headers("2026-07-28", "tools/list", None);
    assert_eq!(
        refused(classify("tools/list", Some(&json!({})), Some(h))),
        (400, code::INVALID_PARAMS)
    );
}

#[test]
fn versions_and_headers_are_checked_in_order() {
    // Unknown version: -32022 naming what is supported.
    let p = modern_params("v999.0.0");
    let Err(r) = classify("tools/list", Some(&p), None) else {
        panic!("refused")
    };
    assert_eq!(r.error.code, code::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(
        r.error.data,
        Some(json!({"supported": ["2026-07-28"], "requested": "v999.0.0"}))
    );
    // Header and body disagree on the version: the mismatch wins over the unknown version.
    let h = headers("2026-07-28", "tools/list", None);
    assert_eq!(
        refused(classify("tools/list", Some(&p), Some(h))),
        (400, code::HEADER_MISMATCH)
    );
    let h = headers("v999.0.0", "tools/list", None);
    assert_eq!(
        refused(classify("tools/list", Some(&p), Some(h))),
        (400, code::UNSUPPORTED_PROTOCOL_VERSION)
    );
    let p = modern_params("2026-07-28");
    for h in [
        Headers::default(),
        Headers {
            version: Some("2026-07-28"),
            ..Headers::default()
        },
        headers("2026-07-28", "tools/list", Some("t")),
        headers("2026-07-28", "tools/call", None),
        headers("2026-07-28", "tools/call", Some("other")),
        headers("2026-07-28", "tools/call", Some("=?base64?!!?=")),
    ] {
        assert_eq!(
            refused(classify("tools/call", Some(&p), Some(h))),
            (400, code::HEADER_MISMATCH),
            "{h:?}"
        );
    }
    // Mcp-Name in the sentinel form, decoded before comparing.
    let p = json!({"name": "héllo", "_meta": {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}}});
    let encoded = encode_header_value("héllo");
    let h = headers("2026-07-28", "tools/call", Some(&encoded));
    assert!(matches!(
        classify("tools/call", Some(&p), Some(h)),
        Ok(Era::Modern(_))
    ));
}

#[test]
fn initialize_is_legacy_unless_it_claims_a_modern_version() {
    let legacy =
        json!({"protocolVersion": "2025-11-25", "_meta": {META_PROTOCOL_VERSION: "2025-11-25"}});
    assert!(matches!(
        classify("initialize", Some(&legacy), None),
        Ok(Era::Legacy)
    ));
    let p = modern_params("2026-07-28");
    assert!(matches!(
        classify("initialize", Some(&p), None),
        Ok(Era::Modern(_))
    ));
}

#[test]
fn header_values_round_trip() {
    for (value, encoded) in [
        ("get_weather", "get_weather"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ] {
        assert_eq!(encode_header_value(value), encoded);
        assert_eq!(decode_header_value(encoded).as_deref(), Some(value));
    }
    assert_eq!(decode_header_value("bad\u{7f}"), None);
}

#[test]
fn param_headers_must_mirror_their_arguments() {
    let marked = vec![("region".to_string(), "Region".to_string())];
    let args = json!({"region": "Hello"});
    let check = |args: Option<&Value>, header: Option<&'static str>| {
        check_param_headers(&marked, args, |name| {
            assert_eq!(name, "Mcp-Param-Region");
            header
        })
        .map_err(|r| (r.status, r.error.code))
    };
    assert_eq!(check(Some(&args), Some("Hello")), Ok(()));
    assert_eq!(check(Some(&args), Some("=?base64?SGVsbG8=?=")), Ok(()));
    assert_eq!(
        check(Some(&args), Some(" Hello ")),
        Ok(()),
        "surrounding spaces are trimmed"
    );
    let refused = Err((400, code::HEADER_MISMATCH));
    assert_eq!(check(Some(&args), None), refused, "header missing");
    assert_eq!(check(Some(&args), Some("Bye")), refused, "another value");
    assert_eq!(
        check(Some(&args), Some("=?base64?SGVsbG8?=")),
        refused,
        "bad padding"
    );
    assert_eq!(
        check(Some(&args), Some("=?base64?SGVs!!!bG8=?=")),
        refused,
        "bad characters"
    );
    assert_eq!(
        check(Some(&json!({})), Some("Hello")),
        refused,
        "no argument"
    );
    assert_eq!(check(Some(&json!({})), None), Ok(()));
    // A value without the whole sentinel is literal text.
    let literal = json!({"region": "=?base64?SGVsbG8="});
    assert_eq!(check(Some(&literal), Some("=?base64?SGVsbG8=")), Ok(()));
    // Numbers and booleans as their JSON text.
    let marked = vec![("n".to_string(), "N".to_string())];
    let ok = check_param_headers(&marked, Some(&json!({"n": 3})), |_| Some("3"));
    assert!(ok.is_ok());
}
