//! Deployment status from its ReplicaSets (`calculateStatus`) and the Progressing
//! condition's rules (pkg/controller/deployment/progress.go): progress moves
//! lastUpdateTime, the progress deadline counts from it, and a stuck rollout is checked
//! again when its deadline passes.

use super::replicasets::{Rs, sum};
use super::spec::Dep;
use super::status::{Condition, DeploymentStatus};
use super::sync::write_status;
use crate::engine::{World, WriteError};
use jiff::Timestamp;
use std::time::Duration;

/// `calculateStatus`: counts from the ReplicaSets, the Available condition from the
/// minimum availability the strategy allows.
pub(super) fn calculate_status(all: &[&Rs], new: Option<&Rs>, d: &Dep) -> DeploymentStatus {
    let available = sum(all.iter().copied(), Rs::available);
    let total_spec = sum(all.iter().copied(), Rs::replicas);
    let mut status = DeploymentStatus {
        observed_generation: d.generation(),
        replicas: sum(all.iter().copied(), Rs::status_replicas),
        updated_replicas: new.map_or(0, Rs::status_replicas),
        ready_replicas: sum(all.iter().copied(), Rs::ready),
        available_replicas: available,
        unavailable_replicas: (total_spec - available).max(0),
        conditions: d.status.conditions.clone(),
        collision_count: d.status.collision_count,
    };
    let now = &d.now;
    let cond = if available >= d.spec.replicas - d.spec.max_unavailable() {
        Condition::new(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            now,
        )
    } else {
        Condition::new(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        )
    };
    status.set_condition(cond);
    status
}

/// `deploymentutil.DeploymentComplete`.
pub(super) fn deployment_complete(d: &Dep, status: &DeploymentStatus) -> bool {
    let r = d.spec.replicas;
    status.updated_replicas == r
        && status.replicas == r
        && status.available_replicas == r
        && status.observed_generation >= d.generation()
}

/// `deploymentutil.DeploymentProgressing`: more updated, ready or available pods, or
/// fewer old ones, than the last recorded status.
fn deployment_progressing(old: &DeploymentStatus, new: &DeploymentStatus) -> bool {
    let old_old = old.replicas - old.updated_replicas;
    let new_old = new.replicas - new.updated_replicas;
    new.updated_replicas > old.updated_replicas
        || new_old < old_old
        || new.ready_replicas > old.ready_replicas
        || new.available_replicas > old.available_replicas
}

fn deadline(d: &Dep) -> Option<Duration> {
    d.spec
        .progress_deadline_seconds
        .map(|s| Duration::from_secs(u64::try_from(s).unwrap_or(0)))
}

/// `deploymentutil.DeploymentTimedOut`: no progress for progressDeadlineSeconds since the
/// Progressing condition's lastUpdateTime.
fn deployment_timed_out(d: &Dep, status: &DeploymentStatus, now: Timestamp) -> bool {
    let (Some(deadline), Some(cond)) = (deadline(d), status.condition("Progressing")) else {
        return false;
    };
    match cond.reason.as_str() {
        "NewReplicaSetAvailable" => false,
        "ProgressDeadlineExceeded" => true,
        _ => super::meta::parse_time(&cond.last_update_time)
            .is_some_and(|from| from + deadline < now),
    }
}

/// `syncRolloutStatus`: the status with Progressing estimated, written when it changed;
/// otherwise a stuck rollout is requeued for its deadline.
pub(super) fn sync_rollout_status(
    world: &mut World<'_>,
    d: &mut Dep,
    all: &[&Rs],
    new: Option<&Rs>,
) -> Result<(), WriteError> {
    let now = world.store.clock().now();
    let mut status = calculate_status(all, new, d);
    if deadline(d).is_none() {
        status.remove_condition("Progressing");
    }
    let current = d.status.condition("Progressing").cloned();
    let complete_before = status.replicas == status.updated_replicas
        && current
            .as_ref()
            .is_some_and(|c| c.reason == "NewReplicaSetAvailable");
    let subject = match new {
        Some(rs) => format!("ReplicaSet \"{}\"", rs.name()),
        None => format!("Deployment \"{}\"", d.name()),
    };
    if deadline(d).is_some() && !complete_before {
        if deployment_complete(d, &status) {
            let msg = format!("{subject} has successfully progressed.");
            status.set_condition(Condition::new(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                msg,
                &d.now,
            ));
        } else if deployment_progressing(&d.status, &status) {
            let mut cond = Condition::new(
                "Progressing",
                "True",
                "ReplicaSetUpdated",
                format!("{subject} is progressing."),
                &d.now,
            );
            if let Some(current) = &current {
                if current.status == "True" {
                    cond.last_transition_time
                        .clone_from(&current.last_transition_time);
                }
                status.remove_condition("Progressing");
            }
            status.set_condition(cond);
        } else if deployment_timed_out(d, &status, now) {
            let msg = format!("{subject} has timed out progressing.");
            status.set_condition(Condition::new(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                msg,
                &d.now,
            ));
        }
    }
    match replica_failure(all, new) {
        Some(failure) => status.set_condition(failure),
        None => status.remove_condition("ReplicaFailure"),
    }
    if status == d.status {
        if let Some(after) = requeue_stuck_after(d, &status, now) {
            world.requeue_after(d.key.clone(), after);
        }
        return Ok(());
    }
    d.status = status;
    write_status(world, d)
}

