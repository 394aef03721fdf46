//! The kubelet of every simulated node as one controller: it admits pods bound to an
//! existing Node, runs them through their lifecycle on simulated time (never sleeping:
//! every timed transition is a requeue), writes their status and events, and removes
//! deleted pods once their containers have stopped.

use super::containers::Cx;
use super::observe;
use super::runtime::{CState, NodeState, PodRuntime, Run};
use super::status::{self, Inputs};
use super::{sync, terminate};
use crate::engine::{Controller, World};
use crate::scenario::KubeVersion;
use crate::store::{Change, ObjectKey};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::time::Instant;

/// Simulated kubelets: per-pod runtime state by pod uid, per-node images and addresses.
/// Readiness follows [`super::probes`]: without a readinessProbe a container is ready once
/// it runs; with one, at the first probe after the image's `ready` delay.
#[derive(Debug, Default)]
pub struct Kubelet {
    pods: HashMap<String, PodRuntime>,
    by_key: HashMap<ObjectKey, String>,
    nodes: HashMap<String, NodeState>,
}

/// What one step of a reconcile did.
enum Step {
    Idle,
    /// Something changed that the status does not show.
    Noted,
    Progress,
    /// The deleted pod's containers have stopped; `bool`: a final status is worth writing.
    Stopped(bool),
}

fn node_of(pod: &Value) -> Option<&str> {
    pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())
}

fn is_deleting(pod: &Value) -> bool {
    pod["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|d| !d.is_null())
}

impl Controller for Kubelet {
    fn name(&self) -> &'static str {
        "kubelet"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("", "pods", None) {
            let ours = node_of(&change.object).is_some() || self.by_key.contains_key(key);
            return if ours { vec![key.clone()] } else { Vec::new() };
        }
        if key.in_collection("", "nodes", None) {
            // Pods bound to a node that did not exist yet start once it registers.
            return world
                .list("", "pods", None)
                .iter()
                .filter(|p| node_of(p) == Some(key.name.as_str()))
                .filter_map(|p| world.key_of(p))
                .filter(|k| !self.by_key.contains_key(k))
                .collect();
        }
        let config =
            key.in_collection("", "configmaps", None) || key.in_collection("", "secrets", None);
        if !config {
            return Vec::new();
        }
        // A pod stuck on CreateContainerConfigError is retried when its namespace's
        // ConfigMaps or Secrets change (its reconcile checks whether it is unblocked).
        self.by_key
            .iter()
            .filter(|(k, uid)| {
                k.namespace == key.namespace
                    && self.pods.get(*uid).is_some_and(|rt| {
                        rt.ctrs.iter().any(|c| {
                            c.waiting
                                .as_ref()
                                .is_some_and(|w| w.reason == "CreateContainerConfigError")
                        })
                    })
                    && world.get(k).is_some()
            })
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("", "pods", None)
            .iter()
            .filter(|p| node_of(p).is_some())
            .filter_map(|p| world.key_of(p))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(pod) = world.get(key) else {
            if self.by_key.contains_key(key) {
                world.logs.forget_pod(&key.namespace, &key.name);
            }
            self.forget(key);
            return;
        };
        let Some(node) = node_of(&pod).map(str::to_owned) else {
            return;
        };
        if world.get(&ObjectKey::new("", "nodes", "", &node)).is_none() {
            return;
        }
        let uid = pod["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if self.by_key.get(key).is_some_and(|old| *old != uid) {
            self.forget(key);
        }
        self.by_key.insert(key.clone(), uid.clone());
        self.ensure_node(&node, world);
        let now = world.now();
        if !self.pods.contains_key(&uid) {
            let rt = adopt(&pod, &node, world.timestamp(), now);
            let fresh = !rt.finished && !is_deleting(&pod);
            self.pods.insert(uid.clone(), rt);
            if fresh {
                self.write_status(key, &uid, world, false);
            }
        }
        for _ in 0..64 {
            let Some(pod) = world.get(key) else { return };
            let (Some(rt), Some(node_state)) = (self.pods.get_mut(&uid), self.nodes.get_mut(&node))
            else {
                return;
            };
            let mut cx = Cx {
                world,
                pod: &pod,
                node: node_state,
                node_name: &node,
                now,
            };
            match step(rt, &mut cx) {
                Step::Idle => break,
                Step::Noted => {}
                Step::Progress => self.write_status(key, &uid, world, false),
                Step::Stopped(write) => {
                    if write {
                        self.write_status(key, &uid, world, true);
                    }
                    // The kubelet's final delete (grace 0): the pod goes now, or when its
                    // finalizers are cleared.
                    let gone = world.store.end_grace_period(key).is_none_or(|p| {
                        p["metadata"]["finalizers"]
                            .as_array()
                            .is_none_or(Vec::is_empty)
                    });
                    if gone {
                        world.logs.forget_pod(&key.namespace, &key.name);
                        self.forget(key);
                    }
                    return;
                }
            }
        }
        if let Some(due) = self.pods.get(&uid).and_then(PodRuntime::next_due) {
            world.requeue_after(key.clone(), due.saturating_duration_since(now));
        }
    }
}

