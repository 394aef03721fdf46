//! The `daemonset-controller`: one pod per eligible node, failed pods replaced with a
//! back-off, extra and misplaced pods removed, a RollingUpdate bounded by maxUnavailable,
//! and the DaemonSet's status (`pkg/controller/daemon`).

use super::placement::{daemon_pod, should_run, target_node};
use super::rollout::pods_to_replace;
use super::status::write_status;
use crate::controllers::workloads::history::{
    HashStyle, owned_revisions, revision_hash, sync_update_revision, truncate_history,
};
use crate::controllers::workloads::objects::{
    NameGenerator, int_at, is_deleting, name, namespace, owner_key, str_at,
};
use crate::controllers::workloads::pods::{
    create_generated, delete_pod, is_terminal, owned_pods, phase,
};
use crate::engine::{Controller, World};
use crate::events::EventSpec;
use crate::store::{Change, ObjectKey};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// Runs DaemonSets.
#[derive(Debug)]
pub struct DaemonSetController {
    names: NameGenerator,
    /// Back-off per (DaemonSet uid, node) for deleting failed pods: (last, current delay).
    failed_backoff: HashMap<(String, String), (Duration, Duration)>,
}

impl Default for DaemonSetController {
    fn default() -> Self {
        DaemonSetController {
            names: NameGenerator::new("daemonset-controller"),
            failed_backoff: HashMap::new(),
        }
    }
}

/// Daemon pods by the node they are for; deleted pods that already finished are left out.
pub(crate) type NodePods = BTreeMap<String, Vec<Arc<Value>>>;

fn pods_by_node(pods: &[Arc<Value>]) -> NodePods {
    let mut by_node = NodePods::new();
    for pod in pods.iter().filter(|p| !(is_deleting(p) && is_terminal(p))) {
        if let Some(node) = target_node(pod) {
            by_node.entry(node).or_default().push(pod.clone());
        }
    }
    for list in by_node.values_mut() {
        // Scheduled first, then oldest (`podByCreationTimestampAndPhase`).
        list.sort_by(|a, b| {
            let unscheduled = |p: &Value| str_at(p, "/spec/nodeName").is_empty();
            unscheduled(a)
                .cmp(&unscheduled(b))
                .then_with(|| {
                    str_at(a, "/metadata/creationTimestamp")
                        .cmp(str_at(b, "/metadata/creationTimestamp"))
                })
                .then_with(|| name(a).cmp(name(b)))
        });
    }
    by_node
}

fn event(world: &mut World<'_>, ds: &Value, type_: &str, reason: &str, message: String) {
    world.event(EventSpec {
        involved: ds,
        field_path: None,
        type_,
        reason,
        message,
        component: None,
        host: None,
    });
}

impl DaemonSetController {
    /// Whether a failed pod on `node` may be deleted now (`failedPodsBackoff`: 1s doubling to 15m).
    fn failed_pod_may_go(
        &mut self,
        world: &mut World<'_>,
        key: &ObjectKey,
        ds: &Value,
        node: &str,
    ) -> bool {
        let now = world.elapsed();
        let id = (
            crate::controllers::workloads::objects::uid(ds).to_owned(),
            node.to_owned(),
        );
        match self.failed_backoff.get(&id).copied() {
            Some((last, delay)) if now < last + delay => {
                world.requeue_after(key.clone(), (last + delay).saturating_sub(now));
                false
            }
            Some((_, delay)) => {
                self.failed_backoff
                    .insert(id, (now, (delay * 2).min(Duration::from_secs(900))));
                true
            }
            None => {
                self.failed_backoff
                    .insert(id, (now, Duration::from_secs(1)));
                true
            }
        }
    }

    /// `manage`: returns whether it created or deleted anything.
    fn manage(
        &mut self,
        world: &mut World<'_>,
        key: &ObjectKey,
        ds: &Value,
        nodes: &[Arc<Value>],
        by_node: &NodePods,
        hash: &str,
    ) -> bool {
        let mut to_create = Vec::new();
        let mut to_delete: Vec<Arc<Value>> = Vec::new();
        for node in nodes {
            let node_name = name(node);
            let (run, keep) = should_run(ds, node);
            let pods = by_node.get(node_name).cloned().unwrap_or_default();
            if run && pods.is_empty() {
                to_create.push(node_name.to_owned());
            } else if keep {
                let mut running = Vec::new();
                for pod in pods.iter().filter(|p| !is_deleting(p)) {
                    match phase(pod) {
                        "Failed" => {
                            if self.failed_pod_may_go(world, key, ds, node_name) {
                                let msg = format!(
                                    "Found failed daemon pod {}/{} on node {node_name}, will try to kill it",
                                    namespace(pod),
                                    name(pod)
                                );
                                event(world, ds, "Warning", "FailedDaemonPod", msg);
                                to_delete.push(pod.clone());
                            }
                        }
                        "Succeeded" => to_delete.push(pod.clone()),
                        _ => running.push(pod.clone()),
                    }
                }
                // Without surge, only the oldest running pod stays.
                to_delete.extend(running.into_iter().skip(1));
            } else if !pods.is_empty() {
                to_delete.extend(pods.iter().filter(|p| !is_deleting(p)).cloned());
            }
        }
        // Pods for nodes that no longer exist go too.
        for (node, pods) in by_node {
            if !nodes.iter().any(|n| name(n) == node) {
                to_delete.extend(pods.iter().filter(|p| !is_deleting(p)).cloned());
            }
        }
        self.sync_nodes(world, ds, &to_delete, &to_create, hash)
    }

