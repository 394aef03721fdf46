//! What a Service's EndpointSlices (discovery.k8s.io/v1, labelled with the Service's name)
//! say about its backends: ready endpoints, endpoints not ready yet, or none at all.

use crate::pointer::Pointer;
use crate::rules::head::{Lenient, LenientList};
use crate::rules::snapshot::Snapshot;
use serde_json::Value;
use std::collections::BTreeSet;

pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// The endpoints of one Service across its slices, each counted once (a dual-stack
/// Service lists a pod in an IPv4 and an IPv6 slice).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoints {
    /// Whether any slice of the Service was seen (the controller publishes an empty
    /// placeholder slice when the selector matches nothing).
    pub sliced: bool,
    /// Endpoint names (the pod's, else the first address) that are ready.
    pub ready: BTreeSet<String>,
    pub not_ready: BTreeSet<String>,
}

/// What is read of an EndpointSlice: its endpoints' addresses, readiness and target, each
/// as leniently as a `Value` would be read (an endpoint that is not an object, a
/// `conditions` or `targetRef` that is not one, read as absent). The rest of the slice
/// (metadata, ports) is skipped unparsed: a Service is asked again at every change of its
/// slices, and building each slice as a `Value` was most of what that cost.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Slice {
    endpoints: LenientList<Endpoint>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Endpoint {
    addresses: Option<Value>,
    conditions: Lenient<Conditions>,
    target_ref: Lenient<TargetRef>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Conditions {
    ready: Option<Value>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct TargetRef {
    name: Option<Value>,
}

impl Endpoints {
    pub fn of(service: &str, namespace: Option<&str>, snapshot: &Snapshot) -> Self {
        let mut out = Endpoints::default();
        for slice in snapshot.slices_of::<Slice>(service, namespace) {
            out.sliced = true;
            for e in slice.endpoints.0 {
                let Some(id) = identity(&e) else { continue };
                // The API says a missing `ready` is to be read as ready.
                let ready = e.conditions.0.and_then(|c| c.ready);
                if ready == Some(Value::Bool(false)) {
                    out.not_ready.insert(id);
                } else {
                    out.ready.insert(id);
                }
            }
        }
        // A pod ready in one family's slice and not (yet) in the other's is ready.
        let ready = out.ready.clone();
        out.not_ready.retain(|id| !ready.contains(id));
        out
    }
}

/// The endpoint's pod, else its first address.
fn identity(endpoint: &Endpoint) -> Option<String> {
    let target = endpoint.target_ref.0.as_ref().and_then(|t| t.name.as_ref());
    let first_address = endpoint.addresses.as_ref().and_then(|a| a.at("/0"));
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    text(target).or_else(|| text(first_address))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures;
    use serde_json::json;

    fn slice(name: &str, family: &str, endpoints: &Value) -> Value {
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": "shop", "uid": fixtures::uid(name),
                "labels": {SERVICE_NAME_LABEL: "web"}},
            "addressType": family, "endpoints": endpoints,
            "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]})
    }

    fn endpoint(pod: &str, address: &str, ready: &Value) -> Value {
        json!({"addresses": [address], "conditions": {"ready": ready, "serving": ready},
            "nodeName": "node-1",
            "targetRef": {"kind": "Pod", "namespace": "shop", "name": pod, "uid": fixtures::uid(pod)}})
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn endpoints_are_counted_once_across_families_by_pod_else_address() {
        let v4 = slice(
            "web-4",
            "IPv4",
            &json!([
                endpoint("web-1", "10.0.0.1", &json!(true)),
                endpoint("web-2", "10.0.0.2", &json!(false)),
                // A missing `ready` reads as ready; so does one that is not a boolean.
                {"addresses": ["10.0.0.3"], "targetRef": {"kind": "Pod", "name": "web-3"}},
                {"addresses": ["10.0.0.4"], "conditions": {"ready": "false"},
                    "targetRef": {"name": "web-4"}},
                // No pod named: the first address is its name.
                {"addresses": ["10.0.0.5", "10.0.0.55"], "conditions": {"ready": false}},
            ]),
        );
        // Ready in the other family's slice: ready.
        let v6 = slice(
            "web-6",
            "IPv6",
            &json!([
                endpoint("web-2", "fd00::2", &json!(true)),
                endpoint("web-1", "fd00::1", &json!(true)),
            ]),
        );
        let snap = fixtures::snapshot(&[v4, v6]);
        let seen = Endpoints::of("web", Some("shop"), &snap);
        assert!(seen.sliced);
        assert_eq!(seen.ready, set(&["web-1", "web-2", "web-3", "web-4"]));
        assert_eq!(seen.not_ready, set(&["10.0.0.5"]));
        assert_eq!(
            Endpoints::of("web", Some("blog"), &snap),
            Endpoints::default()
        );
    }

    #[test]
    fn odd_endpoints_are_skipped_or_named_by_what_reads_never_an_error() {
        let odd = slice(
            "web-odd",
            "IPv4",
            &json!([
                7, null, ["x"],
                // A target whose name is not a string: named by its address.
                {"addresses": ["10.0.0.7"], "targetRef": {"name": 7}, "conditions": ["ready"]},
                {"addresses": {"0": "10.0.0.8"}, "conditions": {"ready": false}},
                {"addresses": [9], "targetRef": "web-9"},
                {"conditions": {"ready": true}},
            ]),
        );
        // A slice whose endpoints are not a list still says the Service is sliced.
        let empty = slice("web-empty", "IPv4", &json!({"endpoints": "none"}));
        let snap = fixtures::snapshot(&[odd, empty]);
        let seen = Endpoints::of("web", None, &snap);
        assert!(seen.sliced);
        assert_eq!(seen.ready, set(&["10.0.0.7"]));
        assert_eq!(seen.not_ready, set(&["10.0.0.8"]));
    }
}
