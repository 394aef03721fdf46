//! Pods as the ReplicaSet controller judges them (`podutil`): active, ready, available
//! after minReadySeconds, and the order in which surplus pods are deleted
//! (`controller.ActivePodsWithRanks` with LogarithmicScaleDown, on since 1.22).

use super::meta::{annotation, parse_time, str_at, uid};
use jiff::Timestamp;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::HashMap;

// One reading of a pod's state serves every controller.
pub(super) use crate::controllers::workloads::pods::{is_active, is_ready, phase};

fn ready_condition(pod: &Value) -> Option<&Value> {
    pod.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| str_at(c, "/type") == "Ready")
}

/// When the pod last became Ready, if it is.
pub(super) fn ready_since(pod: &Value) -> Option<Timestamp> {
    ready_condition(pod)
        .filter(|c| str_at(c, "/status") == "True")
        .and_then(|c| parse_time(str_at(c, "/lastTransitionTime")))
}

/// `podutil.IsPodAvailable`: ready for more than `min_ready_seconds`.
pub(super) fn is_available(pod: &Value, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !is_ready(pod) {
        return false;
    }
    min_ready_seconds == 0
        || ready_since(pod).is_some_and(|t| {
            t + std::time::Duration::from_secs(u64::try_from(min_ready_seconds).unwrap_or(0)) < now
        })
}

fn node(pod: &Value) -> &str {
    str_at(pod, "/spec/nodeName")
}

