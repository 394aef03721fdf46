//! Where a DaemonSet runs: which nodes should run its pod (`NodeShouldRunDaemonPod`), the
//! pod pinned to one node by node affinity, and the node a daemon pod targets.

use crate::controllers::workloads::history::REVISION_HASH_LABEL;
use crate::controllers::workloads::objects::{int_at, str_at};
use crate::controllers::workloads::pods::pod_from_template;
use crate::controllers::workloads::selectors::{node_fits, untolerated_taints};
use crate::controllers::workloads::statefulset::identity::sorted;
use serde_json::{Value, json};

pub(crate) const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// The tolerations every daemon pod gets (`AddOrUpdateDaemonPodTolerations`), so node
/// problems and cordons do not evict or keep out a DaemonSet.
fn daemon_tolerations(host_network: bool) -> Vec<Value> {
    let mut t = vec![
        json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}),
        json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}),
        json!({"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"}),
        json!({"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}),
        json!({"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"}),
        json!({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}),
    ];
    if host_network {
        t.push(json!({"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}));
    }
    t
}

/// The template's tolerations plus the daemon ones not already present.
fn tolerations(template_spec: &Value) -> Vec<Value> {
    let mut all = template_spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let host_network = template_spec
        .get("hostNetwork")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    for t in daemon_tolerations(host_network) {
        let same = |o: &Value| {
            str_at(o, "/key") == str_at(&t, "/key") && str_at(o, "/effect") == str_at(&t, "/effect")
        };
        match all.iter_mut().find(|o| same(o)) {
            Some(existing) => *existing = t,
            None => all.push(t),
        }
    }
    all
}

/// (should run, should continue running) for `ds` on `node`.
pub(crate) fn should_run(ds: &Value, node: &Value) -> (bool, bool) {
    let spec = ds
        .pointer("/spec/template/spec")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let fits_name = match str_at(&spec, "/nodeName") {
        "" => true,
        n => n == str_at(node, "/metadata/name"),
    };
    let fits = fits_name && node_fits(&spec, node);
    let tolerations = tolerations(&spec);
    let schedule_ok =
        untolerated_taints(node, &tolerations, &["NoSchedule", "NoExecute"]).is_empty();
    let execute_ok = untolerated_taints(node, &tolerations, &["NoExecute"]).is_empty();
    (fits && schedule_ok, fits && execute_ok)
}

/// The template generation the API server keeps in an annotation (the object's
/// generation when the annotation is missing).
pub(crate) fn template_generation(ds: &Value) -> i64 {
    int_at(
        ds,
        "/metadata/annotations/deprecated.daemonset.template.generation",
    )
    .or_else(|| int_at(ds, "/metadata/generation"))
    .unwrap_or(1)
}

/// `util.IsPodUpdated`: same revision hash, or same template generation.
pub(crate) fn is_updated(pod: &Value, hash: &str, generation: i64) -> bool {
    let labels = |k: &str| str_at(pod, &format!("/metadata/labels/{k}")).to_owned();
    (!hash.is_empty() && labels(REVISION_HASH_LABEL) == hash)
        || labels(TEMPLATE_GENERATION_LABEL) == generation.to_string()
}

/// The node a daemon pod is for: where it is bound, or where its affinity pins it.
pub(crate) fn target_node(pod: &Value) -> Option<String> {
    let bound = str_at(pod, "/spec/nodeName");
    if !bound.is_empty() {
        return Some(bound.to_owned());
    }
    let terms = pod
        .pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
        .as_array()?;
    terms
        .iter()
        .flat_map(|t| {
            t.get("matchFields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .find_map(|f| {
            let values = f.get("values")?.as_array()?;
            (str_at(f, "/key") == "metadata.name"
                && str_at(f, "/operator") == "In"
                && values.len() == 1)
                .then(|| values[0].as_str().map(str::to_owned))
                .flatten()
        })
}

/// A daemon pod for `node` (`CreatePodTemplate` + `ReplaceDaemonSetPodNodeNameNodeAffinity`):
/// the scheduler binds it, guided by the `metadata.name` node affinity.
pub(crate) fn daemon_pod(ds: &Value, hash: &str, node: &str) -> Value {
    let template = ds
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut pod = pod_from_template(&template, ds);
    let mut labels = pod
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(
        TEMPLATE_GENERATION_LABEL.into(),
        json!(template_generation(ds).to_string()),
    );
    labels.insert(REVISION_HASH_LABEL.into(), json!(hash));
    pod["metadata"]["labels"] = Value::Object(sorted(labels));
    let pin = json!({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}]}]});
    let spec = pod["spec"].clone();
    pod["spec"]["tolerations"] = json!(tolerations(&spec));
    if !pod["spec"]["affinity"].is_object() {
        pod["spec"]["affinity"] = json!({});
    }
    if !pod["spec"]["affinity"]["nodeAffinity"].is_object() {
        pod["spec"]["affinity"]["nodeAffinity"] = json!({});
    }
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = pin;
    pod
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(spec: &Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "node-exporter", "namespace": "monitoring", "uid": "u1", "generation": 2,
                         "annotations": {"deprecated.daemonset.template.generation": "2"}},
            "spec": {"template": {"metadata": {"labels": {"app": "node-exporter"}}, "spec": spec}}})
    }

    #[test]
    fn daemon_pods_are_pinned_and_tolerate_node_problems() {
        let d = ds(
            &json!({"containers": [{"name": "x", "image": "prom/node-exporter:v1.8.2"}],
            "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]}),
        );
        let pod = daemon_pod(&d, "6d8d9b4c5f", "sim-node-3");
        assert_eq!(target_node(&pod).as_deref(), Some("sim-node-3"));
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "node-exporter",
            "controller-revision-hash": "6d8d9b4c5f", "pod-template-generation": "2"})
        );
        let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
        assert_eq!(tolerations.len(), 7);
        assert_eq!(
            tolerations[0]["key"],
            "node-role.kubernetes.io/control-plane"
        );
        assert!(
            is_updated(&pod, "6d8d9b4c5f", 2)
                && is_updated(&pod, "other", 2)
                && !is_updated(&pod, "other", 3)
        );
    }

    #[test]
    fn cordoned_and_tainted_nodes() {
        let d = ds(&json!({"nodeSelector": {"kubernetes.io/os": "linux"}}));
        let node = |spec: Value| json!({"metadata": {"name": "n", "labels": {"kubernetes.io/os": "linux"}}, "spec": spec});
        // Daemon pods tolerate cordons (node.kubernetes.io/unschedulable).
        let cordoned = node(
            json!({"unschedulable": true, "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}),
        );
        assert_eq!(should_run(&d, &cordoned), (true, true));
        let tainted =
            node(json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}));
        assert_eq!(should_run(&d, &tainted), (false, true));
        let evicting =
            node(json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoExecute"}]}));
        assert_eq!(should_run(&d, &evicting), (false, false));
        let windows = json!({"metadata": {"name": "w", "labels": {"kubernetes.io/os": "windows"}}});
        assert_eq!(should_run(&d, &windows), (false, false));
    }
}
