//! Deployment rollouts (krane 3.9 semantics): gate on observedGeneration, judge the newest
//! ReplicaSet by revision, fail only when all its pods are doomed, and let the cluster's
//! own ProgressDeadlineExceeded end the wait. Complete counts are not success while the
//! controller still reports Available or Progressing as False.

use crate::rules::annotations::rollout_mode::{RequiredRollout, max_unavailable};
use crate::rules::assessment::Assessment;
use crate::rules::live::Live;
use crate::rules::pods::pod_set::{DoomPolicy, PodReading, PodSet, pending};
use crate::rules::snapshot::{Snapshot, or_default};
use crate::rules::target::Target;
use crate::rules::workloads::generation::{generation_unobserved, unreadable};
use crate::rules::workloads::rollout_views::{DeploymentView, ReplicaSetView};
use crate::vocab::verdict::Reason;
use k8s_openapi::api::apps::v1::DeploymentCondition;

/// krane's allowance for clock skew between the runner and the API server.
const CLOCK_SKEW: jiff::SignedDuration = jiff::SignedDuration::from_secs(5);

/// Read straight from the object's text (no `Value` first): the most re-assessed rule.
pub fn assess(obj: &Live, target: &Target, snapshot: &Snapshot) -> Assessment {
    let dep: DeploymentView = match obj.typed() {
        Ok(d) => d,
        Err(e) => return unreadable("Deployment", &e),
    };
    let spec = or_default(&dep.spec);
    let status = or_default(&dep.status);
    if let Some(wait) = generation_unobserved(
        "deployment controller",
        dep.metadata.generation,
        status.observed_generation,
    ) {
        return wait;
    }
    let desired = spec.replicas.unwrap_or(1);
    if desired == 0 {
        return Assessment::succeeded("scaled to 0 replicas");
    }
    let mode = RequiredRollout::for_target(target).unwrap_or(RequiredRollout::Full);
    let sets = dep
        .metadata
        .uid
        .as_deref()
        .map(|uid| snapshot.children::<ReplicaSetView>(uid))
        .unwrap_or_default();
    // The controller stamps the new ReplicaSet's revision on the Deployment together with
    // observedGeneration; an older maximum means the new ReplicaSet is not seen yet.
    let expected = dep.metadata.revision;
    let newest = sets
        .iter()
        .max_by_key(|rs| rs.metadata.revision)
        .filter(|rs| rs.metadata.revision >= expected);
    let new_pods = newest.map(|rs| pods_of(rs, snapshot)).unwrap_or_default();
    let newest_uid = newest.and_then(|rs| rs.metadata.uid.as_deref());
    // Old pods still running hold the rollout; old pods already being deleted do not
    // (the ReplicaSet controller no longer counts them, nor do kubectl rollout status and
    // krane): they are only mentioned.
    let (mut old_pods, mut terminating) = (0, 0);
    for rs in sets
        .iter()
        .filter(|rs| rs.metadata.uid.as_deref() != newest_uid)
    {
        for p in pods_of(rs, snapshot).iter().filter(|p| !p.finished()) {
            if p.deleting() {
                terminating += 1;
            } else {
                old_pods += 1;
            }
        }
    }
    let pods = PodSet::of(new_pods);
    if let Some(failed) = pods.failure(DoomPolicy::All, "new pod") {
        return failed;
    }

    let updated = status.updated_replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    let new_available = newest
        .and_then(|rs| rs.status.as_ref())
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    let rs_name = newest.and_then(|rs| rs.metadata.name.clone());

    let min_available = mode.min_available(spec.strategy.as_ref(), desired);
    let (done, progress) = match (mode, min_available) {
        (RequiredRollout::None, _) => match &rs_name {
            Some(name) => {
                return Assessment::succeeded(format!(
                    "new ReplicaSet {name} created (required-rollout: none)"
                ));
            }
            None => (
                false,
                format!("waiting for the new ReplicaSet (revision {expected})"),
            ),
        },
        (_, Some(min)) => (
            rs_name.is_some() && new_available >= min,
            format!(
                "{new_available}/{desired} new replicas available, {min} required ({})",
                describe(mode, &dep, desired)
            ),
        ),
        (_, None) => {
            let mut progress =
                format!("{updated}/{desired} replicas updated, {available} available");
            if old_pods > 0 {
                progress.push_str(&format!(", {old_pods} old pods remaining"));
            }
            let done = updated == desired
                && status.replicas == Some(desired)
                && available == desired
                && old_pods == 0;
            (done, progress)
        }
    };
    if done {
        // The controller computes these conditions from the same counts, so a False one
        // next to complete counts is a status not yet caught up (or a create error); it
        // is not success until the controller says so. A partial required-rollout asks for
        // less than the controller's Available, so it is judged by its own counts.
        let full = min_available.is_none();
        return match contradicting_condition(&dep).filter(|_| full) {
            Some(c) => Assessment::not_ready(format!(
                "{progress}, but the Deployment's {} condition is False{}",
                c.type_,
                cause(c.reason.as_deref(), c.message.as_deref())
            )),
            None if terminating > 0 => {
                let pods = if terminating == 1 { "pod" } else { "pods" };
                Assessment::succeeded(format!(
                    "{progress}; {terminating} old {pods} still terminating"
                ))
            }
            None => Assessment::succeeded(progress),
        };
    }
    let blocker = pods.blocker("new pod");
    if let Some(c) = progress_deadline_exceeded(&dep, target) {
        let seconds = spec.progress_deadline_seconds.unwrap_or(600);
        let mut message = format!(
            "{progress}; no progress for {seconds}s (ProgressDeadlineExceeded): {}",
            c.message
                .as_deref()
                .unwrap_or_default()
                .trim_end_matches('.')
        );
        if let Some(b) = &blocker {
            message = format!("{message}; {}", b.detail);
        }
        let container = blocker.and_then(|b| b.container);
        return Assessment::pending(Reason::ProgressDeadlineExceeded, message)
            .with_container(container);
    }
    pending(progress, blocker)
}

