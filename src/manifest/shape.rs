//! Two mistakes the API server refuses that need no schema to see: a workload whose
//! selector does not pick its own pod template, and a name that is not a DNS name.

use super::builtin::{self, Lookup};
use super::document::Manifest;
use super::error::Problem;
use crate::pointer::Pointer;
use serde_json::Value;

/// Workloads whose `spec.selector` must select `spec.template.metadata.labels`.
const SELECTING: [(&str, &str); 4] = [
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
];

/// Kinds whose names are DNS labels (no dots, at most 63 characters).
const LABEL_NAMED: [&str; 2] = ["Namespace", "Service"];

/// Kinds whose names are path segments (RBAC's `system:controller:x`), not DNS names.
const PATH_NAMED: [&str; 4] = ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"];

pub fn check(m: &Manifest, problems: &mut Vec<Problem>) {
    selector(m, problems);
    name(m, problems);
}

fn selector(m: &Manifest, problems: &mut Vec<Problem>) {
    if !SELECTING.contains(&(m.api_version.as_str(), m.kind.as_str())) {
        return;
    }
    let at = |pointer: &str, message: &str| {
        Problem::new(&m.file, Some(m.line_near(pointer)), message.to_owned())
    };
    let Some(selector) = m.object.at("/spec/selector").filter(|s| s.is_object()) else {
        problems.push(
            at("/spec", "spec.selector is required")
                .with_hint("set spec.selector.matchLabels to the pod template's labels"),
        );
        return;
    };
    let labels = m.object.at("/spec/template/metadata/labels");
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let mut unmet = Vec::new();
    if let Some(Value::Object(want)) = selector.get("matchLabels") {
        for (k, v) in want {
            if label(k) != v.as_str() {
                unmet.push(format!("{k}={}", v.as_str().unwrap_or_default()));
            }
        }
    }
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let met = match e.get("operator").and_then(Value::as_str) {
            Some("In") => label(key).is_some_and(|v| values.contains(&v)),
            Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
            Some("Exists") => label(key).is_some(),
            Some("DoesNotExist") => label(key).is_none(),
            _ => true, // an unknown operator is the server's to refuse, with its words
        };
        if !met {
            unmet.push(format!(
                "{key} {} {}",
                e.get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                values.join(",")
            ));
        }
    }
    if selector.get("matchLabels").is_none() && selector.get("matchExpressions").is_none() {
        problems.push(
            at(
                "/spec/selector",
                "spec.selector is empty: it would select every pod",
            )
            .with_hint("set spec.selector.matchLabels to the pod template's labels"),
        );
    } else if !unmet.is_empty() {
        problems.push(
            at(
                "/spec/template/metadata/labels",
                &format!(
                    "spec.selector does not match the pod template's labels ({} not met)",
                    unmet.join(", ")
                ),
            )
            .with_hint("the template's labels must satisfy spec.selector, or its pods would not be its own"),
        );
    }
}

fn name(m: &Manifest, problems: &mut Vec<Problem>) {
    let Some(name) = m.object.at("/metadata/name").and_then(Value::as_str) else {
        return;
    };
    // Custom kinds' names are their CRD's to judge; RBAC's are path segments.
    if name.is_empty()
        || builtin::lookup(&m.api_version, &m.kind) != Lookup::Builtin
        || PATH_NAMED.contains(&m.kind.as_str())
    {
        return;
    }
    let label = LABEL_NAMED.contains(&m.kind.as_str());
    let (max, what) = if label {
        (
            63,
            "a DNS label (lowercase letters, digits and '-', at most 63 characters)",
        )
    } else {
        (
            253,
            "a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)",
        )
    };
    let parts_ok = name.split('.').all(|part| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !part.starts_with('-')
            && !part.ends_with('-')
    });
    if name.len() > max || !parts_ok || (label && name.contains('.')) {
        problems.push(
            Problem::new(
                &m.file,
                Some(m.line_near("/metadata/name")),
                format!("metadata.name {name:?} is not {what}"),
            )
            .with_hint(format!("a {}'s name must be {what}", m.kind)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(yaml: &str) -> Vec<String> {
        crate::manifest::tests::found_by(check, yaml)
    }

    fn deployment(selector: &str, labels: &str) -> String {
        format!(
            "apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  selector: {selector}
  template:
    metadata:
      labels: {labels}
    spec: {{containers: [{{name: web, image: web:1}}]}}
"
        )
    }

    #[test]
    fn a_selector_must_pick_its_own_template() {
        assert!(
            problems(&deployment(
                "{matchLabels: {app: web}}",
                "{app: web, tier: a}"
            ))
            .is_empty()
        );
        assert_eq!(
            problems(&deployment("{matchLabels: {app: web}}", "{app: api}")),
            [
                "app.yaml:8: spec.selector does not match the pod template's labels (app=web not met)\n  hint: the template's labels must satisfy spec.selector, or its pods would not be its own"
            ]
        );
        assert!(
            problems(&deployment(
                "{matchExpressions: [{key: tier, operator: In, values: [a, b]}, {key: canary, operator: DoesNotExist}]}",
                "{tier: a}"
            ))
            .is_empty()
        );
        assert_eq!(
            problems(&deployment(
                "{matchExpressions: [{key: tier, operator: NotIn, values: [a]}]}",
                "{tier: a}"
            )),
            [
                "app.yaml:8: spec.selector does not match the pod template's labels (tier NotIn a not met)\n  hint: the template's labels must satisfy spec.selector, or its pods would not be its own"
            ]
        );
        assert_eq!(
            problems(&deployment("{}", "{app: web}")),
            [
                "app.yaml:5: spec.selector is empty: it would select every pod\n  hint: set spec.selector.matchLabels to the pod template's labels"
            ]
        );
    }

    #[test]
    fn names_are_dns_names_where_the_api_server_wants_them() {
        let one = |kind: &str, api_version: &str, name: &str| {
            problems(&format!(
                "apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: '{name}'}}\n"
            ))
        };
        assert!(one("ConfigMap", "v1", "web.config-2").is_empty());
        assert_eq!(
            one("ConfigMap", "v1", "Web_Config"),
            [
                "app.yaml:3: metadata.name \"Web_Config\" is not a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)\n  hint: a ConfigMap's name must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)"
            ]
        );
        assert_eq!(one("Service", "v1", "web.api").len(), 1);
        assert_eq!(one("Namespace", "v1", "-shop").len(), 1);
        assert!(
            one(
                "ClusterRole",
                "rbac.authorization.k8s.io/v1",
                "system:controller:web"
            )
            .is_empty()
        );
        assert!(one("Widget", "acme.io/v1", "Any_Name").is_empty());
    }
}
