//! Pod spec defaults that apply to pods and pod templates alike (`SetDefaults_PodSpec`,
//! volume sources, containers). Pod-only behaviour lives in `pod.rs`, because the API
//! server deliberately keeps it out of templates (kubernetes#69445).

use serde_json::{Value, json};

use super::container::{default_container, default_field_refs};
use super::json::{
    Object, child, default_ptr, default_str, elements, existing, str_field, template_metadata,
};
use super::storage::default_claim_spec;

/// Defaults a pod template (`metadata.creationTimestamp: null` plus the spec).
pub(crate) fn default_pod_template(template: &mut Object) {
    template_metadata(template);
    if let Some(spec) = child(template, "spec") {
        default_pod_spec(spec);
    }
}

/// `SetDefaults_PodSpec` and everything the generated defaulter reaches inside it.
pub(crate) fn default_pod_spec(spec: &mut Object) {
    default_str(spec, "dnsPolicy", "ClusterFirst");
    default_str(spec, "restartPolicy", "Always");
    default_ptr(spec, "securityContext", json!({}));
    default_ptr(spec, "terminationGracePeriodSeconds", json!(30));
    default_str(spec, "schedulerName", "default-scheduler");
    mirror_service_account(spec);
    for volume in elements(spec, "volumes") {
        default_volume(volume);
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in elements(spec, list) {
            default_container(container);
        }
    }
}

/// The v1 conversion keeps the deprecated `serviceAccount` equal to `serviceAccountName`
/// (reading the old field when only it is set).
pub(crate) fn mirror_service_account(spec: &mut Object) {
    let name = str_field(spec, "serviceAccountName");
    let name = if name.is_empty() {
        str_field(spec, "serviceAccount").to_string()
    } else {
        name.to_string()
    };
    if !name.is_empty() {
        spec.insert("serviceAccountName".into(), Value::from(name.clone()));
        spec.insert("serviceAccount".into(), Value::from(name));
    }
}

/// Volume sources a volume may name; a volume naming none becomes an emptyDir.
const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

fn default_volume(volume: &mut Object) {
    let has_source = VOLUME_SOURCES
        .iter()
        .any(|k| volume.get(*k).is_some_and(|v| !v.is_null()));
    if !has_source {
        volume.insert("emptyDir".into(), json!({}));
    }
    if let Some(host_path) = existing(volume, "hostPath") {
        default_ptr(host_path, "type", json!(""));
    }
    for source in ["secret", "configMap", "downwardAPI"] {
        if let Some(source) = existing(volume, source) {
            default_ptr(source, "defaultMode", json!(420));
        }
    }
    if let Some(downward) = existing(volume, "downwardAPI") {
        for item in elements(downward, "items") {
            default_field_refs(item);
        }
    }
    if let Some(projected) = existing(volume, "projected") {
        default_ptr(projected, "defaultMode", json!(420));
        for source in elements(projected, "sources") {
            if let Some(downward) = existing(source, "downwardAPI") {
                for item in elements(downward, "items") {
                    default_field_refs(item);
                }
            }
            if let Some(token) = existing(source, "serviceAccountToken") {
                default_ptr(token, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(claim) =
        existing(volume, "ephemeral").and_then(|e| existing(e, "volumeClaimTemplate"))
        && let Some(spec) = existing(claim, "spec")
    {
        default_claim_spec(spec);
    }
}

/// Runs `f` on every regular and then every init container.
pub(crate) fn each_container(spec: &mut Object, mut f: impl FnMut(&mut Object)) {
    for list in ["containers", "initContainers"] {
        for container in elements(spec, list) {
            f(container);
        }
    }
}