fn pods_of(rs: &ReplicaSetView, snapshot: &Snapshot) -> Vec<PodReading> {
    rs.metadata
        .uid
        .as_deref()
        .map(|uid| snapshot.pod_readings(uid))
        .unwrap_or_default()
}

/// ` (reason: message)` of a condition, with what it has of either: ` (reason)`,
/// ` (message)`, or nothing.
fn cause(reason: Option<&str>, message: Option<&str>) -> String {
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    let message = message
        .map(|m| m.trim().trim_end_matches('.'))
        .filter(|m| !m.is_empty());
    match (reason, message) {
        (Some(r), Some(m)) => format!(" ({r}: {m})"),
        (Some(one), None) | (None, Some(one)) => format!(" ({one})"),
        (None, None) => String::new(),
    }
}

fn describe(mode: RequiredRollout, dep: &DeploymentView, desired: i32) -> String {
    if let RequiredRollout::Percent(p) = mode {
        format!("required-rollout {p}%")
    } else {
        let strategy = dep.spec.as_ref().and_then(|s| s.strategy.as_ref());
        format!(
            "required-rollout maxUnavailable: {}",
            max_unavailable(strategy, desired)
        )
    }
}

/// An Available or Progressing condition that is False for a reason other than
/// ProgressDeadlineExceeded (which has its own handling).
fn contradicting_condition(dep: &DeploymentView) -> Option<&DeploymentCondition> {
    let conditions = &dep.status.as_ref()?.false_conditions;
    conditions.iter().find(|c| {
        c.status == "False"
            && match c.type_.as_str() {
                "Available" => true,
                "Progressing" => c.reason.as_deref() != Some("ProgressDeadlineExceeded"),
                _ => false,
            }
    })
}

