//! The `endpointslice-controller`: for each Service with a selector, EndpointSlices named
//! `<service>-<5 chars>` holding the selected pods that have an IP, with their readiness
//! (ready, serving, terminating), grouped by the ports the pods resolve; a placeholder
//! slice without endpoints when there are none.

use super::backends::{
    Port, TriggerTracker, in_endpoints, pod_ip, resolve_ports, selected_pods, selector,
    services_for,
};
use crate::controllers::workloads::objects::{
    NameGenerator, controller_ref, is_deleting, labels, name, namespace, str_at, uid,
};
use crate::controllers::workloads::pods::is_ready;
use crate::controllers::workloads::statefulset::identity::sorted;
use crate::engine::{Controller, World};
use crate::store::{Change, DeleteOptions, ObjectKey};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const SERVICE_NAME: &str = "kubernetes.io/service-name";
const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
const CONTROLLER: &str = "endpointslice-controller.k8s.io";
const TRIGGER: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// Keeps EndpointSlices of selector Services.
#[derive(Debug)]
pub struct EndpointSliceController {
    names: NameGenerator,
    triggers: TriggerTracker,
}

impl Default for EndpointSliceController {
    fn default() -> Self {
        EndpointSliceController {
            names: NameGenerator::new("endpointslice-controller"),
            triggers: TriggerTracker::default(),
        }
    }
}

fn slice_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new("discovery.k8s.io", "endpointslices", ns, name)
}

/// `podToEndpoint`.
fn endpoint(service: &Value, pod: &Value, node: Option<&Value>) -> Value {
    let serving = is_ready(pod);
    let terminating = is_deleting(pod);
    let publish = service
        .pointer("/spec/publishNotReadyAddresses")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut ep = Map::new();
    ep.insert("addresses".into(), json!([pod_ip(pod)]));
    ep.insert("conditions".into(), json!({"ready": publish || (serving && !terminating), "serving": serving, "terminating": terminating}));
    let hostname = str_at(pod, "/spec/hostname");
    if !hostname.is_empty() && str_at(pod, "/spec/subdomain") == name(service) {
        ep.insert("hostname".into(), json!(hostname));
    }
    ep.insert(
        "targetRef".into(),
        json!({"kind": "Pod", "namespace": namespace(pod), "name": name(pod), "uid": uid(pod)}),
    );
    let node_name = str_at(pod, "/spec/nodeName");
    if !node_name.is_empty() {
        ep.insert("nodeName".into(), json!(node_name));
    }
    if let Some(zone) = node
        .map(|n| str_at(n, "/metadata/labels/topology.kubernetes.io~1zone"))
        .filter(|z| !z.is_empty())
    {
        ep.insert("zone".into(), json!(zone));
    }
    Value::Object(ep)
}

fn slice_labels(service: &Value) -> Map<String, Value> {
    let mut l = labels(service);
    l.remove(SERVICE_NAME);
    l.remove(MANAGED_BY);
    if str_at(service, "/spec/clusterIP") == "None" {
        l.insert("service.kubernetes.io/headless".into(), json!(""));
    }
    l.insert(SERVICE_NAME.into(), json!(name(service)));
    l.insert(MANAGED_BY.into(), json!(CONTROLLER));
    sorted(l)
}

