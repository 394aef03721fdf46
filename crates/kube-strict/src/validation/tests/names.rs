//! Object names, namespaces, labels and annotations.

use serde_json::json;

use super::{accepted, deployment, rejected};

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn named(kind: &str, api_version: &str, name: &str) -> serde_json::Value {
    json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "data": {}})
}

#[test]
fn object_names_follow_each_kinds_rule() {
    #[track_caller]
    fn case(object: serde_json::Value, message: &str) {
        rejected(object, message);
    }
    let mut bad_deployment = deployment(json!({}));
    bad_deployment["metadata"]["name"] = json!("Web_App");
    case(
        bad_deployment,
        &format!(
            "Deployment.apps \"Web_App\" is invalid: metadata.name: Invalid value: \"Web_App\": {SUBDOMAIN_MSG}"
        ),
    );
    case(
        named("ConfigMap", "v1", ""),
        "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required",
    );
    let mut service = named("Service", "v1", "1web");
    service["spec"] = json!({"ports": [{"port": 80}]});
    case(
        service,
        "Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
    case(
        named("Namespace", "v1", "team.a"),
        "Namespace \"team.a\" is invalid: metadata.name: Invalid value: \"team.a\": must not contain dots",
    );
    // The defaulted kubernetes.io/metadata.name label repeats the bad name as a label value.
    let long = format!("{}-", "a".repeat(64));
    let label_regex = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    case(
        named("Namespace", "v1", &long),
        &format!(
            "Namespace \"{long}\" is invalid: [metadata.name: Invalid value: \"{long}\": must be no more than 63 characters, metadata.name: Invalid value: \"{long}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), metadata.labels: Invalid value: \"{long}\": must be no more than 63 characters, metadata.labels: Invalid value: \"{long}\": {label_regex}]"
        ),
    );
    let mut bad_namespace = named("ConfigMap", "v1", "settings");
    bad_namespace["metadata"]["namespace"] = json!("Prod");
    case(
        bad_namespace,
        "ConfigMap \"settings\" is invalid: metadata.namespace: Invalid value: \"Prod\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
    accepted(named("ConfigMap", "v1", "app.settings-v2"));
}

#[test]
fn label_and_annotation_keys_and_values() {
    #[track_caller]
    fn case(metadata: serde_json::Value, message: &str) {
        let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {}});
        object["metadata"] = metadata;
        rejected(object, message);
    }
    case(
        json!({"name": "cfg", "labels": {"app.kubernetes.io/name": "web app"}}),
        "ConfigMap \"cfg\" is invalid: metadata.labels: Invalid value: \"web app\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
    let long_value = "v".repeat(64);
    case(
        json!({"name": "cfg", "labels": {"version": long_value}}),
        &format!(
            "ConfigMap \"cfg\" is invalid: metadata.labels: Invalid value: \"{long_value}\": must be no more than 63 characters"
        ),
    );
    case(
        json!({"name": "cfg", "labels": {"Example.com/tier": "web"}}),
        "ConfigMap \"cfg\" is invalid: metadata.labels: Invalid value: \"Example.com/tier\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
    case(
        json!({"name": "cfg", "annotations": {"a/b/c": "x"}}),
        "ConfigMap \"cfg\" is invalid: metadata.annotations: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    );
    case(
        json!({"name": "cfg", "annotations": {"big": "x".repeat(262_142)}}),
        "ConfigMap \"cfg\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes",
    );
    // Annotation keys are checked case-insensitively, values are free-form.
    let mut fine = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {}});
    fine["metadata"] = json!({"name": "cfg", "annotations": {"Example.com/Owner": "Team A (ops)"}});
    accepted(fine);
}