/// The controller's verdict that the rollout stalled, unless it predates this apply.
fn progress_deadline_exceeded<'a>(
    dep: &'a DeploymentView,
    target: &Target,
) -> Option<&'a DeploymentCondition> {
    let c = dep
        .status
        .as_ref()?
        .false_conditions
        .iter()
        .find(|c| c.type_ == "Progressing")?;
    if c.status != "False" || c.reason.as_deref() != Some("ProgressDeadlineExceeded") {
        return None;
    }
    let stale = match (target.applied_at, &c.last_update_time) {
        (Some(applied), Some(updated)) => updated.0 < applied - CLOCK_SKEW,
        _ => false,
    };
    (!stale).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::annotations::rollout_mode::KRANE_REQUIRED_ROLLOUT_ANNOTATION;
    use crate::rules::fixtures::{self, merged, uid};
    use serde_json::Value;
    use serde_json::json;

    const DEP_UID: &str = "6f1c2a3b-58d4-4e7a-9b0c-1d2e3f4a5b6c";

    fn deployment(generation: i64, status: &Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": DEP_UID, "resourceVersion": "48200",
                "generation": generation, "creationTimestamp": "2025-03-01T09:00:00Z", "labels": {"app": "web"},
                "annotations": {"deployment.kubernetes.io/revision": "4"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": fixtures::pod_template(&json!({"app": "web"})),
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
            "status": status
        })
    }

    fn status(
        observed: i64,
        replicas: i32,
        updated: i32,
        available: i32,
        progressing: &Value,
    ) -> Value {
        json!({"observedGeneration": observed, "replicas": replicas, "updatedReplicas": updated,
            "readyReplicas": available, "availableReplicas": available,
            "unavailableReplicas": (replicas - available).max(0),
            "conditions": [
                {"type": "Available", "status": "True", "lastUpdateTime": "2025-03-04T10:15:00Z",
                    "lastTransitionTime": "2025-03-01T09:00:10Z", "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability."},
                progressing]})
    }

    fn progressing(status: &str, reason: &str, message: &str) -> Value {
        json!({"type": "Progressing", "status": status, "lastUpdateTime": "2025-03-04T10:25:01Z",
            "lastTransitionTime": "2025-03-04T10:25:01Z", "reason": reason, "message": message})
    }

    fn complete() -> Value {
        progressing(
            "True",
            "NewReplicaSetAvailable",
            "ReplicaSet \"web-7d4b9c\" has successfully progressed.",
        )
    }

    fn updating() -> Value {
        progressing(
            "True",
            "ReplicaSetUpdated",
            "ReplicaSet \"web-7d4b9c\" is progressing.",
        )
    }

    fn snapshot(objects: &[Value]) -> Snapshot {
        fixtures::snapshot(objects)
    }

    fn target() -> Target {
        Target::new("apps/v1", "Deployment", Some("shop"), "web")
    }

    #[track_caller]
    fn case(target: &Target, objects: &[Value], expected: (Option<Reason>, &str)) {
        let snap = snapshot(objects);
        let obj = snap.live(&target.key()).unwrap();
        let got = assess(&obj, target, &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
        assert_eq!(
            matches!(got, Assessment::Succeeded { .. }),
            expected.0.is_none()
        );
    }

    fn new_rs(available: i32) -> Value {
        fixtures::replica_set("7d4b9c", "4", DEP_UID, 3, available, "2025-03-04T10:15:00Z")
    }

    fn old_rs(replicas: i32) -> Value {
        fixtures::replica_set(
            "5f6a7b",
            "3",
            DEP_UID,
            replicas,
            replicas,
            "2025-03-01T09:00:00Z",
        )
    }

    fn new_pod(i: usize, status: &Value) -> Value {
        fixtures::rs_pod(
            &format!("web-7d4b9c-{i}"),
            &uid("web-7d4b9c"),
            "7d4b9c",
            status,
        )
    }

    #[test]
    fn stale_new_replica_set_available_right_after_apply_is_not_success() {
        // generation 5 was just applied; status still describes generation 4, fully rolled out
        case(
            &target(),
            &[deployment(5, &status(4, 3, 3, 3, &complete())), new_rs(3)],
            (
                Some(Reason::NotReady),
                "waiting for the deployment controller to observe generation 5 (status is for 4)",
            ),
        );
    }

    #[test]
    fn a_full_rollout_needs_every_replica_updated_available_and_old_pods_gone() {
        let ready = fixtures::ready_status;
        let old_pod = fixtures::rs_pod("web-5f6a7b-0", &uid("web-5f6a7b"), "5f6a7b", &ready());
        case(
            &target(),
            &[
                deployment(5, &status(5, 3, 2, 1, &updating())),
                new_rs(1),
                old_rs(1),
                old_pod.clone(),
                new_pod(0, &ready()),
                new_pod(1, &fixtures::running_not_ready_status()),
            ],
            (
                Some(Reason::ReadinessFailing),
                "2/3 replicas updated, 1 available, 1 old pods remaining; 1 of 2 new pods not ready: container web is running but not ready",
            ),
        );
        // status already complete while an old pod is still terminating: done, and said
        let mut leaving = old_pod;
        leaving["metadata"]["deletionTimestamp"] = json!("2025-03-04T10:25:30Z");
        case(
            &target(),
            &[
                deployment(5, &status(5, 3, 3, 3, &complete())),
                new_rs(3),
                old_rs(0),
                leaving,
            ],
            (
                None,
                "3/3 replicas updated, 3 available; 1 old pod still terminating",
            ),
        );
        case(
            &target(),
            &[
                deployment(5, &status(5, 3, 3, 3, &complete())),
                new_rs(3),
                old_rs(0),
                new_pod(0, &ready()),
                new_pod(1, &ready()),
                new_pod(2, &ready()),
            ],
            (None, "3/3 replicas updated, 3 available"),
        );
    }

    fn rolled_back_dep(status: &Value) -> Value {
        let patch =
            json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "10"}}});
        merged(deployment(6, status), patch)
    }

    #[test]
    fn the_newest_replica_set_is_chosen_by_numeric_revision_not_age_or_size() {
        let crash = || fixtures::crash_loop_status(3, "OOMKilled", 4);
        // rollback: the older ReplicaSet web-5f6a7b became revision 10; web-7d4b9c (revision 9,
        // created later, scaled to 0) is the old one now. A string sort would pick "9".
        let rolled_back =
            fixtures::replica_set("5f6a7b", "10", DEP_UID, 3, 0, "2025-03-01T09:00:00Z");
        let abandoned = fixtures::replica_set("7d4b9c", "9", DEP_UID, 0, 0, "2025-03-04T10:15:00Z");
        let pod = |i: usize| {
            fixtures::rs_pod(
                &format!("web-5f6a7b-{i}"),
                &uid("web-5f6a7b"),
                "5f6a7b",
                &crash(),
            )
        };
        case(
            &target(),
            &[
                rolled_back_dep(&status(6, 3, 3, 0, &updating())),
                rolled_back,
                abandoned.clone(),
                pod(0),
                pod(1),
                pod(2),
            ],
            (
                Some(Reason::CrashLoop),
                "3 of 3 new pods crash looping: container web exited with code 3 (OOMKilled), restarted 4 times",
            ),
        );
        // and crashing pods of the old revision do not fail a healthy new one
        let old_crash = |i: usize| {
            fixtures::rs_pod(
                &format!("web-7d4b9c-{i}"),
                &uid("web-7d4b9c"),
                "7d4b9c",
                &crash(),
            )
        };
        let healthy = fixtures::replica_set("5f6a7b", "10", DEP_UID, 3, 1, "2025-03-01T09:00:00Z");
        let ready_pod = fixtures::rs_pod(
            "web-5f6a7b-0",
            &uid("web-5f6a7b"),
            "5f6a7b",
            &fixtures::ready_status(),
        );
        case(
            &target(),
            &[
                rolled_back_dep(&status(6, 3, 1, 1, &updating())),
                healthy,
                abandoned,
                ready_pod,
                old_crash(0),
                old_crash(1),
            ],
            (
                Some(Reason::NotReady),
                "1/3 replicas updated, 1 available, 2 old pods remaining",
            ),
        );
    }

    #[test]
    fn some_doomed_pods_wait_but_all_doomed_fail() {
        let crash = || fixtures::crash_loop_status(1, "Error", 2);
        case(
            &target(),
            &[
                deployment(5, &status(5, 3, 3, 1, &updating())),
                new_rs(1),
                new_pod(0, &fixtures::ready_status()),
                new_pod(1, &crash()),
            ],
            (
                Some(Reason::NotReady),
                "3/3 replicas updated, 1 available; 1 of 2 new pods crash looping: container web exited with code 1, restarted 2 times",
            ),
        );
        let config = || {
            fixtures::waiting_status("CreateContainerConfigError", "secret \"web-db\" not found")
        };
        case(
            &target(),
            &[
                deployment(5, &status(5, 3, 3, 0, &updating())),
                new_rs(0),
                new_pod(0, &config()),
                new_pod(1, &config()),
            ],
            (
                Some(Reason::ContainerConfigError),
                "2 of 2 new pods cannot create their containers: container web cannot be created: secret \"web-db\" not found",
            ),
        );
    }

    #[test]
    fn old_pods_still_terminating_do_not_hold_a_complete_rollout() {
        let old_pod = |i: usize, deleting: bool| {
            let mut pod = fixtures::rs_pod(
                &format!("web-5f6a7b-{i}"),
                &uid("web-5f6a7b"),
                "5f6a7b",
                &fixtures::ready_status(),
            );
            if deleting {
                pod["metadata"]["deletionTimestamp"] = json!("2025-03-04T10:25:30Z");
                pod["metadata"]["deletionGracePeriodSeconds"] = json!(30);
            }
            pod
        };
        let objects = |old: Vec<Value>| {
            let mut objects = vec![
                deployment(5, &status(5, 3, 3, 3, &complete())),
                new_rs(3),
                old_rs(0),
                new_pod(0, &fixtures::ready_status()),
                new_pod(1, &fixtures::ready_status()),
                new_pod(2, &fixtures::ready_status()),
            ];
            objects.extend(old);
            objects
        };
        case(
            &target(),
            &objects(vec![old_pod(0, true), old_pod(1, true)]),
            (
                None,
                "3/3 replicas updated, 3 available; 2 old pods still terminating",
            ),
        );
        // One not yet being deleted still holds it.
        case(
            &target(),
            &objects(vec![old_pod(0, true), old_pod(1, false)]),
            (
                Some(Reason::NotReady),
                "3/3 replicas updated, 3 available, 1 old pods remaining",
            ),
        );
    }

    #[test]
    fn complete_counts_are_no_success_while_a_condition_is_false() {
        let complete_objects = |status: Value| {
            vec![
                deployment(5, &status),
                new_rs(3),
                old_rs(0),
                new_pod(0, &fixtures::ready_status()),
                new_pod(1, &fixtures::ready_status()),
                new_pod(2, &fixtures::ready_status()),
            ]
        };
        let mut unavailable = status(5, 3, 3, 3, &complete());
        unavailable["conditions"][0] = json!({"type": "Available", "status": "False",
            "lastUpdateTime": "2025-03-04T10:25:01Z", "lastTransitionTime": "2025-03-04T10:25:01Z",
            "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."});
        case(
            &target(),
            &complete_objects(unavailable),
            (
                Some(Reason::NotReady),
                "3/3 replicas updated, 3 available, but the Deployment's Available condition is False (MinimumReplicasUnavailable: Deployment does not have minimum availability)",
            ),
        );
        let create_error = progressing(
            "False",
            "ReplicaSetCreateError",
            "Failed to create new replica set \"web-7d4b9c\": replicasets.apps \"web-7d4b9c\" is forbidden: exceeded quota: compute",
        );
        case(
            &target(),
            &complete_objects(status(5, 3, 3, 3, &create_error)),
            (
                Some(Reason::NotReady),
                "3/3 replicas updated, 3 available, but the Deployment's Progressing condition is False (ReplicaSetCreateError: Failed to create new replica set \"web-7d4b9c\": replicasets.apps \"web-7d4b9c\" is forbidden: exceeded quota: compute)",
            ),
        );
        // A condition without a reason or a message says only what it has: no Rust
        // `Option` text, no empty `(: )`.
        for (reason, message, said) in [
            ("ReplicaSetCreateError", "", " (ReplicaSetCreateError)"),
            ("", "quota exceeded.", " (quota exceeded)"),
            ("", "", ""),
        ] {
            let mut bare = status(5, 3, 3, 3, &progressing("False", reason, message));
            let condition = bare["conditions"][1].as_object_mut().unwrap();
            condition.retain(|k, v| !matches!(k.as_str(), "reason" | "message") || v != "");
            case(
                &target(),
                &complete_objects(bare),
                (
                    Some(Reason::NotReady),
                    &format!(
                        "3/3 replicas updated, 3 available, but the Deployment's Progressing condition is False{said}"
                    ),
                ),
            );
        }
        // a partial required-rollout asks for less than the controller's Available
        let mut partial = status(5, 4, 3, 2, &updating());
        partial["conditions"][0] = json!({"type": "Available", "status": "False",
            "lastUpdateTime": "2025-03-04T10:25:01Z", "lastTransitionTime": "2025-03-04T10:25:01Z",
            "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."});
        case(
            &target().with_annotation(KRANE_REQUIRED_ROLLOUT_ANNOTATION, "50%"),
            &[deployment(5, &partial), new_rs(2), old_rs(1)],
            (
                None,
                "2/3 new replicas available, 2 required (required-rollout 50%)",
            ),
        );
        // Progressing Unknown (paused) is not False
        let paused = progressing("Unknown", "DeploymentPaused", "Deployment is paused");
        case(
            &target(),
            &complete_objects(status(5, 3, 3, 3, &paused)),
            (None, "3/3 replicas updated, 3 available"),
        );
    }

    #[test]
    fn progress_deadline_exceeded_ends_the_wait_even_while_available() {
        let stalled = progressing(
            "False",
            "ProgressDeadlineExceeded",
            "ReplicaSet \"web-7d4b9c\" has timed out progressing.",
        );
        let pull = fixtures::waiting_status(
            "ImagePullBackOff",
            "Back-off pulling image \"ghcr.io/acme/web:v2\"",
        );
        let objects = vec![
            deployment(5, &status(5, 4, 1, 3, &stalled)),
            new_rs(0),
            old_rs(3),
            new_pod(0, &pull),
        ];
        let expected = "1/3 replicas updated, 3 available; no progress for 600s (ProgressDeadlineExceeded): ReplicaSet \"web-7d4b9c\" has timed out progressing; 1 of 1 new pod waiting for its image: container web cannot pull image \"ghcr.io/acme/web:v2\" yet (ImagePullBackOff), no pull error visible";
        case(
            &target(),
            &objects,
            (Some(Reason::ProgressDeadlineExceeded), expected),
        );
        // a condition older than this apply belongs to an earlier rollout
        let later = target().with_applied_at("2025-03-04T10:30:00Z".parse().unwrap());
        case(
            &later,
            &objects,
            (
                Some(Reason::ImagePullBackoff),
                "1/3 replicas updated, 3 available; 1 of 1 new pod waiting for its image: container web cannot pull image \"ghcr.io/acme/web:v2\" yet (ImagePullBackOff), no pull error visible",
            ),
        );
    }

    #[test]
    fn required_rollout_modes() {
        let with = |mode: &str| target().with_annotation(KRANE_REQUIRED_ROLLOUT_ANNOTATION, mode);
        let mid = || {
            vec![
                deployment(5, &status(5, 4, 3, 2, &updating())),
                new_rs(2),
                old_rs(1),
            ]
        };
        // 25% of 3 rounds down to 0 unavailable: all 3 must be available
        case(
            &with("maxUnavailable"),
            &mid(),
            (
                Some(Reason::NotReady),
                "2/3 new replicas available, 3 required (required-rollout maxUnavailable: 0)",
            ),
        );
        case(
            &with("50%"),
            &mid(),
            (
                None,
                "2/3 new replicas available, 2 required (required-rollout 50%)",
            ),
        );
        case(
            &with("none"),
            &mid(),
            (
                None,
                "new ReplicaSet web-7d4b9c created (required-rollout: none)",
            ),
        );
        case(
            &with("none"),
            &[deployment(5, &status(5, 3, 0, 3, &updating())), old_rs(3)],
            (
                Some(Reason::NotReady),
                "waiting for the new ReplicaSet (revision 4)",
            ),
        );
        let ten = merged(
            deployment(5, &status(5, 10, 10, 8, &updating())),
            json!({"spec": {"replicas": 10}}),
        );
        let rs = fixtures::replica_set("7d4b9c", "4", DEP_UID, 10, 8, "2025-03-04T10:15:00Z");
        case(
            &with("maxUnavailable"),
            &[ten, rs],
            (
                None,
                "8/10 new replicas available, 8 required (required-rollout maxUnavailable: 2)",
            ),
        );
    }

    #[test]
    fn zero_replicas_succeed_once_observed() {
        let zero = |generation, observed| {
            merged(
                deployment(generation, &json!({"observedGeneration": observed})),
                json!({"spec": {"replicas": 0}}),
            )
        };
        case(&target(), &[zero(7, 7)], (None, "scaled to 0 replicas"));
        case(
            &target(),
            &[zero(7, 6)],
            (
                Some(Reason::NotReady),
                "waiting for the deployment controller to observe generation 7 (status is for 6)",
            ),
        );
    }
}
