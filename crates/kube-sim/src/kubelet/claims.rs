//! The scheduler's VolumeBinding checks of a pod's PersistentVolumeClaims: missing or
//! unbound Immediate claims make the pod unschedulable; unbound WaitForFirstConsumer
//! claims get the chosen node and the pod waits for them to bind.

use crate::engine::World;
use crate::store::ObjectKey;
use serde_json::Value;

/// The annotation through which the scheduler tells the volume binder its choice.
pub const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// The claims of a pod, as far as scheduling is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claims {
    /// Schedulable; these unbound WaitForFirstConsumer claims need the chosen node.
    Ready(Vec<ObjectKey>),
    /// PreFilter failure message (`pod has unbound immediate PersistentVolumeClaims`).
    Unschedulable(String),
}

fn claim_keys(pod: &Value) -> Vec<(String, ObjectKey)> {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
        .map(|claim| {
            (
                claim.to_owned(),
                ObjectKey::new("", "persistentvolumeclaims", ns, claim),
            )
        })
        .collect()
}

fn is_bound(pvc: &Value) -> bool {
    pvc["status"]["phase"] == "Bound"
}

/// The claim's StorageClass binding mode (Immediate unless its class says otherwise).
fn waits_for_first_consumer(world: &World<'_>, pvc: &Value) -> bool {
    let class = match pvc["spec"]["storageClassName"].as_str() {
        Some("") => return false,
        Some(name) => world
            .get(&ObjectKey::new(
                "storage.k8s.io",
                "storageclasses",
                "",
                name,
            ))
            .map(|c| (*c).clone()),
        None => world
            .list("storage.k8s.io", "storageclasses", None)
            .into_iter()
            .find(|c| {
                c["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"]
                    == "true"
            })
            .map(|c| (*c).clone()),
    };
    class.is_some_and(|c| c["volumeBindingMode"] == "WaitForFirstConsumer")
}

/// Check every claim of the pod.
pub fn check(world: &World<'_>, pod: &Value) -> Claims {
    let mut wait_for_consumer = Vec::new();
    let mut unbound_immediate = false;
    for (claim, key) in claim_keys(pod) {
        let Some(pvc) = world.get(&key) else {
            return Claims::Unschedulable(format!("persistentvolumeclaim \"{claim}\" not found"));
        };
        if pvc["metadata"]
            .get("deletionTimestamp")
            .is_some_and(|d| !d.is_null())
        {
            return Claims::Unschedulable(format!(
                "persistentvolumeclaim \"{claim}\" is being deleted"
            ));
        }
        if is_bound(&pvc) {
            continue;
        }
        if waits_for_first_consumer(world, &pvc) {
            wait_for_consumer.push(key);
        } else {
            unbound_immediate = true;
        }
    }
    if unbound_immediate {
        return Claims::Unschedulable("pod has unbound immediate PersistentVolumeClaims".into());
    }
    Claims::Ready(wait_for_consumer)
}

/// Whether every claim of the pod is bound (what the scheduler waits for before binding).
pub fn all_bound(world: &World<'_>, pod: &Value) -> bool {
    claim_keys(pod)
        .iter()
        .all(|(_, k)| world.get(k).is_some_and(|pvc| is_bound(&pvc)))
}

/// Whether the pod uses the claim `key`.
pub fn uses(pod: &Value, key: &ObjectKey) -> bool {
    claim_keys(pod).iter().any(|(_, k)| k == key)
}
