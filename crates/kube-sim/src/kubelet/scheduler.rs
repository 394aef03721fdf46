//! The default-scheduler: binds each pending pod to the feasible node with the fewest pods
//! (then the first by name), or marks it Unschedulable with the scheduler's own message and
//! a `FailedScheduling` event, retrying when the cluster changes and every five minutes.

use super::claims::{self, Claims, SELECTED_NODE};
use super::fit::{self, NodeInfo, Rejection};
use super::placement::{Placement, terminal};
use super::quantity;
use crate::engine::{Controller, World};
use crate::events::EventSpec;
use crate::store::{Change, ChangeType, ObjectKey};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// Unschedulable pods are retried at least this often (podMaxInUnschedulablePodsDuration).
const RETRY: Duration = Duration::from_secs(300);

const NAME: &str = "default-scheduler";

/// The last failure reported for a pod, so repeats of it are not re-reported early.
#[derive(Debug, Clone)]
struct Failure {
    uid: String,
    message: String,
    retry_at: Instant,
}

/// The scheduler's memory: reported failures, pods waiting for their volumes to bind, and
/// what is placed on each node.
#[derive(Debug, Default)]
pub struct Scheduler {
    failures: HashMap<ObjectKey, Failure>,
    /// Pods whose WaitForFirstConsumer claims were given a node, waiting for them to bind.
    assumed: HashMap<ObjectKey, String>,
    /// Behind a lock only so `keys_for` (which sees every change) keeps its feed drained.
    placement: Mutex<Placement>,
}

fn node_of(pod: &Value) -> Option<&str> {
    pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())
}

fn pending(pod: &Value) -> bool {
    node_of(pod).is_none() && !terminal(pod)
}

fn pending_keys(world: &World<'_>, namespace: Option<&str>) -> Vec<ObjectKey> {
    world
        .list("", "pods", namespace)
        .iter()
        .filter(|p| pending(p))
        .filter_map(|p| world.key_of(p))
        .collect()
}

impl Controller for Scheduler {
    fn name(&self) -> &'static str {
        NAME
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        self.placement
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .catch_up(world.store);
        let key = &change.key;
        if key.in_collection("", "pods", None) {
            // A pod that goes away or finishes frees room for the ones waiting.
            let freed = change.kind == ChangeType::Deleted
                || (terminal(&change.object) && !change.previous.as_deref().is_some_and(terminal));
            let mut keys = if freed {
                pending_keys(world, None)
            } else {
                Vec::new()
            };
            if change.kind != ChangeType::Deleted && pending(&change.object) && !keys.contains(key)
            {
                keys.push(key.clone());
            }
            return keys;
        }
        if key.in_collection("", "nodes", None)
            || key.in_collection("storage.k8s.io", "storageclasses", None)
        {
            return pending_keys(world, None);
        }
        if key.in_collection("", "persistentvolumeclaims", None) {
            let ns = world.list("", "pods", Some(&key.namespace));
            return ns
                .iter()
                .filter(|p| pending(p) && claims::uses(p, key))
                .filter_map(|p| world.key_of(p))
                .collect();
        }
        Vec::new()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        pending_keys(world, None)
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(pod) = world.get(key) else {
            self.forget(key);
            return;
        };
        if !pending(&pod) {
            self.forget(key);
            return;
        }
        if pod["metadata"]
            .get("deletionTimestamp")
            .is_some_and(|d| !d.is_null())
        {
            // The API server deletes a never-scheduled pod at once: no kubelet must confirm.
            let finalizers = pod["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| !f.is_empty());
            if !finalizers {
                world.store.remove_now(key);
            }
            self.forget(key);
            return;
        }
        let scheduler = pod["spec"]["schedulerName"].as_str().unwrap_or(NAME);
        let gated = pod["spec"]["schedulingGates"]
            .as_array()
            .is_some_and(|g| !g.is_empty());
        if scheduler != NAME || gated {
            return;
        }
        if let Some(node) = self.assumed.get(key).cloned() {
            if claims::all_bound(world, &pod) {
                self.bind(key, &pod, &node, world);
            }
            return;
        }
        let placement = self
            .placement
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        placement.catch_up(world.store);
        match schedule(world, &pod, &self.assumed, placement) {
            Ok((node, wait_for_consumer)) if wait_for_consumer.is_empty() => {
                self.bind(key, &pod, &node, world);
            }
            Ok((node, wait_for_consumer)) => {
                for claim in wait_for_consumer {
                    select_node(world, &claim, &node);
                }
                self.assumed.insert(key.clone(), node.clone());
                if claims::all_bound(world, &pod) {
                    self.bind(key, &pod, &node, world);
                }
            }
            Err(message) => self.fail(key, &pod, message, world),
        }
    }
}

