//! Checks shared by the apps/v1 controllers: selector presence and emptiness, selector
//! against template labels, `restartPolicy: Always`, and int-or-percent rollout bounds.

use serde_json::Value;

use super::error::Cause;
use super::gofmt::{go_quote, int_or_string, label_selector, string_map};
use super::meta::non_negative;
use super::names::percent;
use super::path::Path;
use super::selector::{Matcher, is_empty_selector, validate_label_selector};

/// `spec.selector: Required value` or the empty-selector error, with Go's per-kind wording.
pub(crate) fn required_selector(spec: &Value, path: &Path, kind: &str, errs: &mut Vec<Cause>) {
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => errs.push(Cause::required(&path.child("selector"), "")),
        Some(selector) => {
            validate_label_selector(selector, &path.child("selector"), errs);
            if is_empty_selector(selector) {
                errs.push(Cause::invalid(
                    &path.child("selector"),
                    &label_selector(Some(selector)),
                    &format!("empty selector is invalid for {kind}"),
                ));
            }
        }
    }
}

pub(crate) fn template_labels(spec: &Value) -> Option<&Value> {
    spec.get("template")
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
}

pub(crate) fn selector_mismatch(
    spec: &Value,
    selector: &Matcher,
    path: &Path,
    errs: &mut Vec<Cause>,
) {
    let labels = template_labels(spec);
    if !selector.is_empty() && !selector.matches(labels) {
        errs.push(Cause::invalid(
            &path.children(&["template", "metadata", "labels"]),
            &string_map(labels),
            "`selector` does not match template `labels`",
        ));
    }
}

pub(crate) fn restart_policy_always(template: &Value, path: &Path, errs: &mut Vec<Cause>) {
    let policy = template
        .get("spec")
        .and_then(|s| s.get("restartPolicy"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if policy != "Always" {
        errs.push(Cause::not_supported(
            &path.children(&["template", "spec", "restartPolicy"]),
            &go_quote(policy),
            &["Always"],
        ));
    }
}

pub(crate) fn positive_int_or_percent(value: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    match value {
        Some(Value::String(s)) => {
            for msg in percent(s) {
                errs.push(Cause::invalid(path, &int_or_string(value), &msg));
            }
        }
        other => non_negative(other, path, errs),
    }
}

/// The percentage of a valid percent string, else the integer (strings that are not
/// percentages count as 0, as `IntOrString.IntValue` parses them).
pub(crate) fn int_or_percent_value(value: Option<&Value>) -> i64 {
    match value {
        Some(Value::String(s)) => {
            if percent(s).is_empty() {
                s.trim_end_matches('%').parse().unwrap_or(0)
            } else {
                s.parse().unwrap_or(0)
            }
        }
        Some(other) => other.as_i64().unwrap_or(0),
        None => 0,
    }
}

pub(crate) fn not_more_than_100_percent(value: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    if let Some(Value::String(s)) = value
        && percent(s).is_empty()
        && int_or_percent_value(value) > 100
    {
        errs.push(Cause::invalid(
            path,
            &int_or_string(value),
            "must not be greater than 100%",
        ));
    }
}
