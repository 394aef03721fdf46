//! Pods as controllers see them: phase and readiness predicates (`podutil`), pods made
//! from a template with a generated name, and deletion with the pod's own grace period.

use super::objects::{
    NameGenerator, controller_ref, int_at, is_controlled_by, is_deleting, namespace, parse_time,
    str_at,
};
use crate::engine::{World, WriteError};
use crate::store::{DeleteOptions, ObjectKey, StoreError};
use jiff::Timestamp;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn pod_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new("", "pods", namespace, name)
}

/// The pod's phase; a pod without one is Pending (the API server sets it on create).
pub(crate) fn phase(pod: &Value) -> &str {
    match str_at(pod, "/status/phase") {
        "" => "Pending",
        p => p,
    }
}

/// Succeeded or Failed (`podutil.IsPodTerminal`).
pub(crate) fn is_terminal(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// Neither terminal nor being deleted (`controller.IsPodActive`).
pub(crate) fn is_active(pod: &Value) -> bool {
    !is_terminal(pod) && !is_deleting(pod)
}

fn ready_condition(pod: &Value) -> Option<&Value> {
    pod.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| str_at(c, "/type") == "Ready")
}

/// The Ready condition is True (`podutil.IsPodReady`).
pub(crate) fn is_ready(pod: &Value) -> bool {
    ready_condition(pod).is_some_and(|c| str_at(c, "/status") == "True")
}

/// When the Ready condition last changed, if the pod has one.
pub(crate) fn ready_transition(pod: &Value) -> Option<Timestamp> {
    ready_condition(pod).and_then(|c| parse_time(str_at(c, "/lastTransitionTime")))
}

/// How long until a ready pod counts as available after `min_ready_seconds`: `Some(0)` when
/// it is available now, `None` when it is not ready at all (`podutil.IsPodAvailable`).
pub(crate) fn available_in(
    pod: &Value,
    min_ready_seconds: i64,
    now: Timestamp,
) -> Option<Duration> {
    if !is_ready(pod) {
        return None;
    }
    if min_ready_seconds <= 0 {
        return Some(Duration::ZERO);
    }
    let Some(since) = ready_transition(pod) else {
        return Some(Duration::ZERO);
    };
    let due = since.as_second() + min_ready_seconds;
    Some(Duration::from_secs(
        u64::try_from(due - now.as_second()).unwrap_or(0),
    ))
}

pub(crate) fn is_available(pod: &Value, min_ready_seconds: i64, now: Timestamp) -> bool {
    available_in(pod, min_ready_seconds, now) == Some(Duration::ZERO)
}

/// Pods in `owner`'s namespace that `owner` controls, by name.
pub(crate) fn owned_pods(world: &World<'_>, owner: &Value) -> Vec<Arc<Value>> {
    let uid = owner
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    world
        .list_owned("", "pods", namespace(owner), uid)
        .into_iter()
        .filter(|p| is_controlled_by(p, owner))
        .collect()
}

/// A pod from `template` controlled by `owner` (`controller.GetPodFromTemplate`): the
/// template's labels, annotations, finalizers and spec, `generateName` `<owner>-`.
pub(crate) fn pod_from_template(template: &Value, owner: &Value) -> Value {
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "generateName".into(),
        json!(format!("{}-", super::objects::name(owner))),
    );
    metadata.insert("namespace".into(), json!(namespace(owner)));
    for field in ["labels", "annotations", "finalizers"] {
        if let Some(v) = template
            .pointer(&format!("/metadata/{field}"))
            .filter(|v| !v.is_null())
        {
            metadata.insert(field.into(), v.clone());
        }
    }
    metadata.insert("ownerReferences".into(), json!([controller_ref(owner)]));
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
        "status": {"phase": "Pending"},
    })
}

/// Create `pod` named `prefix` + five generated characters, trying again on a clash.
pub(crate) fn create_generated(
    world: &mut World<'_>,
    names: &mut NameGenerator,
    prefix: &str,
    mut pod: Value,
) -> Result<Arc<Value>, WriteError> {
    let ns = namespace(&pod).to_owned();
    let mut last = None;
    for _ in 0..8 {
        let name = names.generate(prefix);
        pod["metadata"]["name"] = json!(name);
        match world.create(&pod_key(&ns, &name), pod.clone()) {
            Err(WriteError::Store(StoreError::AlreadyExists(e))) => last = Some(e),
            other => return other,
        }
    }
    Err(WriteError::Store(StoreError::AlreadyExists(
        last.unwrap_or_default(),
    )))
}

/// Delete a pod as a controller's DELETE without options does: the pod's own
/// `terminationGracePeriodSeconds` (default 30) applies.
pub(crate) fn delete_pod(world: &mut World<'_>, pod: &Value) -> Result<Arc<Value>, WriteError> {
    let grace = int_at(pod, "/spec/terminationGracePeriodSeconds").unwrap_or(30);
    let key = pod_key(namespace(pod), super::objects::name(pod));
    world.delete(
        &key,
        DeleteOptions {
            grace_period_seconds: Some(grace),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_and_availability_follow_the_ready_condition() {
        let pod = |ready: &str, since: &str| {
            json!({"status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": ready, "lastTransitionTime": since}]}})
        };
        let now: Timestamp = "2026-01-01T00:00:30Z".parse().unwrap();
        let ready = pod("True", "2026-01-01T00:00:20Z");
        assert!(is_ready(&ready) && is_active(&ready));
        assert!(is_available(&ready, 0, now) && is_available(&ready, 10, now));
        assert_eq!(available_in(&ready, 15, now), Some(Duration::from_secs(5)));
        assert_eq!(
            available_in(&pod("False", "2026-01-01T00:00:20Z"), 0, now),
            None
        );
        assert_eq!(phase(&json!({"status": {}})), "Pending");
        assert!(is_terminal(&json!({"status": {"phase": "Failed"}})));
        assert!(!is_active(
            &json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})
        ));
    }
}
