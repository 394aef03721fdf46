//! PersistentVolumes as the binder and the simulated provisioner write them: a dynamically
//! provisioned volume `pvc-<claim uid>`, matching a claim against existing volumes, and the
//! bind itself (claimRef on the volume, volumeName and annotations on the claim).

use crate::controllers::workloads::objects::{name, namespace, str_at, uid};
use serde_json::{Value, json};

pub(crate) const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
pub(crate) const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
pub(crate) const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
pub(crate) const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

pub(crate) fn access_modes(pvc: &Value) -> Value {
    pvc.pointer("/spec/accessModes")
        .filter(|m| m.as_array().is_some_and(|a| !a.is_empty()))
        .cloned()
        .unwrap_or_else(|| json!(["ReadWriteOnce"]))
}

pub(crate) fn volume_mode(v: &Value) -> &str {
    match str_at(v, "/spec/volumeMode") {
        "" => "Filesystem",
        m => m,
    }
}

/// A `resource.Quantity` in bytes, for comparing sizes ("1Gi", "500M", "1073741824").
pub(crate) fn quantity_bytes(q: &str) -> Option<f64> {
    let q = q.trim();
    let split = q.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(q.len());
    let (num, unit) = q.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match unit {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "m" => 1e-3,
        _ => return None,
    };
    Some(n * mult)
}

fn request(pvc: &Value) -> &str {
    str_at(pvc, "/spec/resources/requests/storage")
}

/// Whether an unclaimed volume can serve the claim (class, modes, size, volume mode).
pub(crate) fn volume_matches(pv: &Value, pvc: &Value, class: &str) -> bool {
    let free = pv.pointer("/spec/claimRef").is_none_or(|r| {
        r.is_null()
            || str_at(r, "/uid") == uid(pvc)
            || (str_at(r, "/name") == name(pvc) && str_at(r, "/uid").is_empty())
    });
    let modes_ok = access_modes(pvc).as_array().into_iter().flatten().all(|m| {
        pv.pointer("/spec/accessModes")
            .and_then(Value::as_array)
            .is_some_and(|have| have.contains(m))
    });
    let size_ok = match (
        quantity_bytes(str_at(pv, "/spec/capacity/storage")),
        quantity_bytes(request(pvc)),
    ) {
        (Some(have), Some(want)) => have >= want,
        (_, None) => true,
        _ => false,
    };
    free && modes_ok
        && size_ok
        && str_at(pv, "/spec/storageClassName") == class
        && volume_mode(pv) == volume_mode(pvc)
        && matches!(str_at(pv, "/status/phase"), "" | "Available" | "Pending")
        && pv
            .pointer("/metadata/deletionTimestamp")
            .is_none_or(Value::is_null)
}

pub(crate) fn claim_ref(pvc: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": name(pvc), "namespace": namespace(pvc),
           "resourceVersion": str_at(pvc, "/metadata/resourceVersion"), "uid": uid(pvc)})
}

/// The volume the simulated provisioner creates for `pvc` (local-path style).
pub(crate) fn provisioned_volume(pvc: &Value, class: &Value, node: Option<&str>) -> Value {
    let pv_name = format!("pvc-{}", uid(pvc));
    let reclaim = match str_at(class, "/reclaimPolicy") {
        "" => "Delete",
        r => r,
    };
    let mut spec = json!({
        "accessModes": access_modes(pvc),
        "capacity": {"storage": request(pvc)},
        "claimRef": claim_ref(pvc),
        "hostPath": {"path": format!("/var/local-path-provisioner/{pv_name}_{}_{}", namespace(pvc), name(pvc)), "type": "DirectoryOrCreate"},
        "persistentVolumeReclaimPolicy": reclaim,
        "storageClassName": name(class),
        "volumeMode": volume_mode(pvc),
    });
    if let Some(node) = node {
        spec["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}});
    }
    json!({"apiVersion": "v1", "kind": "PersistentVolume",
           "metadata": {"name": pv_name, "annotations": {"pv.kubernetes.io/provisioned-by": str_at(class, "/provisioner")},
                        "finalizers": [PV_PROTECTION]},
           "spec": spec, "status": {"phase": "Pending"}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_and_matching() {
        assert_eq!(quantity_bytes("1Gi"), Some(1_073_741_824.0));
        assert_eq!(quantity_bytes("500M"), Some(5e8));
        assert!(quantity_bytes("1Xi").is_none());
        let pvc = json!({"metadata": {"name": "data", "namespace": "shop", "uid": "u1"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}});
        let pv = |size: &str, class: &str| {
            json!({"spec": {"accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "capacity": {"storage": size}, "storageClassName": class}, "status": {"phase": "Available"}})
        };
        assert!(volume_matches(&pv("10Gi", "manual"), &pvc, "manual"));
        assert!(!volume_matches(&pv("1Gi", "manual"), &pvc, "manual"));
        assert!(!volume_matches(&pv("10Gi", "fast"), &pvc, "manual"));
    }
}
