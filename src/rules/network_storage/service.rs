//! Services (krane's rule): a selector must find ready pods (or a workload deliberately
//! scaled to zero), a LoadBalancer needs an address. A Service never fails by itself: its
//! pods' workloads carry the failure.

use crate::rules::assessment::Assessment;
use crate::rules::snapshot::{Snapshot, typed};
use crate::rules::workloads::generation::unreadable;
use k8s_openapi::api::core::v1::{Pod, Service};
use serde_json::Value;
use std::collections::BTreeMap;

const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
const WORKLOAD_KINDS: [(&str, &str); 3] = [
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "ReplicaSet"),
];

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let svc: Service = match typed(obj) {
        Ok(s) => s,
        Err(e) => return unreadable("Service", &e),
    };
    let spec = svc.spec.clone().unwrap_or_default();
    let name = svc.metadata.name.as_deref().unwrap_or_default();
    let ns = svc.metadata.namespace.as_deref();
    if spec.type_.as_deref() == Some("ExternalName") {
        let target = spec.external_name.as_deref().unwrap_or_default();
        return Assessment::succeeded(format!("ExternalName service for {target}"));
    }
    let selection = match spec.selector.as_ref().filter(|s| !s.is_empty()) {
        None => "no selector (endpoints managed elsewhere)".to_owned(),
        Some(selector) => match selected(selector, name, ns, snapshot) {
            Ok(found) => found,
            Err(waiting) => return Assessment::not_ready(waiting),
        },
    };
    if spec.type_.as_deref() == Some("LoadBalancer") {
        let ingress = obj.pointer("/status/loadBalancer/ingress/0");
        let address = ingress
            .and_then(|i| i.get("hostname").or_else(|| i.get("ip")))
            .and_then(Value::as_str);
        return match address {
            Some(a) => Assessment::succeeded(format!("{selection}, load balancer address {a}")),
            None => {
                Assessment::not_ready(format!("{selection}; waiting for a load balancer address"))
            }
        };
    }
    Assessment::succeeded(selection)
}

/// What the selector finds, or why it finds nothing usable yet.
fn selected(
    selector: &BTreeMap<String, String>,
    name: &str,
    ns: Option<&str>,
    snapshot: &Snapshot,
) -> Result<String, String> {
    let matching: Vec<Pod> = snapshot
        .list::<Pod>(ns)
        .into_iter()
        .filter(|p| {
            p.metadata.deletion_timestamp.is_none() && matches(selector, p.metadata.labels.as_ref())
        })
        .collect();
    let ready = matching.iter().filter(|p| is_ready(p)).count();
    if ready > 0 {
        return Ok(format!("{ready} ready pods selected"));
    }
    let endpoints = ready_endpoints(name, ns, snapshot);
    if endpoints > 0 {
        return Ok(format!("{endpoints} ready endpoints"));
    }
    for (group, kind) in WORKLOAD_KINDS {
        let idle = snapshot.list_raw(group, kind, ns).find(|w| {
            let labels = w
                .pointer("/spec/template/metadata/labels")
                .and_then(|l| serde_json::from_value(l.clone()).ok());
            w.pointer("/spec/replicas").and_then(Value::as_i64) == Some(0)
                && matches(selector, labels.as_ref())
        });
        if let Some(w) = idle {
            let wname = w
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Ok(format!("selects {kind}/{wname}, scaled to 0"));
        }
    }
    let wanted = selector
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    Err(match matching.len() {
        0 => format!("no pods match selector {wanted}"),
        n => format!("no ready pods match selector {wanted} ({n} matching, not ready)"),
    })
}

fn matches(selector: &BTreeMap<String, String>, labels: Option<&BTreeMap<String, String>>) -> bool {
    labels.is_some_and(|l| selector.iter().all(|(k, v)| l.get(k) == Some(v)))
}

