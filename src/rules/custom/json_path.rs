//! krane's `instance-rollout-conditions` paths (`$.status.a.b`, `[N]`,
//! `[?(@.key == "value")]`, first match wins), evaluated by `serde_json_path` (RFC 9535);
//! a thin guard keeps krane's documented subset, refusing `..`, `*`, slices and other operators.

use crate::rules::error::RulesError;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    raw: String,
    query: serde_json_path::JsonPath,
}

impl JsonPath {
    pub fn parse(raw: &str) -> Result<Self, RulesError> {
        let err = || RulesError::UnsupportedJsonPath {
            path: raw.to_owned(),
        };
        let normalised = normalise(raw.trim()).ok_or_else(err)?;
        let query = serde_json_path::JsonPath::parse(&normalised).map_err(|_| err())?;
        Ok(JsonPath {
            raw: raw.to_owned(),
            query,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The first value the path reaches in `obj`.
    pub fn first<'a>(&self, obj: &'a Value) -> Option<&'a Value> {
        self.query.query(obj).first()
    }
}

/// A JSON value as the text krane compares: strings bare, everything else as JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// krane's path as RFC 9535 text, or `None` outside the subset. Quoted strings pass
/// untouched; outside them `..`, `*`, `:`, `!`, `<`, `>`, `&`, `|` and any `=` that is not
/// `==` are refused, and a dotted name with `-` (krane allows it, RFC 9535 shorthand does
/// not) becomes `['name']`.
fn normalise(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                out.push(c);
                quoted(c, &mut chars, &mut out)?;
            }
            '.' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek().filter(|n| is_name(**n)) {
                    name.push(n);
                    chars.next();
                }
                if name.is_empty() {
                    return None;
                }
                if name.contains('-') {
                    out.push_str(&format!("['{name}']"));
                } else {
                    out.push('.');
                    out.push_str(&name);
                }
            }
            '=' => {
                if chars.next() != Some('=') || chars.peek() == Some(&'=') {
                    return None;
                }
                out.push_str("==");
            }
            '*' | ':' | '!' | '<' | '>' | '&' | '|' => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

/// Copies a string literal's rest, escapes included, through its closing `quote`.
fn quoted(quote: char, chars: &mut impl Iterator<Item = char>, out: &mut String) -> Option<()> {
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '\\' {
            out.push(chars.next()?);
        } else if c == quote {
            return Some(());
        }
    }
    None
}

fn is_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_fields_indexes_and_condition_filters() {
        let obj = json!({"status": {"phase": "Ready", "replicas": 3, "conditions": [
            {"type": "Reconciling", "status": "False"},
            {"type": "Ready", "status": "True", "message": "all good"}]}});
        let first = |p: &str| JsonPath::parse(p).unwrap().first(&obj).map(text);
        assert_eq!(first("$.status.phase").as_deref(), Some("Ready"));
        assert_eq!(first("$.status.replicas").as_deref(), Some("3"));
        assert_eq!(
            first("$.status.conditions[1].message").as_deref(),
            Some("all good")
        );
        assert_eq!(
            first(r#"$.status.conditions[?(@.type == "Ready")].status"#).as_deref(),
            Some("True")
        );
        assert_eq!(
            first("$.status.conditions[?(@.type=='Reconciling')].status").as_deref(),
            Some("False")
        );
        assert_eq!(
            first(r#"$.status.conditions[?(@.type == "Failed")].status"#),
            None
        );
        // RFC 9535's own filter form (no parentheses, single quotes) parses too.
        assert_eq!(
            first("$.status.conditions[?@.type == 'Ready'].message").as_deref(),
            Some("all good")
        );
        assert_eq!(JsonPath::parse("$").unwrap().first(&obj), Some(&obj));
    }

    #[test]
    fn normalises_krane_forms_for_rfc_9535() {
        let obj = json!({"status": {"last-phase": "Done", "conditions": [
            {"type": "a.b*c==d", "status": "True"},
            {"type": "it's", "status": "Maybe"}]}});
        let first = |p: &str| JsonPath::parse(p).unwrap().first(&obj).map(text);
        assert_eq!(first("$.status.last-phase").as_deref(), Some("Done"));
        assert_eq!(
            first(r#"$.status.conditions[?(@.type == "a.b*c==d")].status"#).as_deref(),
            Some("True")
        );
        assert_eq!(
            first(r#"$.status.conditions[?(@.type == "it's")].status"#).as_deref(),
            Some("Maybe")
        );
        assert_eq!(
            normalise(r#"$.a.b-c[?(@.x-y == "q\"r")]"#).as_deref(),
            Some(r#"$.a['b-c'][?(@['x-y'] == "q\"r")]"#)
        );
    }

    #[test]
    fn refuses_what_it_cannot_evaluate() {
        for bad in [
            "status.phase",
            "$..phase",
            "$.status.conditions[?(@.type != \"X\")]",
            "$.status[*]",
            "$.a b",
            "$.status.conditions[0:1]",
            "$.status.conditions[?(@.n > 1)]",
            "$.status.conditions[?(@.a == 'x' && @.b == 'y')]",
            "$.status.conditions[?(@.type = 'X')]",
            "$.status.conditions[?(@.type == \"X)]",
            "$.status.",
        ] {
            assert!(
                matches!(
                    JsonPath::parse(bad),
                    Err(RulesError::UnsupportedJsonPath { .. })
                ),
                "{bad} should be refused"
            );
        }
    }
}
