//! What the scheduler sees placed on each node (the pods bound there and not finished,
//! and their summed requests), kept up to date from the store's feed of changes so a
//! decision costs O(nodes) rather than a walk over every pod in the cluster.

use super::quantity::{self, Amounts};
use crate::store::{ChangeType, ObjectKey, Store, Subscription};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::broadcast::error::TryRecvError;

/// The pods on one node, in store (key) order, and what they request.
#[derive(Debug, Default)]
pub struct OnNode {
    pods: BTreeMap<ObjectKey, (Arc<Value>, Amounts)>,
    /// The sum of the pods' requests, added up in key order (as a fresh count would be);
    /// `None` after a change until the next `settle`.
    requested: Option<Amounts>,
}

const NOTHING: &Amounts = &Amounts::new();

impl OnNode {
    pub fn count(&self) -> usize {
        self.pods.len()
    }

    pub fn pods(&self) -> impl Iterator<Item = &Value> {
        self.pods.values().map(|(p, _)| &**p)
    }

    /// The summed requests of the pods on the node, as of the last `settle`.
    pub fn requested(&self) -> &Amounts {
        self.requested.as_ref().unwrap_or(NOTHING)
    }
}

/// Every node's pods, following the store.
#[derive(Debug, Default)]
pub struct Placement {
    feed: Option<Subscription>,
    node_of: HashMap<ObjectKey, String>,
    nodes: HashMap<String, OnNode>,
}

fn node_of(pod: &Value) -> Option<&str> {
    pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())
}

/// Whether a pod has finished (Succeeded or Failed) and no longer takes room on its node.
pub fn terminal(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

impl Placement {
    /// Catch up with every change committed so far: the first time (or after falling too
    /// far behind the feed) from a list taken together with a fresh subscription.
    pub fn catch_up(&mut self, store: &Store) {
        loop {
            let Some(feed) = self.feed.as_mut() else {
                let (pods, _, feed) = store.list_and_subscribe("", "pods", None);
                self.node_of.clear();
                self.nodes.clear();
                for pod in pods {
                    if let Some(key) = pod_key(&pod) {
                        self.place(key, Some(pod));
                    }
                }
                self.feed = Some(feed);
                return;
            };
            match feed.try_recv() {
                Ok(change) if change.key.in_collection("", "pods", None) => {
                    let pod = (change.kind != ChangeType::Deleted).then(|| change.object.clone());
                    self.place(change.key.clone(), pod);
                }
                Ok(_) => {}
                Err(TryRecvError::Empty | TryRecvError::Closed) => return,
                Err(TryRecvError::Lagged(_)) => self.feed = None,
            }
        }
    }

    /// Add up the requests on every node that changed since the last call.
    pub fn settle(&mut self) {
        for on in self.nodes.values_mut().filter(|o| o.requested.is_none()) {
            let mut sum = Amounts::new();
            for (_, r) in on.pods.values() {
                quantity::add(&mut sum, r);
            }
            on.requested = Some(sum);
        }
    }

    /// The pods on `node` (`None`: none).
    pub fn on_node(&self, node: &str) -> Option<&OnNode> {
        self.nodes.get(node)
    }

    /// Record `pod` (`None`: gone) as the latest state of `key`.
    fn place(&mut self, key: ObjectKey, pod: Option<Arc<Value>>) {
        let node = pod
            .as_deref()
            .filter(|p| !terminal(p))
            .and_then(node_of)
            .map(str::to_owned);
        if let Some(old) = self
            .node_of
            .get(&key)
            .filter(|o| node.as_ref() != Some(*o))
            .cloned()
        {
            if let Some(on) = self.nodes.get_mut(&old) {
                on.pods.remove(&key);
                on.requested = None;
                if on.pods.is_empty() {
                    self.nodes.remove(&old);
                }
            }
            self.node_of.remove(&key);
        }
        let (Some(node), Some(pod)) = (node, pod) else {
            return;
        };
        let requests = quantity::pod_requests(&pod);
        let on = self.nodes.entry(node.clone()).or_default();
        let unchanged = on.pods.get(&key).is_some_and(|(_, r)| *r == requests);
        if !unchanged {
            on.requested = None;
        }
        on.pods.insert(key.clone(), (pod, requests));
        self.node_of.insert(key, node);
    }
}

/// A pod's store key from its own metadata.
fn pod_key(pod: &Value) -> Option<ObjectKey> {
    let meta = &pod["metadata"];
    Some(ObjectKey::new(
        "",
        "pods",
        meta["namespace"].as_str()?,
        meta["name"].as_str()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::store::DeleteOptions;
    use serde_json::json;

    fn pod(name: &str, node: Option<&str>, cpu: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"},
               "spec": {"nodeName": node, "containers": [{"name": "app", "image": "app:1",
                        "resources": {"requests": {"cpu": cpu}}}]},
               "status": {"phase": "Pending"}})
    }

    fn seen(p: &mut Placement, store: &Store, node: &str) -> (usize, Option<f64>) {
        p.catch_up(store);
        p.settle();
        p.on_node(node).map_or((0, None), |o| {
            (o.count(), o.requested().get("cpu").copied())
        })
    }

    #[tokio::test]
    async fn follows_binds_finished_pods_and_deletes_from_the_feed() {
        let store = Store::new(Clock::fixed(), 64);
        let key = |n: &str| ObjectKey::new("", "pods", "shop", n);
        store
            .create(&key("a"), pod("a", Some("n1"), "500m"))
            .unwrap();
        let mut placement = Placement::default();
        assert_eq!(
            seen(&mut placement, &store, "n1"),
            (1, Some(0.5)),
            "from the list"
        );

        store.create(&key("b"), pod("b", None, "250m")).unwrap();
        assert_eq!(
            seen(&mut placement, &store, "n1"),
            (1, Some(0.5)),
            "pending: nowhere"
        );
        store
            .update(&key("b"), pod("b", Some("n1"), "250m"), None)
            .unwrap();
        assert_eq!(seen(&mut placement, &store, "n1"), (2, Some(0.75)), "bound");

        let mut done = pod("a", Some("n1"), "500m");
        done["status"]["phase"] = json!("Succeeded");
        store.update(&key("a"), done, None).unwrap();
        assert_eq!(
            seen(&mut placement, &store, "n1"),
            (1, Some(0.25)),
            "finished"
        );

        store
            .delete(
                &key("b"),
                DeleteOptions {
                    grace_period_seconds: Some(0),
                },
            )
            .unwrap();
        assert_eq!(seen(&mut placement, &store, "n1"), (0, None), "deleted");
    }

    #[tokio::test]
    async fn a_feed_that_fell_behind_is_rebuilt_from_a_list() {
        let store = Store::new(Clock::fixed(), 64);
        let mut placement = Placement::default();
        placement.catch_up(&store);
        // More changes than the broadcast keeps: the feed lags and is replaced.
        for i in 0..(1 << 16) + 10 {
            let name = format!("p{i}");
            let node = (i % 2 == 0).then_some("n1");
            store
                .create(
                    &ObjectKey::new("", "pods", "shop", &name),
                    pod(&name, node, "1m"),
                )
                .unwrap();
        }
        let (count, _) = seen(&mut placement, &store, "n1");
        assert_eq!(count, (1 << 16) / 2 + 5);
    }
}
