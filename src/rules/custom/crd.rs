//! CustomResourceDefinitions: usable once Established; a name clash (NamesAccepted=False)
//! never resolves by itself, so it fails.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::custom::conditions::{condition, conditions};
use crate::vocab::verdict::Reason;
use serde_json::Value;

pub fn assess(obj: &Value) -> Assessment {
    if let Some(c) = condition(obj, "NamesAccepted").filter(|c| c.is("False")) {
        return Assessment::failed(Reason::ConditionFailed, c.describe());
    }
    let kind = obj
        .at("/spec/names/kind")
        .and_then(Value::as_str)
        .unwrap_or("?");
    if condition(obj, "Established").is_some_and(|c| c.is("True")) {
        return Assessment::succeeded(format!("established, serving kind {kind}"));
    }
    let seen: Vec<String> = conditions(obj)
        .iter()
        .map(super::conditions::Condition::describe)
        .collect();
    if seen.is_empty() {
        Assessment::not_ready("waiting for Established=True")
    } else {
        Assessment::not_ready(format!("waiting for Established=True; {}", seen.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(conditions: &Value) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.acme.io", "uid": "c1c1c1c1-0000-4000-8000-000000000001",
                "resourceVersion": "56000", "generation": 1, "creationTimestamp": "2025-03-04T10:15:00Z"},
            "spec": {"group": "acme.io", "scope": "Namespaced", "conversion": {"strategy": "None"},
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                    "subresources": {"status": {}}}]},
            "status": {"conditions": conditions, "acceptedNames": {}, "storedVersions": ["v1"]}
        })
    }

    fn cond(type_: &str, status: &str, reason: &str, message: &str) -> Value {
        json!({"type": type_, "status": status, "lastTransitionTime": "2025-03-04T10:15:01Z", "reason": reason, "message": message})
    }

    #[test]
    fn established_succeeds_and_rejected_names_fail() {
        let accepted = cond("NamesAccepted", "True", "NoConflicts", "no conflicts found");
        let established = cond(
            "Established",
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        );
        assert_eq!(
            assess(&crd(&json!([accepted, established]))),
            Assessment::succeeded("established, serving kind Widget")
        );
        let pending = assess(&crd(&json!([
            accepted,
            cond(
                "Established",
                "False",
                "Installing",
                "the initial names have been accepted"
            )
        ])));
        assert_eq!(
            pending.message(),
            "waiting for Established=True; NamesAccepted=True (NoConflicts): no conflicts found; Established=False (Installing): the initial names have been accepted"
        );
        let clash = assess(&crd(&json!([cond(
            "NamesAccepted",
            "False",
            "ListKindConflict",
            "\"WidgetList\" is already in use"
        )])));
        assert_eq!(clash.reason(), Some(Reason::ConditionFailed));
        assert_eq!(
            clash.message(),
            "NamesAccepted=False (ListKindConflict): \"WidgetList\" is already in use"
        );
    }
}
