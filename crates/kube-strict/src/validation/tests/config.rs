//! ConfigMap, Secret and PersistentVolumeClaim rules.

use serde_json::json;

use super::{accepted, rejected};

#[test]
fn config_map_keys_and_size() {
    let config_map = |data: serde_json::Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app-config"}, "data": data});
    accepted(config_map(
        json!({"app.properties": "a=b", "LOG_LEVEL": "debug", "nginx-conf": "x"}),
    ));
    rejected(
        config_map(json!({"app config": "x"})),
        "ConfigMap \"app-config\" is invalid: data[app config]: Invalid value: \"app config\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
    rejected(
        config_map(json!({"..data": "x"})),
        "ConfigMap \"app-config\" is invalid: data[..data]: Invalid value: \"..data\": must not start with '..'",
    );
    rejected(
        config_map(json!({"a": "x".repeat(600_000), "b": "y".repeat(500_000)})),
        "ConfigMap \"app-config\" is invalid: []: Too long: may not be more than 1048576 bytes",
    );
}

#[test]
fn secret_types() {
    let secret = |kind: &str, data: serde_json::Value| json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "type": kind, "data": data});
    accepted(secret("Opaque", json!({"password": "czNjcjN0"})));
    rejected(
        secret("kubernetes.io/tls", json!({"tls.crt": "LS0t"})),
        "Secret \"creds\" is invalid: data[tls.key]: Required value",
    );
    rejected(
        secret("kubernetes.io/dockerconfigjson", json!({})),
        "Secret \"creds\" is invalid: data[.dockerconfigjson]: Required value",
    );
    rejected(
        secret("Opaque", json!({"db password": "eA=="})),
        "Secret \"creds\" is invalid: data[db password]: Invalid value: \"db password\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
}

#[test]
fn claim_rules() {
    let claim = |spec: serde_json::Value| json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}, "spec": spec});
    accepted(claim(
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}),
    ));
    rejected(
        claim(json!({"resources": {"requests": {"storage": "5Gi"}}})),
        "PersistentVolumeClaim \"data\" is invalid: spec.accessModes: Required value: at least 1 access mode is required",
    );
    rejected(
        claim(json!({"accessModes": ["ReadWriteOnly"], "resources": {}})),
        "PersistentVolumeClaim \"data\" is invalid: [spec.accessModes: Unsupported value: \"ReadWriteOnly\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\", spec.resources[storage]: Required value]",
    );
    rejected(
        claim(
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}),
        ),
        "PersistentVolumeClaim \"data\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero",
    );
}
