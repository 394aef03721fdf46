//! Dispatch of defaulting by apiVersion/kind: what kube-apiserver 1.33 fills in when it
//! decodes a create request, plus the admission plugins and `PrepareForCreate` steps that
//! every real cluster applies. Unknown kinds are left untouched.

use serde_json::Value;

use super::apps::{
    default_daemon_set, default_deployment, default_replica_set, default_stateful_set,
};
use super::batch::{default_cron_job, default_job};
use super::core::{
    default_hpa_v1, default_hpa_v2, default_namespace, default_pod_disruption_budget,
    default_secret,
};
use super::pod::default_pod;
use super::service::default_service;
use super::storage::default_claim;

/// Fills in the fields the API server defaults for this object's kind. Idempotent.
/// The server still assigns what needs state: uid (then `default_job_selector`), cluster
/// IPs (`allocate_cluster_ip`), node ports, the default storage class and the token volume.
pub fn default_object(object: &mut Value) {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(object) = object.as_object_mut() else {
        return;
    };
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Pod") => default_pod(object),
        ("v1", "Service") => default_service(object),
        ("v1", "PersistentVolumeClaim") => default_claim(object),
        ("v1", "Namespace") => default_namespace(object),
        ("v1", "Secret") => default_secret(object),
        ("apps/v1", "Deployment") => default_deployment(object),
        ("apps/v1", "ReplicaSet") => default_replica_set(object),
        ("apps/v1", "StatefulSet") => default_stateful_set(object),
        ("apps/v1", "DaemonSet") => default_daemon_set(object),
        ("batch/v1", "Job") => default_job(object),
        ("batch/v1", "CronJob") => default_cron_job(object),
        ("policy/v1", "PodDisruptionBudget") => default_pod_disruption_budget(object),
        ("autoscaling/v2", "HorizontalPodAutoscaler") => default_hpa_v2(object),
        ("autoscaling/v1", "HorizontalPodAutoscaler") => default_hpa_v1(object),
        _ => {}
    }
}
