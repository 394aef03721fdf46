//! The `replicaset-controller` (pkg/controller/replicaset): creates pods from the
//! template in slow-start batches or deletes the least valuable ones to match
//! spec.replicas, and reports what its pods are doing in the ReplicaSet's status.

use super::meta::{
    controller_ref, int_at, is_controlled_by, is_deleting, name, namespace, str_at, uid,
};
use super::pods::{is_active, pods_to_delete};
use super::podtemplate::{Refused, admit, pod_from_template};
use super::rsstatus::{replicas, status_of};
use crate::engine::{Controller, World, WriteError};
use crate::events::EventSpec;
use crate::store::{Change, DeleteOptions, ObjectKey, StoreError};
use jiff::Timestamp;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// `burstReplicas`: at most this many creates or deletes per sync.
const BURST: usize = 500;

#[derive(Debug, Default)]
pub(super) struct ReplicaSetController {
    /// Pod names drawn per ReplicaSet, so a generated name is never reused.
    drawn: HashMap<ObjectKey, u64>,
    /// Consecutive failed syncs per ReplicaSet, for the rate limiter's backoff.
    failures: HashMap<ObjectKey, u32>,
}

fn rs_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new("apps", "replicasets", namespace, name)
}

impl Controller for ReplicaSetController {
    fn name(&self) -> &'static str {
        "replicaset-controller"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        if change.key.in_collection("apps", "replicasets", None) {
            return vec![change.key.clone()];
        }
        if !change.key.in_collection("", "pods", None) {
            return Vec::new();
        }
        let mut keys: Vec<ObjectKey> = std::iter::once(&*change.object)
            .chain(change.previous.as_deref())
            .filter_map(|pod| {
                let r = controller_ref(pod).filter(|r| str_at(r, "/kind") == "ReplicaSet")?;
                Some(rs_key(namespace(pod), str_at(r, "/name")))
            })
            .collect();
        keys.dedup();
        keys
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("apps", "replicasets", None)
            .iter()
            .map(|rs| rs_key(namespace(rs), name(rs)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(rs) = world.get(key) else {
            // `drawn` is kept: a ReplicaSet recreated under the same name must not hand
            // out the names its predecessor's pods had.
            self.failures.remove(key);
            return;
        };
        let now = world.store.clock().now();
        let pods = world.list_owned("", "pods", &key.namespace, uid(&rs));
        let active: Vec<&Value> = pods
            .iter()
            .map(Arc::as_ref)
            .filter(|p| is_active(p) && is_controlled_by(p, "ReplicaSet", uid(&rs)))
            .collect();
        let error = if is_deleting(&rs) {
            None
        } else {
            self.manage_replicas(world, &rs, &active, now)
        };
        let status = status_of(&rs, &active, error.as_deref(), now, &world.timestamp());
        let mut written = (*rs).clone();
        if rs.get("status") != Some(&status) {
            written["status"] = status;
            match world.update_status(key, written) {
                Ok(stored) => written = (*stored).clone(),
                Err(_) => return world.requeue_after(key.clone(), Duration::from_millis(5)),
            }
        }
        if error.is_none() {
            self.failures.remove(key);
            let (replicas, min_ready) = (
                replicas(&written),
                int_at(&written, "/spec/minReadySeconds").unwrap_or(0),
            );
            let count = |f: &str| int_at(&written, &format!("/status/{f}")).unwrap_or(0);
            if min_ready > 0
                && count("readyReplicas") == replicas
                && count("availableReplicas") != replicas
            {
                world.requeue_after(key.clone(), Duration::from_secs(min_ready.unsigned_abs()));
            }
        } else {
            let n = self.failures.entry(key.clone()).or_default();
            let backoff = Duration::from_millis(5)
                .saturating_mul(1 << (*n).min(18))
                .min(Duration::from_secs(1000));
            *n += 1;
            world.requeue_after(key.clone(), backoff);
        }
    }
}

impl ReplicaSetController {
    /// `manageReplicas`: the error that stopped it, as the API server worded it.
    fn manage_replicas(
        &mut self,
        world: &mut World<'_>,
        rs: &Value,
        active: &[&Value],
        now: Timestamp,
    ) -> Option<String> {
        let diff = active.len() as i64 - replicas(rs);
        if diff < 0 {
            let mut remaining = usize::try_from(-diff).unwrap_or(0).min(BURST);
            let mut batch = 1;
            while remaining > 0 {
                let size = batch.min(remaining);
                let mut first_error = None;
                for _ in 0..size {
                    if let Err(e) = self.create_pod(world, rs) {
                        first_error.get_or_insert(e);
                    }
                }
                if first_error.is_some() {
                    return first_error;
                }
                remaining -= size;
                batch *= 2;
            }
        } else if diff > 0 {
            let count = usize::try_from(diff).unwrap_or(0).min(BURST);
            let related = related_pods(world, rs);
            let related: Vec<&Value> = related.iter().map(Arc::as_ref).collect();
            let victims: Vec<Value> = pods_to_delete(active, &related, count, now)
                .into_iter()
                .cloned()
                .collect();
            let mut first_error = None;
            for pod in victims {
                if let Err(e) = delete_pod(world, rs, &pod) {
                    first_error.get_or_insert(e);
                }
            }
            return first_error;
        }
        None
    }

