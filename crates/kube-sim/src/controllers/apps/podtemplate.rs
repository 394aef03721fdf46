//! Pods made from a ReplicaSet's template (`controller.GetPodFromTemplate`) as the API
//! server stores them: a generated name, the server's initial status, and the admission
//! checks that refuse a pod (terminating namespace, missing service account).

use super::hash::name_suffix;
use super::meta::{is_deleting, name, namespace, new_controller_ref, sorted, str_at};
use crate::engine::World;
use crate::store::ObjectKey;
use serde_json::{Map, Value, json};

/// `names.SimpleNameGenerator`: generateName is cut to leave room for five characters.
const MAX_GENERATED_PREFIX: usize = 58;

/// Why a pod was not created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refused {
    /// The namespace is being deleted: expected, nothing is reported.
    NamespaceTerminating,
    /// The API server's error text.
    Error(String),
}

/// The pod the ReplicaSet `rs` asks for, named `<generateName><suffix n>`.
pub(super) fn pod_from_template(rs: &Value, n: u64) -> Result<Value, Refused> {
    let template = rs.pointer("/spec/template").cloned().unwrap_or_default();
    let labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if labels.is_empty() {
        return Err(Refused::Error("unable to create pods, no labels".into()));
    }
    let prefix = generate_name(rs);
    let base: String = prefix.chars().take(MAX_GENERATED_PREFIX).collect();
    let mut meta = Map::new();
    meta.insert(
        "name".into(),
        json!(format!("{base}{}", name_suffix(name(rs), n))),
    );
    meta.insert("generateName".into(), json!(prefix));
    meta.insert("namespace".into(), json!(namespace(rs)));
    meta.insert("labels".into(), Value::Object(sorted(labels)));
    if let Some(a) = template
        .pointer("/metadata/annotations")
        .filter(|a| a.as_object().is_some_and(|m| !m.is_empty()))
    {
        meta.insert("annotations".into(), a.clone());
    }
    meta.insert("ownerReferences".into(), json!([new_controller_ref(rs)]));
    if let Some(f) = template
        .pointer("/metadata/finalizers")
        .filter(|f| f.as_array().is_some_and(|a| !a.is_empty()))
    {
        meta.insert("finalizers".into(), f.clone());
    }
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                         "spec": template.get("spec").cloned().unwrap_or_else(|| json!({}))});
    crate::defaults::default_object(&mut pod);
    if pod.get("status").is_none() {
        pod["status"] = json!({"phase": "Pending", "qosClass": qos_class(&pod["spec"])});
    }
    Ok(pod)
}

pub(super) fn generate_name(rs: &Value) -> String {
    format!("{}-", name(rs))
}

/// Admission as the API server applies it to a new pod: no new content in a terminating
/// namespace, and the ServiceAccount must exist (`default` is waited for by the server,
/// so only a named one is refused here).
pub(super) fn admit(world: &World<'_>, pod: &Value) -> Result<(), Refused> {
    let ns = namespace(pod);
    let Some(ns_obj) = world.get(&ObjectKey::new("", "namespaces", "", ns)) else {
        return Ok(());
    };
    if is_deleting(&ns_obj) {
        return Err(Refused::NamespaceTerminating);
    }
    let sa = match str_at(pod, "/spec/serviceAccountName") {
        "" => str_at(pod, "/spec/serviceAccount"),
        named => named,
    };
    if sa.is_empty()
        || sa == "default"
        || world
            .get(&ObjectKey::new("", "serviceaccounts", ns, sa))
            .is_some()
    {
        return Ok(());
    }
    Err(Refused::Error(format!(
        "pods \"{}\" is forbidden: error looking up service account {ns}/{sa}: serviceaccount \"{sa}\" not found",
        str_at(pod, "/metadata/generateName")
    )))
}

/// `qos.GetPodQOS`: BestEffort without any cpu/memory request or limit, Guaranteed when
/// every container limits both and requests (if given) equal the limits, else Burstable.
pub(super) fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(Value::as_array))
        .flatten()
        .collect();
    let quantity =
        |c: &Value, kind: &str, res: &str| c.pointer(&format!("/resources/{kind}/{res}")).cloned();
    let any = containers.iter().any(|c| {
        ["requests", "limits"].iter().any(|k| {
            ["cpu", "memory"]
                .iter()
                .any(|r| quantity(c, k, r).is_some())
        })
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            match (quantity(c, "limits", r), quantity(c, "requests", r)) {
                (Some(limit), Some(request)) => limit == request,
                (Some(_), None) => true,
                _ => false,
            }
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": "web-7d4b9c8f5d", "namespace": "shop", "uid": "rs-uid"},
               "spec": {"replicas": 2, "template": {
                   "metadata": {"labels": {"pod-template-hash": "7d4b9c8f5d", "app": "web"},
                                "annotations": {"prometheus.io/scrape": "true"}},
                   "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:1.4.2",
                            "resources": {"requests": {"cpu": "100m"}}}]}}}})
    }

    #[test]
    fn pod_carries_template_labels_owner_and_generated_name() {
        let pod = pod_from_template(&rs(), 0).unwrap();
        let name = str_at(&pod, "/metadata/name");
        assert!(
            name.starts_with("web-7d4b9c8f5d-") && name.len() == "web-7d4b9c8f5d-".len() + 5,
            "{name}"
        );
        assert_eq!(pod["metadata"]["generateName"], "web-7d4b9c8f5d-");
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "web", "pod-template-hash": "7d4b9c8f5d"})
        );
        assert_eq!(
            pod["metadata"]["annotations"],
            json!({"prometheus.io/scrape": "true"})
        );
        assert_eq!(
            pod["metadata"]["ownerReferences"],
            json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": "web-7d4b9c8f5d", "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true}])
        );
        assert_eq!(
            pod["status"],
            json!({"phase": "Pending", "qosClass": "Burstable"})
        );
        assert_ne!(
            str_at(&pod_from_template(&rs(), 1).unwrap(), "/metadata/name"),
            name
        );
        let mut unlabeled = rs();
        unlabeled["spec"]["template"]["metadata"] = json!({});
        assert_eq!(
            pod_from_template(&unlabeled, 0),
            Err(Refused::Error("unable to create pods, no labels".into()))
        );
    }

    #[track_caller]
    fn case(containers: &Value, want: &str) {
        assert_eq!(qos_class(&json!({"containers": containers})), want);
    }

    #[test]
    fn qos_classes() {
        case(&json!([{"name": "a"}]), "BestEffort");
        case(
            &json!([{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]),
            "Guaranteed",
        );
        case(
            &json!([{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                                 "requests": {"cpu": "500m", "memory": "1Gi"}}}]),
            "Burstable",
        );
        case(
            &json!([{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}, {"name": "b"}]),
            "Burstable",
        );
    }
}
