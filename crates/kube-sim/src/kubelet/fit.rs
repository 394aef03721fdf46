//! The default scheduler's filters for one pod against one node (NodeUnschedulable,
//! TaintToleration, NodeAffinity, NodeResourcesFit, InterPodAffinity's required
//! anti-affinity) and the FitError text it reports when no node passes.

use super::quantity::{self, Amounts};
use serde_json::Value;
use std::collections::BTreeMap;

/// Why one node was filtered out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub reasons: Vec<String>,
    /// Unschedulable (preemption could help in principle) rather than unresolvable.
    pub resolvable: bool,
}

fn reject(reason: impl Into<String>, resolvable: bool) -> Rejection {
    Rejection {
        reasons: vec![reason.into()],
        resolvable,
    }
}

/// A node as the filters see it: the object, plus what is already placed on it.
pub struct NodeInfo<'a> {
    pub node: &'a Value,
    pub requested: Amounts,
    pub pod_count: usize,
    /// Pods on this node (for anti-affinity).
    pub pods: Vec<&'a Value>,
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn tolerates(pod: &Value, key: &str, value: &str, effect: &str) -> bool {
    pod["spec"]["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| {
            let effect_ok = t["effect"]
                .as_str()
                .is_none_or(|e| e.is_empty() || e == effect);
            let t_key = t["key"].as_str().unwrap_or_default();
            let matches = match t["operator"].as_str().unwrap_or("Equal") {
                "Exists" => t_key.is_empty() || t_key == key,
                _ => t_key == key && t["value"].as_str().unwrap_or_default() == value,
            };
            effect_ok && matches
        })
}

/// A NodeSelectorRequirement (labels) or field requirement against `actual`.
fn requirement(req: &Value, actual: Option<&str>) -> bool {
    let values = strs(&req["values"]);
    let num = |s: &str| s.parse::<i64>().ok();
    match req["operator"].as_str().unwrap_or_default() {
        "In" => actual.is_some_and(|a| values.contains(&a)),
        "NotIn" => actual.is_none_or(|a| !values.contains(&a)),
        "Exists" => actual.is_some(),
        "DoesNotExist" => actual.is_none(),
        "Gt" => {
            matches!((actual.and_then(num), values.first().and_then(|v| num(v))), (Some(a), Some(b)) if a > b)
        }
        "Lt" => {
            matches!((actual.and_then(num), values.first().and_then(|v| num(v))), (Some(a), Some(b)) if a < b)
        }
        _ => false,
    }
}

fn node_affinity_ok(pod: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    let selector_ok = pod["spec"]["nodeSelector"]
        .as_object()
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.get(k) == Some(v)));
    let required =
        &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    let terms_ok = required["nodeSelectorTerms"]
        .as_array()
        .is_none_or(|terms| {
            terms.iter().any(|term| {
                let exprs = term["matchExpressions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let fields = term["matchFields"].as_array().cloned().unwrap_or_default();
                if exprs.is_empty() && fields.is_empty() {
                    return false;
                }
                let name = node["metadata"]["name"].as_str();
                exprs
                    .iter()
                    .all(|r| requirement(r, r["key"].as_str().and_then(|k| labels[k].as_str())))
                    && fields
                        .iter()
                        .all(|r| r["key"] == "metadata.name" && requirement(r, name))
            })
        });
    selector_ok && terms_ok
}

/// A LabelSelector against an object's labels.
pub fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let labels_ok = selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.iter().all(|(k, v)| labels.get(k) == Some(v)));
    let exprs_ok = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|r| requirement(r, r["key"].as_str().and_then(|k| labels[k].as_str())));
    labels_ok && exprs_ok
}

fn anti_affinity_terms(pod: &Value) -> &Value {
    &pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
}

/// Whether the filters look at the pods already on a node (`NodeInfo::pods`), not just
/// their count and requests: only for required anti-affinity.
pub fn looks_at_pods(pod: &Value) -> bool {
    anti_affinity_terms(pod)
        .as_array()
        .is_some_and(|t| !t.is_empty())
}