fn is_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// Ready endpoints in the Service's EndpointSlices (a missing `ready` means ready).
fn ready_endpoints(name: &str, ns: Option<&str>, snapshot: &Snapshot) -> usize {
    snapshot
        .list_raw("discovery.k8s.io", "EndpointSlice", ns)
        .filter(|s| {
            s.pointer(&format!(
                "/metadata/labels/{}",
                SERVICE_NAME_LABEL.replace('/', "~1")
            ))
            .and_then(Value::as_str)
                == Some(name)
        })
        .flat_map(|s| {
            s.get("endpoints")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter(|e| e.pointer("/conditions/ready") != Some(&Value::Bool(false)))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{self, merged};
    use crate::verdict::Reason;
    use serde_json::json;

    fn service(spec: Value, status: Value) -> Value {
        let base = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "shop", "uid": "c0ffee00-1111-4222-8333-444455556666",
                "resourceVersion": "53000", "creationTimestamp": "2025-03-04T10:15:00Z"},
            "spec": {"ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                "selector": {"app": "web"}, "clusterIP": "10.96.12.34", "clusterIPs": ["10.96.12.34"],
                "type": "ClusterIP", "sessionAffinity": "None", "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
            "status": {"loadBalancer": {}}
        });
        merged(base, json!({"spec": spec, "status": status}))
    }

    fn web_pod(status: Value) -> Value {
        fixtures::rs_pod("web-7d4b9c-x2x9q", "rs-uid", "7d4b9c", status)
    }

    #[track_caller]
    fn case(objects: Vec<Value>, expected: (Option<Reason>, &str)) {
        let snap = fixtures::snapshot(&objects);
        let got = assess(&objects[0], &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
        assert_eq!(
            matches!(got, Assessment::Succeeded { .. }),
            expected.0.is_none()
        );
    }

    #[test]
    fn a_selector_needs_ready_pods_or_endpoints() {
        case(
            vec![service(json!({}), json!({}))],
            (Some(Reason::NotReady), "no pods match selector app=web"),
        );
        case(
            vec![
                service(json!({}), json!({})),
                web_pod(fixtures::running_not_ready_status()),
            ],
            (
                Some(Reason::NotReady),
                "no ready pods match selector app=web (1 matching, not ready)",
            ),
        );
        case(
            vec![
                service(json!({}), json!({})),
                web_pod(fixtures::ready_status()),
            ],
            (None, "1 ready pods selected"),
        );
        let slice = json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "web-x8k2d", "namespace": "shop", "uid": "e5e5e5e5-0000-4000-8000-000000000005",
                "resourceVersion": "53010", "generateName": "web-",
                "labels": {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                    "kubernetes.io/service-name": "web"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.244.1.17"], "conditions": {"ready": true, "serving": true, "terminating": false},
                "nodeName": "node-1", "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-7d4b9c-x2x9q"}}],
            "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]
        });
        case(
            vec![service(json!({}), json!({})), slice],
            (None, "1 ready endpoints"),
        );
    }

    #[test]
    fn no_selector_external_name_and_idle_workloads_need_nothing() {
        case(
            vec![service(json!({"selector": null}), json!({}))],
            (None, "no selector (endpoints managed elsewhere)"),
        );
        case(
            vec![service(
                json!({"type": "ExternalName", "externalName": "db.example.com", "selector": null,
                "clusterIP": null, "clusterIPs": null}),
                json!({}),
            )],
            (None, "ExternalName service for db.example.com"),
        );
        let idle = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "d0d0d0d0-0000-4000-8000-000000000001", "generation": 2},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                "template": fixtures::pod_template(json!({"app": "web"}))},
            "status": {"observedGeneration": 2}});
        case(
            vec![service(json!({}), json!({})), idle],
            (None, "selects Deployment/web, scaled to 0"),
        );
    }

    #[test]
    fn a_load_balancer_needs_an_address() {
        let lb = json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": true, "externalTrafficPolicy": "Cluster"});
        case(
            vec![
                service(lb.clone(), json!({})),
                web_pod(fixtures::ready_status()),
            ],
            (
                Some(Reason::NotReady),
                "1 ready pods selected; waiting for a load balancer address",
            ),
        );
        case(
            vec![
                service(
                    lb,
                    json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.10", "ipMode": "VIP"}]}}),
                ),
                web_pod(fixtures::ready_status()),
            ],
            (
                None,
                "1 ready pods selected, load balancer address 203.0.113.10",
            ),
        );
    }
}
