//! The pods of a Job: how they are made from the template (labels, the tracking finalizer,
//! completion indexes), when one counts as failed, and which go first when there are too
//! many.

use super::indexes::COMPLETION_INDEX;
use crate::controllers::workloads::objects::{is_deleting, name, parse_time, str_at, uid};
use crate::controllers::workloads::pods::{is_ready, is_terminal, phase, pod_from_template};
use crate::controllers::workloads::statefulset::identity::sorted;
use jiff::Timestamp;
use serde_json::{Value, json};

pub(crate) const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";

pub(crate) fn has_tracking_finalizer(pod: &Value) -> bool {
    pod.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f == TRACKING_FINALIZER))
}

/// `onlyReplaceFailedPods`: podReplacementPolicy Failed, or a podFailurePolicy.
pub(crate) fn only_replace_failed(job: &Value) -> bool {
    str_at(job, "/spec/podReplacementPolicy") == "Failed"
        || job
            .pointer("/spec/podFailurePolicy")
            .is_some_and(|p| !p.is_null())
}

/// `isPodFailed`: Failed, or (unless only failed pods are replaced) deleted before it
/// succeeded.
pub(crate) fn is_failed(pod: &Value, job: &Value) -> bool {
    if phase(pod) == "Failed" {
        return true;
    }
    !only_replace_failed(job) && is_deleting(pod) && phase(pod) != "Succeeded"
}

/// When a finished pod's last container ended.
pub(crate) fn finished_at(pod: &Value) -> Option<Timestamp> {
    let statuses = ["initContainerStatuses", "containerStatuses"]
        .iter()
        .flat_map(|k| {
            pod.pointer(&format!("/status/{k}"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        });
    statuses
        .filter_map(|s| parse_time(str_at(&s, "/state/terminated/finishedAt")))
        .max()
        .or_else(|| parse_time(str_at(pod, "/metadata/deletionTimestamp")))
}

/// The labels the API server adds to a Job's selector and template.
pub(crate) fn job_labels(job: &Value) -> [(&'static str, String); 4] {
    [
        ("batch.kubernetes.io/controller-uid", uid(job).to_owned()),
        ("batch.kubernetes.io/job-name", name(job).to_owned()),
        ("controller-uid", uid(job).to_owned()),
        ("job-name", name(job).to_owned()),
    ]
}

/// A pod for `job` (with completion `index` for Indexed Jobs), and its name prefix.
pub(crate) fn job_pod(job: &Value, index: Option<i64>) -> (Value, String) {
    let template = job
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut pod = pod_from_template(&template, job);
    let mut labels = pod
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (k, v) in job_labels(job) {
        labels.entry(k).or_insert(json!(v));
    }
    let mut finalizers = pod
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == TRACKING_FINALIZER) {
        finalizers.push(json!(TRACKING_FINALIZER));
    }
    pod["metadata"]["finalizers"] = json!(finalizers);
    let mut prefix = format!("{}-", name(job));
    if let Some(i) = index {
        let mut annotations = pod
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        annotations.insert(COMPLETION_INDEX.into(), json!(i.to_string()));
        pod["metadata"]["annotations"] = Value::Object(annotations);
        labels.insert(COMPLETION_INDEX.into(), json!(i.to_string()));
        pod["spec"]["hostname"] = json!(format!("{}-{i}", name(job)));
        prefix = format!("{}-{i}-", name(job));
        let env = json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "fieldPath": format!("metadata.annotations['{COMPLETION_INDEX}']")}}});
        for list in ["initContainers", "containers"] {
            for c in pod["spec"][list].as_array_mut().into_iter().flatten() {
                let vars = c
                    .as_object_mut()
                    .and_then(|c| c.entry("env").or_insert(json!([])).as_array_mut());
                if let Some(vars) =
                    vars.filter(|v| !v.iter().any(|e| e["name"] == "JOB_COMPLETION_INDEX"))
                {
                    vars.push(env.clone());
                }
            }
        }
    }
    pod["metadata"]["labels"] = Value::Object(sorted(labels));
    pod["metadata"]["generateName"] = json!(prefix);
    (pod, prefix)
}

/// Active pods in deletion order (`controller.ActivePods`): unscheduled, pending and
/// not-ready pods go before scheduled, running and ready ones; newer before older.
pub(crate) fn removal_order(pods: &mut [Value]) {
    let rank = |p: &Value| {
        let scheduled = !str_at(p, "/spec/nodeName").is_empty();
        let phase_rank = match phase(p) {
            "Pending" => 0,
            "Unknown" => 1,
            _ => 2,
        };
        (scheduled, phase_rank, is_ready(p))
    };
    pods.sort_by(|a, b| {
        rank(a).cmp(&rank(b)).then_with(|| {
            str_at(b, "/metadata/creationTimestamp").cmp(str_at(a, "/metadata/creationTimestamp"))
        })
    });
}

/// Terminal-or-deleting pods do not count as active; this counts the deleting ones still
/// running (`status.terminating`).
pub(crate) fn is_terminating(pod: &Value) -> bool {
    is_deleting(pod) && !is_terminal(pod)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Value {
        json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "namespace": "shop", "uid": "8c2f"},
            "spec": {"template": {"metadata": {"labels": {"app": "migrate"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "migrate", "image": "migrate:1"}]}}}})
    }

    #[test]
    fn job_pods_carry_job_labels_finalizer_and_index() {
        let (pod, prefix) = job_pod(&job(), None);
        assert_eq!(prefix, "migrate-");
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "migrate", "batch.kubernetes.io/controller-uid": "8c2f",
            "batch.kubernetes.io/job-name": "migrate", "controller-uid": "8c2f", "job-name": "migrate"})
        );
        assert_eq!(pod["metadata"]["finalizers"], json!([TRACKING_FINALIZER]));
        let (indexed, prefix) = job_pod(&job(), Some(3));
        assert_eq!(prefix, "migrate-3-");
        assert_eq!(indexed["metadata"]["annotations"][COMPLETION_INDEX], "3");
        assert_eq!(indexed["spec"]["hostname"], "migrate-3");
        assert_eq!(
            indexed["spec"]["containers"][0]["env"][0]["name"],
            "JOB_COMPLETION_INDEX"
        );
        assert_eq!(super::super::indexes::pod_index(&indexed), Some(3));
    }

    #[test]
    fn deleted_pods_count_as_failed_unless_only_failed_pods_are_replaced() {
        let deleting = json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Running"}});
        assert!(is_failed(&deleting, &job()));
        let mut only_failed = job();
        only_failed["spec"]["podReplacementPolicy"] = json!("Failed");
        assert!(!is_failed(&deleting, &only_failed));
        assert!(is_terminating(&deleting));
    }
}
