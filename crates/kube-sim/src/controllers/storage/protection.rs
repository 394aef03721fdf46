//! The protection controllers: a deleted claim keeps `kubernetes.io/pvc-protection` until
//! no running pod mounts it, a deleted volume keeps `kubernetes.io/pv-protection` until it
//! is no longer Bound.

use super::volumes::PV_PROTECTION;
use crate::controllers::workloads::objects::{is_deleting, name, namespace, str_at};
use crate::controllers::workloads::pods::is_terminal;
use crate::engine::{Controller, World};
use crate::store::{Change, ObjectKey};
use serde_json::Value;

const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";

fn has(object: &Value, finalizer: &str) -> bool {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f == finalizer))
}

fn drop_finalizer(world: &mut World<'_>, key: &ObjectKey, object: &Value, finalizer: &str) {
    let mut next = object.clone();
    if let Some(f) = next
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        f.retain(|f| f != finalizer);
    }
    let _ = world.update(key, next);
}

/// Claims a pod mounts.
fn claims_of(pod: &Value) -> Vec<String> {
    pod.pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| str_at(v, "/persistentVolumeClaim/claimName").to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// Releases deleted claims no pod uses.
#[derive(Debug, Default)]
pub struct PvcProtectionController;

impl Controller for PvcProtectionController {
    fn name(&self) -> &'static str {
        "pvc-protection-controller"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("", "persistentvolumeclaims", None) && is_deleting(&change.object) {
            return vec![key.clone()];
        }
        if key.in_collection("", "pods", None) {
            return claims_of(&change.object)
                .iter()
                .map(|c| ObjectKey::new("", "persistentvolumeclaims", &key.namespace, c))
                .collect();
        }
        Vec::new()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("", "persistentvolumeclaims", None)
            .iter()
            .filter(|c| is_deleting(c))
            .map(|c| ObjectKey::new("", "persistentvolumeclaims", namespace(c), name(c)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(pvc) = world
            .get(key)
            .filter(|c| is_deleting(c) && has(c, PVC_PROTECTION))
        else {
            return;
        };
        let in_use = world
            .list("", "pods", Some(&key.namespace))
            .iter()
            .any(|p| !is_terminal(p) && claims_of(p).contains(&key.name));
        if !in_use {
            drop_finalizer(world, key, &pvc, PVC_PROTECTION);
        }
    }
}

/// Releases deleted volumes that are no longer bound.
#[derive(Debug, Default)]
pub struct PvProtectionController;

impl Controller for PvProtectionController {
    fn name(&self) -> &'static str {
        "pv-protection-controller"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        let deleted_pv =
            change.key.in_collection("", "persistentvolumes", None) && is_deleting(&change.object);
        if deleted_pv {
            vec![change.key.clone()]
        } else {
            Vec::new()
        }
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("", "persistentvolumes", None)
            .iter()
            .filter(|v| is_deleting(v))
            .map(|v| ObjectKey::new("", "persistentvolumes", "", name(v)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(pv) = world
            .get(key)
            .filter(|v| is_deleting(v) && has(v, PV_PROTECTION))
        else {
            return;
        };
        if str_at(&pv, "/status/phase") != "Bound" {
            drop_finalizer(world, key, &pv, PV_PROTECTION);
        }
    }
}
