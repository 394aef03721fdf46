//! Jobs: the Complete condition succeeds; the Failed condition, or a failure count the Job
//! controller is bound to act on, fails; pods all doomed fail early.

use crate::rules::assessment::Assessment;
use crate::rules::pods::pod_failure::count;
use crate::rules::pods::pod_set::{DoomPolicy, PodSet, pending};
use crate::rules::snapshot::{Snapshot, or_default, typed};
use crate::rules::workloads::generation::unreadable;
use crate::vocab::verdict::Reason;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

const DEFAULT_BACKOFF_LIMIT: i32 = 6;

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let job: Job = match typed(obj) {
        Ok(j) => j,
        Err(e) => return unreadable("Job", &e),
    };
    let spec = or_default(&job.spec);
    let status = or_default(&job.status);
    let conditions = status.conditions.clone().unwrap_or_default();
    let holds = |t: &str| {
        conditions
            .iter()
            .find(|c| c.type_ == t && c.status == "True")
    };

    // FailureTarget (1.31+) is written first and always leads to Failed.
    if let Some(c) = holds("Failed").or_else(|| holds("FailureTarget")) {
        let why = c.reason.as_deref().unwrap_or("Failed");
        let what = c.message.as_deref().unwrap_or_default();
        return Assessment::failed(Reason::JobFailed, format!("job failed ({why}): {what}"));
    }
    let succeeded = status.succeeded.unwrap_or(0);
    let completions = spec.completions.unwrap_or(1);
    if holds("Complete").is_some() {
        return Assessment::succeeded(format!(
            "completed: {succeeded}/{completions} pods succeeded"
        ));
    }
    let failed = status.failed.unwrap_or(0);
    let limit = spec.backoff_limit.unwrap_or(DEFAULT_BACKOFF_LIMIT);
    let pods: Vec<Pod> = job
        .metadata
        .uid
        .as_deref()
        .map(|u| snapshot.children(u))
        .unwrap_or_default();
    let on_failure = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        == Some("OnFailure");
    // The controller's own arithmetic: with restartPolicy Never it gives up when failed
    // pods exceed the limit; with OnFailure, when container restarts reach it.
    if !on_failure && failed > limit {
        return Assessment::failed(
            Reason::JobFailed,
            format!("{failed} pods failed, more than backoffLimit {limit}"),
        );
    }
    if on_failure {
        let restarts = restarts_of_live_pods(&pods);
        if (limit == 0 && restarts > 0) || (limit > 0 && restarts >= limit) {
            return Assessment::failed(
                Reason::JobFailed,
                format!(
                    "containers restarted {}, backoffLimit is {limit}",
                    count(restarts, "time")
                ),
            );
        }
    }
    let pod_set = PodSet::new(&pods, snapshot);
    if let Some(failed) = pod_set.failure(DoomPolicy::All, "pod") {
        return failed;
    }
    if spec.suspend == Some(true) {
        return Assessment::not_ready("job is suspended");
    }
    let active = status.active.unwrap_or(0);
    let progress = format!(
        "{active} active, {succeeded}/{completions} succeeded, {failed} failed (backoffLimit {limit})"
    );
    pending(progress, pod_set.blocker("pod"))
}

