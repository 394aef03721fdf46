//! Label selectors: `ValidateLabelSelector`, `LabelSelectorAsSelector` and matching, which
//! decide the "`selector` does not match template `labels`" errors.

use serde_json::Value;

use super::error::Cause;
use super::gofmt::go_quote;
use super::meta::validate_labels;
use super::names::{label_value, qualified_name};
use super::path::Path;

pub(crate) fn validate_label_selector(selector: &Value, path: &Path, errs: &mut Vec<Cause>) {
    validate_labels(
        selector.get("matchLabels"),
        &path.child("matchLabels"),
        errs,
    );
    for (i, expr) in expressions(selector).iter().enumerate() {
        let expr_path = path.child("matchExpressions").index(i);
        let operator = expr.get("operator").and_then(Value::as_str).unwrap_or("");
        let values = expr
            .get("values")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match operator {
            "In" | "NotIn" if values.is_empty() => errs.push(Cause::required(
                &expr_path.child("values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(Cause::forbidden(
                &expr_path.child("values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(Cause::invalid(
                &expr_path.child("operator"),
                &go_quote(other),
                "not a valid selector operator",
            )),
        }
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        for msg in qualified_name(key) {
            errs.push(Cause::invalid(
                &expr_path.child("key"),
                &go_quote(key),
                &msg,
            ));
        }
        for (j, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or("");
            for msg in label_value(value) {
                errs.push(Cause::invalid(
                    &expr_path.child("values").index(j),
                    &go_quote(value),
                    &msg,
                ));
            }
        }
    }
}

fn expressions(selector: &Value) -> Vec<Value> {
    selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether a selector has neither matchLabels nor matchExpressions.
pub(crate) fn is_empty_selector(selector: &Value) -> bool {
    let labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(serde_json::Map::is_empty);
    labels && expressions(selector).is_empty()
}

/// A converted selector (`labels.Selector`).
pub(crate) enum Matcher {
    /// A nil selector matches nothing.
    Nothing,
    /// An empty selector matches everything.
    Everything,
    Requirements(Vec<Requirement>),
}

pub(crate) struct Requirement {
    key: String,
    operator: String,
    values: Vec<String>,
}

impl Matcher {
    /// `labels.Selector.Empty()`.
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Matcher::Everything)
    }

    pub(crate) fn matches(&self, labels: Option<&Value>) -> bool {
        let label = |key: &str| {
            labels
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        match self {
            Matcher::Nothing => false,
            Matcher::Everything => true,
            Matcher::Requirements(reqs) => reqs.iter().all(|r| {
                let actual = label(&r.key);
                match r.operator.as_str() {
                    "In" => actual.is_some_and(|a| r.values.contains(&a)),
                    "NotIn" => actual.is_none_or(|a| !r.values.contains(&a)),
                    "Exists" => actual.is_some(),
                    _ => actual.is_none(),
                }
            }),
        }
    }
}

/// `metav1.LabelSelectorAsSelector`; `Err` when any requirement is malformed.
pub(crate) fn as_selector(selector: Option<&Value>) -> Result<Matcher, ()> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Ok(Matcher::Nothing);
    };
    if is_empty_selector(selector) {
        return Ok(Matcher::Everything);
    }
    let mut reqs = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or("");
            if !qualified_name(key).is_empty() || !label_value(value).is_empty() {
                return Err(());
            }
            reqs.push(Requirement {
                key: key.clone(),
                operator: "In".into(),
                values: vec![value.to_string()],
            });
        }
    }
    for expr in expressions(selector) {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        let operator = expr.get("operator").and_then(Value::as_str).unwrap_or("");
        let values: Vec<String> = expr
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap_or("").to_string())
            .collect();
        let arity_ok = match operator {
            "In" | "NotIn" => !values.is_empty(),
            "Exists" | "DoesNotExist" => values.is_empty(),
            _ => false,
        };
        if !arity_ok
            || !qualified_name(key).is_empty()
            || values.iter().any(|v| !label_value(v).is_empty())
        {
            return Err(());
        }
        reqs.push(Requirement {
            key: key.to_string(),
            operator: operator.to_string(),
            values,
        });
    }
    Ok(Matcher::Requirements(reqs))
}
