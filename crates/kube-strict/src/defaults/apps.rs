//! apps/v1 defaults (pkg/apis/apps/v1/defaults.go) for Deployments, ReplicaSets,
//! StatefulSets and DaemonSets, including their pod templates and claim templates.

use serde_json::{Value, json};

use super::json::template_metadata;
use super::json::{Object, child, default_ptr, default_str, elements, existing, str_field};
use super::pod_spec::default_pod_template;
use super::storage::default_claim;

pub(crate) fn default_deployment(deployment: &mut Object) {
    if let Some(spec) = child(deployment, "spec") {
        default_ptr(spec, "replicas", json!(1));
        if let Some(strategy) = child(spec, "strategy") {
            default_str(strategy, "type", "RollingUpdate");
            if str_field(strategy, "type") == "RollingUpdate"
                && let Some(rolling) = child(strategy, "rollingUpdate")
            {
                default_ptr(rolling, "maxUnavailable", json!("25%"));
                default_ptr(rolling, "maxSurge", json!("25%"));
            }
        }
        default_ptr(spec, "revisionHistoryLimit", json!(10));
        default_ptr(spec, "progressDeadlineSeconds", json!(600));
        template(spec);
    }
    initial_status(deployment, json!({}));
}

pub(crate) fn default_replica_set(replica_set: &mut Object) {
    if let Some(spec) = child(replica_set, "spec") {
        default_ptr(spec, "replicas", json!(1));
        template(spec);
    }
    // ReplicaSetStatus.replicas has no omitempty.
    initial_status(replica_set, json!({"replicas": 0}));
}

pub(crate) fn default_stateful_set(stateful_set: &mut Object) {
    if let Some(spec) = child(stateful_set, "spec") {
        default_str(spec, "podManagementPolicy", "OrderedReady");
        if let Some(strategy) = child(spec, "updateStrategy") {
            // Only an unset type gets a rollingUpdate block; an explicit RollingUpdate
            // without one stays without one (the partition below then does not apply).
            if str_field(strategy, "type").is_empty() {
                strategy.insert("type".into(), json!("RollingUpdate"));
                default_ptr(strategy, "rollingUpdate", json!({}));
            }
            if str_field(strategy, "type") == "RollingUpdate"
                && let Some(rolling) = existing(strategy, "rollingUpdate")
            {
                default_ptr(rolling, "partition", json!(0));
            }
        }
        if let Some(policy) = child(spec, "persistentVolumeClaimRetentionPolicy") {
            default_str(policy, "whenDeleted", "Retain");
            default_str(policy, "whenScaled", "Retain");
        }
        default_ptr(spec, "replicas", json!(1));
        default_ptr(spec, "revisionHistoryLimit", json!(10));
        template(spec);
        for claim in elements(spec, "volumeClaimTemplates") {
            default_claim_template(claim);
        }
    }
    // StatefulSetStatus.replicas and .availableReplicas have no omitempty.
    initial_status(stateful_set, json!({"availableReplicas": 0, "replicas": 0}));
}

/// Claim templates are full PVC objects: the v1 conversion stamps apiVersion/kind
/// (kubernetes#87706) and the PVC defaulter adds `status.phase: Pending`.
fn default_claim_template(claim: &mut Object) {
    default_str(claim, "apiVersion", "v1");
    default_str(claim, "kind", "PersistentVolumeClaim");
    template_metadata(claim);
    default_claim(claim);
}

pub(crate) fn default_daemon_set(daemon_set: &mut Object) {
    if let Some(spec) = child(daemon_set, "spec") {
        if let Some(strategy) = child(spec, "updateStrategy") {
            default_str(strategy, "type", "RollingUpdate");
            if str_field(strategy, "type") == "RollingUpdate"
                && let Some(rolling) = child(strategy, "rollingUpdate")
            {
                default_ptr(rolling, "maxUnavailable", json!(1));
                default_ptr(rolling, "maxSurge", json!(0));
            }
        }
        default_ptr(spec, "revisionHistoryLimit", json!(10));
        template(spec);
    }
    // These four DaemonSetStatus counters have no omitempty.
    initial_status(
        daemon_set,
        json!({
            "currentNumberScheduled": 0,
            "desiredNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberReady": 0,
        }),
    );
}

fn template(spec: &mut Object) {
    if let Some(template) = child(spec, "template") {
        default_pod_template(template);
    }
}

/// The status a freshly created object is returned with: the non-omitempty fields of the
/// zero status. Never overwrites a status that is already there.
pub(crate) fn initial_status(object: &mut Object, zero: Value) {
    default_ptr(object, "status", zero);
}
