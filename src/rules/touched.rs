//! What changed since the judging loop last looked, so that it re-assesses only the
//! resources a change can affect instead of every undecided one after every watch batch.
//!
//! A change touches the object itself, the object an Event is about, and every owner up the
//! chain (Pod -> ReplicaSet -> Deployment). Rules that read only their own tree are
//! re-assessed when a key of it was touched; a Service when its EndpointSlices or the
//! workloads of its namespace changed; other rules (a custom resource's generic reading, a
//! PVC's) whenever their namespace or anything cluster-scoped changed. Kinds not listed here fall in the second group, so a new rule is
//! never starved of a re-assessment, only made slower.

use crate::rules::exists;
use crate::rules::snapshot::ObjectKey;
use crate::rules::target::Target;
use std::collections::BTreeSet;

/// Kinds whose rule reads the object, its descendants by owner, their Events and the
/// registry views, and nothing else.
const OWN_TREE: [(&str, &str); 11] = [
    ("", "Pod"),
    ("", "Namespace"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("networking.k8s.io", "Ingress"),
    ("policy", "PodDisruptionBudget"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
];

/// (group, kind).
type Kind = (&'static str, &'static str);

/// Kinds whose rule reads, besides itself, only these kinds of its namespace.
const READS_IN_NAMESPACE: [(Kind, &[Kind]); 1] = [(
    ("", "Service"),
    &[
        ("discovery.k8s.io", "EndpointSlice"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "ReplicaSet"),
    ],
)];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    keys: BTreeSet<ObjectKey>,
    namespaces: BTreeSet<String>,
    /// (namespace, group, kind) of the namespaced keys; a handful, so a list.
    kinds: Vec<(String, String, String)>,
    /// A cluster-scoped object (a Node, a PersistentVolume, a CRD) changed.
    cluster: bool,
    /// Something every rule may read changed (the registry views).
    everything: bool,
}

impl Touched {
    /// Records that `key` changed or was reached from a change.
    pub(crate) fn key(&mut self, key: &ObjectKey) -> bool {
        if !self.keys.insert(key.clone()) {
            return false;
        }
        match &key.namespace {
            Some(ns) => {
                if !self.namespaces.contains(ns) {
                    self.namespaces.insert(ns.clone());
                }
                let known = self
                    .kinds
                    .iter()
                    .any(|(n, g, k)| n == ns && *g == key.group && *k == key.kind);
                if !known {
                    let kind = (ns.clone(), key.group.clone(), key.kind.clone());
                    self.kinds.push(kind);
                }
            }
            None => self.cluster = true,
        }
        true
    }

    pub(crate) fn everything(&mut self) {
        self.everything = true;
    }

    /// The keys touched: changed objects and what they lead to.
    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.keys.iter()
    }

    pub fn is_empty(&self) -> bool {
        *self == Touched::default()
    }

    /// Whether `target`'s rule may read anything that changed.
    pub fn affects(&self, target: &Target) -> bool {
        if self.everything || self.keys.contains(&target.key()) {
            return true;
        }
        let kind = (target.group(), target.kind());
        if OWN_TREE.contains(&kind) || exists::is_plain(kind.0, kind.1) {
            return false;
        }
        let ns = target.id.namespace.as_deref().unwrap_or_default();
        if let Some((_, reads)) = READS_IN_NAMESPACE.iter().find(|(k, _)| *k == kind) {
            return reads.iter().any(|(group, kind)| {
                self.kinds
                    .iter()
                    .any(|(n, g, k)| n == ns && g == group && k == kind)
            });
        }
        // A DaemonSet reads the Nodes too; every other rule may read its namespace.
        self.cluster
            || (kind != ("apps", "DaemonSet")
                && target
                    .id
                    .namespace
                    .as_ref()
                    .is_some_and(|ns| self.namespaces.contains(ns)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_tree_rules_wait_for_their_keys_others_for_their_namespace() {
        let mut touched = Touched::default();
        assert!(touched.is_empty());
        touched.key(&ObjectKey::new("v1", "Pod", Some("shop"), "web-1"));
        touched.key(&ObjectKey::new(
            "apps/v1",
            "Deployment",
            Some("shop"),
            "web",
        ));
        let web = Target::new("apps/v1", "Deployment", Some("shop"), "web");
        let api = Target::new("apps/v1", "Deployment", Some("shop"), "api");
        let svc = Target::new("v1", "Service", Some("shop"), "web");
        let other_svc = Target::new("v1", "Service", Some("blog"), "web");
        let ds = Target::new("apps/v1", "DaemonSet", Some("shop"), "agent");
        let cm = Target::new("v1", "ConfigMap", Some("shop"), "settings");
        assert!(touched.affects(&web));
        assert!(!touched.affects(&api));
        assert!(
            touched.affects(&svc),
            "a Deployment of its namespace changed"
        );
        assert!(!touched.affects(&other_svc));
        let pvc = Target::new("v1", "PersistentVolumeClaim", Some("shop"), "data");
        assert!(touched.affects(&pvc));

        let mut pods_only = Touched::default();
        pods_only.key(&ObjectKey::new("v1", "Pod", Some("shop"), "web-1"));
        assert!(
            !pods_only.affects(&svc),
            "a Service reads EndpointSlices, not pods"
        );
        assert!(pods_only.affects(&pvc));
        pods_only.key(&ObjectKey::new(
            "discovery.k8s.io/v1",
            "EndpointSlice",
            Some("shop"),
            "web-x",
        ));
        assert!(pods_only.affects(&svc));
        assert!(
            !touched.affects(&ds),
            "a DaemonSet reads its own tree and the Nodes"
        );
        assert!(!touched.affects(&cm));

        touched.key(&ObjectKey::new("v1", "Node", None, "node-1"));
        assert!(touched.affects(&ds));
        assert!(
            !touched.affects(&other_svc),
            "a Service reads no cluster-scoped kind"
        );
        let blog_pvc = Target::new("v1", "PersistentVolumeClaim", Some("blog"), "data");
        assert!(
            touched.affects(&blog_pvc),
            "a PVC may read PersistentVolumes"
        );
        assert!(!touched.affects(&api));

        touched.everything();
        assert!(touched.affects(&api));
    }
}