fn anti_affinity_ok(pod: &Value, info: &NodeInfo<'_>, all: &[NodeInfo<'_>]) -> bool {
    let terms = anti_affinity_terms(pod);
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    terms.as_array().into_iter().flatten().all(|term| {
        let topology = term["topologyKey"].as_str().unwrap_or_default();
        let Some(domain) = info.node["metadata"]["labels"][topology].as_str() else {
            return true;
        };
        let namespaces = strs(&term["namespaces"]);
        let in_scope = |p: &Value| {
            let pns = p["metadata"]["namespace"].as_str().unwrap_or("default");
            if namespaces.is_empty() {
                pns == ns
            } else {
                namespaces.contains(&pns)
            }
        };
        !all.iter()
            .filter(|n| n.node["metadata"]["labels"][topology] == domain)
            .any(|n| {
                n.pods.iter().any(|p| {
                    in_scope(p)
                        && selector_matches(&term["labelSelector"], &p["metadata"]["labels"])
                })
            })
    })
}

/// Run the filters in the default profile's order; the first failing one decides.
pub fn filter(pod: &Value, info: &NodeInfo<'_>, all: &[NodeInfo<'_>]) -> Result<(), Rejection> {
    let node = info.node;
    let unschedulable_key = "node.kubernetes.io/unschedulable";
    if node["spec"]["unschedulable"] == true && !tolerates(pod, unschedulable_key, "", "NoSchedule")
    {
        return Err(reject("node(s) were unschedulable", false));
    }
    for taint in node["spec"]["taints"].as_array().into_iter().flatten() {
        let (key, value) = (
            taint["key"].as_str().unwrap_or_default(),
            taint["value"].as_str().unwrap_or_default(),
        );
        let effect = taint["effect"].as_str().unwrap_or_default();
        if matches!(effect, "NoSchedule" | "NoExecute") && !tolerates(pod, key, value, effect) {
            return Err(reject(
                format!("node(s) had untolerated taint {{{key}: {value}}}"),
                false,
            ));
        }
    }
    if !node_affinity_ok(pod, node) {
        return Err(reject(
            "node(s) didn't match Pod's node affinity/selector",
            false,
        ));
    }
    let mut reasons = Vec::new();
    let allocatable = &node["status"]["allocatable"];
    let capacity = |r: &str| {
        allocatable[r]
            .as_str()
            .and_then(quantity::parse)
            .unwrap_or(0.0)
    };
    if allocatable.get("pods").is_some() && (info.pod_count + 1) as f64 > capacity("pods") {
        reasons.push("Too many pods".to_owned());
    }
    let wanted = quantity::pod_requests(pod);
    let order = |r: &str| {
        ["cpu", "memory", "ephemeral-storage"]
            .iter()
            .position(|x| *x == r)
            .unwrap_or(3)
    };
    let mut names: Vec<&String> = wanted.keys().collect();
    names.sort_by_key(|r| (order(r), (*r).clone()));
    for r in names {
        let want = wanted[r];
        let used = info.requested.get(r).copied().unwrap_or(0.0);
        if want > 0.0 && want > capacity(r) - used + 1e-9 {
            reasons.push(format!("Insufficient {r}"));
        }
    }
    if !reasons.is_empty() {
        return Err(Rejection {
            reasons,
            resolvable: true,
        });
    }
    if !anti_affinity_ok(pod, info, all) {
        return Err(reject("node(s) didn't match pod anti-affinity rules", true));
    }
    Ok(())
}

/// `0/N nodes are available: <msg>.` then the preemption verdict for every node.
fn with_preemption(total: usize, reasons: &str, preemption: &BTreeMap<&str, usize>) -> String {
    let p: Vec<String> = preemption.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let mut p = p;
    p.sort();
    format!(
        "0/{total} nodes are available: {reasons}. preemption: 0/{total} nodes are available: {}.",
        p.join(", ")
    )
}

const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
const NO_VICTIMS: &str = "No preemption victims found for incoming pod";

