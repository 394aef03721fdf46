//! Go's rendering of "bad values" in field errors: `%q` for strings, `%v` for numbers,
//! `%#v` for maps, slices and structs. Clients match on these messages, so they must be
//! reproduced rather than approximated.

use serde_json::Value;

use crate::defaults::quantity::Quantity;

/// `strconv.Quote`.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `%#v` of a `map[string]string` (keys sorted, as fmt does).
pub(crate) fn string_map(value: Option<&Value>) -> String {
    match value.and_then(Value::as_object) {
        None => "map[string]string(nil)".to_string(),
        Some(map) => {
            let mut entries: Vec<(&String, String)> = map
                .iter()
                .map(|(k, v)| (k, v.as_str().map_or_else(|| go_quote(""), go_quote)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let body: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{v}", go_quote(k)))
                .collect();
            format!("map[string]string{{{}}}", body.join(", "))
        }
    }
}

/// `%#v` of a `[]string`.
pub(crate) fn string_slice(value: Option<&Value>) -> String {
    match value.and_then(Value::as_array) {
        None => "[]string(nil)".to_string(),
        Some(items) => {
            let body: Vec<String> = items
                .iter()
                .map(|v| go_quote(v.as_str().unwrap_or("")))
                .collect();
            format!("[]string{{{}}}", body.join(", "))
        }
    }
}

/// A string the way `%q` prints it, or `null`/the number for other JSON values.
pub(crate) fn scalar(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::String(s)) => go_quote(s),
        Some(other) => other.to_string(),
    }
}

/// An `intstr.IntOrString` bad value, printed through its `String()` method.
pub(crate) fn int_or_string(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "0".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// `%#v` of an `intstr.IntOrString` nested in a struct (no `String()` there).
pub(crate) fn int_or_string_struct(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => {
            format!(
                "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
                go_quote(s)
            )
        }
        Some(Value::Number(n)) => {
            format!("intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}")
        }
        _ => "intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}".to_string(),
    }
}

/// A resource quantity as `Quantity.String()` prints it, quoted (validation passes it
/// as a string).
pub(crate) fn quantity(value: &Value) -> String {
    let text = match Quantity::from_json(value) {
        Some(Ok(q)) => q.canonical(),
        _ => value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string),
    };
    go_quote(&text)
}

/// `%#v` of a `*metav1.LabelSelector` (dereferenced by the error printer).
pub(crate) fn label_selector(selector: Option<&Value>) -> String {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return "null".to_string();
    };
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(items) => {
            let body: Vec<String> = items
                .iter()
                .map(|e| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        go_quote(e.get("key").and_then(Value::as_str).unwrap_or("")),
                        go_quote(e.get("operator").and_then(Value::as_str).unwrap_or("")),
                        string_slice(e.get("values")),
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", body.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        string_map(selector.get("matchLabels")),
    )
}
