//! The 422 Invalid error as kube-apiserver builds it (`errors.NewInvalid`): one cause per
//! field error, a message that joins the distinct causes, and the metav1.Status body.

use serde_json::{Map, Value, json};

use super::gofmt::go_quote;
use super::path::Path;

/// `metav1.CauseType` values a validation error can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CauseReason {
    FieldValueRequired,
    FieldValueInvalid,
    FieldValueNotSupported,
    FieldValueDuplicate,
    FieldValueForbidden,
    FieldValueTooLong,
    FieldValueNotFound,
    FieldValueTooMany,
}

impl CauseReason {
    /// The wire value (`causes[].reason`).
    pub fn as_str(self) -> &'static str {
        match self {
            CauseReason::FieldValueRequired => "FieldValueRequired",
            CauseReason::FieldValueInvalid => "FieldValueInvalid",
            CauseReason::FieldValueNotSupported => "FieldValueNotSupported",
            CauseReason::FieldValueDuplicate => "FieldValueDuplicate",
            CauseReason::FieldValueForbidden => "FieldValueForbidden",
            CauseReason::FieldValueTooLong => "FieldValueTooLong",
            CauseReason::FieldValueNotFound => "FieldValueNotFound",
            CauseReason::FieldValueTooMany => "FieldValueTooMany",
        }
    }
}

/// One field error: `field` is the Go field path ("spec.template.spec.containers[0].image"),
/// `message` the error body without the field ("Required value").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    pub reason: CauseReason,
    pub field: String,
    pub message: String,
}

impl Cause {
    /// `field: message`, the form used inside the aggregate message.
    pub fn line(&self) -> String {
        format!("{}: {}", self.field, self.message)
    }

    fn new(reason: CauseReason, field: &Path, message: String) -> Cause {
        Cause {
            reason,
            field: field.to_string(),
            message,
        }
    }

    pub(crate) fn required(field: &Path, detail: &str) -> Cause {
        Cause::new(
            CauseReason::FieldValueRequired,
            field,
            with_detail("Required value".into(), detail),
        )
    }

    /// `value` is already rendered the way Go prints the bad value.
    pub(crate) fn invalid(field: &Path, value: &str, detail: &str) -> Cause {
        Cause::new(
            CauseReason::FieldValueInvalid,
            field,
            with_detail(format!("Invalid value: {value}"), detail),
        )
    }

    pub(crate) fn not_supported(field: &Path, value: &str, supported: &[&str]) -> Cause {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Cause::new(
            CauseReason::FieldValueNotSupported,
            field,
            with_detail(format!("Unsupported value: {value}"), &detail),
        )
    }

    pub(crate) fn duplicate(field: &Path, value: &str) -> Cause {
        Cause::new(
            CauseReason::FieldValueDuplicate,
            field,
            format!("Duplicate value: {value}"),
        )
    }

    pub(crate) fn forbidden(field: &Path, detail: &str) -> Cause {
        Cause::new(
            CauseReason::FieldValueForbidden,
            field,
            with_detail("Forbidden".into(), detail),
        )
    }

    pub(crate) fn too_long(field: &Path, max_bytes: usize) -> Cause {
        let unit = if max_bytes == 1 { "byte" } else { "bytes" };
        Cause::new(
            CauseReason::FieldValueTooLong,
            field,
            format!("Too long: may not be more than {max_bytes} {unit}"),
        )
    }

    pub(crate) fn not_found(field: &Path, value: &str) -> Cause {
        Cause::new(
            CauseReason::FieldValueNotFound,
            field,
            format!("Not found: {value}"),
        )
    }
}

fn with_detail(head: String, detail: &str) -> String {
    if detail.is_empty() {
        head
    } else {
        format!("{head}: {detail}")
    }
}

/// A rejected object: HTTP 422, reason Invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct Invalid {
    /// The object's Kind ("Deployment").
    pub kind: String,
    /// The API group ("apps"; "" for the core group).
    pub group: String,
    pub name: String,
    pub causes: Vec<Cause>,
}

impl Invalid {
    /// The status message, byte for byte as the API server writes it, e.g.
    /// `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be ...`;
    /// several distinct causes are joined inside `[...]`.
    pub fn message(&self) -> String {
        let qualified = if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        };
        let mut lines: Vec<String> = Vec::new();
        for cause in &self.causes {
            let line = cause.line();
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        let head = format!("{qualified} {} is invalid", go_quote(&self.name));
        match lines.len() {
            0 => head,
            1 => format!("{head}: {}", lines[0]),
            _ => format!("{head}: [{}]", lines.join(", ")),
        }
    }

    /// The `metav1.Status` body of the 422 response.
    pub fn to_status(&self) -> Value {
        let causes: Vec<Value> = self
            .causes
            .iter()
            .map(|c| json!({"reason": c.reason.as_str(), "message": c.message, "field": c.field}))
            .collect();
        let mut details = Map::new();
        if !self.name.is_empty() {
            details.insert("name".into(), Value::from(self.name.clone()));
        }
        if !self.group.is_empty() {
            details.insert("group".into(), Value::from(self.group.clone()));
        }
        details.insert("kind".into(), Value::from(self.kind.clone()));
        details.insert("causes".into(), Value::from(causes));
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message(),
            "reason": "Invalid",
            "details": details,
            "code": 422,
        })
    }
}