/// `getReplicaFailures`: the new ReplicaSet's ReplicaFailure, else an old one's.
fn replica_failure(all: &[&Rs], new: Option<&Rs>) -> Option<Condition> {
    let failure_of = |rs: &Rs| -> Option<Condition> {
        let c = rs
            .obj
            .pointer("/status/conditions")?
            .as_array()?
            .iter()
            .find(|c| super::meta::str_at(c, "/type") == "ReplicaFailure")?;
        let s = |k: &str| super::meta::str_at(c, k).to_owned();
        Some(Condition {
            type_: "ReplicaFailure".into(),
            status: s("/status"),
            last_update_time: s("/lastTransitionTime"),
            last_transition_time: s("/lastTransitionTime"),
            reason: s("/reason"),
            message: s("/message"),
        })
    };
    new.and_then(failure_of)
        .or_else(|| all.iter().find_map(|rs| failure_of(rs)))
}

/// `requeueStuckDeployment`: when to look again at a rollout that made no progress.
fn requeue_stuck_after(d: &Dep, status: &DeploymentStatus, now: Timestamp) -> Option<Duration> {
    let deadline = deadline(d)?;
    let cond = d.status.condition("Progressing")?;
    if deployment_complete(d, status) || cond.reason == "ProgressDeadlineExceeded" {
        return None;
    }
    let due = super::meta::parse_time(&cond.last_update_time)? + deadline;
    let after = Duration::try_from(due.duration_since(now)).unwrap_or_default();
    // Under a second the real controller requeues rate-limited (5ms); past that it adds a
    // second against clock skew.
    Some(if after < Duration::from_secs(1) {
        after + Duration::from_millis(5)
    } else {
        after + Duration::from_secs(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ObjectKey;
    use serde_json::{Value, json};

    fn dep(status: &Value) -> Dep {
        let obj = json!({"metadata": {"name": "web", "generation": 2},
            "spec": {"replicas": 3, "progressDeadlineSeconds": 30,
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}},
            "status": status});
        Dep::new(
            ObjectKey::new("apps", "deployments", "shop", "web"),
            obj,
            "2026-01-01T00:01:00Z",
        )
    }

    fn rs(name: &str, spec: i32, replicas: i32, ready: i32, available: i32) -> Rs {
        Rs::new(
            &json!({"metadata": {"name": name, "namespace": "shop"}, "spec": {"replicas": spec},
            "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": available}}),
        )
    }

    #[test]
    fn status_counts_all_replica_sets() {
        let (old, new) = (rs("web-old", 2, 2, 2, 2), rs("web-new", 2, 2, 1, 0));
        let d = dep(&json!({}));
        let s = calculate_status(&[&old, &new], Some(&new), &d);
        assert_eq!(
            (
                s.observed_generation,
                s.replicas,
                s.updated_replicas,
                s.ready_replicas,
                s.available_replicas,
                s.unavailable_replicas
            ),
            (2, 4, 2, 3, 2, 2)
        );
        let available = s.condition("Available").unwrap();
        assert_eq!(
            (available.status.as_str(), available.reason.as_str()),
            ("False", "MinimumReplicasUnavailable")
        );
        assert!(!deployment_complete(&d, &s));
    }

    #[test]
    fn progress_and_timeout_follow_last_update_time() {
        let old = DeploymentStatus::from_json(
            &json!({"replicas": 4, "updatedReplicas": 1, "readyReplicas": 3}),
        );
        let more_ready = DeploymentStatus::from_json(
            &json!({"replicas": 4, "updatedReplicas": 1, "readyReplicas": 4}),
        );
        assert!(deployment_progressing(&old, &more_ready));
        assert!(!deployment_progressing(&old, &old));
        let fewer_old = DeploymentStatus::from_json(
            &json!({"replicas": 3, "updatedReplicas": 1, "readyReplicas": 3}),
        );
        assert!(deployment_progressing(&old, &fewer_old));

        let d = dep(
            &json!({"conditions": [{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
            "lastUpdateTime": "2026-01-01T00:00:10Z", "lastTransitionTime": "2026-01-01T00:00:00Z",
            "message": "ReplicaSet \"web-new\" is progressing."}]}),
        );
        let at = |s: &str| super::super::meta::parse_time(s).unwrap();
        assert!(!deployment_timed_out(
            &d,
            &d.status,
            at("2026-01-01T00:00:40Z")
        ));
        assert!(deployment_timed_out(
            &d,
            &d.status,
            at("2026-01-01T00:00:41Z")
        ));
        assert_eq!(
            requeue_stuck_after(&d, &d.status, at("2026-01-01T00:00:20Z")),
            Some(Duration::from_secs(21))
        );
        assert_eq!(
            requeue_stuck_after(&d, &d.status, at("2026-01-01T00:00:40Z")),
            Some(Duration::from_millis(5))
        );
    }
}