    fn sync_nodes(
        &mut self,
        world: &mut World<'_>,
        ds: &Value,
        to_delete: &[Arc<Value>],
        to_create: &[String],
        hash: &str,
    ) -> bool {
        for node in to_create {
            let pod = daemon_pod(ds, hash, node);
            let prefix = format!("{}-", name(ds));
            match create_generated(world, &mut self.names, &prefix, pod) {
                Ok(created) => event(
                    world,
                    ds,
                    "Normal",
                    "SuccessfulCreate",
                    format!("Created pod: {}", name(&created)),
                ),
                Err(e) => event(
                    world,
                    ds,
                    "Warning",
                    "FailedCreate",
                    format!("Error creating: {e}"),
                ),
            }
        }
        for pod in to_delete {
            match delete_pod(world, pod) {
                Ok(_) => event(
                    world,
                    ds,
                    "Normal",
                    "SuccessfulDelete",
                    format!("Deleted pod: {}", name(pod)),
                ),
                Err(e) => event(
                    world,
                    ds,
                    "Warning",
                    "FailedDelete",
                    format!("Error deleting: {e}"),
                ),
            }
        }
        !to_create.is_empty() || !to_delete.is_empty()
    }
}

impl Controller for DaemonSetController {
    fn name(&self) -> &'static str {
        "daemonset-controller"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("apps", "daemonsets", None) {
            vec![key.clone()]
        } else if key.in_collection("", "pods", None)
            || key.in_collection("apps", "controllerrevisions", None)
        {
            let mut keys: Vec<_> = std::iter::once(&change.object)
                .chain(change.previous.as_ref())
                .filter_map(|o| owner_key(o, "DaemonSet", "apps", "daemonsets"))
                .collect();
            keys.dedup();
            keys
        } else if key.in_collection("", "nodes", None) {
            self.resync(world)
        } else {
            Vec::new()
        }
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("apps", "daemonsets", None)
            .iter()
            .map(|d| ObjectKey::new("apps", "daemonsets", namespace(d), name(d)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(ds) = world.get(key) else {
            return;
        };
        let revisions = owned_revisions(world, &ds);
        let Ok((current, collision_count)) =
            sync_update_revision(world, &ds, &revisions, HashStyle::DaemonSet)
        else {
            world.requeue_after(key.clone(), Duration::from_secs(1));
            return;
        };
        let hash = revision_hash(&current).to_owned();
        let nodes = world.list("", "nodes", None);
        let pods = owned_pods(world, &ds);
        let by_node = pods_by_node(&pods);
        if !is_deleting(&ds) {
            let changed = self.manage(world, key, &ds, &nodes, &by_node, &hash);
            let rolling = str_at(&ds, "/spec/updateStrategy/type") != "OnDelete";
            // Like the real controller, a rollout step waits until this pass's creates and
            // deletes have been observed.
            if !changed && rolling {
                let now = world.store.clock().now();
                let old = pods_to_replace(&ds, &nodes, &by_node, &hash, now);
                self.sync_nodes(world, &ds, &old, &[], &hash);
            }
            let mut live = vec![name(&current).to_owned()];
            live.extend(pods.iter().map(|p| {
                format!(
                    "{}-{}",
                    name(&ds),
                    str_at(p, "/metadata/labels/controller-revision-hash")
                )
            }));
            let live: Vec<&str> = live.iter().map(String::as_str).collect();
            let revisions = owned_revisions(world, &ds);
            truncate_history(
                world,
                &revisions,
                &live,
                int_at(&ds, "/spec/revisionHistoryLimit").unwrap_or(10),
            );
        }
        write_status(world, key, &ds, &nodes, &by_node, &hash, collision_count);
    }
}
