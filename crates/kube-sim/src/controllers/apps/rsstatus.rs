//! A ReplicaSet's status as its controller computes it (`calculateStatus`): pods by
//! template labels, readiness and availability, the ReplicaFailure condition while pods
//! cannot be created or deleted, and the observed generation.

use super::meta::{int_at, labels, str_at};
use super::pods::{is_available, is_ready};
use jiff::Timestamp;
use serde_json::{Map, Value, json};

pub(super) fn replicas(rs: &Value) -> i64 {
    int_at(rs, "/spec/replicas").unwrap_or(1)
}

/// `calculateStatus` plus the observedGeneration `updateReplicaSetStatus` writes.
pub(super) fn status_of(
    rs: &Value,
    active: &[&Value],
    error: Option<&str>,
    now: Timestamp,
    stamp: &str,
) -> Value {
    let template_labels = rs
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let min_ready = int_at(rs, "/spec/minReadySeconds").unwrap_or(0) as i32;
    let fully_labeled = active
        .iter()
        .filter(|p| {
            let l = labels(p);
            template_labels.iter().all(|(k, v)| l.get(k) == Some(v))
        })
        .count();
    let ready = active.iter().filter(|p| is_ready(p)).count();
    let available = active
        .iter()
        .filter(|p| is_available(p, min_ready, now))
        .count();
    let mut conditions: Vec<Value> = rs
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has_failure = conditions
        .iter()
        .any(|c| str_at(c, "/type") == "ReplicaFailure");
    match error {
        Some(message) if !has_failure => {
            let reason = match (active.len() as i64).cmp(&replicas(rs)) {
                std::cmp::Ordering::Less => "FailedCreate",
                std::cmp::Ordering::Greater => "FailedDelete",
                std::cmp::Ordering::Equal => "",
            };
            conditions.push(
                json!({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": stamp,
                                   "reason": reason, "message": message}),
            );
        }
        None if has_failure => conditions.retain(|c| str_at(c, "/type") != "ReplicaFailure"),
        _ => {}
    }
    let mut status = Map::new();
    status.insert("replicas".into(), json!(active.len()));
    for (k, v) in [
        ("fullyLabeledReplicas", fully_labeled),
        ("readyReplicas", ready),
        ("availableReplicas", available),
    ] {
        if v != 0 {
            status.insert(k.into(), json!(v));
        }
    }
    if let Some(g) = int_at(rs, "/metadata/generation").filter(|g| *g != 0) {
        status.insert("observedGeneration".into(), json!(g));
    }
    if !conditions.is_empty() {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    Value::Object(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_counts_labeled_ready_and_available_pods() {
        let rs = json!({"metadata": {"name": "web-7d4b9c8f5d", "generation": 3},
            "spec": {"replicas": 3, "minReadySeconds": 10,
                     "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": "7d4b9c8f5d"}}}}});
        let pod = |labels: Value, ready_at: Option<&str>| {
            let conditions = ready_at.map_or(
                json!([]),
                |t| json!([{"type": "Ready", "status": "True", "lastTransitionTime": t}]),
            );
            json!({"metadata": {"labels": labels}, "status": {"phase": "Running", "conditions": conditions}})
        };
        let full = json!({"app": "web", "pod-template-hash": "7d4b9c8f5d"});
        let pods = [
            pod(full.clone(), Some("2026-01-01T00:00:00Z")),
            pod(full.clone(), Some("2026-01-01T00:00:55Z")),
            pod(json!({"app": "web"}), None),
        ];
        let refs: Vec<&Value> = pods.iter().collect();
        let now = super::super::meta::parse_time("2026-01-01T00:01:00Z").unwrap();
        let stamp = "2026-01-01T00:01:00Z";
        assert_eq!(
            status_of(&rs, &refs, None, now, stamp),
            json!({"replicas": 3, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 1, "observedGeneration": 3})
        );
        let failed = status_of(
            &rs,
            &refs[..2],
            Some("pods \"web-7d4b9c8f5d-\" is forbidden: quota"),
            now,
            stamp,
        );
        assert_eq!(
            failed["conditions"],
            json!([{"type": "ReplicaFailure", "status": "True",
            "lastTransitionTime": stamp, "reason": "FailedCreate", "message": "pods \"web-7d4b9c8f5d-\" is forbidden: quota"}])
        );
        let mut recovered = rs.clone();
        recovered["status"] = failed;
        assert!(
            status_of(&recovered, &refs, None, now, stamp)
                .get("conditions")
                .is_none()
        );
    }
}
