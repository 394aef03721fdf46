//! Pod spec rules, reached through a Deployment's template and through bare Pods.

use serde_json::json;

use super::{accepted, pod_spec, rejected};

const PREFIX: &str = "Deployment.apps \"web\" is invalid: ";

#[track_caller]
fn case(spec_patch: &serde_json::Value, causes: &str) {
    rejected(pod_spec(spec_patch), &format!("{PREFIX}{causes}"));
}

#[test]
fn containers_names_and_images() {
    case(
        &json!({"containers": []}),
        "spec.template.spec.containers: Required value",
    );
    case(
        &json!({"containers": [{"name": "web", "image": "nginx"}, {"name": "web", "image": "envoy"}]}),
        "spec.template.spec.containers[1].name: Duplicate value: \"web\"",
    );
    case(
        &json!({"containers": [{"name": "Web_1", "image": "nginx"}]}),
        "spec.template.spec.containers[0].name: Invalid value: \"Web_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
    case(
        &json!({"containers": [{"image": "nginx"}]}),
        "spec.template.spec.containers[0].name: Required value",
    );
    case(
        &json!({"initContainers": [{"name": "nginx", "image": "busybox"}]}),
        "spec.template.spec.initContainers[0].name: Duplicate value: \"nginx\"",
    );
    case(
        &json!({"containers": [{"name": "nginx", "image": "nginx", "imagePullPolicy": "Sometimes"}]}),
        "spec.template.spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\"",
    );
}

#[test]
fn container_ports() {
    let with_ports = |ports: serde_json::Value| json!({"containers": [{"name": "nginx", "image": "nginx", "ports": ports}]});
    case(
        &with_ports(json!([{"containerPort": 70000}])),
        "spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
    );
    case(
        &with_ports(json!([{"name": "http"}])),
        "spec.template.spec.containers[0].ports[0].containerPort: Required value",
    );
    case(
        &with_ports(json!([{"containerPort": 80, "protocol": "HTTP"}])),
        "spec.template.spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
    );
    case(
        &with_ports(json!([{"containerPort": 8080, "name": "web-metrics-port"}])),
        "spec.template.spec.containers[0].ports[0].name: Invalid value: \"web-metrics-port\": must be no more than 15 characters",
    );
    case(
        &with_ports(
            json!([{"containerPort": 80, "name": "http"}, {"containerPort": 81, "name": "http"}]),
        ),
        "spec.template.spec.containers[0].ports[1].name: Duplicate value: \"http\"",
    );
}

#[test]
fn resources_env_and_mounts() {
    let container = |extra: serde_json::Value| {
        let mut c = json!({"name": "nginx", "image": "nginx:1.27"});
        super::merge(&mut c, extra);
        json!({"containers": [c]})
    };
    case(
        &container(json!({"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1000m"}}})),
        "spec.template.spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
    );
    case(
        &container(
            json!({"resources": {"requests": {"memory": "0.5Gi"}, "limits": {"memory": "256Mi"}}}),
        ),
        "spec.template.spec.containers[0].resources.requests: Invalid value: \"512Mi\": must be less than or equal to memory limit of 256Mi",
    );
    case(
        &container(json!({"resources": {"limits": {"cpus": "1"}}})),
        "spec.template.spec.containers[0].resources.limits[cpus]: Invalid value: \"cpus\": must be a standard resource for containers",
    );
    case(
        &container(json!({"resources": {"requests": {"example.com/gpu": "1"}}})),
        "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
    );
    case(
        &container(json!({"env": [{"name": "A=B", "value": "x"}]})),
        "spec.template.spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='",
    );
    case(
        &container(
            json!({"env": [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db"}}}]}),
        ),
        "spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value",
    );
    case(
        &container(json!({"volumeMounts": [{"name": "config", "mountPath": "/etc/nginx/conf.d"}]})),
        "spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"config\"",
    );
    let mut with_volume =
        container(json!({"volumeMounts": [{"name": "config", "mountPath": "/etc/nginx/conf.d"}]}));
    with_volume["volumes"] = json!([{"name": "config", "configMap": {"name": "nginx-conf"}}]);
    accepted(pod_spec(&with_volume));
    case(
        &json!({
            "containers": [{"name": "nginx", "image": "nginx"}],
            "volumes": [{"name": "config", "configMap": {}}, {"name": "config", "emptyDir": {}}],
        }),
        "spec.template.spec.volumes[0].configMap.name: Required value",
    );
}

#[test]
fn probes() {
    let with_probe = |kind: &str, probe: serde_json::Value| json!({"containers": [{"name": "nginx", "image": "nginx", kind: probe}]});
    case(
        &with_probe("livenessProbe", json!({"periodSeconds": 5})),
        "spec.template.spec.containers[0].livenessProbe: Required value: must specify a handler type",
    );
    case(
        &with_probe(
            "livenessProbe",
            json!({"httpGet": {"port": 8080}, "successThreshold": 2}),
        ),
        "spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
    );
    case(
        &with_probe(
            "readinessProbe",
            json!({"httpGet": {"port": 8080}, "tcpSocket": {"port": 8080}}),
        ),
        "spec.template.spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type",
    );
    case(
        &with_probe(
            "readinessProbe",
            json!({"httpGet": {"port": "metrics_port"}}),
        ),
        "spec.template.spec.containers[0].readinessProbe.httpGet.port: Invalid value: \"metrics_port\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
    );
    accepted(pod_spec(&with_probe(
        "readinessProbe",
        json!({"httpGet": {"path": "/healthz", "port": "http"}, "successThreshold": 3}),
    )));
}

#[test]
fn pod_level_policies_and_bare_pods() {
    case(
        &json!({"dnsPolicy": "ClusterFirstWithoutHostNet"}),
        "spec.template.spec.dnsPolicy: Unsupported value: \"ClusterFirstWithoutHostNet\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"",
    );
    case(
        &json!({"restartPolicy": "Sometimes"}),
        "[spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\", spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\"]",
    );
    case(
        &json!({"serviceAccountName": "CI_Bot"}),
        "spec.template.spec.serviceAccountName: Invalid value: \"CI_Bot\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
    rejected(
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "debug", "namespace": "default"},
            "spec": {"containers": [{"name": "shell", "image": ""}], "activeDeadlineSeconds": 0},
        }),
        "Pod \"debug\" is invalid: [spec.containers[0].image: Required value, spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive]",
    );
    accepted(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "debug"},
        "spec": {"containers": [{"name": "shell", "image": "busybox", "command": ["sleep", "3600"]}]},
    }));
}
