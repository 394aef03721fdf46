//! Workloads an autoscaler sizes: a HorizontalPodAutoscaler (in the manifests or the
//! cluster) or a KEDA ScaledObject (which makes one) names them as its scale target. A
//! deploy must leave their `spec.replicas` to it, or every deploy scales production back
//! to the manifest's count. Pure, so the decisions are tested without a cluster.

use crate::manifest::Manifest;
use crate::pointer::Pointer;
use serde_json::{Value, json};

/// The field manager that keeps `spec.replicas` while deploy-action's own apply stops
/// sending it (the "transferring ownership" hand-over of the Kubernetes documentation):
/// without it, a field only deploy-action owned would be removed, and default to 1.
pub const HANDOVER_MANAGER: &str = "deploy-action-handover";

/// What scales a workload: `(namespace, kind, name)` of the target, and who scales it
/// (`HorizontalPodAutoscaler/web`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaler {
    pub target: (String, String, String),
    pub by: String,
}

/// The scale target an object names, if it is an autoscaler: an HPA's
/// `spec.scaleTargetRef`, or a KEDA ScaledObject's (kind defaults to Deployment).
pub fn scaler(obj: &Value, default_namespace: &str) -> Option<Scaler> {
    let api_version = obj.get("apiVersion")?.as_str()?;
    let kind = obj.get("kind")?.as_str()?;
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    let is_hpa = group == "autoscaling" && kind == "HorizontalPodAutoscaler";
    let is_keda = group == "keda.sh" && kind == "ScaledObject";
    if !is_hpa && !is_keda {
        return None;
    }
    let reference = obj.at("/spec/scaleTargetRef")?;
    let target_kind = reference
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("Deployment");
    let namespace = obj
        .at("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or(default_namespace);
    let name = obj.at("/metadata/name")?.as_str()?;
    Some(Scaler {
        target: (
            namespace.to_owned(),
            target_kind.to_owned(),
            reference.get("name")?.as_str()?.to_owned(),
        ),
        by: format!("{kind}/{name}"),
    })
}

/// The autoscaler of `m`, among the manifests' and the cluster's.
pub fn scaler_of<'a>(m: &Manifest, scalers: &'a [Scaler]) -> Option<&'a Scaler> {
    let ns = m.namespace.as_deref().unwrap_or_default();
    scalers
        .iter()
        .find(|s| s.target == (ns.to_owned(), m.kind.clone(), m.name.clone()))
}

/// Whether `manager` owns `spec.replicas` of `live` through an apply.
pub fn applies_replicas(live: &Value, manager: &str) -> bool {
    let entries = live.at("/metadata/managedFields").and_then(Value::as_array);
    entries.into_iter().flatten().any(|e| {
        e["manager"] == manager
            && e["operation"] == "Apply"
            && e.at("/fieldsV1/f:spec/f:replicas").is_some()
    })
}

/// The apply configuration the hand-over manager sends: the live count and nothing else.
pub fn handover(live: &Value) -> Option<Value> {
    let replicas = live.at("/spec/replicas")?.as_i64()?;
    let mut metadata = json!({"name": live.at("/metadata/name")?});
    if let Some(ns) = live.at("/metadata/namespace") {
        metadata["namespace"] = ns.clone();
    }
    Some(json!({
        "apiVersion": live.get("apiVersion")?,
        "kind": live.get("kind")?,
        "metadata": metadata,
        "spec": {"replicas": replicas},
    }))
}

/// Removes `spec.replicas` from a manifest's object; the count it had, if any.
pub fn leave_replicas(m: &mut Manifest) -> Option<Value> {
    m.object
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .and_then(|spec| spec.remove("replicas"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    #[test]
    fn hpas_and_scaled_objects_name_their_targets() {
        let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"minReplicas": 4, "maxReplicas": 10,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}});
        assert_eq!(
            scaler(&hpa, "default"),
            Some(Scaler {
                target: ("shop".into(), "Deployment".into(), "web".into()),
                by: "HorizontalPodAutoscaler/web".into()
            })
        );
        let keda = json!({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": {"name": "worker"}, "spec": {"scaleTargetRef": {"name": "worker"}}});
        assert_eq!(
            scaler(&keda, "jobs").map(|s| s.target),
            Some(("jobs".into(), "Deployment".into(), "worker".into()))
        );
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"scaleTargetRef": {"name": "x"}}});
        assert_eq!(scaler(&deployment, "shop"), None);
    }

    #[test]
    fn the_manifests_count_is_left_out_and_handed_over_at_the_live_count() {
        let mut m = load_str(
            "web.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 2, template: {}}\n",
        )
        .unwrap()
        .remove(0);
        let scalers = [Scaler {
            target: ("shop".into(), "Deployment".into(), "web".into()),
            by: "HorizontalPodAutoscaler/web".into(),
        }];
        assert!(scaler_of(&m, &scalers).is_some());
        assert_eq!(leave_replicas(&mut m), Some(json!(2)));
        assert_eq!(m.object["spec"], json!({"template": {}}));
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "managedFields": [
                {"manager": "deploy-action", "operation": "Apply", "apiVersion": "apps/v1",
                 "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "subresource": "scale",
                 "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
            "spec": {"replicas": 4}});
        assert!(applies_replicas(&live, "deploy-action"));
        assert!(!applies_replicas(&live, "kube-controller-manager"));
        assert_eq!(
            handover(&live),
            Some(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop"}, "spec": {"replicas": 4}}))
        );
    }
}
