//! The coercion table (lenient, never a guess) and how values are written as program text.

use serde_json::{Number, Value};

use super::{ParamType, article, kind, show_sent};

/// Applies the coercion table of SPEC §2. The error is the reason, without the parameter name.
pub(super) fn coerce(ty: ParamType, value: &Value) -> Result<Value, String> {
    let refuse = |what: &str| Err(format!("{} is not {what}", show_sent(value)));
    match (ty, value) {
        (ParamType::Any, v) => Ok(v.clone()),
        (ParamType::String, Value::String(_)) => Ok(value.clone()),
        (ParamType::String, Value::Number(n)) => Ok(Value::String(n.to_string())),
        (ParamType::String, Value::Bool(b)) => Ok(Value::String(b.to_string())),
        (ParamType::Integer, Value::Number(n)) => {
            integer_of(n).map_err(|why| format!("{} is not an integer{why}", show_sent(value)))
        }
        (ParamType::Integer, Value::String(s)) => {
            let s = s.trim();
            if let Ok(i) = s.parse::<i64>() {
                Ok(i.into())
            } else if is_integer_text(s) {
                Err(format!(
                    "{} is not an integer{OUT_OF_RANGE}",
                    show_sent(value)
                ))
            } else {
                refuse("an integer")
            }
        }
        (ParamType::Number, Value::Number(_)) => Ok(value.clone()),
        (ParamType::Number, Value::String(s)) => match serde_json::from_str::<Value>(s.trim()) {
            Ok(n @ Value::Number(_)) => match inexact_number(s) {
                Some(reason) => Err(reason),
                None => Ok(n),
            },
            _ => refuse("a number"),
        },
        (ParamType::Boolean, Value::Bool(_)) => Ok(value.clone()),
        (ParamType::Boolean, Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => {
            Ok(true.into())
        }
        (ParamType::Boolean, Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => {
            Ok(false.into())
        }
        (ParamType::Boolean, Value::String(_)) => refuse("a boolean (true or false)"),
        (ParamType::Array, Value::Array(_)) | (ParamType::Object, Value::Object(_)) => {
            Ok(value.clone())
        }
        (ty, v) => Err(format!("expected {}, got {}", article(ty), kind(v))),
    }
}

/// Said when an integer does not fit the 64-bit range every program can read.
const OUT_OF_RANGE: &str = " in the 64-bit range (-9223372036854775808 to 9223372036854775807)";

/// An integer in the i64 range, or an integral float turned into one (`3.0` → `3`). The error
/// completes "X is not an integer".
fn integer_of(n: &Number) -> Result<Value, &'static str> {
    if n.is_i64() {
        return Ok(Value::Number(n.clone()));
    }
    if n.is_u64() {
        return Err(OUT_OF_RANGE);
    }
    let f = n.as_f64().ok_or("")?;
    if f.fract() != 0.0 || !f.is_finite() {
        return Err("");
    }
    // The bounds are ±2^63, exact in f64: every integral value inside converts without loss.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "integral and in range, checked above"
        )]
        Ok(Value::from(f as i64))
    } else {
        Err(OUT_OF_RANGE)
    }
}

/// `-?[0-9]+`
fn is_integer_text(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The reason to refuse a value whose text holds a number that a 64-bit float cannot hold as
/// written (`9007199254740993.0`, `0.10000000000000000001`): passing it on would silently
/// change it. Integers that serde keeps exact (within i64/u64) are fine. Scans nested values
/// too (MCP arrays and objects); text inside strings is skipped.
pub(super) fn inexact_number(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            let token = &text[start..i];
            if let Some(became) = lossy(token) {
                return Some(format!(
                    "{token} cannot be passed exactly: as a 64-bit number it becomes {became}"
                ));
            }
            continue;
        }
        i += 1;
    }
    None
}

/// What `token` becomes when it cannot be held exactly, `None` when it can.
fn lossy(token: &str) -> Option<String> {
    if token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok() {
        return None;
    }
    let f: f64 = token.parse().ok()?;
    if !f.is_finite() {
        return Some(f.to_string());
    }
    let exact = decimal(token)?;
    // `{:e}` is the shortest text that reads back as the same float.
    let held = decimal(&format!("{f:e}"))?;
    if exact == held {
        return None;
    }
    Some(Number::from_f64(f).map_or_else(|| f.to_string(), |n| render_number(&n)))
}

/// A decimal number as (negative, significant digits, exponent): value = 0.DIGITS × 10^exp.
/// Zero is `(false, "", 0)` whatever its sign or spelling.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = format!("{int}{frac}");
    let leading = all.bytes().take_while(|&b| b == b'0').count();
    let digits = all[leading..].trim_end_matches('0');
    if digits.is_empty() {
        return Some((false, String::new(), 0));
    }
    let int_len = i64::try_from(int.len()).ok()?;
    let leading = i64::try_from(leading).ok()?;
    Some((negative, digits.to_string(), exponent + int_len - leading))
}

/// A value as program text (SPEC §2): strings as they are, integers in decimal, numbers in
/// their shortest JSON form (`3`, not `3.0`; `0`, not `-0.0`), booleans as `true`/`false`.
pub fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => render_number(n),
        other => other.to_string(),
    }
}

pub(super) fn render_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        // Integral floats below 10^16 read as integers (`-0.0` too: it becomes `0`); past that
        // the exponent form is shorter.
        #[expect(
            clippy::cast_possible_truncation,
            reason = "integral and below 10^16, exact in i64"
        )]
        Some(f) if f.fract() == 0.0 && f.abs() < 1e16 => (f as i64).to_string(),
        // serde writes `1e+300`; `1e300` is the same JSON, shorter.
        _ => n.to_string().replace("e+", "e"),
    }
}

/// Whether an allowed enum value equals the coerced value (numbers compared by value, so an
/// enum `[1, 2]` accepts `"2"` and `2.0`).
pub(super) fn same_value(ty: ParamType, allowed: &Value, value: &Value) -> bool {
    match (coerce(ty, allowed), value) {
        (Ok(Value::Number(a)), Value::Number(b)) => {
            a == *b || matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y)
        }
        (Ok(a), b) => a == *b,
        (Err(_), b) => allowed == b,
    }
}
