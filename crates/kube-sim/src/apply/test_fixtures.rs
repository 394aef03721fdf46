//! Requests and objects shared by the apply tests: a Deployment as kubectl sends it, a
//! Service, and helpers to read ownership back out of `managedFields`.

use serde_json::{Value, json};

use super::*;

pub const T1: &str = "2025-03-01T10:00:00Z";
pub const T2: &str = "2025-03-01T10:05:00Z";
pub const T3: &str = "2025-03-01T10:10:00Z";

pub fn opts<'a>(manager: &'a str, api_version: &'a str, time: &'a str) -> ApplyOptions<'a> {
    ApplyOptions {
        manager,
        force: false,
        api_version,
        time,
        subresource: None,
        reset_status: true,
    }
}

/// What `kubectl apply --server-side` sends for a small web Deployment.
pub fn deployment(replicas: Option<i64>, image: &str, env: &Value) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web", "tier": "frontend"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "web", "image": image, "ports": [{"containerPort": 80}], "env": env
                }]}
            }
        }
    });
    if replicas.is_none() {
        d["spec"].as_object_mut().unwrap().shift_remove("replicas");
    }
    d
}

pub fn env(pairs: &[(&str, &str)]) -> Value {
    pairs
        .iter()
        .map(|(n, v)| json!({"name": n, "value": v}))
        .collect()
}

pub fn kubectl_deployment() -> Value {
    deployment(
        Some(3),
        "nginx:1.27",
        &env(&[("MODE", "prod"), ("LOG", "info")]),
    )
}

pub fn applied(live: Option<&Value>, body: &Value, manager: &str, time: &str) -> Value {
    apply(live, body, &opts(manager, "apps/v1", time)).unwrap()
}

pub fn fields(object: &Value, manager: &str) -> Value {
    owned_by(object, manager).to_fields_v1()
}

pub fn owns(object: &Value, manager: &str, path: &str) -> bool {
    owned_by(object, manager)
        .paths()
        .iter()
        .any(|p| path_string(p) == path)
}

pub fn container(object: &Value, name: &str) -> Value {
    let containers = object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    containers
        .iter()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

pub fn service(target_port: i64) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": target_port}]}
    })
}
