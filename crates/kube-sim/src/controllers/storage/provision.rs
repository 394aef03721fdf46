//! The simulated cluster's external provisioner and the writes the volume controllers
//! share: a claim is annotated for its class's provisioner, which reports and creates its
//! `pvc-<uid>` volume.

use super::volumes::provisioned_volume;
use crate::controllers::workloads::objects::{name, namespace, str_at, uid};
use crate::engine::World;
use crate::events::EventSpec;
use crate::store::ObjectKey;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The PV controller's resync period: pending claims are retried (and their events repeat).
pub(crate) const RESYNC: Duration = Duration::from_secs(15);
pub(crate) const COMPONENT: &str = "persistentvolume-controller";

pub(crate) fn pvc_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new("", "persistentvolumeclaims", ns, name)
}

pub(crate) fn pv_key(name: &str) -> ObjectKey {
    ObjectKey::new("", "persistentvolumes", "", name)
}

pub(crate) fn event(
    world: &mut World<'_>,
    involved: &Value,
    type_: &str,
    reason: &str,
    message: String,
    component: &str,
) {
    world.event(EventSpec {
        involved,
        field_path: None,
        type_,
        reason,
        message,
        component: Some(component),
        host: None,
    });
}

pub(crate) fn annotation<'a>(v: &'a Value, key: &str) -> &'a str {
    str_at(
        v,
        &format!("/metadata/annotations/{}", key.replace('/', "~1")),
    )
}

/// Write a status phase (with the API server's `lastPhaseTransitionTime` for volumes).
pub(crate) fn set_phase(
    world: &mut World<'_>,
    key: &ObjectKey,
    object: &Value,
    status: Value,
) -> Option<Arc<Value>> {
    let mut next = object.clone();
    let changed_phase = str_at(object, "/status/phase") != str_at(&status, "/phase");
    let mut status = status;
    if key.plural == "persistentvolumes" {
        status["lastPhaseTransitionTime"] = match (
            changed_phase,
            object.pointer("/status/lastPhaseTransitionTime"),
        ) {
            (false, Some(t)) => t.clone(),
            _ => json!(world.timestamp()),
        };
    }
    next["status"] = status;
    world.update_status(key, next).ok()
}

/// Hand the claim to the class's provisioner, which creates its volume.
pub(crate) fn provision(
    world: &mut World<'_>,
    key: &ObjectKey,
    pvc: &Value,
    sc: &Value,
    node: Option<&str>,
) {
    let provisioner = str_at(sc, "/provisioner").to_owned();
    if provisioner == "kubernetes.io/no-provisioner" {
        event(
            world,
            pvc,
            "Normal",
            "WaitForPodScheduled",
            "waiting for pod to be scheduled".into(),
            COMPONENT,
        );
        world.requeue_after(key.clone(), RESYNC);
        return;
    }
    let pv_name = format!("pvc-{}", uid(pvc));
    if world.get(&pv_key(&pv_name)).is_some() {
        return;
    }
    let mut pvc = pvc.clone();
    if annotation(&pvc, "volume.kubernetes.io/storage-provisioner") != provisioner {
        pvc["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-provisioner"] =
            json!(provisioner);
        pvc["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] =
            json!(provisioner);
        match world.update(key, pvc) {
            Ok(p) => pvc = (*p).clone(),
            Err(_) => return,
        }
        event(
            world,
            &pvc,
            "Normal",
            "ExternalProvisioning",
            format!(
                "Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
            ),
            COMPONENT,
        );
    }
    event(
        world,
        &pvc,
        "Normal",
        "Provisioning",
        format!(
            "External provisioner is provisioning volume for claim \"{}/{}\"",
            namespace(&pvc),
            name(&pvc)
        ),
        &provisioner,
    );
    if world
        .create(&pv_key(&pv_name), provisioned_volume(&pvc, sc, node))
        .is_ok()
    {
        event(
            world,
            &pvc,
            "Normal",
            "ProvisioningSucceeded",
            format!("Successfully provisioned volume {pv_name}"),
            &provisioner,
        );
    }
}
