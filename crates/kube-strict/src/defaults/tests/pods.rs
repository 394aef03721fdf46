//! Pod defaults: template-level defaults, pod-only defaults and the admission plugins.

use serde_json::json;

use super::{assert_json_eq, defaulted};
use crate::defaults::mount_service_account_token;

#[test]
fn kubectl_run_pod_reads_back_with_admission_defaults() {
    let mut pod = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"run": "nginx"}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
    }));
    mount_service_account_token(&mut pod, "7xvkq");
    let expected = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"run": "nginx"}},
        "spec": {
            "containers": [{
                "image": "nginx",
                "imagePullPolicy": "Always",
                "name": "nginx",
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                    "name": "kube-api-access-7xvkq",
                    "readOnly": true,
                }],
            }],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
            ],
            "volumes": [{
                "name": "kube-api-access-7xvkq",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                        {"downwardAPI": {"items": [{
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            "path": "namespace",
                        }]}},
                    ],
                },
            }],
        },
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    });
    assert_json_eq(&pod, &expected);

    // A second pass (e.g. an update) must not mount twice.
    let before = pod.clone();
    mount_service_account_token(&mut pod, "zzzzz");
    assert_json_eq(&pod, &before);
}

#[test]
fn token_is_not_mounted_when_automount_is_off_or_path_taken() {
    let mut off = json!({"spec": {
        "automountServiceAccountToken": false,
        "containers": [{"name": "a", "image": "app:1"}],
    }});
    let before = off.clone();
    mount_service_account_token(&mut off, "abcde");
    assert_json_eq(&off, &before);

    let mut taken = json!({"spec": {
        "containers": [
            {"name": "a", "image": "app:1", "volumeMounts": [
                {"name": "own", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
            ]},
            {"name": "b", "image": "app:1"},
        ],
        "volumes": [{"name": "own", "secret": {"secretName": "token"}}],
    }});
    mount_service_account_token(&mut taken, "abcde");
    assert_eq!(
        taken["spec"]["containers"][0]["volumeMounts"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(
        taken["spec"]["containers"][1]["volumeMounts"][0]["name"],
        json!("kube-api-access-abcde")
    );
    assert_eq!(taken["spec"]["volumes"].as_array().map(Vec::len), Some(2));
}

#[test]
fn image_pull_policy_follows_the_tag() {
    #[track_caller]
    fn case(image: &str, expected: &str) {
        let pod = defaulted(json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": image}]},
        }));
        assert_eq!(
            pod["spec"]["containers"][0]["imagePullPolicy"],
            json!(expected),
            "image {image}"
        );
    }
    case("nginx", "Always");
    case("nginx:latest", "Always");
    case("nginx:1.27", "IfNotPresent");
    case("registry.example.com:5000/team/app", "Always");
    case("registry.example.com:5000/team/app:v2", "IfNotPresent");
    case(
        "nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
        "IfNotPresent",
    );
    case(
        "nginx:latest@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
        "Always",
    );
    case("Nginx", "IfNotPresent");
    case("", "IfNotPresent");
}

#[test]
fn limits_become_requests_and_decide_qos() {
    #[track_caller]
    fn case(resources: &serde_json::Value, requests: &serde_json::Value, qos: &str) {
        let pod = defaulted(json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "app:1", "resources": resources}]},
        }));
        assert_json_eq(
            &pod["spec"]["containers"][0]["resources"]["requests"],
            requests,
        );
        assert_eq!(pod["status"]["qosClass"], json!(qos));
    }
    case(
        &json!({"limits": {"cpu": "0.5", "memory": "256Mi"}}),
        &json!({"cpu": "500m", "memory": "256Mi"}),
        "Guaranteed",
    );
    case(
        &json!({"limits": {"cpu": 1, "memory": "1Gi"}, "requests": {"cpu": "100m"}}),
        &json!({"cpu": "100m", "memory": "1Gi"}),
        "Burstable",
    );
    case(
        &json!({"requests": {"memory": "64Mi"}}),
        &json!({"memory": "64Mi"}),
        "Burstable",
    );
    case(&json!({}), &serde_json::Value::Null, "BestEffort");
}

#[test]
fn probes_volumes_and_env_refs_in_a_template() {
    let out = defaulted(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api"},
        "spec": {
            "selector": {"matchLabels": {"app": "api"}},
            "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {
                    "serviceAccount": "api",
                    "containers": [{
                        "name": "api",
                        "image": "example/api:2.1",
                        "env": [
                            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                            {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}},
                        ],
                        "livenessProbe": {"httpGet": {"port": 8080}},
                        "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 5},
                        "startupProbe": {"grpc": {"port": 9090}, "failureThreshold": 30},
                        "lifecycle": {"preStop": {"httpGet": {"path": "/drain", "port": 8080}}},
                    }],
                    "volumes": [
                        {"name": "scratch"},
                        {"name": "config", "configMap": {"name": "api-config"}},
                        {"name": "tls", "secret": {"secretName": "api-tls", "defaultMode": 256}},
                        {"name": "host", "hostPath": {"path": "/var/log"}},
                    ],
                },
            },
        },
    }));
    let spec = &out["spec"]["template"]["spec"];
    let container = &spec["containers"][0];
    assert_json_eq(
        &container["livenessProbe"],
        &json!({
            "failureThreshold": 3,
            "httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"},
            "periodSeconds": 10,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        }),
    );
    assert_eq!(container["readinessProbe"]["periodSeconds"], json!(5));
    assert_json_eq(
        &container["startupProbe"]["grpc"],
        &json!({"port": 9090, "service": ""}),
    );
    assert_eq!(container["startupProbe"]["failureThreshold"], json!(30));
    assert_json_eq(
        &container["lifecycle"]["preStop"]["httpGet"],
        &json!({"path": "/drain", "port": 8080, "scheme": "HTTP"}),
    );
    assert_eq!(
        container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
        json!("v1")
    );
    assert_eq!(
        container["env"][1]["valueFrom"]["resourceFieldRef"]["divisor"],
        json!("0")
    );
    assert_json_eq(
        &spec["volumes"],
        &json!([
            {"name": "scratch", "emptyDir": {}},
            {"name": "config", "configMap": {"name": "api-config", "defaultMode": 420}},
            {"name": "tls", "secret": {"secretName": "api-tls", "defaultMode": 256}},
            {"name": "host", "hostPath": {"path": "/var/log", "type": ""}},
        ]),
    );
    assert_eq!(spec["serviceAccountName"], json!("api"));
    assert_eq!(spec["serviceAccount"], json!("api"));
}

#[test]
fn pod_only_defaults_respect_existing_tolerations_priority_and_host_network() {
    let pod = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "node-agent"},
        "spec": {
            "hostNetwork": true,
            "priorityClassName": "system-node-critical",
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "agent", "image": "agent:1", "ports": [{"containerPort": 9100}]}],
        },
    }));
    let spec = &pod["spec"];
    assert_json_eq(&spec["tolerations"], &json!([{"operator": "Exists"}]));
    assert_eq!(spec["priority"], json!(2_000_001_000));
    assert_eq!(spec["containers"][0]["ports"][0]["hostPort"], json!(9100));

    let partial = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
            "containers": [{"name": "c", "image": "app:1"}],
        },
    }));
    let keys: Vec<_> = partial["spec"]["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["key"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "node.kubernetes.io/unreachable",
            "node.kubernetes.io/not-ready"
        ]
    );
}
