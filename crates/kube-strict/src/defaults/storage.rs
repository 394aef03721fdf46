//! PersistentVolumeClaim defaults, shared by bare claims, StatefulSet claim templates and
//! ephemeral volumes, plus the DefaultStorageClass admission step.

use serde_json::{Value, json};

use super::container::canonicalize_resource_lists;
use super::json::{Object, child, default_ptr, existing};

/// `SetDefaults_PersistentVolumeClaimSpec` and the resource-list rounding.
pub(crate) fn default_claim_spec(spec: &mut Object) {
    default_ptr(spec, "volumeMode", json!("Filesystem"));
    if let Some(resources) = existing(spec, "resources") {
        canonicalize_resource_lists(resources);
    }
}

/// A whole claim: spec defaults and `status.phase: Pending`.
pub(crate) fn default_claim(claim: &mut Object) {
    if let Some(spec) = child(claim, "spec") {
        default_claim_spec(spec);
    }
    if let Some(status) = child(claim, "status") {
        default_ptr(status, "phase", json!("Pending"));
    }
}

/// The DefaultStorageClass admission plugin: a claim that leaves `storageClassName` out
/// (not one that sets it to "", which explicitly asks for no class) gets the cluster's
/// default class, when there is one.
pub fn default_storage_class(pvc: &mut Value, default_class: Option<&str>) {
    let Some(class) = default_class else {
        return;
    };
    let Some(spec) = pvc.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    default_ptr(spec, "storageClassName", Value::from(class));
}
