//! ObjectMeta validation (`ValidateObjectMeta`) and the label/annotation checks reused
//! for templates, selectors and node selectors.

use serde_json::Value;

use super::error::Cause;
use super::gofmt::go_quote;
use super::names::{dns1035_label, dns1123_label, dns1123_subdomain, label_value, qualified_name};
use super::path::Path;

/// Total size allowed for all annotation keys and values of one object.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// Which rule a kind's names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// Most kinds.
    Subdomain,
    /// Namespaces.
    Label,
    /// Services (their names become DNS labels that must start with a letter).
    Dns1035,
}

impl NameRule {
    pub(crate) fn check(self, name: &str) -> Vec<String> {
        match self {
            NameRule::Subdomain => dns1123_subdomain(name),
            NameRule::Label => dns1123_label(name),
            NameRule::Dns1035 => dns1035_label(name),
        }
    }
}

pub(crate) fn validate_object_meta(object: &Value, rule: NameRule, errs: &mut Vec<Cause>) {
    let path = Path::root("metadata");
    let meta = object.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() {
        errs.push(Cause::required(
            &path.child("name"),
            "name or generateName is required",
        ));
    } else {
        for msg in rule.check(name) {
            errs.push(Cause::invalid(&path.child("name"), &go_quote(name), &msg));
        }
    }
    if let Some(namespace) = meta
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        for msg in dns1123_label(namespace) {
            errs.push(Cause::invalid(
                &path.child("namespace"),
                &go_quote(namespace),
                &msg,
            ));
        }
    }
    validate_labels(
        meta.and_then(|m| m.get("labels")),
        &path.child("labels"),
        errs,
    );
    validate_annotations(
        meta.and_then(|m| m.get("annotations")),
        &path.child("annotations"),
        errs,
    );
}

/// `ValidateLabels`: every key a qualified name, every value a label value; all errors are
/// reported at the map's path, not per key.
pub(crate) fn validate_labels(labels: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    let Some(labels) = labels.and_then(Value::as_object) else {
        return;
    };
    for (key, value) in labels {
        for msg in qualified_name(key) {
            errs.push(Cause::invalid(path, &go_quote(key), &msg));
        }
        let value = value.as_str().unwrap_or("");
        for msg in label_value(value) {
            errs.push(Cause::invalid(path, &go_quote(value), &msg));
        }
    }
}

/// `ValidateAnnotations`: keys are qualified names (case-insensitively), values are free,
/// and keys plus values may not exceed 256 KiB together.
pub(crate) fn validate_annotations(
    annotations: Option<&Value>,
    path: &Path,
    errs: &mut Vec<Cause>,
) {
    let Some(annotations) = annotations.and_then(Value::as_object) else {
        return;
    };
    let mut total = 0;
    for (key, value) in annotations {
        for msg in qualified_name(&key.to_lowercase()) {
            errs.push(Cause::invalid(path, &go_quote(key), &msg));
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(Cause::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
}

/// `ValidateNonnegativeField`.
pub(crate) fn non_negative(value: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    if let Some(n) = value.and_then(Value::as_i64).filter(|n| *n < 0) {
        errs.push(Cause::invalid(
            path,
            &n.to_string(),
            "must be greater than or equal to 0",
        ));
    }
}
