//! Deployment, ReplicaSet, StatefulSet and DaemonSet rules.

use serde_json::json;

use super::{accepted, deployment, rejected};

#[test]
fn a_valid_deployment_is_accepted() {
    accepted(deployment(json!({})));
}

#[test]
fn deployment_rules_with_exact_messages() {
    #[track_caller]
    fn case(patch: serde_json::Value, message: &str) {
        rejected(deployment(patch), message);
    }
    case(
        json!({"template": {"metadata": {"labels": {"app": "other"}}}}),
        "Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`",
    );
    case(
        json!({"replicas": -1, "template": {"spec": {"containers": [{"name": "nginx"}]}}}),
        "Deployment.apps \"web\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.containers[0].image: Required value]",
    );
    case(
        json!({"selector": null}),
        "Deployment.apps \"web\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`]",
    );
    case(
        json!({"selector": {"matchLabels": null}}),
        "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
    );
    case(
        json!({"selector": {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}}),
        "Deployment.apps \"web\" is invalid: [spec.selector.matchExpressions[0].operator: Invalid value: \"Equals\": not a valid selector operator, spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\"}, MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", Operator:\"Equals\", Values:[]string{\"web\"}}}}: invalid label selector]",
    );
    case(
        json!({"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}),
        "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
    );
    case(
        json!({"strategy": {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "150%"}}}),
        "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 150%: must not be greater than 100%",
    );
    case(
        json!({"strategy": {"rollingUpdate": {"maxSurge": "one", "maxUnavailable": 1}}}),
        "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxSurge: Invalid value: one: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    );
    case(
        json!({"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}),
        "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    );
    case(
        json!({"minReadySeconds": 600}),
        "Deployment.apps \"web\" is invalid: spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds",
    );
    case(
        json!({"template": {"spec": {"restartPolicy": "Never"}}}),
        "Deployment.apps \"web\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
    );
    case(
        json!({"template": {"metadata": {"labels": {"app": "web", "tier": "front end"}}}}),
        "Deployment.apps \"web\" is invalid: spec.template.labels: Invalid value: \"front end\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
}

#[test]
fn replicaset_reuses_the_deployment_wording() {
    let mut rs = deployment(json!({}));
    rs["kind"] = json!("ReplicaSet");
    rs["spec"]["selector"] = json!({"matchLabels": {}});
    rs["spec"].as_object_mut().map(|s| s.remove("strategy"));
    rejected(
        rs,
        "ReplicaSet.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
    );
}

fn stateful_set(patch: serde_json::Value) -> serde_json::Value {
    let mut sts = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "serviceName": "db",
            "replicas": 3,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "postgres", "image": "postgres:16"}]},
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    });
    super::merge(&mut sts["spec"], patch);
    sts
}

#[test]
fn statefulset_rules() {
    accepted(stateful_set(json!({})));
    rejected(
        stateful_set(json!({"podManagementPolicy": "Sequential", "replicas": -3})),
        "StatefulSet.apps \"db\" is invalid: [spec.podManagementPolicy: Invalid value: \"Sequential\": must be 'OrderedReady' or 'Parallel', spec.replicas: Invalid value: -3: must be greater than or equal to 0]",
    );
    rejected(
        stateful_set(json!({"template": {"metadata": {"labels": {"app": "postgres"}}}})),
        "StatefulSet.apps \"db\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"postgres\"}: `selector` does not match template `labels`",
    );
    rejected(
        stateful_set(json!({"template": {"spec": {"restartPolicy": "OnFailure"}}})),
        "StatefulSet.apps \"db\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"",
    );
    rejected(
        stateful_set(json!({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Remove"}})),
        "StatefulSet.apps \"db\" is invalid: spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Remove\": supported values: \"Retain\", \"Delete\"",
    );
    // Go leaves the pod spec to pod creation: a missing image passes here.
    accepted(stateful_set(
        json!({"template": {"spec": {"containers": [{"name": "postgres"}]}}}),
    ));
}

fn daemon_set(patch: serde_json::Value) -> serde_json::Value {
    let mut ds = json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "node-exporter", "namespace": "monitoring"},
        "spec": {
            "selector": {"matchLabels": {"app": "node-exporter"}},
            "template": {
                "metadata": {"labels": {"app": "node-exporter"}},
                "spec": {"containers": [{"name": "exporter", "image": "prom/node-exporter:v1.8.2"}]},
            },
        },
    });
    super::merge(&mut ds["spec"], patch);
    ds
}

#[test]
fn daemonset_rules() {
    accepted(daemon_set(json!({})));
    rejected(
        daemon_set(
            json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}}),
        ),
        "DaemonSet.apps \"node-exporter\" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
    );
    rejected(
        daemon_set(
            json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}}}),
        ),
        "DaemonSet.apps \"node-exporter\" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 10%: may not be set when maxUnavailable is non-zero",
    );
    rejected(
        daemon_set(json!({"selector": null})),
        "DaemonSet.apps \"node-exporter\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"node-exporter\"}: `selector` does not match template `labels`",
    );
}