/// One thing due now, in the order a kubelet sees them: deletion, runtime events, the end
/// of a pull, then a sync of the pod worker.
fn step(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>) -> Step {
    if is_deleting(cx.pod) {
        return match rt.remove_at {
            _ if rt.stopped => Step::Idle,
            None => {
                terminate::begin(rt, cx);
                Step::Noted
            }
            Some(at) if at <= cx.now => Step::Stopped(terminate::finish(rt, cx)),
            Some(_) => Step::Idle,
        };
    }
    if rt.finished {
        return Step::Idle;
    }
    if observe::runtime_events(rt, cx) {
        return Step::Progress;
    }
    if rt.pulling.as_ref().is_some_and(|p| p.done <= cx.now) {
        sync::complete_pull(rt, cx);
        return Step::Progress;
    }
    let due = rt.next_sync.is_some_and(|t| t <= cx.now);
    if rt.pulling.is_none() && (due || sync::config_unblocked(rt, cx)) {
        sync::sync(rt, cx);
        return Step::Progress;
    }
    Step::Idle
}

/// State for a pod seen for the first time: admitted fresh, or rebuilt from its status
/// (terminal pods stay as they are; running containers keep running).
fn adopt(pod: &Value, node: &str, now_ts: String, now: Instant) -> PodRuntime {
    let mut rt = PodRuntime::admit(pod, node, now_ts, now);
    let status = &pod["status"];
    if matches!(status["phase"].as_str(), Some("Succeeded" | "Failed")) {
        rt.finished = true;
        rt.next_sync = None;
        return rt;
    }
    let statuses: Vec<&Value> = ["initContainerStatuses", "containerStatuses"]
        .iter()
        .flat_map(|k| status[*k].as_array().into_iter().flatten())
        .collect();
    let mut adopted = false;
    for c in &mut rt.ctrs {
        let Some(s) = statuses.iter().find(|s| s["name"] == c.name.as_str()) else {
            continue;
        };
        let Some(started_at) = s["state"]["running"]["startedAt"].as_str() else {
            continue;
        };
        adopted = true;
        let id = s["containerID"].as_str().unwrap_or_default();
        c.restart_count = u32::try_from(s["restartCount"].as_u64().unwrap_or(0)).unwrap_or(0);
        c.image = Some((
            s["image"].as_str().unwrap_or_default().into(),
            s["imageID"].as_str().unwrap_or_default().into(),
        ));
        c.state = CState::Running(Run {
            id: id.trim_start_matches("containerd://").to_owned(),
            started_at: started_at.to_owned(),
            since: now,
            exit: None,
            ready: s["ready"] == true,
            next_probe: None,
            ready_after: Some(std::time::Duration::ZERO),
        });
    }
    if adopted {
        rt.mounted = true;
        rt.sandbox_alive = true;
        rt.ip = status["podIP"].as_str().map(str::to_owned);
        rt.ip_published = rt.ip.is_some();
        if let Some(t) = status["startTime"].as_str() {
            t.clone_into(&mut rt.start_time);
        }
    }
    rt
}

impl Kubelet {
    fn forget(&mut self, key: &ObjectKey) {
        if let Some(uid) = self.by_key.remove(key) {
            self.pods.remove(&uid);
        }
    }

    /// A node's addresses: its InternalIP and podCIDR when it reports them, else the next
    /// of a kind-like layout (172.18.0.2, 10.244.1.0/24 for the first node by name).
    fn ensure_node(&mut self, name: &str, world: &World<'_>) {
        if self.nodes.contains_key(name) {
            return;
        }
        let nodes = world.list("", "nodes", None);
        let index = nodes
            .iter()
            .position(|n| n["metadata"]["name"] == name)
            .unwrap_or(nodes.len());
        let node = nodes
            .iter()
            .find(|n| n["metadata"]["name"] == name)
            .map(Arc::clone)
            .unwrap_or_default();
        let host_ip = node["status"]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["type"] == "InternalIP")
            .and_then(|a| a["address"].as_str())
            .map_or_else(|| format!("172.18.0.{}", index + 2), str::to_owned);
        let pod_prefix = node["spec"]["podCIDR"]
            .as_str()
            .and_then(|cidr| cidr.rsplit_once('.').map(|(net, _)| format!("{net}.")))
            .unwrap_or_else(|| format!("10.244.{}.", index + 1));
        self.nodes
            .insert(name.to_owned(), NodeState::new(host_ip, pod_prefix));
    }

    fn write_status(&self, key: &ObjectKey, uid: &str, world: &mut World<'_>, terminal: bool) {
        let Some(rt) = self.pods.get(uid) else { return };
        let Some(node) = self.nodes.get(&rt.node) else {
            return;
        };
        let Some(current) = world.get(key) else {
            return;
        };
        let now = world.timestamp();
        let inputs = Inputs {
            host_ip: &node.host_ip,
            now: &now,
            with_resources: world.scenario.kubernetes_version
                >= KubeVersion {
                    major: 1,
                    minor: 33,
                },
            terminal,
        };
        let status = status::pod_status(&current, rt, &inputs);
        if current["status"] != status {
            let mut updated = (*current).clone();
            updated["status"] = status;
            let _ = world.update_status(key, updated);
        }
    }
}
