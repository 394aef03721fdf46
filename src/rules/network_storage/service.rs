//! Services: judged from the cluster, not from the manifests. A selector must have ready
//! endpoints in the Service's EndpointSlices, whatever pods back them, or select only
//! workloads deliberately scaled to zero; a LoadBalancer also needs an address. A Service
//! never fails by itself: its pods' workloads carry the failure.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::network_storage::endpoints::Endpoints;
use crate::rules::snapshot::{Snapshot, or_default, typed};
use crate::rules::workloads::generation::unreadable;
use k8s_openapi::api::core::v1::Service;
use serde_json::Value;
use std::collections::BTreeMap;

/// Workloads a Service may select whose replica count can be set to zero on purpose
/// (watched in the Service's namespace for this).
pub(crate) const WORKLOAD_KINDS: [(&str, &str); 3] = [
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "ReplicaSet"),
];
/// On a Service: `"true"` skips the endpoint check (krane's annotation, same meaning), so
/// it succeeds once it exists (a LoadBalancer still waits for its address).
pub const SKIP_ENDPOINTS_ANNOTATIONS: [&str; 2] = [
    "deploy-action.io/skip-endpoint-validation",
    "krane.shopify.io/skip-endpoint-validation",
];
/// How many endpoint names a waiting message lists.
const NAMES_SHOWN: usize = 3;