/// The FitError message when every node was filtered out.
pub fn fit_error(total: usize, rejections: &[Rejection]) -> String {
    let mut histogram: BTreeMap<&str, usize> = BTreeMap::new();
    let mut preemption: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rejections {
        for reason in &r.reasons {
            *histogram.entry(reason).or_default() += 1;
        }
        *preemption
            .entry(if r.resolvable {
                NO_VICTIMS
            } else {
                NOT_HELPFUL
            })
            .or_default() += 1;
    }
    let mut reasons: Vec<String> = histogram.iter().map(|(k, n)| format!("{n} {k}")).collect();
    reasons.sort();
    with_preemption(total, &reasons.join(", "), &preemption)
}

/// The FitError message when a PreFilter plugin rejected the pod outright.
pub fn prefilter_error(total: usize, message: &str) -> String {
    with_preemption(total, message, &BTreeMap::from([(NOT_HELPFUL, total)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, labels: &Value, spec: &Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "spec": spec,
               "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
    }

    fn info(node: &Value) -> NodeInfo<'_> {
        NodeInfo {
            node,
            requested: Amounts::new(),
            pod_count: 0,
            pods: Vec::new(),
        }
    }

    #[track_caller]
    fn case(pod: &Value, node: &Value, want: Result<(), &str>) {
        let got = filter(pod, &info(node), &[]).map_err(|r| r.reasons.join(" | "));
        assert_eq!(got, want.map_err(str::to_owned));
    }

    #[test]
    fn filters_report_the_first_failing_plugin() {
        let plain = || node("n1", &json!({"disk": "ssd"}), &json!({}));
        case(&json!({"spec": {}}), &plain(), Ok(()));
        case(
            &json!({"spec": {}}),
            &node("n1", &json!({}), &json!({"unschedulable": true})),
            Err("node(s) were unschedulable"),
        );
        let tolerant = json!({"spec": {"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}});
        case(
            &tolerant,
            &node("n1", &json!({}), &json!({"unschedulable": true})),
            Ok(()),
        );
        let tainted = node(
            "n1",
            &json!({}),
            &json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}),
        );
        case(
            &json!({"spec": {}}),
            &tainted,
            Err("node(s) had untolerated taint {dedicated: gpu}"),
        );
        case(
            &json!({"spec": {"nodeSelector": {"disk": "hdd"}}}),
            &plain(),
            Err("node(s) didn't match Pod's node affinity/selector"),
        );
        let by_name = |n: &str| {
            json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}]}}}}})
        };
        case(&by_name("n1"), &plain(), Ok(()));
        case(
            &by_name("n2"),
            &plain(),
            Err("node(s) didn't match Pod's node affinity/selector"),
        );
        let big = json!({"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "8", "memory": "32Gi"}}}]}});
        case(
            &big,
            &plain(),
            Err("Insufficient cpu | Insufficient memory"),
        );
    }

    #[test]
    fn fit_errors_read_like_the_scheduler() {
        let affinity = reject("node(s) didn't match Pod's node affinity/selector", false);
        let cordoned = reject("node(s) were unschedulable", false);
        assert_eq!(
            fit_error(3, &[affinity.clone(), affinity.clone(), affinity.clone()]),
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        let cpu = Rejection {
            reasons: vec!["Insufficient cpu".into()],
            resolvable: true,
        };
        assert_eq!(
            fit_error(3, &[cordoned, affinity, cpu]),
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
        );
        assert_eq!(
            prefilter_error(3, "pod has unbound immediate PersistentVolumeClaims"),
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn required_anti_affinity_keeps_replicas_apart() {
        let n1 = node("n1", &json!({"kubernetes.io/hostname": "n1"}), &json!({}));
        let existing = json!({"metadata": {"namespace": "shop", "labels": {"app": "web"}}});
        let pod = json!({"metadata": {"namespace": "shop"}, "spec": {"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}});
        let crowded = NodeInfo {
            pods: vec![&existing],
            ..info(&n1)
        };
        let err = filter(&pod, &crowded, std::slice::from_ref(&crowded)).unwrap_err();
        assert_eq!(
            err,
            reject("node(s) didn't match pod anti-affinity rules", true)
        );
        let empty = info(&n1);
        assert_eq!(filter(&pod, &empty, std::slice::from_ref(&empty)), Ok(()));
    }
}
