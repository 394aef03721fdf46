//! A Pod applied by name (krane's rule): a controller-owned pod, or a bare pod that restarts
//! Always (it never completes), is done when Running and Ready; a bare `OnFailure`/`Never`
//! pod is a task, done only when it Succeeded, and failed when it Failed. A pod being
//! deleted has failed: it will only go away, whatever waiting is done.

use crate::rules::assessment::Assessment;
use crate::rules::pods::pod_state::{PodState, failed_container, pod_state_in};
use crate::rules::snapshot::{Snapshot, typed};
use crate::rules::workloads::generation::unreadable;
use crate::vocab::verdict::Reason;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let pod: Pod = match typed(obj) {
        Ok(p) => p,
        Err(e) => return unreadable("Pod", &e),
    };
    if let Some(since) = &pod.metadata.deletion_timestamp {
        return Assessment::failed(
            Reason::PodFailed,
            format!("pod is being deleted since {}", since.0),
        );
    }
    let managed = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true));
    // The API server defaults restartPolicy to Always; such a pod never reaches Succeeded.
    let restarts_always = pod
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        .is_none_or(|p| p == "Always");
    let state = pod_state_in(&pod, snapshot);
    match state {
        PodState::Completed => Assessment::succeeded("completed"),
        PodState::Terminated { .. } => Assessment::failed(Reason::PodFailed, state.detail())
            .with_container(failed_container(&pod)),
        PodState::Doomed(d) => {
            Assessment::failed(d.reason, d.detail).with_container(Some(d.container))
        }
        PodState::Ready if managed => Assessment::succeeded("running and ready"),
        PodState::Ready if restarts_always => Assessment::succeeded(
            "running and ready (restartPolicy Always: a pod that never completes)",
        ),
        PodState::Ready => {
            Assessment::not_ready("running and ready; an unmanaged pod is done when it completes")
        }
        PodState::Unschedulable { message } => Assessment::pending(
            Reason::Unschedulable,
            format!("cannot be scheduled: {message}"),
        ),
        other => Assessment::pending(other.pending_reason(), other.detail())
            .with_container(other.container()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures;
    use serde_json::json;

    #[track_caller]
    fn case(owned: bool, status: &Value, expected: (Option<Reason>, &str)) {
        // A bare pod in these cases is a task (`Never`); the default is covered below.
        let restart = if owned { "Always" } else { "Never" };
        policy_case(owned, restart, status, expected);
    }

    #[track_caller]
    fn policy_case(owned: bool, restart: &str, status: &Value, expected: (Option<Reason>, &str)) {
        let owner = owned.then_some(("apps/v1", "ReplicaSet", "web-7d4b9c", "rs-uid"));
        let mut obj = fixtures::pod("web-7d4b9c-x2x9q", owner, &json!({"app": "web"}), status);
        match restart {
            "" => {
                obj["spec"].as_object_mut().unwrap().remove("restartPolicy");
            }
            policy => obj["spec"]["restartPolicy"] = json!(policy),
        }
        let mut snap = Snapshot::new();
        snap.upsert(obj.clone()).unwrap();
        let got = assess(&obj, &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
        assert_eq!(
            matches!(got, Assessment::Succeeded { .. }),
            expected.0.is_none()
        );
    }

    #[test]
    fn managed_pods_need_ready_unmanaged_pods_need_to_complete() {
        case(true, &fixtures::ready_status(), (None, "running and ready"));
        case(
            false,
            &fixtures::ready_status(),
            (
                Some(Reason::NotReady),
                "running and ready; an unmanaged pod is done when it completes",
            ),
        );
        let done = json!({"phase": "Succeeded", "startTime": "2025-03-04T10:15:00Z",
            "containerStatuses": [{"name": "web", "image": fixtures::IMAGE, "imageID": "ghcr.io/acme/web@sha256:9f86",
                "ready": false, "restartCount": 0, "started": false,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                    "startedAt": "2025-03-04T10:15:05Z", "finishedAt": "2025-03-04T10:16:00Z"}}}]});
        case(false, &done, (None, "completed"));
    }

    #[test]
    fn a_bare_pod_that_restarts_always_is_done_when_ready() {
        let always = (
            None,
            "running and ready (restartPolicy Always: a pod that never completes)",
        );
        policy_case(false, "Always", &fixtures::ready_status(), always);
        // restartPolicy left out: the API server's default is Always
        policy_case(false, "", &fixtures::ready_status(), always);
        let task = (
            Some(Reason::NotReady),
            "running and ready; an unmanaged pod is done when it completes",
        );
        policy_case(false, "OnFailure", &fixtures::ready_status(), task);
        policy_case(false, "Never", &fixtures::ready_status(), task);
        policy_case(
            false,
            "Always",
            &fixtures::running_not_ready_status(),
            (
                Some(Reason::ReadinessFailing),
                "container web is running but not ready",
            ),
        );
    }

    #[test]
    fn failed_phases_and_doomed_containers_fail() {
        let evicted = json!({"phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. ",
            "startTime": "2025-03-04T10:15:00Z"});
        case(
            false,
            &evicted,
            (
                Some(Reason::PodFailed),
                "Evicted: The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. ",
            ),
        );
        let exited = json!({"phase": "Failed", "startTime": "2025-03-04T10:15:00Z",
            "containerStatuses": [{"name": "web", "image": fixtures::IMAGE, "imageID": "ghcr.io/acme/web@sha256:9f86",
                "ready": false, "restartCount": 0, "started": false,
                "state": {"terminated": {"exitCode": 2, "reason": "Error",
                    "startedAt": "2025-03-04T10:15:05Z", "finishedAt": "2025-03-04T10:16:00Z"}}}]});
        case(
            false,
            &exited,
            (
                Some(Reason::PodFailed),
                "container web exited with code 2 (Error)",
            ),
        );
        case(
            true,
            &fixtures::crash_loop_status(3, "OOMKilled", 4),
            (
                Some(Reason::CrashLoop),
                "container web exited with code 3 (OOMKilled), restarted 4 times",
            ),
        );
    }

    #[test]
    fn a_pod_being_deleted_has_failed() {
        let mut obj = fixtures::pod(
            "task",
            None,
            &json!({"app": "task"}),
            &fixtures::ready_status(),
        );
        obj["metadata"]["deletionTimestamp"] = json!("2025-03-04T10:20:00Z");
        obj["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        obj["metadata"]["finalizers"] = json!(["example.com/drain"]);
        let snap = fixtures::snapshot(std::slice::from_ref(&obj));
        let got = assess(&obj, &snap);
        assert_eq!(
            got,
            Assessment::failed(
                Reason::PodFailed,
                "pod is being deleted since 2025-03-04T10:20:00Z"
            )
        );
    }

    #[test]
    fn waits_carry_their_reason() {
        case(
            true,
            &fixtures::waiting_status(
                "ImagePullBackOff",
                "Back-off pulling image \"ghcr.io/acme/web:v2\"",
            ),
            (
                Some(Reason::ImagePullBackoff),
                "container web cannot pull image \"ghcr.io/acme/web:v2\" yet (ImagePullBackOff), no pull error visible",
            ),
        );
    }
}
