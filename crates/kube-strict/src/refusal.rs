//! What the API server would refuse in a new object sent by server-side apply, found with
//! no server: the typed conversion in structured-merge-diff's dialect first (wrong JSON
//! types, undeclared fields); when that passes, the server's defaulting and then its
//! validation (enum values, required fields, names). kube-sim's apply does the same steps
//! with the same code, which is what lets an offline check and kube-sim agree.

use crate::decode::{self, Dialect};
use crate::{defaults, validation};
use serde_json::Value;

/// A stand-in for the uid the server gives a new Job, from which its selector is made.
const JOB_UID: &str = "00000000-0000-4000-8000-000000000000";

/// One thing the server would refuse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// A JSON pointer to the value in the object as sent; validation may name a field the
    /// object leaves out (a required one), so the pointer need not resolve.
    pub pointer: String,
    /// The API server's message for it (`.spec.replicas: expected numeric (int or float),
    /// got string`; `spec.template.spec.restartPolicy: Unsupported value: ...`).
    pub message: String,
    /// For an undeclared field, the fields its Go struct declares; otherwise empty.
    pub declared: &'static [&'static str],
}

/// `(group, version)` of an `apiVersion` (`apps/v1`, `v1`).
fn group_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// Everything the server would refuse in `object` on its first apply; `None` when the
/// object is not a built-in kind this crate has a type for (custom resources, unknown
/// kinds). Decoding errors stop there, as on the server: validation never sees the object.
pub fn refusals(object: &Value) -> Option<Vec<Refusal>> {
    let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
    let (group, version) = group_version(text("apiVersion"));
    let found = decode::decode(group, version, text("kind"), object, Dialect::Apply)?;
    if !found.located.is_empty() {
        return Some(
            found
                .located
                .into_iter()
                .map(|f| Refusal {
                    pointer: f.pointer,
                    message: f.message,
                    declared: f.declared,
                })
                .collect(),
        );
    }
    let mut defaulted = object.clone();
    defaults::default_object(&mut defaulted);
    if text("kind") == "Job" && group == "batch" {
        defaults::default_job_selector(&mut defaulted, JOB_UID);
    }
    let Err(invalid) = validation::validate(&defaulted) else {
        return Some(Vec::new());
    };
    Some(
        invalid
            .causes
            .iter()
            .map(|cause| Refusal {
                pointer: field_pointer(&cause.field),
                message: cause.line(),
                declared: &[],
            })
            .collect(),
    )
}

/// apimachinery's field path (`spec.containers[0].image`, `data[a.b]`, `[]` for the
/// whole object) as a JSON pointer (`/spec/containers/0/image`, `/data/a.b`, ``).
pub fn field_pointer(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            if end > 0 {
                out.push('/');
                out.push_str(&escape(&inner[..end]));
            }
            rest = inner.get(end + 1..).unwrap_or_default();
        } else {
            let rest_of = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_of.find(['.', '[']).unwrap_or(rest_of.len());
            out.push('/');
            out.push_str(&escape(&rest_of[..end]));
            rest = &rest_of[end..];
        }
    }
    out
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(container: &Value, replicas: &Value, restart: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"restartPolicy": restart,
                                              "containers": [container]}}}})
    }

    fn web() -> Value {
        json!({"name": "web", "image": "nginx"})
    }

    #[test]
    fn a_good_deployment_is_refused_nothing() {
        assert_eq!(
            refusals(&deployment(&web(), &json!(2), "Always")),
            Some(vec![])
        );
    }

    #[test]
    fn a_string_replica_count_is_a_type_error_at_its_field() {
        let found = refusals(&deployment(&web(), &json!("two"), "Always")).unwrap();
        assert_eq!(
            found,
            [Refusal {
                pointer: "/spec/replicas".into(),
                message: ".spec.replicas: expected numeric (int or float), got string".into(),
                declared: &[],
            }]
        );
    }

    #[test]
    fn an_undeclared_field_comes_with_the_declared_ones() {
        let mut container = web();
        container["imagePullPolcy"] = json!("Always");
        let found = refusals(&deployment(&container, &json!(1), "Always")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].pointer,
            "/spec/template/spec/containers/0/imagePullPolcy"
        );
        assert_eq!(
            found[0].message,
            ".spec.template.spec.containers[name=\"web\"].imagePullPolcy: field not declared in schema"
        );
        assert!(found[0].declared.contains(&"imagePullPolicy"));
    }

    #[test]
    fn a_wrong_enum_value_is_refused_by_validation_after_defaulting() {
        let found = refusals(&deployment(&web(), &json!(1), "Sometimes")).unwrap();
        let messages: Vec<&str> = found.iter().map(|r| r.message.as_str()).collect();
        // The pod spec's own rule, then the Deployment's: the server reports both.
        assert_eq!(
            messages,
            [
                "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\"",
            ]
        );
        assert!(
            found
                .iter()
                .all(|r| r.pointer == "/spec/template/spec/restartPolicy")
        );
    }

    #[test]
    fn a_job_gets_its_generated_selector_before_validation() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
                         "spec": {"template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "a", "image": "busybox"}]}}}});
        assert_eq!(refusals(&job), Some(vec![]));
    }

    #[test]
    fn custom_kinds_are_not_for_this_crate() {
        let cr = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w"}, "spec": {"size": "big"}});
        assert_eq!(refusals(&cr), None);
    }

    #[test]
    fn field_paths_become_pointers() {
        assert_eq!(
            field_pointer("spec.template.spec.containers[0].image"),
            "/spec/template/spec/containers/0/image"
        );
        assert_eq!(
            field_pointer("metadata.labels[example.com/tier]"),
            "/metadata/labels/example.com~1tier"
        );
        assert_eq!(field_pointer("[]"), "");
        assert_eq!(field_pointer("metadata.name"), "/metadata/name");
    }
}
