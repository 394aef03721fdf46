//! The two rollout strategies (rolling.go, recreate.go): RollingUpdate grows the new
//! ReplicaSet within maxSurge and shrinks old ones as pods become available within
//! maxUnavailable; Recreate scales everything old to zero and waits for its pods to go
//! before creating the new ReplicaSet.

use super::meta::{is_controlled_by, labels};
use super::newrs::{all_replica_sets, new_rs_new_replicas};
use super::pods::phase;
use super::progress::{deployment_complete, sync_rollout_status};
use super::replicasets::{Rs, by_creation, sum};
use super::selector::matches;
use super::spec::Dep;
use super::sync::{SyncResult, cleanup, scale_and_record};
use crate::engine::{World, WriteError};

/// `rolloutRolling`.
pub(super) fn rolling(world: &mut World<'_>, d: &mut Dep, rs_list: &mut Vec<Rs>) -> SyncResult {
    let (new, old) = all_replica_sets(world, d, rs_list, true)?;
    let Some(new) = new else {
        return Ok(());
    };
    // The status is computed from the ReplicaSets as listed, before this sync's scaling.
    let all: Vec<&Rs> = old.iter().chain(Some(&new)).collect();
    if reconcile_new(world, d, &all, &new)? {
        return Ok(sync_rollout_status(world, d, &all, Some(&new))?);
    }
    let active_old: Vec<Rs> = old.iter().filter(|rs| rs.replicas() > 0).cloned().collect();
    if reconcile_old(world, d, &all, active_old, &new)? {
        return Ok(sync_rollout_status(world, d, &all, Some(&new))?);
    }
    if deployment_complete(d, &d.status) {
        cleanup(world, d, &old)?;
    }
    Ok(sync_rollout_status(world, d, &all, Some(&new))?)
}

/// `reconcileNewReplicaSet`: grow the new ReplicaSet as far as the surge allows.
fn reconcile_new(
    world: &mut World<'_>,
    d: &Dep,
    all: &[&Rs],
    new: &Rs,
) -> Result<bool, WriteError> {
    if new.replicas() == d.spec.replicas {
        return Ok(false);
    }
    let target = if new.replicas() > d.spec.replicas {
        d.spec.replicas
    } else {
        new_rs_new_replicas(
            &d.spec,
            sum(all.iter().copied(), Rs::replicas),
            new.replicas(),
        )
    };
    Ok(scale_and_record(world, d, new, target)?.0)
}

/// `reconcileOldReplicaSets`: shrink old ReplicaSets, unhealthy replicas first, without
/// going below replicas - maxUnavailable available pods.
fn reconcile_old(
    world: &mut World<'_>,
    d: &Dep,
    all: &[&Rs],
    mut old: Vec<Rs>,
    new: &Rs,
) -> Result<bool, WriteError> {
    if sum(&old, Rs::replicas) == 0 {
        return Ok(false);
    }
    let all_pods = sum(all.iter().copied(), Rs::replicas);
    let min_available = d.spec.replicas - d.spec.max_unavailable();
    let new_unavailable = new.replicas() - new.available();
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return Ok(false);
    }
    let cleaned = cleanup_unhealthy(world, d, &mut old, max_scaled_down)?;
    let scaled = scale_down_old(world, d, &old, new)?;
    Ok(cleaned + scaled > 0)
}

/// `cleanupUnhealthyReplicas`: drop replicas of old ReplicaSets that are not available.
fn cleanup_unhealthy(
    world: &mut World<'_>,
    d: &Dep,
    old: &mut [Rs],
    max_cleanup: i32,
) -> Result<i32, WriteError> {
    old.sort_by(by_creation);
    let mut total = 0;
    for rs in old.iter_mut() {
        if total >= max_cleanup {
            break;
        }
        if rs.replicas() == 0 || rs.replicas() == rs.available() {
            continue;
        }
        let count = (max_cleanup - total).min(rs.replicas() - rs.available());
        let (_, updated) = scale_and_record(world, d, rs, rs.replicas() - count)?;
        *rs = updated;
        total += count;
    }
    Ok(total)
}

/// `scaleDownOldReplicaSetsForRollingUpdate`: shrink the oldest first by the available
/// pods beyond the minimum.
fn scale_down_old(world: &mut World<'_>, d: &Dep, old: &[Rs], new: &Rs) -> Result<i32, WriteError> {
    let min_available = d.spec.replicas - d.spec.max_unavailable();
    let available = sum(old.iter().chain(Some(new)), Rs::available);
    if available <= min_available {
        return Ok(0);
    }
    let mut ordered: Vec<&Rs> = old.iter().collect();
    ordered.sort_by(|a, b| by_creation(a, b));
    let to_scale_down = available - min_available;
    let mut total = 0;
    for rs in ordered {
        if total >= to_scale_down {
            break;
        }
        if rs.replicas() == 0 {
            continue;
        }
        let count = rs.replicas().min(to_scale_down - total);
        scale_and_record(world, d, rs, rs.replicas() - count)?;
        total += count;
    }
    Ok(total)
}

/// `rolloutRecreate`.
pub(super) fn recreate(world: &mut World<'_>, d: &mut Dep, rs_list: &mut Vec<Rs>) -> SyncResult {
    let (mut new, mut old) = all_replica_sets(world, d, rs_list, false)?;
    let mut scaled_down = false;
    for rs in old.iter().filter(|rs| rs.replicas() > 0) {
        scaled_down |= scale_and_record(world, d, rs, 0)?.0;
    }
    let all: Vec<Rs> = old.iter().chain(new.as_ref()).cloned().collect();
    let all_refs: Vec<&Rs> = all.iter().collect();
    if scaled_down || old_pods_running(world, d, new.as_ref(), &old) {
        return Ok(sync_rollout_status(world, d, &all_refs, new.as_ref())?);
    }
    if new.is_none() {
        (new, old) = all_replica_sets(world, d, rs_list, true)?;
    }
    let Some(new_rs) = new.as_ref() else {
        return Ok(());
    };
    scale_and_record(world, d, new_rs, d.spec.replicas)?;
    if deployment_complete(d, &d.status) {
        cleanup(world, d, &old)?;
    }
    let all: Vec<&Rs> = old.iter().chain(new.as_ref()).collect();
    Ok(sync_rollout_status(world, d, &all, new.as_ref())?)
}

/// `oldPodsRunning`: old ReplicaSets still report pods, or a pod of one has not reached
/// a terminal phase (terminating pods count until they are gone).
fn old_pods_running(world: &World<'_>, d: &Dep, new: Option<&Rs>, old: &[Rs]) -> bool {
    if sum(old, Rs::status_replicas) > 0 {
        return true;
    }
    old.iter().any(|rs| {
        world
            .list_owned("", "pods", &d.key.namespace, rs.uid())
            .iter()
            .any(|pod| {
                matches(Some(&d.spec.selector), &labels(pod))
                    && is_controlled_by(pod, "ReplicaSet", rs.uid())
                    && new.is_none_or(|n| !is_controlled_by(pod, "ReplicaSet", n.uid()))
                    && !matches!(phase(pod), "Succeeded" | "Failed")
            })
    })
}
