//! DaemonSet rollouts: every scheduled node runs an updated, available pod, except that
//! pods on NotReady or cordoned nodes and evicted pods do not hold it (krane's rule); any
//! doomed pod of the current template fails, since the template fails alike on every node.

use crate::rules::assessment::Assessment;
use crate::rules::pods::pod_set::{DoomPolicy, PodSet, pending};
use crate::rules::snapshot::{Snapshot, or_default, typed};
use crate::rules::workloads::daemonset_nodes::Counting;
use crate::rules::workloads::generation::{unobserved, unreadable};
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

const HASH_LABEL: &str = "controller-revision-hash";
const GENERATION_LABEL: &str = "pod-template-generation";

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let ds: DaemonSet = match typed(obj) {
        Ok(d) => d,
        Err(e) => return unreadable("DaemonSet", &e),
    };
    let status = or_default(&ds.status);
    if let Some(wait) = unobserved(
        "daemonset controller",
        &ds.metadata,
        status.observed_generation,
    ) {
        return wait;
    }
    let strategy = ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref());
    if strategy.and_then(|s| s.type_.as_deref()) == Some("OnDelete") {
        return Assessment::succeeded(
            "generation observed; OnDelete updates pods only when they are deleted",
        );
    }
    let uid = ds.metadata.uid.as_deref().unwrap_or_default();
    let current = current_pods(&ds, uid, snapshot);
    let pods = PodSet::new(&current, snapshot);
    if let Some(failed) = pods.failure(DoomPolicy::Any, "pod of the current template") {
        return failed;
    }
    let desired = status.desired_number_scheduled;
    let updated = status.updated_number_scheduled.unwrap_or(0);
    let available = status.number_available.unwrap_or(0);
    let mut progress = format!("{updated}/{desired} nodes updated, {available} available");
    if updated >= desired && available >= desired {
        return Assessment::succeeded(progress);
    }
    let counting = Counting::new(&current, snapshot);
    let Some(note) = counting.note() else {
        return pending(progress, pods.blocker("pod of the current template"));
    };
    let counted = counting.counted.len();
    let counted_i32 = i32::try_from(counted).unwrap_or(i32::MAX);
    if updated >= desired && counting.counted_ready() && available >= counted_i32 {
        let s = if counted == 1 { "" } else { "s" };
        return Assessment::succeeded(format!(
            "{progress}; {counted} counted pod{s} ready; {note}"
        ));
    }
    progress = format!("{progress}; {note}");
    let counted_pods = PodSet::new(&counting.counted, snapshot);
    pending(progress, counted_pods.blocker("counted pod"))
}

