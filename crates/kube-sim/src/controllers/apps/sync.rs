//! The Deployment controller's shared steps (pkg/controller/deployment/sync.go): scaling
//! one ReplicaSet with its event, pruning old ReplicaSets beyond revisionHistoryLimit,
//! status writes, paused and scaling-event handling.

use super::annotations::{replicas_annotations_need_update, set_replicas_annotations};
use super::newrs::all_replica_sets;
use super::progress::calculate_status;
use super::replicasets::{REVISION, Rs, by_revision};
use super::spec::Dep;
use super::status::Condition;
use crate::engine::{World, WriteError};
use crate::events::EventSpec;
use crate::store::{DeleteOptions, ObjectKey, StoreError};
use serde_json::json;

/// Why a sync stopped early; the Deployment is retried.
#[derive(Debug, thiserror::Error)]
pub(super) enum SyncError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("hash collision for replica set {0}, collisionCount raised")]
    Collision(String),
    #[error("namespace {0} is being terminated")]
    NamespaceTerminating(String),
}

pub(super) type SyncResult<T = ()> = Result<T, SyncError>;

/// Write the Deployment's status (and annotations, which its status subresource accepts).
pub(super) fn write_status(world: &mut World<'_>, d: &mut Dep) -> Result<(), WriteError> {
    let mut obj = d.obj.clone();
    obj["status"] = d.status.to_json();
    let stored = world.update_status(&d.key, obj)?;
    d.obj = (*stored).clone();
    Ok(())
}

/// `deploymentutil.SetDeploymentRevision`.
pub(super) fn set_deployment_revision(d: &mut Dep, revision: &str) -> bool {
    if super::meta::annotation(&d.obj, REVISION) == Some(revision) {
        return false;
    }
    super::meta::set_meta_entry(&mut d.obj, "annotations", REVISION, revision);
    true
}

pub(super) fn namespace_terminating(world: &World<'_>, namespace: &str) -> bool {
    world
        .get(&ObjectKey::new("", "namespaces", "", namespace))
        .is_some_and(|ns| super::meta::is_deleting(&ns))
}

pub(super) fn scaling_event(world: &mut World<'_>, d: &Dep, rs: &str, from: i32, to: i32) {
    let direction = if from < to { "up" } else { "down" };
    world.event(EventSpec {
        involved: &d.obj,
        field_path: None,
        type_: "Normal",
        reason: "ScalingReplicaSet",
        message: format!("Scaled {direction} replica set {rs} from {from} to {to}"),
        component: None,
        host: None,
    });
}

/// `scaleReplicaSet`: set the size and the replica annotations; an event when the size
/// changed. Returns whether it scaled, and the ReplicaSet as stored.
pub(super) fn scale_replica_set(
    world: &mut World<'_>,
    d: &Dep,
    rs: &Rs,
    new_scale: i32,
) -> Result<(bool, Rs), WriteError> {
    let size_changes = rs.replicas() != new_scale;
    let (desired, max) = (d.spec.replicas, d.spec.replicas + d.spec.max_surge());
    if !size_changes && !replicas_annotations_need_update(&rs.obj, desired, max) {
        return Ok((false, rs.clone()));
    }
    let mut obj = rs.obj.clone();
    obj["spec"]["replicas"] = json!(new_scale);
    set_replicas_annotations(&mut obj, desired, max);
    let updated = Rs::new(&*world.update(&rs.key, obj)?);
    if size_changes {
        scaling_event(world, d, rs.name(), rs.replicas(), new_scale);
    }
    Ok((size_changes, updated))
}

/// `scaleReplicaSetAndRecordEvent`: nothing to do when the size is already right.
pub(super) fn scale_and_record(
    world: &mut World<'_>,
    d: &Dep,
    rs: &Rs,
    new_scale: i32,
) -> Result<(bool, Rs), WriteError> {
    if rs.replicas() == new_scale {
        return Ok((false, rs.clone()));
    }
    scale_replica_set(world, d, rs, new_scale)
}

