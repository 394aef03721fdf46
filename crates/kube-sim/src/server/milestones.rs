//! Wall-clock moments a benchmark measures a tool's verdict against: when the last
//! Deployment finished rolling out, and when a pod first reported an image pull error.
//! Fed from the store's change feed; served at `GET /debug/milestones`.

use crate::store::{Change, ChangeType, ObjectKey};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Default)]
struct Seen {
    deployments: BTreeSet<ObjectKey>,
    rolling: BTreeSet<ObjectKey>,
    all_rolled_out_at: Option<u64>,
    first_image_error_at: Option<u64>,
}

/// The moments, in milliseconds since the Unix epoch (real time, not the cluster's clock).
#[derive(Debug, Default)]
pub struct Milestones {
    seen: Mutex<Seen>,
}

impl Milestones {
    /// Note one committed change, as of `now_ms`.
    pub fn observe(&self, change: &Change, now_ms: u64) {
        let mut seen = self.seen.lock().expect("milestones lock");
        let key = &change.key;
        if key.in_collection("apps", "deployments", None) {
            if change.kind == ChangeType::Deleted {
                seen.deployments.remove(key);
                seen.rolling.remove(key);
            } else {
                seen.deployments.insert(key.clone());
                if rolled_out(&change.object) {
                    if seen.rolling.remove(key) && seen.rolling.is_empty() {
                        seen.all_rolled_out_at = Some(now_ms);
                    }
                } else {
                    seen.rolling.insert(key.clone());
                }
            }
        } else if key.in_collection("", "pods", None)
            && seen.first_image_error_at.is_none()
            && image_error(&change.object)
        {
            seen.first_image_error_at = Some(now_ms);
        }
    }

    /// Note a change now.
    pub fn observe_now(&self, change: &Change) {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.observe(change, ms);
    }

    /// `{"all_rolled_out_at_ms", "first_image_pull_error_at_ms", "deployments", "rolling"}`;
    /// a moment not reached yet is null.
    pub fn report(&self) -> Value {
        let seen = self.seen.lock().expect("milestones lock");
        let all = (!seen.deployments.is_empty() && seen.rolling.is_empty())
            .then_some(seen.all_rolled_out_at)
            .flatten();
        json!({"all_rolled_out_at_ms": all,
               "first_image_pull_error_at_ms": seen.first_image_error_at,
               "deployments": seen.deployments.len(), "rolling": seen.rolling.len()})
    }
}

fn int(object: &Value, pointer: &str) -> i64 {
    object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// What `kubectl rollout status` waits for: the controller saw this generation and every
/// replica is updated and available, none old left.
fn rolled_out(d: &Value) -> bool {
    let want = d
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    int(d, "/status/observedGeneration") >= int(d, "/metadata/generation")
        && int(d, "/status/updatedReplicas") == want
        && int(d, "/status/replicas") == want
        && int(d, "/status/availableReplicas") == want
}

fn image_error(pod: &Value) -> bool {
    ["initContainerStatuses", "containerStatuses"]
        .iter()
        .filter_map(|k| {
            pod.pointer(&format!("/status/{k}"))
                .and_then(Value::as_array)
        })
        .flatten()
        .any(|s| {
            matches!(
                s.pointer("/state/waiting/reason").and_then(Value::as_str),
                Some("ErrImagePull" | "ImagePullBackOff")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn change(kind: ChangeType, key: ObjectKey, object: Value) -> Change {
        Change {
            rv: 1,
            kind,
            key,
            object: Arc::new(object),
            previous: None,
        }
    }

    fn deployment(name: &str, available: i64) -> (ObjectKey, Value) {
        let key = ObjectKey::new("apps", "deployments", "default", name);
        let d = json!({"metadata": {"name": name, "generation": 1},
            "spec": {"replicas": 2},
            "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
                       "availableReplicas": available}});
        (key, d)
    }

    #[test]
    fn all_rolled_out_is_when_the_last_deployment_finished() {
        let m = Milestones::default();
        let (a, a0) = deployment("a", 0);
        let (b, b0) = deployment("b", 0);
        m.observe(&change(ChangeType::Added, a.clone(), a0), 10);
        m.observe(&change(ChangeType::Added, b.clone(), b0), 11);
        m.observe(&change(ChangeType::Modified, a, deployment("a", 2).1), 20);
        assert_eq!(m.report()["all_rolled_out_at_ms"], Value::Null);
        m.observe(&change(ChangeType::Modified, b, deployment("b", 2).1), 30);
        assert_eq!(m.report()["all_rolled_out_at_ms"], 30);
        assert_eq!(m.report()["first_image_pull_error_at_ms"], Value::Null);
    }

    #[test]
    fn the_first_image_pull_error_is_kept() {
        let m = Milestones::default();
        let key = ObjectKey::new("", "pods", "default", "p");
        let pod = json!({"status": {"containerStatuses": [
            {"name": "app", "state": {"waiting": {"reason": "ErrImagePull"}}}]}});
        m.observe(&change(ChangeType::Modified, key.clone(), pod.clone()), 5);
        m.observe(&change(ChangeType::Modified, key, pod), 9);
        assert_eq!(m.report()["first_image_pull_error_at_ms"], 5);
    }
}
