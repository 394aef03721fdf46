//! Which DaemonSet pods count toward a rollout (krane's rule): not those on NotReady or
//! cordoned nodes, nor evicted ones, since waiting for them holds the rollout on the node.

use crate::rules::snapshot::Snapshot;
use k8s_openapi::api::core::v1::{Node, Pod};

/// The current template's pods, split into those the rollout waits for and the rest.
#[derive(Debug, Clone, Default)]
pub struct Counting {
    pub counted: Vec<Pod>,
    /// Names of NotReady nodes that host an uncounted pod.
    pub not_ready_nodes: Vec<String>,
    /// Names of cordoned (spec.unschedulable) nodes that host an uncounted pod.
    pub cordoned_nodes: Vec<String>,
    pub evicted: usize,
}

impl Counting {
    /// Splits `pods`; a pod whose node is not in the snapshot (no Node watch, or no right
    /// to list Nodes) counts, so missing evidence never lets a rollout off.
    pub fn new(pods: &[Pod], snapshot: &Snapshot) -> Self {
        let mut out = Counting::default();
        for pod in pods {
            if is_evicted(pod) {
                out.evicted += 1;
                continue;
            }
            let node_name = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
            let node = node_name.and_then(|n| snapshot.get::<Node>(None, n));
            match (node_name, node.as_ref().map(health)) {
                (Some(name), Some(NodeHealth::NotReady)) => {
                    out.not_ready_nodes.push(name.to_owned());
                }
                (Some(name), Some(NodeHealth::Cordoned)) => {
                    out.cordoned_nodes.push(name.to_owned());
                }
                _ => out.counted.push(pod.clone()),
            }
        }
        out
    }

    pub fn uncounted(&self) -> usize {
        self.not_ready_nodes.len() + self.cordoned_nodes.len() + self.evicted
    }

    /// Every counted pod is Ready, and there is at least one.
    pub fn counted_ready(&self) -> bool {
        !self.counted.is_empty() && self.counted.iter().all(is_ready)
    }

    /// `2 pods not counted: 1 on NotReady node node-3, 1 evicted`, when any are not.
    pub fn note(&self) -> Option<String> {
        let total = self.uncounted();
        if total == 0 {
            return None;
        }
        let on = |nodes: &[String], what: &str| {
            (!nodes.is_empty()).then(|| {
                let s = if nodes.len() == 1 { "" } else { "s" };
                format!("{} on {what} node{s} {}", nodes.len(), nodes.join(", "))
            })
        };
        let parts: Vec<String> = [
            on(&self.not_ready_nodes, "NotReady"),
            on(&self.cordoned_nodes, "cordoned"),
            (self.evicted > 0).then(|| format!("{} evicted", self.evicted)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let s = if total == 1 { "" } else { "s" };
        Some(format!("{total} pod{s} not counted: {}", parts.join(", ")))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeHealth {
    Healthy,
    NotReady,
    Cordoned,
}

/// A node whose Ready condition is there and not True is NotReady (krane: a node without
/// one counts as ready); one with spec.unschedulable is cordoned.
fn health(node: &Node) -> NodeHealth {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    if ready.is_some_and(|c| c.status != "True") {
        NodeHealth::NotReady
    } else if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        NodeHealth::Cordoned
    } else {
        NodeHealth::Healthy
    }
}

fn is_evicted(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    status.and_then(|s| s.phase.as_deref()) == Some("Failed")
        && status.and_then(|s| s.reason.as_deref()) == Some("Evicted")
}

fn is_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}
