//! Update validation: immutable fields.

use serde_json::{Value, json};

use super::{accepted, deployment, merge};
use crate::defaults::{allocate_cluster_ip, default_object, preserve_service_allocations};
use crate::validation::validate_update;

/// Defaults the new object (as the server decodes it) and validates it against `old`.
fn update(old: &Value, mut new: Value) -> Result<(), String> {
    default_object(&mut new);
    validate_update(old, &new).map_err(|e| e.message())
}

fn patched(object: &Value, spec_patch: Value) -> Value {
    let mut new = object.clone();
    merge(&mut new["spec"], spec_patch);
    new
}

#[test]
fn workload_selectors_are_immutable() {
    let old = accepted(deployment(json!({})));
    assert_eq!(update(&old, patched(&old, json!({"replicas": 5}))), Ok(()));
    assert_eq!(
        update(
            &old,
            patched(&old, json!({
                "selector": {"matchLabels": {"app": "web", "track": "stable"}},
                "template": {"metadata": {"labels": {"track": "stable"}}},
            }))
        ),
        Err("Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"track\":\"stable\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable".into()),
    );
    // An empty matchExpressions list is semantically the same selector.
    assert_eq!(
        update(
            &old,
            patched(&old, json!({"selector": {"matchExpressions": []}}))
        ),
        Ok(())
    );
}

#[test]
fn statefulset_spec_is_mostly_frozen() {
    let old = accepted(json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "pg", "image": "postgres:16"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
        },
    }));
    let image_and_scale = patched(
        &old,
        json!({
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "pg", "image": "postgres:17"}]}},
        }),
    );
    assert_eq!(update(&old, image_and_scale), Ok(()));
    let mut bigger = old.clone();
    bigger["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] =
        json!("10Gi");
    assert_eq!(
        update(&old, bigger),
        Err("StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden".into()),
    );
}

#[test]
fn job_template_and_selector_are_immutable() {
    let old = super::admit(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.34.0"}], "restartPolicy": "Never"}}},
    }))
    .unwrap();
    let new_image = patched(
        &old,
        json!({"template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.36.0"}]}}}),
    );
    let message = update(&old, new_image).unwrap_err();
    assert!(
        message.starts_with("Job.batch \"pi\" is invalid: spec.template: Invalid value: core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:\"\", GenerateName:\"\""),
        "{message}"
    );
    assert!(message.ends_with(": field is immutable"), "{message}");
    assert!(message.contains("Image:\"perl:5.36.0\""), "{message}");
    assert_eq!(
        update(&old, patched(&old, json!({"completions": 3}))),
        Err(
            "Job.batch \"pi\" is invalid: spec.completions: Invalid value: 3: field is immutable"
                .into()
        ),
    );
    assert_eq!(
        update(
            &old,
            patched(&old, json!({"suspend": true, "backoffLimit": 1}))
        ),
        Ok(())
    );

    // A suspended Job that never started may be re-targeted.
    let mut suspended = old.clone();
    suspended["spec"]["suspend"] = json!(true);
    let moved = patched(
        &suspended,
        json!({"template": {"spec": {"nodeSelector": {"pool": "batch"}}}}),
    );
    assert_eq!(update(&suspended, moved), Ok(()));
}

#[test]
fn service_cluster_ip_may_not_change() {
    let mut old = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    });
    default_object(&mut old);
    allocate_cluster_ip(&mut old, 41);

    // Re-applying the original manifest (no clusterIP) keeps the allocation.
    let mut reapplied = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080, "targetPort": 80}]},
    });
    default_object(&mut reapplied);
    preserve_service_allocations(&old, &mut reapplied);
    assert_eq!(
        validate_update(&old, &reapplied).map_err(|e| e.message()),
        Ok(())
    );

    // Switching to ExternalName drops the allocated fields the user did not touch.
    let mut external = patched(
        &old,
        json!({"type": "ExternalName", "externalName": "web.example.com", "selector": null}),
    );
    default_object(&mut external);
    preserve_service_allocations(&old, &mut external);
    assert_eq!(
        validate_update(&old, &external).map_err(|e| e.message()),
        Ok(())
    );
    assert!(external["spec"].get("clusterIP").is_none());
    assert!(external["spec"].get("ipFamilies").is_none());

    let mut headless = patched(&old, json!({"clusterIP": "None"}));
    preserve_service_allocations(&old, &mut headless);
    assert_eq!(
        validate_update(&old, &headless).map_err(|e| e.message()),
        Err("Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"None\"}: may not change once set".into()),
    );
}

#[test]
fn claims_configmaps_and_secrets() {
    let old = accepted(json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "standard"},
    }));
    let mut bound_old = old.clone();
    bound_old["spec"]["volumeName"] = json!("pvc-1b6c");
    bound_old["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
    // The binder fills in volumeName once.
    assert_eq!(update(&old, bound_old.clone()), Ok(()));
    let mut grown = bound_old.clone();
    grown["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
    assert_eq!(update(&bound_old, grown), Ok(()));
    let mut other_class = bound_old.clone();
    other_class["spec"]["storageClassName"] = json!("fast");
    let message = update(&bound_old, other_class).unwrap_err();
    assert!(
        message.starts_with("PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"),
        "{message}"
    );
    let mut shrunk = bound_old.clone();
    shrunk["spec"]["resources"]["requests"]["storage"] = json!("512Mi");
    assert_eq!(
        update(&bound_old, shrunk),
        Err("PersistentVolumeClaim \"data\" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity".into()),
    );

    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags"}, "immutable": true, "data": {"beta": "on"}});
    let mut changed = config.clone();
    changed["data"]["beta"] = json!("off");
    changed["immutable"] = json!(false);
    assert_eq!(
        update(&config, changed),
        Err("ConfigMap \"flags\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]".into()),
    );

    let secret = accepted(
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "data": {"tls.crt": "LS0t", "tls.key": "LS0t"}}),
    );
    let mut retyped = secret.clone();
    retyped["type"] = json!("kubernetes.io/tls");
    assert_eq!(
        update(&secret, retyped),
        Err("Secret \"tls\" is invalid: type: Invalid value: \"kubernetes.io/tls\": field is immutable".into()),
    );
}
