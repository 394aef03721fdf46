//! Label selectors, node selectors and taint tolerations as the controllers evaluate them
//! (`metav1.LabelSelectorAsSelector`, `nodeaffinity`, `v1helper.TolerationsTolerateTaint`).

use super::objects::{labels, name, str_at};
use serde_json::{Map, Value};

/// Whether a `metav1.LabelSelector` (matchLabels and matchExpressions) selects `labels`.
/// An empty selector selects everything; a missing one (`None`) selects nothing.
pub(crate) fn selector_matches(selector: Option<&Value>, labels: &Map<String, Value>) -> bool {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return false;
    };
    let match_labels = selector.get("matchLabels").and_then(Value::as_object);
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k).and_then(Value::as_str) == v.as_str());
    let expressions = selector.get("matchExpressions").and_then(Value::as_array);
    labels_ok
        && expressions
            .into_iter()
            .flatten()
            .all(|e| expression_matches(e, |k| label(labels, k)))
}

/// Whether a Service-style selector (a plain map) selects `labels`; an empty map selects
/// nothing, as the endpoints controllers treat a Service without selector.
pub(crate) fn map_selector_matches(
    selector: &Map<String, Value>,
    labels: &Map<String, Value>,
) -> bool {
    !selector.is_empty()
        && selector
            .iter()
            .all(|(k, v)| labels.get(k).and_then(Value::as_str) == v.as_str())
}

fn label<'a>(labels: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    labels.get(key).and_then(Value::as_str)
}

/// One `matchExpressions` requirement (label or node selector form).
fn expression_matches<'a>(expr: &Value, lookup: impl Fn(&str) -> Option<&'a str>) -> bool {
    let key = str_at(expr, "/key");
    let values: Vec<&str> = expr
        .get("values")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let value = lookup(key);
    let number = |s: &str| s.parse::<i64>().ok();
    match str_at(expr, "/operator") {
        "In" => value.is_some_and(|v| values.contains(&v)),
        "NotIn" => value.is_none_or(|v| !values.contains(&v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => {
            matches!((value.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a > b)
        }
        "Lt" => {
            matches!((value.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a < b)
        }
        _ => false,
    }
}

/// Whether a pod spec's `nodeSelector` and required node affinity admit `node`.
pub(crate) fn node_fits(pod_spec: &Value, node: &Value) -> bool {
    let node_labels = labels(node);
    let selector_ok = pod_spec
        .get("nodeSelector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| label(&node_labels, k) == v.as_str());
    let terms = pod_spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array);
    let affinity_ok = match terms {
        // Terms are ORed; a term's requirements are ANDed; an empty term matches nothing.
        Some(terms) => terms
            .iter()
            .any(|term| term_matches(term, node, &node_labels)),
        None => true,
    };
    selector_ok && affinity_ok
}

fn term_matches(term: &Value, node: &Value, node_labels: &Map<String, Value>) -> bool {
    let exprs = term.get("matchExpressions").and_then(Value::as_array);
    let fields = term.get("matchFields").and_then(Value::as_array);
    if exprs.is_none_or(Vec::is_empty) && fields.is_none_or(Vec::is_empty) {
        return false;
    }
    exprs
        .into_iter()
        .flatten()
        .all(|e| expression_matches(e, |k| label(node_labels, k)))
        && fields
            .into_iter()
            .flatten()
            .all(|e| expression_matches(e, |k| (k == "metadata.name").then(|| name(node))))
}

/// Whether `tolerations` tolerate `taint` (`Toleration.ToleratesTaint`).
pub(crate) fn tolerates(tolerations: &[Value], taint: &Value) -> bool {
    tolerations.iter().any(|t| {
        let effect_ok = {
            let e = str_at(t, "/effect");
            e.is_empty() || e == str_at(taint, "/effect")
        };
        let key = str_at(t, "/key");
        let key_ok = key.is_empty() || key == str_at(taint, "/key");
        let value_ok = match str_at(t, "/operator") {
            "Exists" => true,
            _ => str_at(t, "/value") == str_at(taint, "/value"),
        };
        // An empty key with operator Exists tolerates everything.
        effect_ok && key_ok && value_ok && (!key.is_empty() || str_at(t, "/operator") == "Exists")
    })
}

/// The node's taints with one of `effects` that `tolerations` do not tolerate.
pub(crate) fn untolerated_taints<'a>(
    node: &'a Value,
    tolerations: &[Value],
    effects: &[&str],
) -> Vec<&'a Value> {
    node.pointer("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|taint| {
            effects.contains(&str_at(taint, "/effect")) && !tolerates(tolerations, taint)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn case(selector: &Value, labels: &Value, want: bool) {
        let labels = labels.as_object().cloned().unwrap_or_default();
        assert_eq!(
            selector_matches(Some(selector), &labels),
            want,
            "{selector} vs {labels:?}"
        );
    }

    #[test]
    fn label_selectors_match_as_kubernetes_does() {
        let web = json!({"app": "web", "tier": "frontend"});
        case(&json!({}), &web, true);
        case(&json!({"matchLabels": {"app": "web"}}), &web, true);
        case(&json!({"matchLabels": {"app": "db"}}), &web, false);
        case(
            &json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend", "edge"]}]}),
            &web,
            true,
        );
        case(
            &json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["frontend"]}]}),
            &web,
            false,
        );
        case(
            &json!({"matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]}),
            &web,
            true,
        );
        case(
            &json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "canary", "operator": "Exists"}]}),
            &web,
            false,
        );
        assert!(!selector_matches(None, &Map::new()));
    }

    #[test]
    fn nodes_fit_by_selector_affinity_fields_and_taints() {
        let node = json!({"metadata": {"name": "sim-node-2", "labels": {"disktype": "ssd", "kubernetes.io/hostname": "sim-node-2"}},
            "spec": {"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}});
        assert!(node_fits(
            &json!({"nodeSelector": {"disktype": "ssd"}}),
            &node
        ));
        assert!(!node_fits(
            &json!({"nodeSelector": {"disktype": "hdd"}}),
            &node
        ));
        let pinned = |n: &str| {
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}]}}}})
        };
        assert!(node_fits(&pinned("sim-node-2"), &node));
        assert!(!node_fits(&pinned("sim-node-1"), &node));
        assert_eq!(untolerated_taints(&node, &[], &["NoSchedule"]).len(), 1);
        let tolerate_cp = json!({"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"});
        assert!(untolerated_taints(&node, &[tolerate_cp], &["NoSchedule"]).is_empty());
        assert!(
            untolerated_taints(&node, &[json!({"operator": "Exists"})], &["NoSchedule"]).is_empty()
        );
        assert_eq!(
            untolerated_taints(
                &node,
                &[json!({"key": "other", "operator": "Exists"})],
                &["NoSchedule"]
            )
            .len(),
            1
        );
    }
}