    /// Create one pod (`RealPodControl.CreatePods`) and report it.
    fn create_pod(&mut self, world: &mut World<'_>, rs: &Value) -> Result<(), String> {
        let key = rs_key(namespace(rs), name(rs));
        let pod = loop {
            let n = self.drawn.entry(key.clone()).or_default();
            let attempt = *n;
            *n += 1;
            let pod = pod_from_template(rs, attempt).map_err(|e| match e {
                Refused::Error(msg) => msg,
                Refused::NamespaceTerminating => String::new(),
            })?;
            if world
                .get(&ObjectKey::new("", "pods", namespace(rs), name(&pod)))
                .is_none()
            {
                break pod;
            }
        };
        let result = match admit(world, &pod) {
            Ok(()) => world
                .create(
                    &ObjectKey::new("", "pods", namespace(rs), name(&pod)),
                    pod.clone(),
                )
                .map_err(|e| e.to_string()),
            Err(Refused::NamespaceTerminating) => return Ok(()),
            Err(Refused::Error(msg)) => Err(msg),
        };
        let (type_, reason, message) = match &result {
            Ok(_) => (
                "Normal",
                "SuccessfulCreate",
                format!("Created pod: {}", name(&pod)),
            ),
            Err(e) => ("Warning", "FailedCreate", format!("Error creating: {e}")),
        };
        world.event(EventSpec {
            involved: rs,
            field_path: None,
            type_,
            reason,
            message,
            component: None,
            host: None,
        });
        result.map(|_| ())
    }
}

/// `RealPodControl.DeletePod` with the pod's own grace period; a pod already gone is fine.
fn delete_pod(world: &mut World<'_>, rs: &Value, pod: &Value) -> Result<(), String> {
    let grace = int_at(pod, "/spec/terminationGracePeriodSeconds").unwrap_or(30);
    let key = ObjectKey::new("", "pods", namespace(pod), name(pod));
    let (type_, reason, message, result) = match world.delete(
        &key,
        DeleteOptions {
            grace_period_seconds: Some(grace),
        },
    ) {
        Ok(_) => (
            "Normal",
            "SuccessfulDelete",
            format!("Deleted pod: {}", name(pod)),
            Ok(()),
        ),
        Err(WriteError::Store(StoreError::NotFound(_))) => return Ok(()),
        Err(e) => (
            "Warning",
            "FailedDelete",
            format!("Error deleting: {e}"),
            Err(format!("unable to delete pods: {e}")),
        ),
    };
    world.event(EventSpec {
        involved: rs,
        field_path: None,
        type_,
        reason,
        message,
        component: None,
        host: None,
    });
    result
}

/// `getIndirectlyRelatedPods`: pods of every ReplicaSet with the same controller.
fn related_pods(world: &World<'_>, rs: &Value) -> Vec<Arc<Value>> {
    let Some(owner) = controller_ref(rs).map(|r| str_at(r, "/uid").to_owned()) else {
        return Vec::new();
    };
    let siblings: Vec<String> = world
        .list_owned("apps", "replicasets", namespace(rs), &owner)
        .iter()
        .filter(|s| controller_ref(s).is_some_and(|r| str_at(r, "/uid") == owner))
        .map(|s| uid(s).to_owned())
        .collect();
    let mut pods: Vec<Arc<Value>> = siblings
        .iter()
        .flat_map(|s| {
            world
                .list_owned("", "pods", namespace(rs), s)
                .into_iter()
                .filter(|p| is_controlled_by(p, "ReplicaSet", s))
        })
        .collect();
    pods.sort_by(|a, b| name(a).cmp(name(b)));
    pods
}