/// Pods of the current template: those carrying the hash of the newest ControllerRevision,
/// or, before any revision is seen, the `pod-template-generation` of this generation.
fn current_pods(ds: &DaemonSet, uid: &str, snapshot: &Snapshot) -> Vec<Pod> {
    let newest = snapshot
        .children::<ControllerRevision>(uid)
        .into_iter()
        .max_by_key(|r| r.revision);
    let hash = newest.and_then(|r| r.metadata.labels?.get(HASH_LABEL).cloned());
    let generation = ds.metadata.generation.map(|g| g.to_string());
    snapshot
        .children::<Pod>(uid)
        .into_iter()
        .filter(|p| {
            let labels = p.metadata.labels.as_ref();
            let get = |k: &str| labels.and_then(|l| l.get(k));
            match &hash {
                Some(h) => get(HASH_LABEL) == Some(h),
                None => get(GENERATION_LABEL) == generation.as_ref(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{self, uid};
    use crate::vocab::verdict::Reason;
    use serde_json::json;

    const UID: &str = "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a";

    fn ds(updated: i32, available: i32) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "node-agent", "namespace": "shop", "uid": UID, "resourceVersion": "51000",
                "generation": 2, "creationTimestamp": "2025-03-01T09:00:00Z",
                "annotations": {"deprecated.daemonset.template.generation": "2"}},
            "spec": {"selector": {"matchLabels": {"app": "node-agent"}},
                "template": fixtures::pod_template(&json!({"app": "node-agent"})),
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                "revisionHistoryLimit": 10},
            "status": {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                "numberReady": available, "observedGeneration": 2, "updatedNumberScheduled": updated,
                "numberAvailable": available, "numberUnavailable": 3 - available}
        })
    }

    fn revision(hash: &str, revision: i64) -> Value {
        let name = format!("node-agent-{hash}");
        json!({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": "shop", "uid": uid(&name), "resourceVersion": "50990",
                "creationTimestamp": "2025-03-04T10:15:00Z",
                "labels": {"app": "node-agent", "controller-revision-hash": hash},
                "annotations": {"deprecated.daemonset.template.generation": revision.to_string()},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "node-agent",
                    "uid": UID, "controller": true, "blockOwnerDeletion": true}]},
            "data": {"spec": {"template": {"$patch": "replace"}}},
            "revision": revision
        })
    }

    fn pod(node: &str, hash: &str, generation: &str, status: &Value) -> Value {
        let labels = json!({"app": "node-agent", "controller-revision-hash": hash, "pod-template-generation": generation});
        fixtures::pod(
            &format!("node-agent-{node}"),
            Some(("apps/v1", "DaemonSet", "node-agent", UID)),
            &labels,
            status,
        )
    }

    /// A pod of the current template (revision 2) on `node`.
    fn pod_on(node: &str, status: &Value) -> Value {
        let mut p = pod(&node.replace("node-", "n"), "6d8f7c9b5", "2", status);
        p["spec"]["nodeName"] = json!(node);
        p
    }

    fn evicted() -> Value {
        json!({"phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 8Gi. ",
            "startTime": "2025-03-04T10:15:00Z"})
    }

    #[track_caller]
    fn case(objects: &[Value], expected: (Option<Reason>, &str)) {
        let snap = fixtures::snapshot(objects);
        let got = assess(&objects[0], &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
    }

    #[test]
    fn every_node_needs_an_updated_available_pod() {
        case(&[ds(3, 3)], (None, "3/3 nodes updated, 3 available"));
        case(
            &[
                ds(2, 2),
                revision("6d8f7c9b5", 2),
                pod(
                    "abcde",
                    "6d8f7c9b5",
                    "2",
                    &fixtures::running_not_ready_status(),
                ),
            ],
            (
                Some(Reason::ReadinessFailing),
                "2/3 nodes updated, 2 available; 1 of 1 pod of the current template not ready: container web is running but not ready",
            ),
        );
    }

    #[test]
    fn pods_on_not_ready_or_cordoned_nodes_and_evicted_pods_do_not_hold_the_rollout() {
        let ready = fixtures::ready_status;
        let stale = fixtures::running_not_ready_status;
        let base = || {
            vec![
                ds(3, 2),
                revision("6d8f7c9b5", 2),
                pod_on("node-1", &ready()),
                pod_on("node-2", &ready()),
                pod_on("node-3", &stale()),
            ]
        };
        // without the Nodes, every pod counts
        case(
            &base(),
            (
                Some(Reason::ReadinessFailing),
                "3/3 nodes updated, 2 available; 1 of 3 pods of the current template not ready: container web is running but not ready",
            ),
        );
        let mut with_nodes = base();
        with_nodes.extend([
            fixtures::node("node-1", true, false),
            fixtures::node("node-2", true, false),
            fixtures::node("node-3", false, false),
        ]);
        case(
            &with_nodes,
            (
                None,
                "3/3 nodes updated, 2 available; 2 counted pods ready; 1 pod not counted: 1 on NotReady node node-3",
            ),
        );
        case(
            &[
                ds(3, 1),
                revision("6d8f7c9b5", 2),
                pod_on("node-1", &ready()),
                pod_on("node-2", &stale()),
                pod_on("node-3", &evicted()),
                fixtures::node("node-1", true, false),
                fixtures::node("node-2", true, true),
                fixtures::node("node-3", true, false),
            ],
            (
                None,
                "3/3 nodes updated, 1 available; 1 counted pod ready; 2 pods not counted: 1 on cordoned node node-2, 1 evicted",
            ),
        );
        // a counted pod that is not ready still holds it, and the message says what was left out
        case(
            &[
                ds(3, 1),
                revision("6d8f7c9b5", 2),
                pod_on("node-1", &ready()),
                pod_on("node-2", &stale()),
                pod_on("node-3", &stale()),
                fixtures::node("node-1", true, false),
                fixtures::node("node-2", true, false),
                fixtures::node("node-3", false, false),
            ],
            (
                Some(Reason::ReadinessFailing),
                "3/3 nodes updated, 1 available; 1 pod not counted: 1 on NotReady node node-3; 1 of 2 counted pods not ready: container web is running but not ready",
            ),
        );
    }

    #[test]
    fn any_doomed_pod_of_the_current_template_fails() {
        let crash = fixtures::crash_loop_status(2, "Error", 3);
        let objects = vec![
            ds(1, 2),
            revision("5b7c9d1e3", 1),
            revision("6d8f7c9b5", 2),
            pod("aaaaa", "6d8f7c9b5", "2", &crash),
            pod("bbbbb", "5b7c9d1e3", "1", &fixtures::ready_status()),
        ];
        case(
            &objects,
            (
                Some(Reason::CrashLoop),
                "1 of 1 pod of the current template crash looping: container web exited with code 2, restarted 3 times",
            ),
        );
        // an old-template pod crashing is not this rollout's failure; without any
        // ControllerRevision seen, pod-template-generation tells old from new
        case(
            &[ds(1, 1), pod("bbbbb", "5b7c9d1e3", "1", &crash)],
            (Some(Reason::NotReady), "1/3 nodes updated, 1 available"),
        );
    }
}
