//! PVC, Namespace, Secret, PDB and HPA defaults.

use serde_json::json;

use super::{assert_json_eq, defaulted};
use crate::defaults::default_storage_class;

#[test]
fn minimal_pvc_gets_mode_phase_and_the_default_class() {
    let mut pvc = defaulted(json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }));
    default_storage_class(&mut pvc, Some("standard"));
    assert_json_eq(
        &pvc,
        &json!({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "standard",
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        }),
    );

    let mut no_class = json!({"spec": {"storageClassName": ""}});
    default_storage_class(&mut no_class, Some("standard"));
    assert_eq!(no_class["spec"]["storageClassName"], json!(""));
    let mut no_default = json!({"spec": {}});
    default_storage_class(&mut no_default, None);
    assert!(no_default["spec"].get("storageClassName").is_none());
}

#[test]
fn namespace_and_secret() {
    let namespace =
        defaulted(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}));
    assert_json_eq(
        &namespace,
        &json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "shop", "labels": {"kubernetes.io/metadata.name": "shop"}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }),
    );

    let secret = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db"},
        "data": {"user": "YWRtaW4=", "password": "b2xk"},
        "stringData": {"password": "s3cr3t!", "dsn": "postgres://db:5432/app"},
    }));
    assert_json_eq(
        &secret,
        &json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db"},
            "type": "Opaque",
            "data": {
                "user": "YWRtaW4=",
                "password": "czNjcjN0IQ==",
                "dsn": "cG9zdGdyZXM6Ly9kYjo1NDMyL2FwcA==",
            },
        }),
    );
}

#[test]
fn pdb_and_hpa() {
    let pdb = defaulted(json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }));
    assert_json_eq(
        &pdb["status"],
        &json!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}),
    );

    let hpa = defaulted(json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        },
    }));
    assert_json_eq(
        &hpa["spec"],
        &json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "minReplicas": 1,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}],
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": 60,
                    "selectPolicy": "Max",
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                },
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "selectPolicy": "Max",
                    "policies": [
                        {"type": "Pods", "value": 4, "periodSeconds": 15},
                        {"type": "Percent", "value": 100, "periodSeconds": 15},
                    ],
                },
            },
        }),
    );

    let unknown = json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {}});
    assert_json_eq(&defaulted(unknown.clone()), &unknown);
}