fn restarts_of_live_pods(pods: &[Pod]) -> i32 {
    pods.iter()
        .filter_map(|p| p.status.as_ref())
        .filter(|s| matches!(s.phase.as_deref(), Some("Running" | "Pending")))
        .flat_map(|s| {
            s.init_container_statuses
                .iter()
                .flatten()
                .chain(s.container_statuses.iter().flatten())
        })
        .map(|c| c.restart_count)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures;
    use serde_json::json;

    const UID: &str = "b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e";

    fn job(restart_policy: &str, backoff_limit: i32, status: &Value) -> Value {
        let mut template = fixtures::pod_template(
            &json!({"batch.kubernetes.io/controller-uid": UID,
            "batch.kubernetes.io/job-name": "migrate", "controller-uid": UID, "job-name": "migrate"}),
        );
        template["spec"]["restartPolicy"] = json!(restart_policy);
        json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "namespace": "shop", "uid": UID, "resourceVersion": "52000",
                "generation": 1, "creationTimestamp": "2025-03-04T10:15:00Z",
                "labels": {"batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "migrate",
                    "controller-uid": UID, "job-name": "migrate"}},
            "spec": {"parallelism": 1, "completions": 1, "backoffLimit": backoff_limit,
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}, "manualSelector": false,
                "template": template, "completionMode": "NonIndexed", "suspend": false,
                "podReplacementPolicy": "TerminatingOrFailed"},
            "status": status
        })
    }

    fn condition(type_: &str, reason: &str, message: &str) -> Value {
        json!({"type": type_, "status": "True", "lastProbeTime": "2025-03-04T10:17:00Z",
            "lastTransitionTime": "2025-03-04T10:17:00Z", "reason": reason, "message": message})
    }

    fn pod(name: &str, status: &Value) -> Value {
        let labels = json!({"batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "migrate",
            "controller-uid": UID, "job-name": "migrate"});
        fixtures::pod(
            name,
            Some(("batch/v1", "Job", "migrate", UID)),
            &labels,
            status,
        )
    }

    #[track_caller]
    fn case(objects: &[Value], expected: (Option<Reason>, &str)) {
        let snap = fixtures::snapshot(objects);
        let got = assess(&objects[0], &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
        assert_eq!(
            matches!(got, Assessment::Succeeded { .. }),
            expected.0.is_none()
        );
    }

    #[test]
    fn conditions_decide_first() {
        let done = json!({"conditions": [
                condition("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
                condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods")],
            "startTime": "2025-03-04T10:15:00Z", "completionTime": "2025-03-04T10:17:00Z",
            "succeeded": 1, "terminating": 0, "ready": 0, "uncountedTerminatedPods": {}});
        case(
            &[job("Never", 6, &done)],
            (None, "completed: 1/1 pods succeeded"),
        );
        let failed = json!({"conditions": [
                condition("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
                condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")],
            "startTime": "2025-03-04T10:15:00Z", "failed": 7, "terminating": 0, "ready": 0, "uncountedTerminatedPods": {}});
        case(
            &[job("Never", 6, &failed)],
            (
                Some(Reason::JobFailed),
                "job failed (BackoffLimitExceeded): Job has reached the specified backoff limit",
            ),
        );
    }

    #[test]
    fn backoff_limit_counts_failed_pods_or_restarts_like_the_controller() {
        let counts = |failed: i32, active: i32| {
            json!({"startTime": "2025-03-04T10:15:00Z", "active": active, "failed": failed, "ready": 0,
                "terminating": 0, "uncountedTerminatedPods": {}})
        };
        // at the limit the controller still makes one more attempt
        case(
            &[job("Never", 2, &counts(2, 1))],
            (
                Some(Reason::NotReady),
                "1 active, 0/1 succeeded, 2 failed (backoffLimit 2)",
            ),
        );
        case(
            &[job("Never", 2, &counts(3, 0))],
            (
                Some(Reason::JobFailed),
                "3 pods failed, more than backoffLimit 2",
            ),
        );
        let mut restarting = fixtures::running_not_ready_status();
        restarting["containerStatuses"][0]["restartCount"] = json!(2);
        case(
            &[
                job("OnFailure", 2, &counts(0, 1)),
                pod("migrate-x7k2p", &restarting),
            ],
            (
                Some(Reason::JobFailed),
                "containers restarted 2 times, backoffLimit is 2",
            ),
        );
    }

    #[test]
    fn doomed_pods_fail_and_other_pods_explain_the_wait() {
        let counts = json!({"startTime": "2025-03-04T10:15:00Z", "active": 1, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {}});
        case(
            &[
                job("Never", 6, &counts),
                pod(
                    "migrate-x7k2p",
                    &fixtures::waiting_status(
                        "CreateContainerConfigError",
                        "secret \"db-url\" not found",
                    ),
                ),
            ],
            (
                Some(Reason::ContainerConfigError),
                "1 of 1 pod cannot create its containers: container web cannot be created: secret \"db-url\" not found",
            ),
        );
        case(
            &[
                job("Never", 6, &counts),
                pod("migrate-x7k2p", &fixtures::unschedulable_status()),
            ],
            (
                Some(Reason::Unschedulable),
                "1 active, 0/1 succeeded, 0 failed (backoffLimit 6); 1 of 1 pod unschedulable: 0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            ),
        );
    }
}
