//! PersistentVolumeClaims: Bound succeeds, and so does Pending under a class that binds
//! only when a pod first uses the claim (WaitForFirstConsumer); Lost is a failure.

use crate::rules::assessment::Assessment;
use crate::rules::snapshot::{Snapshot, typed};
use crate::rules::workloads::generation::unreadable;
use crate::vocab::verdict::Reason;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::api::storage::v1::StorageClass;
use serde_json::Value;

const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let pvc: PersistentVolumeClaim = match typed(obj) {
        Ok(p) => p,
        Err(e) => return unreadable("PersistentVolumeClaim", &e),
    };
    let volume = pvc
        .spec
        .as_ref()
        .and_then(|s| s.volume_name.clone())
        .unwrap_or_default();
    match pvc.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Bound") => return Assessment::succeeded(format!("bound to volume {volume}")),
        Some("Lost") => {
            return Assessment::failed(
                Reason::PvcLost,
                format!("bound volume {volume} no longer exists (phase Lost)"),
            );
        }
        _ => {}
    }
    let class = storage_class(&pvc, snapshot);
    if let Some(class) = &class
        && class.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer")
    {
        let name = class.metadata.name.as_deref().unwrap_or_default();
        return Assessment::succeeded(format!(
            "waiting for a first consumer (StorageClass {name} binds on first use)"
        ));
    }
    let problem = pvc
        .metadata
        .uid
        .as_deref()
        .map(|u| snapshot.events_for(u))
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .max_by_key(|e| e.last_timestamp.as_ref().map(|t| t.0))
        .and_then(|e| Some(format!("{}: {}", e.reason?, e.message?)));
    match problem {
        Some(p) => Assessment::not_ready(format!("waiting for a volume to bind; {p}")),
        None => Assessment::not_ready("waiting for a volume to bind"),
    }
}

/// The claim's class as seen in the snapshot: the one it names, else the default class.
fn storage_class(pvc: &PersistentVolumeClaim, snapshot: &Snapshot) -> Option<StorageClass> {
    match pvc
        .spec
        .as_ref()
        .and_then(|s| s.storage_class_name.as_deref())
    {
        Some(name) => snapshot.get::<StorageClass>(None, name),
        None => snapshot.list::<StorageClass>(None).into_iter().find(|c| {
            let annotations = c.metadata.annotations.as_ref();
            annotations
                .and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION))
                .map(String::as_str)
                == Some("true")
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::merged;
    use serde_json::json;

    fn pvc(class: &Value, status: &Value) -> Value {
        let base = json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "shop", "uid": "9a9a9a9a-1b1b-4c2c-8d3d-4e4e4e4e4e4e",
                "resourceVersion": "54000", "creationTimestamp": "2025-03-04T10:15:00Z",
                "finalizers": ["kubernetes.io/pvc-protection"]},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                "volumeMode": "Filesystem"},
            "status": status
        });
        merged(base, json!({"spec": {"storageClassName": class}}))
    }

    fn class(name: &str, mode: &str, default: bool) -> Value {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "uid": "5c5c5c5c-0000-4000-8000-00000000000c", "resourceVersion": "300",
                "annotations": {"storageclass.kubernetes.io/is-default-class": default.to_string()}},
            "provisioner": "pd.csi.storage.gke.io", "parameters": {"type": "pd-balanced"},
            "reclaimPolicy": "Delete", "volumeBindingMode": mode, "allowVolumeExpansion": true})
    }

    #[track_caller]
    fn case(objects: &[Value], expected: (Option<Reason>, &str)) {
        let snap = crate::rules::fixtures::snapshot(objects);
        let got = assess(&objects[0], &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
        assert_eq!(
            matches!(got, Assessment::Succeeded { .. }),
            expected.0.is_none()
        );
    }

    #[test]
    fn bound_succeeds_and_lost_fails() {
        let mut bound = pvc(
            &json!("standard"),
            &json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}),
        );
        bound["spec"]["volumeName"] = json!("pvc-9a9a9a9a-1b1b-4c2c-8d3d-4e4e4e4e4e4e");
        case(
            &[bound.clone()],
            (
                None,
                "bound to volume pvc-9a9a9a9a-1b1b-4c2c-8d3d-4e4e4e4e4e4e",
            ),
        );
        bound["status"] = json!({"phase": "Lost"});
        case(
            &[bound],
            (
                Some(Reason::PvcLost),
                "bound volume pvc-9a9a9a9a-1b1b-4c2c-8d3d-4e4e4e4e4e4e no longer exists (phase Lost)",
            ),
        );
    }

    #[test]
    fn pending_under_wait_for_first_consumer_succeeds_only_when_the_class_is_seen() {
        let pending = || pvc(&json!("standard-rwo"), &json!({"phase": "Pending"}));
        case(
            &[pending()],
            (Some(Reason::NotReady), "waiting for a volume to bind"),
        );
        case(
            &[
                pending(),
                class("standard-rwo", "WaitForFirstConsumer", false),
            ],
            (
                None,
                "waiting for a first consumer (StorageClass standard-rwo binds on first use)",
            ),
        );
        case(
            &[pending(), class("standard-rwo", "Immediate", false)],
            (Some(Reason::NotReady), "waiting for a volume to bind"),
        );
        // no class named: the default class decides
        case(
            &[
                pvc(&json!(null), &json!({"phase": "Pending"})),
                class("standard-rwo", "WaitForFirstConsumer", true),
            ],
            (
                None,
                "waiting for a first consumer (StorageClass standard-rwo binds on first use)",
            ),
        );
    }
}
