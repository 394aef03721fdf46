//! StatefulSet rollouts: ready replicas plus the update revision (respecting a partition);
//! any doomed pod of the update revision fails, since ordered rollouts stop at it.

use crate::rules::assessment::Assessment;
use crate::rules::pods::pod_set::{DoomPolicy, PodSet, pending};
use crate::rules::snapshot::{Snapshot, or_default, typed};
use crate::rules::workloads::generation::{unobserved, unreadable};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

const REVISION_LABEL: &str = "controller-revision-hash";

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let sts: StatefulSet = match typed(obj) {
        Ok(s) => s,
        Err(e) => return unreadable("StatefulSet", &e),
    };
    let spec = or_default(&sts.spec);
    let status = or_default(&sts.status);
    if let Some(wait) = unobserved(
        "statefulset controller",
        &sts.metadata,
        status.observed_generation,
    ) {
        return wait;
    }
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    if strategy.type_.as_deref() == Some("OnDelete") {
        return Assessment::succeeded(
            "generation observed; OnDelete updates pods only when they are deleted",
        );
    }
    let update_revision = status.update_revision.clone().unwrap_or_default();
    let pods: Vec<Pod> = sts
        .metadata
        .uid
        .as_deref()
        .map(|u| snapshot.children::<Pod>(u))
        .unwrap_or_default()
        .into_iter()
        .filter(|p| label(p, REVISION_LABEL) == Some(update_revision.as_str()))
        .collect();
    let pods = PodSet::new(&pods, snapshot);
    let noun = format!("pod of revision {update_revision}");
    if let Some(failed) = pods.failure(DoomPolicy::Any, &noun) {
        return failed;
    }

    let desired = spec.replicas.unwrap_or(1);
    let partition = strategy
        .rolling_update
        .and_then(|r| r.partition)
        .unwrap_or(0);
    let need = (desired - partition).max(0);
    let ready = status.ready_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    let mut progress =
        format!("{ready}/{desired} ready, {updated}/{need} updated to revision {update_revision}");
    if partition > 0 {
        progress.push_str(&format!(" (partition {partition})"));
    }
    // With a partition the current revision stays behind on purpose, so only the pods at
    // or above the partition ordinal must be updated.
    let revision_done = if partition > 0 {
        updated >= need
    } else {
        status.current_revision == status.update_revision && updated >= desired
    };
    if status.replicas == desired && ready == desired && revision_done {
        Assessment::succeeded(progress)
    } else {
        pending(progress, pods.blocker(&noun))
    }
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{self, merged};
    use crate::vocab::verdict::Reason;
    use serde_json::json;

    const UID: &str = "8e2f1a0b-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
    const OLD: &str = "db-5c9f8d7b6a";
    const NEW: &str = "db-7b8f6d5c9d";

    fn sts(status: &Value, update_strategy: &Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "shop", "uid": UID, "resourceVersion": "50100",
                "generation": 3, "creationTimestamp": "2025-03-01T09:00:00Z", "labels": {"app": "db"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "db"}},
                "template": fixtures::pod_template(&json!({"app": "db"})), "serviceName": "db",
                "podManagementPolicy": "OrderedReady", "updateStrategy": update_strategy,
                "revisionHistoryLimit": 10,
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}},
            "status": status
        })
    }

    fn status(current: &str, ready: i32, updated: i32) -> Value {
        json!({"observedGeneration": 3, "replicas": 3, "readyReplicas": ready, "currentReplicas": 3 - updated,
            "updatedReplicas": updated, "currentRevision": current, "updateRevision": NEW,
            "collisionCount": 0, "availableReplicas": ready})
    }

    fn rolling(partition: i32) -> Value {
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": partition}})
    }

    fn pod(ordinal: usize, revision: &str, status: &Value) -> Value {
        let name = format!("db-{ordinal}");
        let labels = json!({"app": "db", "controller-revision-hash": revision,
            "statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": ordinal.to_string()});
        fixtures::pod(
            &name,
            Some(("apps/v1", "StatefulSet", "db", UID)),
            &labels,
            status,
        )
    }

    #[track_caller]
    fn case(objects: &[Value], expected: (Option<Reason>, &str)) {
        let snap = fixtures::snapshot(objects);
        let got = assess(&objects[0], &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
    }

    #[test]
    fn rolling_updates_wait_for_the_update_revision_everywhere() {
        case(
            &[sts(&status(OLD, 3, 1), &rolling(0))],
            (
                Some(Reason::NotReady),
                "3/3 ready, 1/3 updated to revision db-7b8f6d5c9d",
            ),
        );
        case(
            &[sts(&status(NEW, 3, 3), &rolling(0))],
            (None, "3/3 ready, 3/3 updated to revision db-7b8f6d5c9d"),
        );
    }

    #[test]
    fn a_partition_holds_the_current_revision_back_on_purpose() {
        case(
            &[sts(&status(OLD, 3, 1), &rolling(2))],
            (
                None,
                "3/3 ready, 1/1 updated to revision db-7b8f6d5c9d (partition 2)",
            ),
        );
        case(
            &[sts(&status(OLD, 2, 0), &rolling(2))],
            (
                Some(Reason::NotReady),
                "2/3 ready, 0/1 updated to revision db-7b8f6d5c9d (partition 2)",
            ),
        );
    }

    #[test]
    fn any_doomed_pod_of_the_update_revision_fails_but_old_ones_do_not() {
        let crash = fixtures::crash_loop_status(137, "OOMKilled", 6);
        case(
            &[
                sts(&status(OLD, 2, 1), &rolling(0)),
                pod(0, OLD, &fixtures::ready_status()),
                pod(1, OLD, &fixtures::ready_status()),
                pod(2, NEW, &crash),
            ],
            (
                Some(Reason::CrashLoop),
                "1 of 1 pod of revision db-7b8f6d5c9d crash looping: container web exited with code 137 (OOMKilled), restarted 6 times",
            ),
        );
        case(
            &[sts(&status(OLD, 2, 0), &rolling(0)), pod(2, OLD, &crash)],
            (
                Some(Reason::NotReady),
                "2/3 ready, 0/3 updated to revision db-7b8f6d5c9d",
            ),
        );
    }

    #[test]
    fn on_delete_only_checks_the_generation() {
        let on_delete = json!({"type": "OnDelete"});
        case(
            &[sts(&status(OLD, 1, 0), &on_delete)],
            (
                None,
                "generation observed; OnDelete updates pods only when they are deleted",
            ),
        );
        let behind = merged(
            sts(&status(OLD, 3, 0), &on_delete),
            json!({"metadata": {"generation": 4}}),
        );
        case(
            &[behind],
            (
                Some(Reason::NotReady),
                "waiting for the statefulset controller to observe generation 4 (status is for 3)",
            ),
        );
    }
}