fn phase_ordinal(pod: &Value) -> u8 {
    match phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

fn deletion_cost(pod: &Value) -> i64 {
    annotation(pod, "controller.kubernetes.io/pod-deletion-cost")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn max_restarts(pod: &Value) -> i64 {
    pod.pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
        .max()
        .unwrap_or(0)
}

/// `logarithmicRankDiff`: compare ages on a log2 scale so pods of similar age tie.
fn log_rank_diff(a: Option<Timestamp>, b: Option<Timestamp>, now: Timestamp) -> i64 {
    let rank = |t: Timestamp| {
        let d = now.duration_since(t).as_nanos();
        if d > 0 { (d as f64).log2() as i64 } else { -1 }
    };
    match (a, b) {
        (Some(a), Some(b)) => rank(a) - rank(b),
        _ => 0,
    }
}

fn created(pod: &Value) -> Option<Timestamp> {
    parse_time(str_at(pod, "/metadata/creationTimestamp"))
}

/// Whether `a` should be deleted before `b` (`ActivePodsWithRanks.Less`).
fn delete_first(a: (&Value, usize), b: (&Value, usize), now: Timestamp) -> Option<bool> {
    let ((pa, ra), (pb, rb)) = (a, b);
    if node(pa) != node(pb) && (node(pa).is_empty() || node(pb).is_empty()) {
        return Some(node(pa).is_empty());
    }
    if phase_ordinal(pa) != phase_ordinal(pb) {
        return Some(phase_ordinal(pa) < phase_ordinal(pb));
    }
    if is_ready(pa) != is_ready(pb) {
        return Some(!is_ready(pa));
    }
    if deletion_cost(pa) != deletion_cost(pb) {
        return Some(deletion_cost(pa) < deletion_cost(pb));
    }
    if ra != rb {
        return Some(ra > rb);
    }
    if is_ready(pa) && is_ready(pb) && ready_since(pa) != ready_since(pb) {
        let diff = log_rank_diff(ready_since(pa), ready_since(pb), now);
        return Some(if diff == 0 {
            uid(pa) < uid(pb)
        } else {
            diff < 0
        });
    }
    if max_restarts(pa) != max_restarts(pb) {
        return Some(max_restarts(pa) > max_restarts(pb));
    }
    if created(pa) != created(pb) {
        let diff = log_rank_diff(created(pa), created(pb), now);
        return Some(if diff == 0 {
            uid(pa) < uid(pb)
        } else {
            diff < 0
        });
    }
    None
}

/// The `count` pods to delete: unscheduled before scheduled, pending before running, not
/// ready before ready, lower deletion cost, doubled up on a node with related pods,
/// recently ready, restarting, newest.
pub(super) fn pods_to_delete<'a>(
    pods: &[&'a Value],
    related: &[&Value],
    count: usize,
    now: Timestamp,
) -> Vec<&'a Value> {
    if count >= pods.len() {
        return pods.to_vec();
    }
    let mut on_node: HashMap<&str, usize> = HashMap::new();
    for p in related.iter().filter(|p| is_active(p)) {
        *on_node.entry(node(p)).or_default() += 1;
    }
    let mut ranked: Vec<(&Value, usize)> = pods
        .iter()
        .map(|p| (*p, on_node.get(node(p)).copied().unwrap_or(0)))
        .collect();
    ranked.sort_by(
        |a, b| match (delete_first(*a, *b, now), delete_first(*b, *a, now)) {
            (Some(true), _) => Ordering::Less,
            (_, Some(true)) => Ordering::Greater,
            _ => Ordering::Equal,
        },
    );
    ranked.into_iter().take(count).map(|(p, _)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, node: &str, phase: &str, ready_at: Option<&str>, created: &str) -> Value {
        let mut conditions = vec![];
        if let Some(t) = ready_at {
            conditions.push(json!({"type": "Ready", "status": "True", "lastTransitionTime": t}));
        } else if phase == "Running" {
            conditions
                .push(json!({"type": "Ready", "status": "False", "lastTransitionTime": created}));
        }
        json!({"metadata": {"name": name, "uid": format!("uid-{name}"), "creationTimestamp": created},
               "spec": {"nodeName": node}, "status": {"phase": phase, "conditions": conditions}})
    }

    fn now() -> Timestamp {
        parse_time("2026-01-01T01:00:00Z").unwrap()
    }

    #[test]
    fn availability_waits_for_min_ready_seconds() {
        let p = pod(
            "web-1",
            "n1",
            "Running",
            Some("2026-01-01T00:59:50Z"),
            "2026-01-01T00:59:00Z",
        );
        assert!(is_available(&p, 0, now()));
        assert!(is_available(&p, 9, now()));
        assert!(!is_available(&p, 10, now()));
        let not_ready = pod("web-2", "n1", "Running", None, "2026-01-01T00:59:00Z");
        assert!(!is_available(&not_ready, 0, now()));
        let mut terminating = p.clone();
        terminating["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:59:59Z");
        assert!(is_active(&p) && !is_active(&terminating));
    }

    #[test]
    fn deletes_unscheduled_then_unready_then_newest() {
        let old_ready = pod(
            "old",
            "n1",
            "Running",
            Some("2026-01-01T00:10:00Z"),
            "2026-01-01T00:09:00Z",
        );
        let new_ready = pod(
            "new",
            "n2",
            "Running",
            Some("2026-01-01T00:59:30Z"),
            "2026-01-01T00:59:00Z",
        );
        let unready = pod("unready", "n3", "Running", None, "2026-01-01T00:30:00Z");
        let pending = pod("pending", "n1", "Pending", None, "2026-01-01T00:20:00Z");
        let unscheduled = pod("unscheduled", "", "Pending", None, "2026-01-01T00:05:00Z");
        let all = [&old_ready, &new_ready, &unready, &pending, &unscheduled];
        let names = |n: usize| -> Vec<String> {
            pods_to_delete(&all, &[], n, now())
                .iter()
                .map(|p| super::super::meta::name(p).to_owned())
                .collect()
        };
        assert_eq!(names(4), ["unscheduled", "pending", "unready", "new"]);
        assert_eq!(names(5).len(), 5);
    }

    #[test]
    fn doubled_up_pods_go_before_lonely_ones() {
        let a = pod(
            "a",
            "n1",
            "Running",
            Some("2026-01-01T00:10:00Z"),
            "2026-01-01T00:09:00Z",
        );
        let b = pod(
            "b",
            "n2",
            "Running",
            Some("2026-01-01T00:10:00Z"),
            "2026-01-01T00:09:00Z",
        );
        let sibling = pod(
            "sibling",
            "n1",
            "Running",
            Some("2026-01-01T00:10:00Z"),
            "2026-01-01T00:09:00Z",
        );
        let chosen = pods_to_delete(&[&b, &a], &[&a, &b, &sibling], 1, now());
        assert_eq!(super::super::meta::name(chosen[0]), "a");
    }
}
