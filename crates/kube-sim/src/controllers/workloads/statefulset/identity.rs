//! The stable identity of a StatefulSet's pods: `<set>-<ordinal>` names, the identity
//! labels, hostname and subdomain, and the PersistentVolumeClaims of its claim templates
//! (`stateful_set_utils.go`).

use crate::controllers::workloads::history::{REVISION_HASH_LABEL, revision_template};
use crate::controllers::workloads::objects::{int_at, name, namespace, str_at};
use crate::controllers::workloads::pods::pod_from_template;
use serde_json::{Map, Value, json};

pub(crate) const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
pub(crate) const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// The ordinal of a pod of `set`, if the pod's name is `<set>-<n>`.
pub(crate) fn ordinal(set: &Value, pod: &Value) -> Option<i64> {
    let rest = name(pod).strip_prefix(name(set))?.strip_prefix('-')?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// `spec.ordinals.start` (0 by default).
pub(crate) fn start_ordinal(set: &Value) -> i64 {
    int_at(set, "/spec/ordinals/start").unwrap_or(0)
}

pub(crate) fn replicas(set: &Value) -> i64 {
    int_at(set, "/spec/replicas").unwrap_or(1).max(0)
}

/// The revision a pod was made from (`controller-revision-hash` holds the revision name).
pub(crate) fn pod_revision(pod: &Value) -> &str {
    str_at(pod, &format!("/metadata/labels/{REVISION_HASH_LABEL}"))
}

/// `<claim>-<set>-<ordinal>`.
pub(crate) fn claim_name(template: &Value, set: &Value, ordinal: i64) -> String {
    format!("{}-{}-{ordinal}", name(template), name(set))
}

/// The claims a pod of `set` at `ordinal` mounts (`getPersistentVolumeClaims`): each claim
/// template, renamed, labelled with the set's selector labels.
pub(crate) fn claims_for(set: &Value, ordinal: i64) -> Vec<(String, Value)> {
    let templates = set
        .pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array);
    let selector_labels = set
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object);
    templates
        .into_iter()
        .flatten()
        .map(|template| {
            let mut labels = template.pointer("/metadata/labels").and_then(Value::as_object).cloned().unwrap_or_default();
            labels.extend(selector_labels.into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())));
            let mut metadata = json!({"name": claim_name(template, set, ordinal), "namespace": namespace(set)});
            if !labels.is_empty() {
                metadata["labels"] = Value::Object(sorted(labels));
            }
            if let Some(a) = template.pointer("/metadata/annotations").filter(|a| a.is_object()) {
                metadata["annotations"] = a.clone();
            }
            let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
                "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
                "status": {"phase": "Pending"}});
            (name(template).to_owned(), claim)
        })
        .collect()
}

/// A new pod of `set` at `ordinal` from `revision` (`newVersionedStatefulSetPod`).
pub(crate) fn new_pod(set: &Value, revision: &Value, ordinal: i64) -> Value {
    let mut owner_view = set.clone();
    owner_view["spec"]["template"] = revision_template(revision);
    let mut pod = pod_from_template(&owner_view["spec"]["template"], set);
    let pod_name = format!("{}-{ordinal}", name(set));
    pod["metadata"]["name"] = json!(pod_name);
    let mut labels = pod
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.into(), json!(name(revision)));
    labels.insert(POD_NAME_LABEL.into(), json!(pod_name));
    labels.insert(POD_INDEX_LABEL.into(), json!(ordinal.to_string()));
    pod["metadata"]["labels"] = Value::Object(sorted(labels));
    pod["spec"]["hostname"] = json!(pod_name);
    let service = str_at(set, "/spec/serviceName");
    if !service.is_empty() {
        pod["spec"]["subdomain"] = json!(service);
    }
    let claims = claims_for(set, ordinal);
    if !claims.is_empty() {
        let mut volumes: Vec<Value> = claims
            .iter()
            .map(|(vol, claim)| json!({"name": vol, "persistentVolumeClaim": {"claimName": name(claim)}}))
            .collect();
        let existing = pod
            .pointer("/spec/volumes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        volumes.extend(
            existing
                .into_iter()
                .filter(|v| !claims.iter().any(|(n, _)| n == str_at(v, "/name"))),
        );
        pod["spec"]["volumes"] = json!(volumes);
    }
    pod
}

/// Labels as the API server returns them: Go marshals maps with sorted keys.
pub(crate) fn sorted(map: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<_> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_get_identity_storage_and_revision() {
        let set = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "shop", "uid": "u-db"},
            "spec": {"serviceName": "db-headless", "selector": {"matchLabels": {"app": "db"}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
        let revision = json!({"metadata": {"name": "db-5d8b7c9f6"}, "data": {"spec": {"template": {"$patch": "replace",
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "postgres:16"}],
                     "volumes": [{"name": "data", "emptyDir": {}}, {"name": "conf", "configMap": {"name": "db"}}]}}}}});
        let pod = new_pod(&set, &revision, 2);
        assert_eq!(pod["metadata"]["name"], "db-2");
        assert_eq!(pod["metadata"]["generateName"], "db-");
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "db", "apps.kubernetes.io/pod-index": "2",
            "controller-revision-hash": "db-5d8b7c9f6", "statefulset.kubernetes.io/pod-name": "db-2"})
        );
        assert_eq!(
            (
                pod["spec"]["hostname"].as_str(),
                pod["spec"]["subdomain"].as_str()
            ),
            (Some("db-2"), Some("db-headless"))
        );
        assert_eq!(
            pod["spec"]["volumes"],
            json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-2"}},
            {"name": "conf", "configMap": {"name": "db"}}])
        );
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
        let (_, claim) = &claims_for(&set, 2)[0];
        assert_eq!(claim["metadata"]["labels"], json!({"app": "db"}));
        assert_eq!(ordinal(&set, &pod), Some(2));
        assert_eq!(ordinal(&set, &json!({"metadata": {"name": "db-x"}})), None);
        assert_eq!(ordinal(&set, &json!({"metadata": {"name": "dbx-1"}})), None);
    }
}
