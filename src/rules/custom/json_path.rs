//! The small JSONPath subset krane's `instance-rollout-conditions` annotations use:
//! `$.status.a.b`, `[N]`, and `[?(@.key == "value")]` filters, first match wins.

use crate::rules::error::RulesError;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(usize),
    /// Array elements whose `key` equals `value` (as text).
    Filter {
        key: String,
        value: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    raw: String,
    steps: Vec<Step>,
}

impl JsonPath {
    pub fn parse(raw: &str) -> Result<Self, RulesError> {
        let err = || RulesError::UnsupportedJsonPath {
            path: raw.to_owned(),
        };
        let mut rest = raw.trim().strip_prefix('$').ok_or_else(err)?;
        let mut steps = Vec::new();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let (name, r) = ident(r).ok_or_else(err)?;
                steps.push(Step::Field(name.to_owned()));
                rest = r;
            } else if let Some(r) = rest.strip_prefix('[') {
                let (inside, r) = r.split_once(']').ok_or_else(err)?;
                steps.push(bracket(inside).ok_or_else(err)?);
                rest = r;
            } else {
                return Err(err());
            }
        }
        Ok(JsonPath {
            raw: raw.to_owned(),
            steps,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The first value the path reaches in `obj`.
    pub fn first<'a>(&self, obj: &'a Value) -> Option<&'a Value> {
        walk(&self.steps, obj)
    }
}

fn walk<'a>(steps: &[Step], v: &'a Value) -> Option<&'a Value> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(v);
    };
    match step {
        Step::Field(name) => walk(rest, v.get(name)?),
        Step::Index(i) => walk(rest, v.get(*i)?),
        Step::Filter { key, value } => v
            .as_array()?
            .iter()
            .filter(|e| e.get(key).is_some_and(|k| text(k) == *value))
            .find_map(|e| walk(rest, e)),
    }
}

/// A JSON value as the text krane compares: strings bare, everything else as JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn ident(s: &str) -> Option<(&str, &str)> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(s.len());
    (end > 0).then(|| s.split_at(end))
}

/// `N`, or `?(@.key == "value")` with single or double quotes.
fn bracket(inside: &str) -> Option<Step> {
    let inside = inside.trim();
    if let Ok(i) = inside.parse() {
        return Some(Step::Index(i));
    }
    let expr = inside.strip_prefix("?(")?.strip_suffix(')')?.trim();
    let (lhs, rhs) = expr.split_once("==")?;
    let (key, tail) = ident(lhs.trim().strip_prefix("@.")?)?;
    let rhs = rhs.trim();
    let quoted = ['"', '\'']
        .iter()
        .find_map(|q| rhs.strip_prefix(*q)?.strip_suffix(*q))?;
    tail.is_empty().then(|| Step::Filter {
        key: key.to_owned(),
        value: quoted.to_owned(),
    })
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
    }

    #[test]
    fn refuses_what_it_cannot_evaluate() {
        for bad in [
            "status.phase",
            "$..phase",
            "$.status.conditions[?(@.type != \"X\")]",
            "$.status[*]",
            "$.a b",
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