/// Pick a node for the pod, or the FitError message. Also returns the unbound
/// WaitForFirstConsumer claims that must learn the choice.
fn schedule(
    world: &World<'_>,
    pod: &Value,
    assumed: &HashMap<ObjectKey, String>,
    placement: &mut Placement,
) -> Result<(String, Vec<ObjectKey>), String> {
    let nodes = world.list("", "nodes", None);
    if nodes.is_empty() {
        return Err("no nodes available to schedule pods".into());
    }
    let wait_for_consumer = match claims::check(world, pod) {
        Claims::Ready(w) => w,
        Claims::Unschedulable(msg) => return Err(fit::prefilter_error(nodes.len(), &msg)),
    };
    let assumed_pods: Vec<(Arc<Value>, &str)> = assumed
        .iter()
        .filter_map(|(k, n)| world.get(k).map(|p| (p, n.as_str())))
        .collect();
    placement.settle();
    let placement = &*placement;
    // Only anti-affinity looks at the pods themselves; counts and requests are kept.
    let with_pods = fit::looks_at_pods(pod);
    let mut infos: Vec<NodeInfo<'_>> = nodes
        .iter()
        .map(|n| {
            let name = n["metadata"]["name"].as_str().unwrap_or_default();
            let on = placement.on_node(name);
            NodeInfo {
                node: n,
                requested: on.map(|o| o.requested().clone()).unwrap_or_default(),
                pod_count: on.map_or(0, super::placement::OnNode::count),
                pods: match on {
                    Some(o) if with_pods => o.pods().collect(),
                    _ => Vec::new(),
                },
            }
        })
        .collect();
    for (p, node) in &assumed_pods {
        if let Some(info) = infos
            .iter_mut()
            .find(|i| i.node["metadata"]["name"] == *node)
        {
            quantity::add(&mut info.requested, &quantity::pod_requests(p));
            info.pod_count += 1;
            info.pods.push(p);
        }
    }
    let mut rejections: Vec<Rejection> = Vec::new();
    let mut feasible: Vec<&NodeInfo<'_>> = Vec::new();
    for info in &infos {
        match fit::filter(pod, info, &infos) {
            Ok(()) => feasible.push(info),
            Err(r) => rejections.push(r),
        }
    }
    let best = feasible
        .into_iter()
        .min_by_key(|i| {
            (
                i.pod_count,
                i.node["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .ok_or_else(|| fit::fit_error(nodes.len(), &rejections))?;
    let name = best.node["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    Ok((name, wait_for_consumer))
}

/// Tell the volume binder which node the claim's consumer goes to.
fn select_node(world: &mut World<'_>, claim: &ObjectKey, node: &str) {
    let Some(pvc) = world.get(claim) else { return };
    if pvc["metadata"]["annotations"][SELECTED_NODE] == node {
        return;
    }
    let mut pvc = (*pvc).clone();
    if !pvc["metadata"]["annotations"].is_object() {
        pvc["metadata"]["annotations"] = json!({});
    }
    pvc["metadata"]["annotations"][SELECTED_NODE] = json!(node);
    let _ = world.update(claim, pvc);
}

/// Conditions with `PodScheduled` replaced, keeping its transition time if unchanged.
fn with_scheduled(
    pod: &Value,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    now: &str,
) -> Value {
    let mut conditions = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let old = conditions.iter().position(|c| c["type"] == "PodScheduled");
    let since = old
        .map(|i| &conditions[i])
        .filter(|c| c["status"] == status)
        .and_then(|c| c["lastTransitionTime"].as_str())
        .unwrap_or(now)
        .to_owned();
    let mut c = json!({"type": "PodScheduled", "status": status, "lastProbeTime": null, "lastTransitionTime": since});
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    if let Some(m) = message {
        c["message"] = json!(m);
    }
    match old {
        Some(i) => conditions[i] = c,
        None => conditions.push(c),
    }
    Value::Array(conditions)
}

impl Scheduler {
    fn forget(&mut self, key: &ObjectKey) {
        self.failures.remove(key);
        self.assumed.remove(key);
    }

    /// The binding: nodeName and PodScheduled=True in one write, then the `Scheduled` event.
    fn bind(&mut self, key: &ObjectKey, pod: &Value, node: &str, world: &mut World<'_>) {
        let mut bound = pod.clone();
        bound["spec"]["nodeName"] = json!(node);
        if !bound["status"].is_object() {
            bound["status"] = json!({"phase": "Pending"});
        }
        bound["status"]["conditions"] = with_scheduled(pod, "True", None, None, &world.timestamp());
        if world.update(key, bound).is_err() {
            return;
        }
        world.event(EventSpec {
            involved: pod,
            field_path: None,
            type_: "Normal",
            reason: "Scheduled",
            message: format!(
                "Successfully assigned {}/{} to {node}",
                key.namespace, key.name
            ),
            component: None,
            host: None,
        });
        self.forget(key);
    }

    /// Report a failed attempt (unless it repeats the last one before the periodic retry).
    fn fail(&mut self, key: &ObjectKey, pod: &Value, message: String, world: &mut World<'_>) {
        let now = world.now();
        let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
        if let Some(f) = self
            .failures
            .get(key)
            .filter(|f| f.uid == uid && f.message == message && now < f.retry_at)
        {
            world.requeue_after(key.clone(), f.retry_at - now);
            return;
        }
        world.event(EventSpec {
            involved: pod,
            field_path: None,
            type_: "Warning",
            reason: "FailedScheduling",
            message: message.clone(),
            component: None,
            host: None,
        });
        let mut updated = pod.clone();
        if !updated["status"].is_object() {
            updated["status"] = json!({"phase": "Pending"});
        }
        updated["status"]["conditions"] = with_scheduled(
            pod,
            "False",
            Some("Unschedulable"),
            Some(&message),
            &world.timestamp(),
        );
        let _ = world.update_status(key, updated);
        self.failures.insert(
            key.clone(),
            Failure {
                uid: uid.to_owned(),
                message,
                retry_at: now + RETRY,
            },
        );
        world.requeue_after(key.clone(), RETRY);
    }
}
