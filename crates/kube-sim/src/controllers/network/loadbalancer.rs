//! The `service-lb-controller`, behaving like a kind cluster with cloud-provider-kind: a
//! LoadBalancer Service gets the cleanup finalizer and, after the balancer takes a second
//! to come up, an ingress IP `172.18.255.N` (lowest free N) with ipMode VIP.

use crate::controllers::workloads::objects::{is_deleting, name, namespace, str_at, uid};
use crate::engine::{Controller, World};
use crate::events::EventSpec;
use crate::store::{Change, ObjectKey};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

const FINALIZER: &str = "service.kubernetes.io/load-balancer-cleanup";
/// How long the simulated cloud takes to provision a balancer.
const PROVISION_TIME: Duration = Duration::from_secs(1);

/// Provisions load balancers for LoadBalancer Services.
#[derive(Debug, Default)]
pub struct LoadBalancerController {
    /// When provisioning of each Service (by uid) began, as time since the cluster started.
    started: HashMap<String, Duration>,
}

fn event(world: &mut World<'_>, svc: &Value, reason: &str, message: &str) {
    world.event(EventSpec {
        involved: svc,
        field_path: None,
        type_: "Normal",
        reason,
        message: message.into(),
        component: Some("service-controller"),
        host: None,
    });
}

fn has_finalizer(svc: &Value) -> bool {
    svc.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f == FINALIZER))
}

fn wants_balancer(svc: &Value) -> bool {
    str_at(svc, "/spec/type") == "LoadBalancer"
        && svc
            .pointer("/spec/loadBalancerClass")
            .is_none_or(Value::is_null)
        && !is_deleting(svc)
}

fn ingress_ip(svc: &Value) -> &str {
    str_at(svc, "/status/loadBalancer/ingress/0/ip")
}

impl LoadBalancerController {
    /// Take the balancer down: clear the ingress and drop the finalizer.
    fn remove(&mut self, world: &mut World<'_>, key: &ObjectKey, svc: &Value) {
        self.started.remove(uid(svc));
        if !has_finalizer(svc) {
            return;
        }
        event(world, svc, "DeletingLoadBalancer", "Deleting load balancer");
        let mut next = svc.clone();
        next["status"]["loadBalancer"] = json!({});
        let Ok(updated) = world.update_status(key, next) else {
            return;
        };
        let mut next = (*updated).clone();
        if let Some(f) = next
            .pointer_mut("/metadata/finalizers")
            .and_then(Value::as_array_mut)
        {
            f.retain(|f| f != FINALIZER);
        }
        if world.update(key, next).is_ok() {
            event(world, svc, "DeletedLoadBalancer", "Deleted load balancer");
        }
    }

    fn ensure(&mut self, world: &mut World<'_>, key: &ObjectKey, svc: &Value) {
        if !ingress_ip(svc).is_empty() && has_finalizer(svc) {
            return;
        }
        let now = world.elapsed();
        let Some(&since) = self.started.get(uid(svc)) else {
            self.started.insert(uid(svc).to_owned(), now);
            event(world, svc, "EnsuringLoadBalancer", "Ensuring load balancer");
            let mut next = svc.clone();
            let mut finalizers = next
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if !finalizers.iter().any(|f| f == FINALIZER) {
                finalizers.push(json!(FINALIZER));
                next["metadata"]["finalizers"] = json!(finalizers);
                let _ = world.update(key, next);
            }
            world.requeue_after(key.clone(), PROVISION_TIME);
            return;
        };
        if now < since + PROVISION_TIME {
            world.requeue_after(key.clone(), (since + PROVISION_TIME).saturating_sub(now));
            return;
        }
        let used: Vec<String> = world
            .list("", "services", None)
            .iter()
            .map(|s| ingress_ip(s).to_owned())
            .collect();
        let Some(ip) = (1..=254)
            .map(|n| format!("172.18.255.{n}"))
            .find(|ip| !used.contains(ip))
        else {
            return;
        };
        let mut next = svc.clone();
        next["status"]["loadBalancer"] = json!({"ingress": [{"ip": ip, "ipMode": "VIP"}]});
        if world.update_status(key, next).is_ok() {
            event(world, svc, "EnsuredLoadBalancer", "Ensured load balancer");
        }
    }
}

impl Controller for LoadBalancerController {
    fn name(&self) -> &'static str {
        "service-lb-controller"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        let relevant = |o: &Value| str_at(o, "/spec/type") == "LoadBalancer" || has_finalizer(o);
        let touches = relevant(&change.object) || change.previous.as_deref().is_some_and(relevant);
        if change.key.in_collection("", "services", None) && touches {
            vec![change.key.clone()]
        } else {
            Vec::new()
        }
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("", "services", None)
            .iter()
            .filter(|s| str_at(s, "/spec/type") == "LoadBalancer" || has_finalizer(s))
            .map(|s| ObjectKey::new("", "services", namespace(s), name(s)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(svc) = world.get(key) else {
            return;
        };
        if wants_balancer(&svc) {
            self.ensure(world, key, &svc);
        } else {
            self.remove(world, key, &svc);
        }
    }
}
