//! The 422 Status body and the Invalid error's public shape.

use serde_json::json;

use super::{admit, deployment};
use crate::validation::{CauseReason, validate};

#[test]
fn status_body_matches_the_api_server() {
    let invalid = admit(deployment(json!({
        "replicas": -1,
        "template": {"spec": {"containers": [{"name": "nginx"}]}},
    })))
    .unwrap_err();
    assert_eq!(invalid.kind, "Deployment");
    assert_eq!(invalid.group, "apps");
    assert_eq!(invalid.causes[1].reason, CauseReason::FieldValueRequired);
    assert_eq!(invalid.to_string(), invalid.message());
    assert_eq!(
        invalid.to_status(),
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Deployment.apps \"web\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.containers[0].image: Required value]",
            "reason": "Invalid",
            "details": {
                "name": "web",
                "group": "apps",
                "kind": "Deployment",
                "causes": [
                    {"reason": "FieldValueInvalid", "message": "Invalid value: -1: must be greater than or equal to 0", "field": "spec.replicas"},
                    {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.template.spec.containers[0].image"},
                ],
            },
            "code": 422,
        }),
    );
}

#[test]
fn core_group_is_left_out_and_repeated_messages_collapse() {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "twins", "labels": {"a": "x y", "b": "x y"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    });
    let mut pod = pod;
    crate::defaults::default_object(&mut pod);
    let invalid = validate(&pod).unwrap_err();
    assert_eq!(invalid.causes.len(), 2, "every field error stays a cause");
    let status = invalid.to_status();
    assert!(status["details"].get("group").is_none());
    assert_eq!(
        status["message"],
        json!(
            "Pod \"twins\" is invalid: metadata.labels: Invalid value: \"x y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ),
    );
}

#[test]
fn unknown_kinds_are_not_validated() {
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "Not A Valid Name"}});
    assert!(validate(&widget).is_ok());
    let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {}});
    assert!(validate(&ingress).is_ok());
}
