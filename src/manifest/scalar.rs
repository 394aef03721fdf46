//! Resolves YAML scalars to JSON values the way kubectl does (go-yaml v2 behind
//! sigs.k8s.io/yaml), so an object means here exactly what the API server will receive.
//!
//! Consequences worth knowing:
//! - `yes`/`no`, `on`/`off` and `y`/`n` (in their lower, Title and UPPER spellings) are
//!   booleans, as in YAML 1.1 and kubectl; quote them to keep strings. Validation flags
//!   non-string label, annotation and ConfigMap values so this surprise shows up before apply.
//! - Integers follow Go's `ParseInt(s, 0, 64)` after dropping `_`: `0x1f`, `0o17`, `0b101`
//!   and a leading-zero octal `0755` are numbers; `08` is not octal and ends up as the float 8.
//! - Integral floats become JSON integers (`1.0` -> `1`), as Go's JSON encoder writes them.
//! - Timestamps stay strings; `.inf`/`.nan` cannot be sent as JSON and are an error.
//! - Quoted and block scalars are always strings; `!!str` forces a string.

use serde_json::{Number, Value};
use yaml_rust2::parser::Tag;
use yaml_rust2::scanner::TScalarStyle;

const CORE_TAG: &str = "tag:yaml.org,2002:";

/// Why a scalar could not become a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScalarError {
    NotJson,
    BadTag(&'static str),
}

pub(crate) fn resolve(
    text: &str,
    style: TScalarStyle,
    tag: Option<&Tag>,
) -> Result<Value, ScalarError> {
    let core = tag
        .filter(|t| t.handle == CORE_TAG)
        .map(|t| t.suffix.as_str());
    match core {
        Some("str") => return Ok(Value::String(text.to_string())),
        Some("null") => return Ok(Value::Null),
        Some("bool") => {
            return boolean(text)
                .map(Value::Bool)
                .ok_or(ScalarError::BadTag("bool"));
        }
        Some("int" | "float") => {
            return number(text)
                .map(Value::Number)
                .ok_or(ScalarError::BadTag("number"));
        }
        _ => {}
    }
    if style != TScalarStyle::Plain {
        return Ok(Value::String(text.to_string()));
    }
    resolve_plain(text)
}

fn resolve_plain(text: &str) -> Result<Value, ScalarError> {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if let Some(b) = boolean(text) {
        return Ok(Value::Bool(b));
    }
    let special = text.trim_start_matches(['+', '-']);
    if matches!(special, ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN") {
        return Err(ScalarError::NotJson);
    }
    Ok(number(text).map_or_else(|| Value::String(text.to_string()), Value::Number))
}

fn boolean(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "y" | "Y" | "on" | "On" | "ON" => {
            Some(true)
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "n" | "N" | "off" | "Off" | "OFF" => {
            Some(false)
        }
        _ => None,
    }
}

fn number(text: &str) -> Option<Number> {
    if !text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) {
        return None;
    }
    let plain = text.replace('_', "");
    if let Some(n) = go_int(&plain) {
        return Some(n);
    }
    if yaml_float_syntax(&plain) {
        let f: f64 = plain.parse().ok()?;
        return Some(float_as_json(f));
    }
    None
}

/// Go's `strconv.ParseInt(s, 0, 64)` with `ParseUint` as the fallback for large positives.
fn go_int(s: &str) -> Option<Number> {
    let (negative, unsigned) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = unsigned.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            return Some(Number::from(0i64.wrapping_sub_unsigned(magnitude)));
        }
        return None;
    }
    if s.starts_with('+') && magnitude > i64::MAX as u64 {
        return None;
    }
    Some(Number::from(magnitude))
}

/// go-yaml's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_float_syntax(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

fn float_as_json(f: f64) -> Number {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if f.fract() == 0.0 && f.abs() < TWO_POW_63 {
        // In range by the check above, so the cast is exact.
        return Number::from(f as i64);
    }
    Number::from_f64(f).unwrap_or_else(|| Number::from(0))
}

/// Mapping keys become JSON object keys; kubectl stringifies resolved bools and numbers.
pub(crate) fn key_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn case(text: &str, style: TScalarStyle, expected: Value) {
        assert_eq!(resolve(text, style, None), Ok(expected), "scalar {text:?}");
    }

    #[test]
    fn plain_scalars_resolve_like_kubectl() {
        use TScalarStyle::{DoubleQuoted, Literal, Plain, SingleQuoted};
        case("", Plain, json!(null));
        case("~", Plain, json!(null));
        case("Null", Plain, json!(null));
        case("true", Plain, json!(true));
        case("False", Plain, json!(false));
        case("yes", Plain, json!(true));
        case("on", Plain, json!(true));
        case("OFF", Plain, json!(false));
        case("n", Plain, json!(false));
        case("yes", DoubleQuoted, json!("yes"));
        case("80", Plain, json!(80));
        case("-42", Plain, json!(-42));
        case("+7", Plain, json!(7));
        case("1_000", Plain, json!(1000));
        case("0x1F", Plain, json!(31));
        case("0o17", Plain, json!(15));
        case("0755", Plain, json!(493));
        case("08", Plain, json!(8));
        case("0b101", Plain, json!(5));
        case("18446744073709551615", Plain, json!(u64::MAX));
        case("-9223372036854775808", Plain, json!(i64::MIN));
        case("0.5", Plain, json!(0.5));
        case(".5", Plain, json!(0.5));
        case("1.0", Plain, json!(1));
        case("1e3", Plain, json!(1000));
        case("2.5e-1", Plain, json!(0.25));
        case("1.10", SingleQuoted, json!("1.10"));
        case("80", Literal, json!("80"));
        case("2024-01-02", Plain, json!("2024-01-02"));
        case("1.2.3", Plain, json!("1.2.3"));
        case("0x", Plain, json!("0x"));
        case("-", Plain, json!("-"));
        case("nginx:1.25", Plain, json!("nginx:1.25"));
        case("500m", Plain, json!("500m"));
        case("1e", Plain, json!("1e"));
    }

    #[test]
    fn tags_and_non_json_values() {
        let tag = |suffix: &str| Tag {
            handle: CORE_TAG.to_string(),
            suffix: suffix.to_string(),
        };
        let plain = TScalarStyle::Plain;
        assert_eq!(resolve("1.0", plain, Some(&tag("str"))), Ok(json!("1.0")));
        assert_eq!(resolve("12", plain, Some(&tag("int"))), Ok(json!(12)));
        assert_eq!(
            resolve("maybe", plain, Some(&tag("bool"))),
            Err(ScalarError::BadTag("bool"))
        );
        assert_eq!(resolve(".inf", plain, None), Err(ScalarError::NotJson));
        assert_eq!(resolve("-.Inf", plain, None), Err(ScalarError::NotJson));
        assert_eq!(key_text(&json!(true)), Some("true".to_string()));
        assert_eq!(key_text(&json!(null)), None);
    }
}
