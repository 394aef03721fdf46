//! The `endpoints-controller`: the legacy core/v1 Endpoints object of each selector
//! Service, ready pods under `addresses`, unready ones under `notReadyAddresses`,
//! terminating pods left out, subsets grouped by resolved ports.

use super::backends::{
    Port, TriggerTracker, in_endpoints, pod_ip, resolve_ports, selected_pods, selector,
    services_for,
};
use crate::controllers::workloads::objects::{
    format_time, is_deleting, labels, name, namespace, str_at, uid,
};
use crate::controllers::workloads::pods::is_ready;
use crate::controllers::workloads::statefulset::identity::sorted;
use crate::engine::{Controller, World};
use crate::store::{Change, DeleteOptions, ObjectKey};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const MANAGED_BY: &str = "endpoints.kubernetes.io/managed-by";
const TRIGGER: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// Keeps the Endpoints of selector Services.
#[derive(Debug, Default)]
pub struct EndpointsController {
    triggers: TriggerTracker,
}

fn endpoints_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new("", "endpoints", ns, name)
}

fn address(service: &Value, pod: &Value) -> Value {
    let mut a = Map::new();
    a.insert("ip".into(), json!(pod_ip(pod)));
    let hostname = str_at(pod, "/spec/hostname");
    if !hostname.is_empty() && str_at(pod, "/spec/subdomain") == name(service) {
        a.insert("hostname".into(), json!(hostname));
    }
    let node = str_at(pod, "/spec/nodeName");
    if !node.is_empty() {
        a.insert("nodeName".into(), json!(node));
    }
    a.insert(
        "targetRef".into(),
        json!({"kind": "Pod", "namespace": namespace(pod), "name": name(pod), "uid": uid(pod)}),
    );
    Value::Object(a)
}

/// The subsets for a Service's pods (`RepackSubsets`: grouped by ports, sorted by IP).
fn subsets(service: &Value, pods: &[std::sync::Arc<Value>]) -> Vec<Value> {
    let publish = service
        .pointer("/spec/publishNotReadyAddresses")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut groups: BTreeMap<Vec<Port>, (Vec<Value>, Vec<Value>)> = BTreeMap::new();
    for pod in pods.iter().filter(|p| in_endpoints(p, publish)) {
        let ports = resolve_ports(service, pod);
        if ports.is_empty()
            && service
                .pointer("/spec/ports")
                .and_then(Value::as_array)
                .is_some_and(|p| !p.is_empty())
        {
            continue;
        }
        let (ready, not_ready) = groups.entry(ports).or_default();
        if publish || is_ready(pod) {
            ready.push(address(service, pod));
        } else {
            not_ready.push(address(service, pod));
        }
    }
    groups
        .into_iter()
        .map(|(ports, (mut ready, mut not_ready))| {
            let by_ip = |a: &Value, b: &Value| str_at(a, "/ip").cmp(str_at(b, "/ip"));
            ready.sort_by(by_ip);
            not_ready.sort_by(by_ip);
            let mut subset = Map::new();
            if !ready.is_empty() {
                subset.insert("addresses".into(), json!(ready));
            }
            if !not_ready.is_empty() {
                subset.insert("notReadyAddresses".into(), json!(not_ready));
            }
            if !ports.is_empty() {
                subset.insert(
                    "ports".into(),
                    json!(ports.iter().map(Port::core_json).collect::<Vec<_>>()),
                );
            }
            Value::Object(subset)
        })
        .collect()
}

impl Controller for EndpointsController {
    fn name(&self) -> &'static str {
        "endpoints-controller"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        if change.key.in_collection("", "endpoints", None) {
            return vec![ObjectKey::new(
                "",
                "services",
                &change.key.namespace,
                &change.key.name,
            )];
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
        let ep_key = endpoints_key(&key.namespace, &key.name);
        let service = world.get(key).filter(|s| !is_deleting(s));
        let Some(service) = service.filter(|s| selector(s).is_some()) else {
            self.triggers.forget(key);
            // The Service is gone: so are its Endpoints (a selector-less Service's are the user's).
            if world.get(key).is_none()
                && world.get(&ep_key).is_some_and(|e| {
                    !str_at(&e, "/metadata/labels/endpoints.kubernetes.io~1managed-by").is_empty()
                })
            {
                let _ = world.delete(&ep_key, DeleteOptions::default());
            }
            return;
        };
        let pods = selected_pods(world, &service);
        let trigger = self.triggers.compute(key, &service, &pods);
        let mut labels = labels(&service);
        if str_at(&service, "/spec/clusterIP") == "None" {
            labels.insert("service.kubernetes.io/headless".into(), json!(""));
        }
        labels.insert(MANAGED_BY.into(), json!("endpoint-controller"));
        let labels = sorted(labels);
        let subsets = subsets(&service, &pods);
        let current = world.get(&ep_key);
        let mut next = current.as_deref().cloned().unwrap_or_else(|| {
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": key.name, "namespace": key.namespace}})
        });
        next["metadata"]["labels"] = Value::Object(labels);
        if let Some(o) = next.as_object_mut() {
            if subsets.is_empty() {
                o.remove("subsets");
            } else {
                o.insert("subsets".into(), json!(subsets));
            }
        }
        if current.as_deref() == Some(&next) {
            return;
        }
        if let Some(t) = trigger {
            next["metadata"]["annotations"][TRIGGER] = json!(format_time(t));
        }
        let _ = match current {
            Some(_) => world.update(&ep_key, next),
            None => world.create(&ep_key, next),
        };
    }
}
