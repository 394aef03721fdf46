//! Defaults that only bare Pods get: `SetDefaults_Pod` and the admission plugins every
//! real cluster runs on pod creation (ServiceAccount, Priority, DefaultTolerationSeconds),
//! plus the status `PrepareForCreate` writes. Templates never carry these.

use serde_json::{Value, json};

use super::json::{Object, child, default_ptr, default_str, elements, existing, str_field};
use super::pod_spec::{default_pod_spec, each_container, mirror_service_account};
use super::quantity::Quantity;

/// Where the ServiceAccount admission plugin mounts the API token.
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

pub(crate) fn default_pod(pod: &mut Object) {
    let Some(spec) = child(pod, "spec") else {
        return;
    };
    each_container(spec, requests_from_limits);
    default_ptr(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        each_container(spec, host_ports_from_container_ports);
    }
    default_pod_spec(spec);

    default_str(spec, "serviceAccountName", "default");
    mirror_service_account(spec);
    let priority = match str_field(spec, "priorityClassName") {
        "system-node-critical" => 2_000_001_000,
        "system-cluster-critical" => 2_000_000_000,
        _ => 0,
    };
    default_ptr(spec, "priority", json!(priority));
    default_ptr(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    add_default_tolerations(spec);

    let qos = qos_class(spec);
    let status_unset = match pod.get("status") {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(_) => false,
    };
    if status_unset {
        pod.insert(
            "status".into(),
            json!({"phase": "Pending", "qosClass": qos}),
        );
    }
}

/// A limit without a request makes the request equal to the limit.
fn requests_from_limits(container: &mut Object) {
    let Some(resources) = existing(container, "resources") else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    if let Some(requests) = child(resources, "requests") {
        for (name, value) in limits {
            requests.entry(name).or_insert(value);
        }
    }
}

fn host_ports_from_container_ports(container: &mut Object) {
    for port in elements(container, "ports") {
        let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
        if host_port == 0
            && let Some(container_port) = port.get("containerPort").cloned()
        {
            port.insert("hostPort".into(), container_port);
        }
    }
}

/// DefaultTolerationSeconds: tolerate not-ready and unreachable nodes for 300s unless the
/// pod already tolerates them (an empty key or effect tolerates everything).
fn add_default_tolerations(spec: &mut Object) {
    let existing: Vec<(String, String)> = spec
        .get("tolerations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|t| {
            (
                str_field(t, "key").to_string(),
                str_field(t, "effect").to_string(),
            )
        })
        .collect();
    let tolerates = |taint: &str| {
        existing.iter().any(|(key, effect)| {
            (key == taint || key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        })
    };
    let mut added = Vec::new();
    for taint in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        if !tolerates(taint) {
            added.push(json!({
                "effect": "NoExecute",
                "key": taint,
                "operator": "Exists",
                "tolerationSeconds": 300,
            }));
        }
    }
    if added.is_empty() {
        return;
    }
    let slot = spec.entry("tolerations").or_insert(json!([]));
    if slot.is_null() {
        *slot = json!([]);
    }
    if let Some(list) = slot.as_array_mut() {
        list.extend(added);
    }
}

/// `qos.GetPodQOS` over cpu and memory of regular and init containers.
pub(crate) fn qos_class(spec: &mut Object) -> &'static str {
    let mut requests: Vec<(String, Quantity)> = Vec::new();
    let mut limits: Vec<(String, Quantity)> = Vec::new();
    let mut guaranteed = true;
    each_container(spec, |container| {
        let resources = container.get("resources").and_then(Value::as_object);
        let list = |name: &str| {
            resources
                .and_then(|r| r.get(name))
                .and_then(Value::as_object)
                .map(positive_compute)
                .unwrap_or_default()
        };
        for (name, q) in list("requests") {
            accumulate(&mut requests, name, q);
        }
        let container_limits = list("limits");
        let has = |r: &str| container_limits.iter().any(|(n, _)| n == r);
        if !(has("cpu") && has("memory")) {
            guaranteed = false;
        }
        for (name, q) in container_limits {
            accumulate(&mut limits, name, q);
        }
    });
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed {
        guaranteed = requests.iter().all(|(name, req)| {
            limits
                .iter()
                .any(|(n, lim)| n == name && lim.cmp_value(req).is_eq())
        });
    }
    if guaranteed && requests.len() == limits.len() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn positive_compute(list: &Object) -> Vec<(String, Quantity)> {
    list.iter()
        .filter(|(name, _)| *name == "cpu" || *name == "memory")
        .filter_map(|(name, v)| Some((name.clone(), Quantity::from_json(v)?.ok()?)))
        .filter(|(_, q)| !q.is_zero() && !q.is_negative())
        .collect()
}

fn accumulate(totals: &mut Vec<(String, Quantity)>, name: String, q: Quantity) {
    match totals.iter_mut().find(|(n, _)| *n == name) {
        Some((_, total)) => *total = total.add(&q),
        None => totals.push((name, q)),
    }
}

/// The ServiceAccount admission plugin's projected token volume (`kube-api-access-<suffix>`)
/// and its read-only mount in every container that does not already mount the token path.
/// The server picks the random `suffix` (5 characters on a real cluster). Does nothing when
/// `spec.automountServiceAccountToken` is false.
pub fn mount_service_account_token(pod: &mut Value, suffix: &str) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        == Some(false)
    {
        return;
    }
    let existing_volume = elements(spec, "volumes")
        .map(|v| str_field(v, "name").to_string())
        .find(|name| name.starts_with("kube-api-access-"));
    let volume_name = existing_volume
        .clone()
        .unwrap_or_else(|| format!("kube-api-access-{suffix}"));
    let mut needs_volume = false;
    for list in ["initContainers", "containers"] {
        for container in elements(spec, list) {
            let mounted = elements(container, "volumeMounts")
                .any(|m| str_field(m, "mountPath") == TOKEN_MOUNT_PATH);
            if mounted {
                continue;
            }
            let mounts = container.entry("volumeMounts").or_insert(json!([]));
            if mounts.is_null() {
                *mounts = json!([]);
            }
            if let Some(mounts) = mounts.as_array_mut() {
                mounts.push(json!({
                    "mountPath": TOKEN_MOUNT_PATH,
                    "name": volume_name,
                    "readOnly": true,
                }));
                needs_volume = true;
            }
        }
    }
    if existing_volume.is_none() && needs_volume {
        let volumes = spec.entry("volumes").or_insert(json!([]));
        if volumes.is_null() {
            *volumes = json!([]);
        }
        if let Some(volumes) = volumes.as_array_mut() {
            volumes.push(token_volume(&volume_name));
        }
    }
}

fn token_volume(name: &str) -> Value {
    json!({
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    "name": "kube-root-ca.crt",
                }},
                {"downwardAPI": {"items": [{
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                    "path": "namespace",
                }]}},
            ],
        },
    })
}
