//! A ReplicaSet applied on its own (krane's rule): every replica ready and available, and a
//! failure only when all of its pods are doomed. A ReplicationController, whose status is
//! the same, is judged the same way.

use crate::rules::assessment::Assessment;
use crate::rules::pods::pod_set::{DoomPolicy, PodSet, pending};
use crate::rules::snapshot::{Snapshot, or_default, typed};
use crate::rules::workloads::generation::{unobserved, unreadable};
use k8s_openapi::api::apps::v1::ReplicaSet;
use serde_json::Value;

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let legacy = obj.get("kind").and_then(Value::as_str) == Some("ReplicationController");
    let (kind, controller) = if legacy {
        ("ReplicationController", "replication controller")
    } else {
        ("ReplicaSet", "replicaset controller")
    };
    let rs: ReplicaSet = match typed(obj) {
        Ok(rs) => rs,
        Err(e) => return unreadable(kind, &e),
    };
    let status = or_default(&rs.status);
    if let Some(wait) = unobserved(controller, &rs.metadata, status.observed_generation) {
        return wait;
    }
    let desired = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let pods = PodSet::of(
        rs.metadata
            .uid
            .as_deref()
            .map(|u| snapshot.pod_readings(u))
            .unwrap_or_default(),
    );
    if let Some(failed) = pods.failure(DoomPolicy::All, "pod") {
        return failed;
    }
    let ready = status.ready_replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    let progress = format!("{ready}/{desired} replicas ready, {available} available");
    if status.replicas == desired && ready == desired && available == desired {
        Assessment::succeeded(progress)
    } else {
        pending(progress, pods.blocker("pod"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{self, uid};
    use crate::vocab::verdict::Reason;

    fn snap(rs: Value, pods: Vec<Value>) -> (Value, Snapshot) {
        let mut s = Snapshot::new();
        for o in std::iter::once(rs.clone()).chain(pods) {
            s.upsert(o).unwrap();
        }
        (rs, s)
    }

    #[test]
    fn needs_all_replicas_available_and_fails_when_all_pods_are_doomed() {
        let owner = "0a1b2c3d-0000-4000-8000-000000000001";
        let pod = |i: usize, status| {
            fixtures::rs_pod(
                &format!("web-7d4b9c-{i}"),
                &uid("web-7d4b9c"),
                "7d4b9c",
                &status,
            )
        };
        let (rs, s) = snap(
            fixtures::replica_set("7d4b9c", "1", owner, 3, 3, "2025-03-04T10:15:00Z"),
            vec![],
        );
        assert_eq!(
            assess(&rs, &s),
            Assessment::succeeded("3/3 replicas ready, 3 available")
        );

        let (rs, s) = snap(
            fixtures::replica_set("7d4b9c", "1", owner, 3, 1, "2025-03-04T10:15:00Z"),
            vec![
                pod(0, fixtures::ready_status()),
                pod(1, fixtures::unschedulable_status()),
            ],
        );
        let got = assess(&rs, &s);
        assert_eq!(got.reason(), Some(Reason::Unschedulable));
        assert!(
            got.message()
                .starts_with("1/3 replicas ready, 1 available; 1 of 2 pods unschedulable"),
            "{got:?}"
        );

        let bad = || {
            fixtures::waiting_status(
                "InvalidImageName",
                "Failed to apply default image tag \"ghcr.io/acme/web:V2!\": couldn't parse image name",
            )
        };
        let (rs, s) = snap(
            fixtures::replica_set("7d4b9c", "1", owner, 2, 0, "2025-03-04T10:15:00Z"),
            vec![pod(0, bad()), pod(1, bad())],
        );
        assert_eq!(assess(&rs, &s).reason(), Some(Reason::InvalidImageName));
    }
}
