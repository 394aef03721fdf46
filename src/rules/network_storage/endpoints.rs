//! What a Service's EndpointSlices (discovery.k8s.io/v1, labelled with the Service's name)
//! say about its backends: ready endpoints, endpoints not ready yet, or none at all.

use crate::pointer::Pointer;
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

impl Endpoints {
    pub fn of(service: &str, namespace: Option<&str>, snapshot: &Snapshot) -> Self {
        let mut out = Endpoints::default();
        for slice in snapshot.slices_of(service, namespace) {
            out.sliced = true;
            let endpoints = slice.get("endpoints").and_then(Value::as_array);
            for e in endpoints.into_iter().flatten() {
                let Some(id) = identity(e) else { continue };
                // The API says a missing `ready` is to be read as ready.
                if e.at("/conditions/ready") == Some(&Value::Bool(false)) {
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

fn identity(endpoint: &Value) -> Option<String> {
    let target = endpoint
        .at("/targetRef/name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    target.or_else(|| {
        endpoint
            .at("/addresses/0")
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
}