pub fn assess(obj: &Value, snapshot: &Snapshot) -> Assessment {
    let svc: Service = match typed(obj) {
        Ok(s) => s,
        Err(e) => return unreadable("Service", &e),
    };
    let spec = or_default(&svc.spec);
    let name = svc.metadata.name.as_deref().unwrap_or_default();
    let ns = svc.metadata.namespace.as_deref();
    if spec.type_.as_deref() == Some("ExternalName") {
        let target = spec.external_name.as_deref().unwrap_or_default();
        return Assessment::succeeded(format!("ExternalName service for {target}"));
    }
    let skip = svc.metadata.annotations.as_ref().is_some_and(|a| {
        SKIP_ENDPOINTS_ANNOTATIONS
            .iter()
            .any(|k| a.get(*k).is_some_and(|v| v == "true"))
    });
    let selection = match spec.selector.as_ref().filter(|s| !s.is_empty()) {
        _ if skip => "endpoints not checked (skip-endpoint-validation)".to_owned(),
        None => "no selector (endpoints managed elsewhere)".to_owned(),
        Some(selector) => match selected(selector, name, ns, snapshot) {
            Ok(found) => found,
            Err(waiting) => return Assessment::not_ready(waiting),
        },
    };
    if spec.type_.as_deref() == Some("LoadBalancer") {
        let ingress = obj.at("/status/loadBalancer/ingress/0");
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

/// What the EndpointSlices show, or why nothing usable is there yet.
fn selected(
    selector: &BTreeMap<String, String>,
    name: &str,
    ns: Option<&str>,
    snapshot: &Snapshot,
) -> Result<String, String> {
    let endpoints = Endpoints::of(name, ns, snapshot);
    let ready = endpoints.ready.len();
    if ready > 0 {
        let s = if ready == 1 { "" } else { "s" };
        return Ok(format!("{ready} ready endpoint{s}"));
    }
    if let Some(idle) = scaled_to_zero(selector, ns, snapshot) {
        return Ok(format!("no endpoints wanted: selects {idle}"));
    }
    let wanted = selector
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    if !endpoints.not_ready.is_empty() {
        let names: Vec<&str> = endpoints
            .not_ready
            .iter()
            .take(NAMES_SHOWN)
            .map(String::as_str)
            .collect();
        let more = endpoints.not_ready.len() - names.len();
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        return Err(format!(
            "no ready endpoints for selector {wanted}: {} not ready ({}{more})",
            endpoints.not_ready.len(),
            names.join(", ")
        ));
    }
    Err(if endpoints.sliced {
        format!("selector {wanted} matches no pods with an address (the EndpointSlices are empty)")
    } else {
        format!("no EndpointSlice for selector {wanted} yet")
    })
}

/// The workloads the selector picks, when every one seen is scaled to zero on purpose
/// (`Deployment/web, scaled to 0 replicas`). Controller-owned ones (a Deployment's old
/// ReplicaSets, scaled to zero by every rollout) speak through their owner.
fn scaled_to_zero(
    selector: &BTreeMap<String, String>,
    ns: Option<&str>,
    snapshot: &Snapshot,
) -> Option<String> {
    let mut idle = Vec::new();
    // Only workloads whose template carries the selector's first pair can match it.
    let first = selector.iter().next();
    for (group, kind) in WORKLOAD_KINDS {
        let workloads: Box<dyn Iterator<Item = Value>> = match (ns, first) {
            (Some(ns), Some((k, v))) => {
                Box::new(snapshot.with_template_label((group, kind), ns, (k, v)))
            }
            _ => Box::new(snapshot.list_raw(group, kind, ns)),
        };
        for w in workloads {
            let w = &w;
            let owned = w
                .at("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r.get("controller") == Some(&Value::Bool(true)))
                });
            if owned
                || w.at("/metadata/deletionTimestamp").is_some()
                || !selects(
                    selector.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                    w.at("/spec/template/metadata/labels"),
                )
            {
                continue;
            }
            // A missing replicas is the API server's default of 1.
            if w.at("/spec/replicas").and_then(Value::as_i64).unwrap_or(1) != 0 {
                return None;
            }
            let wname = w
                .at("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            idle.push(format!("{kind}/{wname}"));
        }
    }
    (!idle.is_empty()).then(|| format!("{}, scaled to 0 replicas", idle.join(", ")))
}

/// Whether a pod template's `labels` (as the API sent them) carry every selector pair; read
/// in place, as this runs for every workload of the namespace after every change.
pub(crate) fn selects<'a>(
    mut selector: impl Iterator<Item = (&'a str, &'a str)>,
    labels: Option<&Value>,
) -> bool {
    labels
        .and_then(Value::as_object)
        .is_some_and(|l| selector.all(|(k, v)| l.get(k).and_then(Value::as_str) == Some(v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{self, merged};
    use crate::vocab::verdict::Reason;
    use serde_json::json;

    fn service(spec: &Value, status: &Value) -> Value {
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

    /// An EndpointSlice of Service `web` as the endpointslice controller writes it, with
    /// (pod, address, ready) endpoints; none gives the controller's empty placeholder.
    fn slice(suffix: &str, family: &str, endpoints: &[(&str, &str, bool)]) -> Value {
        let name = format!("web-{suffix}");
        let eps: Vec<Value> = endpoints
            .iter()
            .map(|(pod, address, ready)| {
                json!({"addresses": [address],
                    "conditions": {"ready": ready, "serving": ready, "terminating": false},
                    "nodeName": "node-1", "zone": "eu-west-1a",
                    "targetRef": {"kind": "Pod", "namespace": "shop", "name": pod, "uid": fixtures::uid(pod)}})
            })
            .collect();
        let mut s = json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": "shop", "uid": fixtures::uid(&name),
                "resourceVersion": "53010", "generateName": "web-", "generation": 1,
                "creationTimestamp": "2025-03-04T10:15:01Z",
                "labels": {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                    "kubernetes.io/service-name": "web"},
                "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": "2025-03-04T10:15:05Z"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "web",
                    "uid": "c0ffee00-1111-4222-8333-444455556666", "controller": true, "blockOwnerDeletion": true}]},
            "addressType": family,
            "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]
        });
        // The API server leaves out an empty list (the placeholder has `endpoints: null`).
        if !eps.is_empty() {
            s["endpoints"] = json!(eps);
        }
        s
    }

    fn web_deployment(replicas: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "d0d0d0d0-0000-4000-8000-000000000001",
                "resourceVersion": "52000", "generation": 2, "creationTimestamp": "2025-03-01T09:00:00Z",
                "annotations": {"deployment.kubernetes.io/revision": "4"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                "template": fixtures::pod_template(&json!({"app": "web"})),
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
            "status": {"observedGeneration": 2}})
    }

    #[track_caller]
    fn case(objects: &[Value], expected: (Option<Reason>, &str)) {
        let snap = fixtures::snapshot(objects);
        let got = assess(&objects[0], &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
        assert_eq!(
            matches!(got, Assessment::Succeeded { .. }),
            expected.0.is_none()
        );
    }

    #[test]
    fn skip_endpoint_validation_needs_no_endpoints_but_a_load_balancer_still_needs_its_address() {
        let skipping = |spec: Value, status: Value, key: &str, value: &str| {
            merged(
                service(&spec, &status),
                json!({"metadata": {"annotations": {key: value}}}),
            )
        };
        case(
            &[skipping(
                json!({}),
                json!({}),
                SKIP_ENDPOINTS_ANNOTATIONS[1],
                "true",
            )],
            (None, "endpoints not checked (skip-endpoint-validation)"),
        );
        case(
            &[skipping(
                json!({}),
                json!({}),
                SKIP_ENDPOINTS_ANNOTATIONS[0],
                "false",
            )],
            (
                Some(Reason::NotReady),
                "no EndpointSlice for selector app=web yet",
            ),
        );
        case(
            &[skipping(
                json!({"type": "LoadBalancer"}),
                json!({}),
                SKIP_ENDPOINTS_ANNOTATIONS[0],
                "true",
            )],
            (
                Some(Reason::NotReady),
                "endpoints not checked (skip-endpoint-validation); waiting for a load balancer address",
            ),
        );
    }

    #[test]
    fn a_selector_needs_ready_endpoints_in_its_slices() {
        let svc = || service(&json!({}), &json!({}));
        case(
            &[svc()],
            (
                Some(Reason::NotReady),
                "no EndpointSlice for selector app=web yet",
            ),
        );
        case(
            &[svc(), slice("x8k2d", "IPv4", &[])],
            (
                Some(Reason::NotReady),
                "selector app=web matches no pods with an address (the EndpointSlices are empty)",
            ),
        );
        case(
            &[
                svc(),
                slice(
                    "x8k2d",
                    "IPv4",
                    &[
                        ("web-7d4b9c-a", "10.244.1.17", false),
                        ("web-7d4b9c-b", "10.244.2.9", false),
                        ("web-7d4b9c-c", "10.244.3.4", false),
                        ("web-7d4b9c-d", "10.244.3.5", false),
                    ],
                ),
            ],
            (
                Some(Reason::NotReady),
                "no ready endpoints for selector app=web: 4 not ready (web-7d4b9c-a, web-7d4b9c-b, web-7d4b9c-c and 1 more)",
            ),
        );
        case(
            &[
                svc(),
                slice(
                    "x8k2d",
                    "IPv4",
                    &[
                        ("web-7d4b9c-a", "10.244.1.17", true),
                        ("web-7d4b9c-b", "10.244.2.9", false),
                    ],
                ),
            ],
            (None, "1 ready endpoint"),
        );
        // dual-stack: one pod in each family's slice is one endpoint
        case(
            &[
                svc(),
                slice(
                    "x8k2d",
                    "IPv4",
                    &[
                        ("web-7d4b9c-a", "10.244.1.17", true),
                        ("web-7d4b9c-b", "10.244.2.9", true),
                    ],
                ),
                slice(
                    "q7m4n",
                    "IPv6",
                    &[
                        ("web-7d4b9c-a", "fd00:10:244:1::11", true),
                        ("web-7d4b9c-b", "fd00:10:244:2::9", true),
                    ],
                ),
            ],
            (None, "2 ready endpoints"),
        );
    }

    #[test]
    fn ready_pods_are_not_enough_without_endpoints() {
        // the cluster routes through EndpointSlices: a ready pod the controller has not
        // published yet (or that the selector does not really match) is not a backend
        case(
            &[
                service(&json!({}), &json!({})),
                fixtures::rs_pod(
                    "web-7d4b9c-x2x9q",
                    "rs-uid",
                    "7d4b9c",
                    &fixtures::ready_status(),
                ),
            ],
            (
                Some(Reason::NotReady),
                "no EndpointSlice for selector app=web yet",
            ),
        );
    }

    #[test]
    fn no_selector_external_name_and_idle_workloads_need_nothing() {
        case(
            &[service(&json!({"selector": null}), &json!({}))],
            (None, "no selector (endpoints managed elsewhere)"),
        );
        case(
            &[service(
                &json!({"type": "ExternalName", "externalName": "db.example.com", "selector": null,
                "clusterIP": null, "clusterIPs": null}),
                &json!({}),
            )],
            (None, "ExternalName service for db.example.com"),
        );
        case(
            &[
                service(&json!({}), &json!({})),
                web_deployment(0),
                slice("x8k2d", "IPv4", &[]),
            ],
            (
                None,
                "no endpoints wanted: selects Deployment/web, scaled to 0 replicas",
            ),
        );
    }

    #[test]
    fn an_old_replica_set_scaled_to_zero_does_not_excuse_a_live_deployment() {
        // every rollout scales the old ReplicaSet to 0; its Deployment still wants pods
        let old_rs = fixtures::replica_set(
            "5f6a7b",
            "3",
            "d0d0d0d0-0000-4000-8000-000000000001",
            0,
            0,
            "2025-03-01T09:00:00Z",
        );
        case(
            &[
                service(&json!({}), &json!({})),
                old_rs.clone(),
                slice("x8k2d", "IPv4", &[("web-7d4b9c-a", "10.244.1.17", false)]),
            ],
            (
                Some(Reason::NotReady),
                "no ready endpoints for selector app=web: 1 not ready (web-7d4b9c-a)",
            ),
        );
        case(
            &[
                service(&json!({}), &json!({})),
                web_deployment(3),
                old_rs,
                slice("x8k2d", "IPv4", &[]),
            ],
            (
                Some(Reason::NotReady),
                "selector app=web matches no pods with an address (the EndpointSlices are empty)",
            ),
        );
    }

    #[test]
    fn a_load_balancer_needs_an_address() {
        let lb = json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": true, "externalTrafficPolicy": "Cluster"});
        let ready = || slice("x8k2d", "IPv4", &[("web-7d4b9c-a", "10.244.1.17", true)]);
        case(
            &[service(&lb, &json!({})), ready()],
            (
                Some(Reason::NotReady),
                "1 ready endpoint; waiting for a load balancer address",
            ),
        );
        case(
            &[
                service(
                    &lb,
                    &json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.10", "ipMode": "VIP"}]}}),
                ),
                ready(),
            ],
            (None, "1 ready endpoint, load balancer address 203.0.113.10"),
        );
    }
}
