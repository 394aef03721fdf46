//! Service rules.

use serde_json::json;

use super::{accepted, merge, rejected};

fn service(patch: serde_json::Value) -> serde_json::Value {
    let mut svc = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    });
    merge(&mut svc["spec"], patch);
    svc
}

#[test]
fn service_rules() {
    #[track_caller]
    fn case(patch: serde_json::Value, causes: &str) {
        rejected(
            service(patch),
            &format!("Service \"web\" is invalid: {causes}"),
        );
    }
    accepted(service(json!({})));
    accepted(service(json!({"clusterIP": "None", "ports": null})));
    accepted(service(
        json!({"type": "ExternalName", "externalName": "db.example.com.", "ports": null, "selector": null}),
    ));
    case(json!({"ports": null}), "spec.ports: Required value");
    case(
        json!({"ports": [{"port": 0}]}),
        "[spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive]",
    );
    case(
        json!({"ports": [{"name": "http", "port": 80}, {"port": 443}]}),
        "spec.ports[1].name: Required value",
    );
    case(
        json!({"ports": [{"name": "http", "port": 80}, {"name": "alt", "port": 80}]}),
        "spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}",
    );
    case(
        json!({"type": "NodePort", "ports": [{"name": "http", "port": 80, "nodePort": 8080}]}),
        "spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767",
    );
    case(
        json!({"ports": [{"name": "http", "port": 80, "nodePort": 30080}]}),
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    );
    case(
        json!({"type": "Ingress"}),
        "spec.type: Unsupported value: \"Ingress\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
    );
    case(
        json!({"selector": {"app": "web/frontend"}}),
        "spec.selector: Invalid value: \"web/frontend\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
    case(
        json!({"type": "ExternalName", "externalName": "", "ports": null}),
        "spec.externalName: Required value",
    );
}
