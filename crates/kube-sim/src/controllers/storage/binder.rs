//! The `persistentvolume-binder` (kube-controller-manager's PV controller, with the
//! simulated cluster's external provisioner folded in): binds claims to matching volumes,
//! has volumes provisioned for Immediate classes at once and for WaitForFirstConsumer
//! classes once the scheduler picks a node, reports unknown classes, and marks claims Lost
//! when their volume disappears.

use super::provision::{
    COMPONENT, RESYNC, annotation, event, provision, pv_key, pvc_key, set_phase,
};
use super::reclaim::sync_volume;
use super::volumes::{
    BIND_COMPLETED, BOUND_BY_CONTROLLER, SELECTED_NODE, access_modes, claim_ref, volume_matches,
};
use crate::controllers::workloads::objects::{is_deleting, name, namespace, str_at, uid};
use crate::engine::{Controller, World};
use crate::store::{Change, ObjectKey};
use serde_json::{Value, json};
use std::sync::Arc;

/// Binds PersistentVolumeClaims.
#[derive(Debug, Default)]
pub struct VolumeBinder;

impl VolumeBinder {
    fn default_class(world: &World<'_>) -> Option<Arc<Value>> {
        world
            .list("storage.k8s.io", "storageclasses", None)
            .into_iter()
            .find(|sc| annotation(sc, "storageclass.kubernetes.io/is-default-class") == "true")
    }

    /// Bind `pvc` to `pv` (`bind`: volume first, then claim).
    fn bind(world: &mut World<'_>, key: &ObjectKey, pvc: &Value, pv: &Value, by_controller: bool) {
        let pvk = pv_key(name(pv));
        let mut volume = pv.clone();
        if volume
            .pointer("/spec/claimRef")
            .is_none_or(|r| str_at(r, "/uid") != uid(pvc))
        {
            volume["spec"]["claimRef"] = claim_ref(pvc);
            volume["metadata"]["annotations"][BOUND_BY_CONTROLLER] = json!("yes");
        }
        let Ok(volume) = world.update(&pvk, volume) else {
            return;
        };
        let Some(volume) = set_phase(world, &pvk, &volume, json!({"phase": "Bound"})) else {
            return;
        };
        let mut claim = pvc.clone();
        claim["spec"]["volumeName"] = json!(name(pv));
        claim["metadata"]["annotations"][BIND_COMPLETED] = json!("yes");
        if by_controller {
            claim["metadata"]["annotations"][BOUND_BY_CONTROLLER] = json!("yes");
        }
        let Ok(claim) = world.update(key, claim) else {
            return;
        };
        let status = json!({"phase": "Bound", "accessModes": volume.pointer("/spec/accessModes").cloned().unwrap_or_else(|| access_modes(pvc)),
            "capacity": volume.pointer("/spec/capacity").cloned().unwrap_or_default()});
        set_phase(world, key, &claim, status);
    }

