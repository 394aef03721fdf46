//! `metav1.LabelSelector` as the workload controllers evaluate it, and the copy with the
//! `pod-template-hash` label that a Deployment gives each of its ReplicaSets.

use super::meta::sorted;
use serde_json::{Map, Value, json};

/// Whether `selector` selects `labels`. An empty selector selects everything, a missing
/// one nothing (`metav1.LabelSelectorAsSelector`); one implementation serves every controller.
pub(crate) use crate::controllers::workloads::selectors::selector_matches as matches;

/// Neither matchLabels nor matchExpressions: the selector the Deployment controller
/// refuses because it would select every pod.
pub(crate) fn is_empty(selector: &Value) -> bool {
    let len = |k: &str| {
        selector.get(k).map_or(0, |v| {
            v.as_object().map_or(0, Map::len) + v.as_array().map_or(0, Vec::len)
        })
    };
    selector.is_object() && len("matchLabels") == 0 && len("matchExpressions") == 0
}

/// `labelsutil.CloneSelectorAndAddLabel`: the selector with `key=value` in matchLabels.
pub(crate) fn with_label(selector: &Value, key: &str, value: &str) -> Value {
    let mut match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    match_labels.insert(key.to_owned(), json!(value));
    let mut out = Map::new();
    out.insert("matchLabels".into(), Value::Object(sorted(match_labels)));
    if let Some(exprs) = selector
        .get("matchExpressions")
        .filter(|e| e.as_array().is_some_and(|a| !a.is_empty()))
    {
        out.insert("matchExpressions".into(), exprs.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Matching itself is tested where it lives (workloads/selectors.rs).

    #[test]
    fn adds_the_hash_label_and_recognises_empty_selectors() {
        let sel = json!({"matchLabels": {"app": "web"}});
        assert_eq!(
            with_label(&sel, "pod-template-hash", "7d4b9c8f5d"),
            json!({"matchLabels": {"app": "web", "pod-template-hash": "7d4b9c8f5d"}})
        );
        assert!(is_empty(&json!({})));
        assert!(is_empty(&json!({"matchLabels": {}})));
        assert!(!is_empty(&sel));
    }
}