/// `cleanupDeployment`: delete the oldest scaled-down ReplicaSets beyond the history limit.
pub(super) fn cleanup(world: &mut World<'_>, d: &Dep, old: &[Rs]) -> Result<(), WriteError> {
    let Some(limit) = d.spec.revision_history_limit else {
        return Ok(());
    };
    let mut cleanable: Vec<&Rs> = old.iter().filter(|rs| !rs.deleting()).collect();
    let diff = cleanable.len() as i64 - i64::from(limit);
    if diff <= 0 {
        return Ok(());
    }
    cleanable.sort_by(|a, b| by_revision(a, b));
    for rs in cleanable.into_iter().take(diff as usize) {
        if rs.status_replicas() != 0
            || rs.replicas() != 0
            || rs.generation() > rs.observed_generation()
            || rs.deleting()
        {
            continue;
        }
        match world.delete(&rs.key, DeleteOptions::default()) {
            Ok(_) | Err(WriteError::Store(StoreError::NotFound(_))) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `syncDeploymentStatus`: the status from the ReplicaSets, written when it changed.
pub(super) fn sync_deployment_status(
    world: &mut World<'_>,
    d: &mut Dep,
    all: &[&Rs],
    new: Option<&Rs>,
) -> Result<(), WriteError> {
    let status = calculate_status(all, new, d);
    if status == d.status {
        return Ok(());
    }
    d.status = status;
    write_status(world, d)
}

/// `checkPausedConditions`: Progressing=Unknown while paused and once resumed, unless
/// the deadline has already been reported exceeded.
pub(super) fn check_paused_conditions(
    world: &mut World<'_>,
    d: &mut Dep,
) -> Result<(), WriteError> {
    if !d.spec.has_progress_deadline() {
        return Ok(());
    }
    let reason = d.status.condition("Progressing").map(|c| c.reason.clone());
    if reason.as_deref() == Some("ProgressDeadlineExceeded") {
        return Ok(());
    }
    let paused_reported = reason.as_deref() == Some("DeploymentPaused");
    let now = d.now.clone();
    let condition = match (d.spec.paused, paused_reported) {
        (true, false) => Condition::new(
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused",
            &now,
        ),
        (false, true) => Condition::new(
            "Progressing",
            "Unknown",
            "DeploymentResumed",
            "Deployment is resumed",
            &now,
        ),
        _ => return Ok(()),
    };
    d.status.set_condition(condition);
    write_status(world, d)
}

/// `isScalingEvent`: an active ReplicaSet was sized for a different replica count.
pub(super) fn is_scaling_event(
    world: &mut World<'_>,
    d: &mut Dep,
    rs_list: &mut Vec<Rs>,
) -> SyncResult<bool> {
    let (new, old) = all_replica_sets(world, d, rs_list, false)?;
    Ok(old
        .iter()
        .chain(new.as_ref())
        .filter(|rs| rs.replicas() > 0)
        .any(|rs| {
            rs.desired_annotation()
                .is_some_and(|desired| desired != d.spec.replicas)
        }))
}

/// `sync`: scaling events and paused Deployments - resize without rolling.
pub(super) fn sync(world: &mut World<'_>, d: &mut Dep, rs_list: &mut Vec<Rs>) -> SyncResult {
    let (new, old) = all_replica_sets(world, d, rs_list, false)?;
    super::scale::scale(world, d, new.as_ref(), &old)?;
    if d.spec.paused {
        cleanup(world, d, &old)?;
    }
    let all: Vec<&Rs> = old.iter().chain(new.as_ref()).collect();
    Ok(sync_deployment_status(world, d, &all, new.as_ref())?)
}

/// `syncStatusOnly`: a Deployment being deleted only gets its status refreshed.
pub(super) fn sync_status_only(
    world: &mut World<'_>,
    d: &mut Dep,
    rs_list: &mut Vec<Rs>,
) -> SyncResult {
    let (new, old) = all_replica_sets(world, d, rs_list, false)?;
    let all: Vec<&Rs> = old.iter().chain(new.as_ref()).collect();
    Ok(sync_deployment_status(world, d, &all, new.as_ref())?)
}