    fn sync_claim(world: &mut World<'_>, key: &ObjectKey, pvc: &Value) {
        if is_deleting(pvc) {
            return;
        }
        if pvc.pointer("/status/phase").is_none() {
            // What the API server sets on create; the write brings the claim back here.
            set_phase(world, key, pvc, json!({"phase": "Pending"}));
            return;
        }
        let volume_name = str_at(pvc, "/spec/volumeName").to_owned();
        if !volume_name.is_empty() {
            match world.get(&pv_key(&volume_name)) {
                None if annotation(pvc, BIND_COMPLETED) == "yes" => {
                    if str_at(pvc, "/status/phase") != "Lost" {
                        set_phase(world, key, pvc, json!({"phase": "Lost"}));
                        event(world, pvc, "Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!".into(), COMPONENT);
                    }
                }
                None => {
                    event(
                        world,
                        pvc,
                        "Normal",
                        "FailedBinding",
                        format!("volume \"{volume_name}\" not found"),
                        COMPONENT,
                    );
                    world.requeue_after(key.clone(), RESYNC);
                }
                Some(pv) => {
                    let ours = pv.pointer("/spec/claimRef").is_none_or(|r| {
                        r.is_null() || str_at(r, "/uid") == uid(pvc) || str_at(r, "/uid").is_empty()
                    });
                    let bound = str_at(pvc, "/status/phase") == "Bound"
                        && str_at(&pv, "/status/phase") == "Bound";
                    if ours && !bound {
                        Self::bind(world, key, pvc, &pv, false);
                    }
                }
            }
            return;
        }
        let class = match pvc.pointer("/spec/storageClassName") {
            Some(Value::String(c)) => c.clone(),
            _ => match Self::default_class(world) {
                // Claims without a class get the default one (retroactively, as in 1.28+).
                Some(sc) => {
                    let mut next = (*pvc).clone();
                    next["spec"]["storageClassName"] = json!(name(&sc));
                    let _ = world.update(key, next);
                    return;
                }
                None => String::new(),
            },
        };
        let sc = (!class.is_empty())
            .then(|| {
                world.get(&ObjectKey::new(
                    "storage.k8s.io",
                    "storageclasses",
                    "",
                    &class,
                ))
            })
            .flatten();
        let delayed = sc
            .as_ref()
            .is_some_and(|sc| str_at(sc, "/volumeBindingMode") == "WaitForFirstConsumer");
        let node = annotation(pvc, SELECTED_NODE).to_owned();
        if !delayed || !node.is_empty() {
            let volumes = world.list("", "persistentvolumes", None);
            if let Some(pv) = volumes.iter().find(|pv| volume_matches(pv, pvc, &class)) {
                Self::bind(world, key, pvc, pv, true);
                return;
            }
        }
        if class.is_empty() {
            event(
                world,
                pvc,
                "Normal",
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set".into(),
                COMPONENT,
            );
            world.requeue_after(key.clone(), RESYNC);
            return;
        }
        let Some(sc) = sc else {
            event(
                world,
                pvc,
                "Warning",
                "ProvisioningFailed",
                format!("storageclass.storage.k8s.io {class:?} not found"),
                COMPONENT,
            );
            world.requeue_after(key.clone(), RESYNC);
            return;
        };
        if delayed && node.is_empty() {
            event(
                world,
                pvc,
                "Normal",
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding".into(),
                COMPONENT,
            );
            world.requeue_after(key.clone(), RESYNC);
            return;
        }
        provision(
            world,
            key,
            pvc,
            &sc,
            (!node.is_empty()).then_some(node.as_str()),
        );
    }
}

impl Controller for VolumeBinder {
    fn name(&self) -> &'static str {
        "persistentvolume-binder"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("", "persistentvolumeclaims", None) {
            let mut keys = vec![key.clone()];
            if let Some(v) =
                Some(str_at(&change.object, "/spec/volumeName")).filter(|v| !v.is_empty())
            {
                keys.push(pv_key(v));
            }
            return keys;
        }
        if key.in_collection("", "persistentvolumes", None) {
            let mut keys = vec![key.clone()];
            for object in std::iter::once(&change.object).chain(change.previous.as_ref()) {
                if let Some(r) = object.pointer("/spec/claimRef").filter(|r| !r.is_null()) {
                    keys.push(pvc_key(str_at(r, "/namespace"), str_at(r, "/name")));
                }
            }
            // Claims waiting for any volume may match a new one.
            keys.extend(
                world
                    .list("", "persistentvolumeclaims", None)
                    .iter()
                    .filter(|c| {
                        str_at(c, "/status/phase") == "Pending"
                            && str_at(c, "/spec/volumeName").is_empty()
                    })
                    .map(|c| pvc_key(namespace(c), name(c))),
            );
            keys.dedup();
            return keys;
        }
        if key.in_collection("storage.k8s.io", "storageclasses", None) {
            return world
                .list("", "persistentvolumeclaims", None)
                .iter()
                .filter(|c| str_at(c, "/status/phase") != "Bound")
                .map(|c| pvc_key(namespace(c), name(c)))
                .collect();
        }
        Vec::new()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        let claims = world
            .list("", "persistentvolumeclaims", None)
            .into_iter()
            .map(|c| pvc_key(namespace(&c), name(&c)));
        let volumes = world
            .list("", "persistentvolumes", None)
            .into_iter()
            .map(|v| pv_key(name(&v)));
        claims.chain(volumes).collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(object) = world.get(key) else {
            return;
        };
        if key.plural == "persistentvolumes" {
            sync_volume(world, key, &object);
        } else {
            Self::sync_claim(world, key, &object);
        }
    }
}
