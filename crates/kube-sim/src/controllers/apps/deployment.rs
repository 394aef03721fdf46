//! The `deployment-controller` (pkg/controller/deployment): which changes wake a
//! Deployment, which ReplicaSets it owns (adopting and releasing by selector), and the
//! order of a sync - paused, scaling event, then the strategy's rollout.

use super::meta::{
    controller_ref, is_deleting, labels, name, namespace, new_controller_ref, owner_refs, str_at,
};
use super::replicasets::Rs;
use super::selector::{is_empty, matches};
use super::spec::{Dep, Strategy};
use super::sync::{self, SyncError, SyncResult, write_status};
use crate::engine::{Controller, World};
use crate::events::EventSpec;
use crate::store::{Change, ChangeType, ObjectKey};
use serde_json::{Value, json};
use std::time::Duration;

/// How soon a failed sync is retried (the rate limiter's first steps are milliseconds).
const RETRY: Duration = Duration::from_millis(100);

#[derive(Debug, Default)]
pub(super) struct DeploymentController;

pub(super) fn deployment_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new("apps", "deployments", namespace, name)
}

/// The Deployment controlling `obj`, by its controller reference.
fn owning_deployment(obj: &Value) -> Option<ObjectKey> {
    let r = controller_ref(obj)?;
    (str_at(r, "/kind") == "Deployment" && str_at(r, "/apiVersion").starts_with("apps/"))
        .then(|| deployment_key(namespace(obj), str_at(r, "/name")))
}

impl Controller for DeploymentController {
    fn name(&self) -> &'static str {
        "deployment-controller"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("apps", "deployments", None) {
            return vec![key.clone()];
        }
        if key.in_collection("apps", "replicasets", None) {
            return deployments_for_replica_set(change, world);
        }
        if key.in_collection("", "pods", None) && change.kind == ChangeType::Deleted {
            return recreate_deployment_of_pod(&change.object, world)
                .into_iter()
                .collect();
        }
        Vec::new()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("apps", "deployments", None)
            .iter()
            .map(|d| deployment_key(namespace(d), name(d)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        if sync_deployment(key, world).is_err() {
            world.requeue_after(key.clone(), RETRY);
        }
    }
}

/// The owner of a changed ReplicaSet (old and new owner), or for an orphan every
/// Deployment whose selector matches it, which may adopt it.
fn deployments_for_replica_set(change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
    let mut keys: Vec<ObjectKey> = std::iter::once(&*change.object)
        .chain(change.previous.as_deref())
        .filter_map(owning_deployment)
        .collect();
    if keys.is_empty()
        && change.kind != ChangeType::Deleted
        && controller_ref(&change.object).is_none()
    {
        let rs_labels = labels(&change.object);
        keys = world
            .list("apps", "deployments", Some(namespace(&change.object)))
            .iter()
            .filter(|d| matches(d.pointer("/spec/selector"), &rs_labels))
            .map(|d| deployment_key(namespace(d), name(d)))
            .collect();
    }
    keys.dedup();
    keys
}

/// A Recreate Deployment waits for its old pods to be gone, so their deletion wakes it.
fn recreate_deployment_of_pod(pod: &Value, world: &World<'_>) -> Option<ObjectKey> {
    let r = controller_ref(pod).filter(|r| str_at(r, "/kind") == "ReplicaSet")?;
    let rs = world.get(&ObjectKey::new(
        "apps",
        "replicasets",
        namespace(pod),
        str_at(r, "/name"),
    ))?;
    let key = owning_deployment(&rs)?;
    let d = world.get(&key)?;
    (d.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate")).then_some(key)
}

/// `syncDeployment`.
fn sync_deployment(key: &ObjectKey, world: &mut World<'_>) -> SyncResult {
    let Some(obj) = world.get(key) else {
        return Ok(());
    };
    let mut d = Dep::new(key.clone(), (*obj).clone(), &world.timestamp());
    if d.spec.selector.is_object() && is_empty(&d.spec.selector) {
        world.event(EventSpec {
            involved: &d.obj,
            field_path: None,
            type_: "Warning",
            reason: "SelectingAll",
            message: "This deployment is selecting all pods. A non-empty selector is required."
                .into(),
            component: None,
            host: None,
        });
        if d.status.observed_generation < d.generation() {
            d.status.observed_generation = d.generation();
            write_status(world, &mut d)?;
        }
        return Ok(());
    }
    let mut rs_list = claim_replica_sets(world, &d)?;
    if is_deleting(&d.obj) {
        return sync::sync_status_only(world, &mut d, &mut rs_list);
    }
    sync::check_paused_conditions(world, &mut d)?;
    if d.spec.paused || sync::is_scaling_event(world, &mut d, &mut rs_list)? {
        return sync::sync(world, &mut d, &mut rs_list);
    }
    match d.spec.strategy {
        Strategy::Recreate => super::rollout::recreate(world, &mut d, &mut rs_list),
        Strategy::RollingUpdate { .. } => super::rollout::rolling(world, &mut d, &mut rs_list),
    }
}

/// The ReplicaSets `claim_replica_sets` must look at, in name order: those with an owner
/// reference to the Deployment and those its selector may pick (orphans it may adopt),
/// found through the store's indexes rather than a walk over the whole namespace.
fn candidates(world: &World<'_>, d: &Dep) -> Vec<std::sync::Arc<Value>> {
    let ns = &d.key.namespace;
    let owned = world.list_owned("apps", "replicasets", ns, d.uid());
    let Some(match_labels) = d.spec.selector["matchLabels"]
        .as_object()
        .filter(|m| !m.is_empty())
    else {
        return world.list("apps", "replicasets", Some(ns));
    };
    let mut all = owned;
    all.extend(world.list_labeled("apps", "replicasets", ns, match_labels));
    all.sort_by(|a, b| name(a).cmp(name(b)));
    all.dedup_by(|a, b| name(a) == name(b));
    all
}

/// `getReplicaSetsForDeployment`: ReplicaSets it controls and its selector matches; an
/// orphan that matches is adopted, an owned one that no longer matches is released.
fn claim_replica_sets(world: &mut World<'_>, d: &Dep) -> Result<Vec<Rs>, SyncError> {
    let mut claimed = Vec::new();
    for obj in candidates(world, d) {
        let owner = controller_ref(&obj).map(|r| str_at(r, "/uid").to_owned());
        // Another controller's ReplicaSet is none of our business: skip it before any copy
        // (a namespace may hold thousands).
        if owner.as_deref().is_some_and(|o| o != d.uid()) {
            continue;
        }
        let rs = Rs::new(&obj);
        let selected = matches(Some(&d.spec.selector), &labels(&obj));
        match owner {
            Some(owner) if owner == d.uid() => {
                if selected {
                    claimed.push(rs);
                } else if !is_deleting(&d.obj) {
                    let mut released = rs.obj.clone();
                    let refs: Vec<Value> = owner_refs(&obj)
                        .iter()
                        .filter(|r| str_at(r, "/uid") != d.uid())
                        .cloned()
                        .collect();
                    released["metadata"]["ownerReferences"] = json!(refs);
                    world.update(&rs.key, released)?;
                }
            }
            None if selected && !is_deleting(&d.obj) && !rs.deleting() => {
                let mut adopted = rs.obj.clone();
                let mut refs = owner_refs(&obj).to_vec();
                refs.push(new_controller_ref(&d.obj));
                adopted["metadata"]["ownerReferences"] = json!(refs);
                claimed.push(Rs::new(&*world.update(&rs.key, adopted)?));
            }
            _ => {}
        }
    }
    Ok(claimed)
}
