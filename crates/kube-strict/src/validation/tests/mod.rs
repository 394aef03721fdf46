//! Validation tests: manifests a user could really apply, defaulted as the server does,
//! against the exact 422 messages kube-apiserver 1.33 returns for them.

mod batch;
mod config;
mod names;
mod pods;
mod services;
mod status;
mod updates;
mod workloads;

use serde_json::{Value, json};

use crate::defaults::{default_job_selector, default_object};
use crate::validation::{Invalid, validate};

/// Defaults like the server (a Job also gets its generated selector) and validates.
pub(super) fn admit(mut object: Value) -> Result<Value, Invalid> {
    default_object(&mut object);
    if object["kind"] == "Job" {
        default_job_selector(&mut object, "b7c3d9e2-5f41-4c8a-9a36-2d1e0f7a6b54");
    }
    validate(&object).map(|()| object)
}

/// Asserts the object is rejected with exactly this message.
#[track_caller]
pub(super) fn rejected(object: Value, message: &str) {
    match admit(object) {
        Ok(_) => panic!("accepted, expected: {message}"),
        Err(invalid) => assert_eq!(invalid.message(), message),
    }
}

#[track_caller]
pub(super) fn accepted(object: Value) -> Value {
    match admit(object) {
        Ok(object) => object,
        Err(invalid) => panic!("rejected: {}", invalid.message()),
    }
}

/// A Deployment as `kubectl create deployment web --image=nginx:1.27` writes it, with
/// `patch` merged into its spec (null removes a field).
pub(super) fn deployment(patch: Value) -> Value {
    let mut object = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]},
            },
        },
    });
    merge(&mut object["spec"], patch);
    object
}

/// JSON merge patch (RFC 7386), enough to vary fixtures.
pub(super) fn merge(target: &mut Value, patch: Value) {
    match patch {
        Value::Object(patch) => {
            if !target.is_object() {
                *target = json!({});
            }
            for (key, value) in patch {
                if value.is_null() {
                    if let Some(map) = target.as_object_mut() {
                        map.remove(&key);
                    }
                } else {
                    merge(&mut target[key.as_str()], value);
                }
            }
        }
        other => *target = other,
    }
}

/// The spec of the pod template of `deployment`, patched.
pub(super) fn pod_spec(patch: &Value) -> Value {
    deployment(json!({"template": {"spec": patch}}))
}
