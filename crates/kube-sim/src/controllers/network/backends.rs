//! What both endpoints controllers read from a Service and its pods: the selected pods,
//! which of them belong in endpoints, service ports resolved against each pod
//! (`podutil.FindPort`), and the last-change trigger time (`TriggerTimeTracker`).

use crate::controllers::workloads::objects::{labels, name, namespace, parse_time, str_at};
use crate::controllers::workloads::pods::{is_terminal, ready_transition};
use crate::controllers::workloads::selectors::map_selector_matches;
use crate::engine::World;
use crate::store::{Change, ObjectKey};
use jiff::Timestamp;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

pub(crate) fn service_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new("", "services", namespace, name)
}

/// The Service's selector, when the endpoints controllers manage it.
pub(crate) fn selector(service: &Value) -> Option<&Map<String, Value>> {
    if str_at(service, "/spec/type") == "ExternalName" {
        return None;
    }
    service
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty())
}

/// Services to resync for a change: the Service itself, or those selecting a changed pod.
pub(crate) fn services_for(change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
    let key = &change.key;
    if key.in_collection("", "services", None) {
        return vec![key.clone()];
    }
    if !key.in_collection("", "pods", None) {
        return Vec::new();
    }
    // Candidates come from the store's selector index (each Service under one of its
    // selector's pairs), so a pod change does not scan every Service of the namespace.
    let mut keys = BTreeSet::new();
    for pod in std::iter::once(&change.object).chain(change.previous.as_ref()) {
        let pod_labels = labels(pod);
        for svc in world.list_selecting("", "services", &key.namespace, &pod_labels) {
            if selector(&svc).is_some_and(|sel| map_selector_matches(sel, &pod_labels)) {
                keys.insert(service_key(namespace(&svc), name(&svc)));
            }
        }
    }
    keys.into_iter().collect()
}

/// Pods the Service selects, by name.
pub(crate) fn selected_pods(world: &World<'_>, service: &Value) -> Vec<Arc<Value>> {
    let Some(sel) = selector(service) else {
        return Vec::new();
    };
    world
        .list_labeled("", "pods", namespace(service), sel)
        .into_iter()
        .filter(|p| map_selector_matches(sel, &labels(p)))
        .collect()
}

/// `ShouldPodBeInEndpoints`: not finished, has an IP, and (unless terminating pods are
/// wanted) not being deleted.
pub(crate) fn in_endpoints(pod: &Value, include_terminating: bool) -> bool {
    let has_ip = !str_at(pod, "/status/podIP").is_empty()
        || pod
            .pointer("/status/podIPs")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
    let deleting = pod
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    !is_terminal(pod) && has_ip && (include_terminating || !deleting)
}

pub(crate) fn pod_ip(pod: &Value) -> &str {
    match str_at(pod, "/status/podIP") {
        "" => str_at(pod, "/status/podIPs/0/ip"),
        ip => ip,
    }
}

/// A service port resolved for one pod: (name, number, protocol, appProtocol).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[expect(
    clippy::struct_field_names,
    reason = "the fields mirror the Kubernetes EndpointPort's: name, port, protocol, appProtocol"
)]
pub(crate) struct Port {
    pub name: String,
    pub port: i64,
    pub protocol: String,
    pub app_protocol: Option<String>,
}

/// The Service's ports as this pod serves them; ports a pod does not name are left out.
pub(crate) fn resolve_ports(service: &Value, pod: &Value) -> Vec<Port> {
    let ports = service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ports
        .iter()
        .filter_map(|sp| {
            let protocol = match str_at(sp, "/protocol") {
                "" => "TCP",
                p => p,
            };
            let number = match sp.get("targetPort") {
                Some(Value::Number(n)) => n.as_i64(),
                Some(Value::String(named)) => find_named(pod, named, protocol),
                _ => sp.get("port").and_then(Value::as_i64),
            }?;
            Some(Port {
                name: str_at(sp, "/name").to_owned(),
                port: number,
                protocol: protocol.to_owned(),
                app_protocol: sp
                    .get("appProtocol")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
}

fn find_named(pod: &Value, port_name: &str, protocol: &str) -> Option<i64> {
    let containers = ["containers", "initContainers"].iter().flat_map(|k| {
        pod.pointer(&format!("/spec/{k}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    });
    containers
        .flat_map(|c| {
            c.get("ports")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .find(|p| {
            let container_protocol = match str_at(p, "/protocol") {
                "" => "TCP",
                other => other,
            };
            str_at(p, "/name") == port_name && container_protocol == protocol
        })
        .and_then(|p| p.get("containerPort").and_then(Value::as_i64))
}

impl Port {
    /// `discovery/v1` EndpointPort.
    pub(crate) fn slice_json(&self) -> Value {
        let mut p = json!({"name": self.name, "port": self.port, "protocol": self.protocol});
        if let Some(a) = &self.app_protocol {
            p["appProtocol"] = json!(a);
        }
        p
    }

    /// `core/v1` EndpointPort (an empty name is omitted).
    pub(crate) fn core_json(&self) -> Value {
        let mut p = Map::new();
        if !self.name.is_empty() {
            p.insert("name".into(), json!(self.name));
        }
        p.insert("port".into(), json!(self.port));
        p.insert("protocol".into(), json!(self.protocol));
        if let Some(a) = &self.app_protocol {
            p.insert("appProtocol".into(), json!(a));
        }
        Value::Object(p)
    }
}

/// `endpoints.kubernetes.io/last-change-trigger-time`: the earliest change (a pod's Ready
/// transition, or the Service's creation) not yet reflected, per Service.
#[derive(Debug, Default)]
pub(crate) struct TriggerTracker {
    states: HashMap<ObjectKey, (Option<Timestamp>, HashMap<String, Timestamp>)>,
}

impl TriggerTracker {
    pub(crate) fn compute(
        &mut self,
        key: &ObjectKey,
        service: &Value,
        pods: &[Arc<Value>],
    ) -> Option<Timestamp> {
        let previous = self.states.get(key);
        let known = previous.is_some();
        let mut earliest: Option<Timestamp> = None;
        let mut times = HashMap::new();
        for pod in pods {
            if let Some(t) = ready_transition(pod) {
                if previous
                    .and_then(|(_, p)| p.get(name(pod)))
                    .is_none_or(|old| t > *old)
                {
                    earliest = Some(earliest.map_or(t, |e| e.min(t)));
                }
                times.insert(name(pod).to_owned(), t);
            }
        }
        let created = parse_time(str_at(service, "/metadata/creationTimestamp"));
        if let Some(c) = created
            && previous.and_then(|(s, _)| *s).is_none_or(|old| c > old)
        {
            earliest = Some(earliest.map_or(c, |e| e.min(c)));
        }
        self.states.insert(key.clone(), (created, times));
        earliest.filter(|_| known)
    }

    pub(crate) fn forget(&mut self, key: &ObjectKey) {
        self.states.remove(key);
    }
}
