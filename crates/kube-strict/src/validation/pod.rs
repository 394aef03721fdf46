//! Pod spec and pod template validation (`ValidatePodSpec`, `ValidatePodTemplateSpec`):
//! volumes, container lists, policies and the pod-level names.

use serde_json::{Map, Value};

use super::container::{ContainerKind, validate_container};
use super::error::Cause;
use super::gofmt::go_quote;
use super::meta::{validate_annotations, validate_labels};
use super::names::{dns1123_label, dns1123_subdomain, inclusive_range_error};
use super::path::Path;

/// `ValidatePodTemplateSpec`: template labels are reported at `<path>.labels` (not
/// `.metadata.labels`), as Go does.
pub(crate) fn validate_pod_template(template: &Value, path: &Path, errs: &mut Vec<Cause>) {
    let meta = template.get("metadata");
    validate_labels(
        meta.and_then(|m| m.get("labels")),
        &path.child("labels"),
        errs,
    );
    validate_annotations(
        meta.and_then(|m| m.get("annotations")),
        &path.child("annotations"),
        errs,
    );
    let empty = Value::Object(Map::new());
    let spec = template.get("spec").unwrap_or(&empty);
    validate_pod_spec(spec, &path.child("spec"), errs);
    let has_ephemeral = spec
        .get("ephemeralContainers")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty());
    if has_ephemeral {
        errs.push(Cause::forbidden(
            &path.children(&["spec", "ephemeralContainers"]),
            "ephemeral containers not allowed in pod template",
        ));
    }
}

pub(crate) fn validate_pod_spec(spec: &Value, path: &Path, errs: &mut Vec<Cause>) {
    let volumes = validate_volumes(spec.get("volumes"), &path.child("volumes"), errs);

    let containers = list(spec, "containers");
    let containers_path = path.child("containers");
    if containers.is_empty() {
        errs.push(Cause::required(&containers_path, ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, container) in containers.iter().enumerate() {
        let idx = containers_path.index(i);
        validate_container(container, ContainerKind::Regular, &volumes, &idx, errs);
        let name = container.get("name").and_then(Value::as_str).unwrap_or("");
        if names.contains(&name) {
            errs.push(Cause::duplicate(&idx.child("name"), &go_quote(name)));
        } else {
            names.push(name);
        }
    }
    let init_path = path.child("initContainers");
    for (i, container) in list(spec, "initContainers").iter().enumerate() {
        let idx = init_path.index(i);
        validate_container(container, ContainerKind::Init, &volumes, &idx, errs);
        let name = container.get("name").and_then(Value::as_str).unwrap_or("");
        if names.contains(&name) {
            errs.push(Cause::duplicate(&idx.child("name"), &go_quote(name)));
        } else if !name.is_empty() {
            names.push(name);
        }
    }

    let policy = |key: &str, valid: &[&str], errs: &mut Vec<Cause>| {
        let value = spec.get(key).and_then(Value::as_str).unwrap_or("");
        if value.is_empty() {
            errs.push(Cause::required(&path.child(key), ""));
        } else if !valid.contains(&value) {
            errs.push(Cause::not_supported(
                &path.child(key),
                &go_quote(value),
                valid,
            ));
        }
    };
    policy("restartPolicy", &["Always", "OnFailure", "Never"], errs);
    policy(
        "dnsPolicy",
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        errs,
    );
    validate_labels(spec.get("nodeSelector"), &path.child("nodeSelector"), errs);

    let account = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !account.is_empty() {
        for msg in dns1123_subdomain(account) {
            errs.push(Cause::invalid(
                &path.child("serviceAccountName"),
                &go_quote(account),
                &msg,
            ));
        }
    }
    if let Some(deadline) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && !(1..=i64::from(i32::MAX)).contains(&deadline)
    {
        errs.push(Cause::invalid(
            &path.child("activeDeadlineSeconds"),
            &deadline.to_string(),
            &inclusive_range_error(1, i64::from(i32::MAX)),
        ));
    }
    for field in ["hostname", "subdomain"] {
        let value = spec.get(field).and_then(Value::as_str).unwrap_or("");
        if !value.is_empty() {
            for msg in dns1123_label(value) {
                errs.push(Cause::invalid(&path.child(field), &go_quote(value), &msg));
            }
        }
    }
}

fn list<'a>(spec: &'a Value, key: &str) -> &'a [Value] {
    spec.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Volume sources and the field of each that must be non-empty.
const SOURCES: &[(&str, Option<&str>)] = &[
    ("hostPath", Some("path")),
    ("emptyDir", None),
    ("secret", Some("secretName")),
    ("configMap", Some("name")),
    ("persistentVolumeClaim", Some("claimName")),
    ("downwardAPI", None),
    ("projected", None),
    ("ephemeral", None),
    ("csi", Some("driver")),
    ("nfs", Some("server")),
    ("image", None),
    ("gitRepo", None),
    ("iscsi", None),
    ("rbd", None),
    ("cephfs", None),
    ("fc", None),
    ("azureFile", None),
    ("azureDisk", None),
    ("gcePersistentDisk", None),
    ("awsElasticBlockStore", None),
    ("cinder", None),
    ("flexVolume", None),
    ("glusterfs", None),
    ("flocker", None),
    ("vsphereVolume", None),
    ("quobyte", None),
    ("photonPersistentDisk", None),
    ("portworxVolume", None),
    ("scaleIO", None),
    ("storageos", None),
];

/// `ValidateVolumes`; returns the names of the volumes that passed (mounts of a broken
/// volume are then reported as not found, as Go does).
fn validate_volumes(volumes: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) -> Vec<String> {
    let mut valid: Vec<String> = Vec::new();
    for (i, volume) in volumes
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let idx = path.index(i);
        let mut volume_errs = Vec::new();
        let mut sources = 0;
        for (source, required) in SOURCES {
            let Some(body) = volume.get(*source).filter(|v| !v.is_null()) else {
                continue;
            };
            if sources > 0 {
                volume_errs.push(Cause::forbidden(
                    &idx.child(source),
                    "may not specify more than 1 volume type",
                ));
                continue;
            }
            sources += 1;
            if let Some(field) = required
                && body
                    .get(*field)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
            {
                volume_errs.push(Cause::required(&idx.children(&[source, field]), ""));
            }
        }
        if sources == 0 {
            volume_errs.push(Cause::required(&idx, "must specify a volume type"));
        }
        let name = volume.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            volume_errs.push(Cause::required(&idx.child("name"), ""));
        } else {
            for msg in dns1123_label(name) {
                volume_errs.push(Cause::invalid(&idx.child("name"), &go_quote(name), &msg));
            }
        }
        if valid.iter().any(|s| s == name) {
            volume_errs.push(Cause::duplicate(&idx.child("name"), &go_quote(name)));
        }
        if volume_errs.is_empty() {
            valid.push(name.to_string());
        } else {
            errs.extend(volume_errs);
        }
    }
    valid
}