impl EndpointSliceController {
    fn sync(&mut self, world: &mut World<'_>, key: &ObjectKey) {
        // The Service's slices through the store's label index (by name, as a list of
        // the namespace would give them), not a walk over every slice of the namespace.
        let existing: Vec<Arc<Value>> = world
            .store
            .list_labeled(
                "discovery.k8s.io",
                "endpointslices",
                &key.namespace,
                SERVICE_NAME,
                &key.name,
            )
            .into_iter()
            .filter(|s| {
                str_at(
                    s,
                    "/metadata/labels/endpointslice.kubernetes.io~1managed-by",
                ) == CONTROLLER
            })
            .collect();
        let Some(service) = world.get(key) else {
            // Stands in for the garbage collector, which removes the slices of a deleted Service.
            self.triggers.forget(key);
            for slice in &existing {
                let _ = world.delete(
                    &slice_key(namespace(slice), name(slice)),
                    DeleteOptions::default(),
                );
            }
            return;
        };
        if is_deleting(&service) || selector(&service).is_none() {
            return;
        }
        let pods = selected_pods(world, &service);
        let trigger = self.triggers.compute(key, &service, &pods);
        // Endpoints grouped by the ports their pods resolve.
        let mut groups: BTreeMap<Vec<Port>, Vec<Value>> = BTreeMap::new();
        let mut sorted_pods: Vec<_> = pods.iter().filter(|p| in_endpoints(p, true)).collect();
        sorted_pods.sort_by(|a, b| name(a).cmp(name(b)));
        for pod in sorted_pods {
            let node = match str_at(pod, "/spec/nodeName") {
                "" => None,
                node => world.get(&ObjectKey::new("", "nodes", "", node)),
            };
            groups
                .entry(resolve_ports(&service, pod))
                .or_default()
                .push(endpoint(&service, pod, node.as_deref()));
        }
        let labels = slice_labels(&service);
        let mut unused: Vec<&Arc<Value>> = existing.iter().collect();
        let mut wanted: Vec<(Value, Value)> = groups
            .into_iter()
            .map(|(ports, eps)| {
                (
                    json!(ports.iter().map(Port::slice_json).collect::<Vec<_>>()),
                    json!(eps),
                )
            })
            .collect();
        let placeholder = wanted.is_empty();
        if placeholder {
            wanted.push((Value::Null, Value::Null));
        }
        for (ports, endpoints) in wanted {
            let same_ports =
                |s: &&Arc<Value>| s.get("ports").cloned().unwrap_or(Value::Null) == ports;
            if let Some(i) = unused.iter().position(same_ports) {
                let slice = unused.remove(i);
                let mut next = (**slice).clone();
                next["endpoints"] = endpoints;
                next["metadata"]["labels"] = Value::Object(labels.clone());
                if next != **slice {
                    if let Some(t) = trigger {
                        next["metadata"]["annotations"][TRIGGER] =
                            json!(crate::controllers::workloads::objects::format_time(t));
                    }
                    let _ = world.update(&slice_key(namespace(slice), name(slice)), next);
                }
            } else {
                let slice_name = self.names.generate(&format!("{}-", name(&service)));
                let mut metadata = json!({"name": slice_name, "generateName": format!("{}-", name(&service)),
                    "namespace": namespace(&service), "labels": labels, "ownerReferences": [controller_ref(&service)]});
                if let Some(t) = trigger {
                    metadata["annotations"] =
                        json!({TRIGGER: crate::controllers::workloads::objects::format_time(t)});
                }
                let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": metadata,
                    "addressType": "IPv4", "endpoints": endpoints, "ports": ports});
                let _ = world.create(&slice_key(namespace(&service), &slice_name), slice);
            }
        }
        for slice in unused {
            let _ = world.delete(
                &slice_key(namespace(slice), name(slice)),
                DeleteOptions::default(),
            );
        }
    }
}

impl Controller for EndpointSliceController {
    fn name(&self) -> &'static str {
        "endpointslice-controller"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        if change
            .key
            .in_collection("discovery.k8s.io", "endpointslices", None)
        {
            let service = str_at(
                &change.object,
                "/metadata/labels/kubernetes.io~1service-name",
            );
            let managed = str_at(
                &change.object,
                "/metadata/labels/endpointslice.kubernetes.io~1managed-by",
            ) == CONTROLLER;
            return if managed && !service.is_empty() {
                vec![ObjectKey::new(
                    "",
                    "services",
                    &change.key.namespace,
                    service,
                )]
            } else {
                Vec::new()
            };
        }
        services_for(change, world)
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("", "services", None)
            .iter()
            .map(|s| ObjectKey::new("", "services", namespace(s), name(s)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        self.sync(world, key);
    }
}
