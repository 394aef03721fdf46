//! Which watches a set of targets needs: one per kind and namespace of the targets, plus
//! the children and evidence their rules read (Pods, ReplicaSets, Jobs, Events, Nodes for
//! DaemonSets, EndpointSlices and selectable workloads for Services, ...).

use crate::cluster::kinds::Kinds;
use crate::cluster::watch::WatchScope;
use crate::rules::Target;
use std::collections::BTreeSet;

/// (apiVersion, kind, namespace) triples to watch for these targets. Pure.
pub fn needed(targets: &[Target]) -> BTreeSet<(String, String, Option<String>)> {
    let mut out = BTreeSet::new();
    for t in targets {
        let id = &t.id;
        out.insert((
            id.api_version.clone(),
            id.kind.clone(),
            id.namespace.clone(),
        ));
        let ns = id.namespace.clone();
        let mut add = |av: &str, kind: &str, ns: Option<String>| {
            out.insert((av.to_owned(), kind.to_owned(), ns));
        };
        let group = id.api_version.split_once('/').map_or("", |(g, _)| g);
        match (group, id.kind.as_str()) {
            ("apps", "Deployment") => {
                add("apps/v1", "ReplicaSet", ns.clone());
                add("v1", "Pod", ns.clone());
            }
            ("apps", "DaemonSet") => {
                add("v1", "Pod", ns.clone());
                // Pods on NotReady or cordoned nodes do not hold a DaemonSet rollout.
                add("v1", "Node", None);
            }
            ("apps", "ReplicaSet" | "StatefulSet") | ("batch", "Job") => {
                add("v1", "Pod", ns.clone())
            }
            ("batch", "CronJob") => add("batch/v1", "Job", ns.clone()),
            ("", "Service") => {
                // Judged from the cluster: its EndpointSlices, and the workloads it selects
                // when they are scaled to zero on purpose.
                add("discovery.k8s.io/v1", "EndpointSlice", ns.clone());
                add("apps/v1", "Deployment", ns.clone());
                add("apps/v1", "StatefulSet", ns.clone());
                add("apps/v1", "ReplicaSet", ns.clone());
            }
            ("", "PersistentVolumeClaim") => add("storage.k8s.io/v1", "StorageClass", None),
            ("", "Pod") => {}
            (g, _) if !g.is_empty() && !is_builtin(g) => {
                add("apiextensions.k8s.io/v1", "CustomResourceDefinition", None);
            }
            _ => {}
        }
        if ns.is_some() {
            add("v1", "Event", ns);
        }
    }
    out
}

fn is_builtin(group: &str) -> bool {
    group.ends_with(".k8s.io") || matches!(group, "apps" | "batch" | "autoscaling" | "policy")
}

/// Resolve the needed triples into watch scopes the cluster serves. `labels` narrows only
/// the targets' own kinds (children and events do not carry the user's labels).
pub fn resolve(kinds: &Kinds, targets: &[Target], labels: Option<&str>) -> Vec<WatchScope> {
    let target_kinds: BTreeSet<(&str, &str)> = targets
        .iter()
        .map(|t| (t.id.api_version.as_str(), t.id.kind.as_str()))
        .collect();
    needed(targets)
        .into_iter()
        .filter_map(|(av, kind, ns)| {
            let (resource, namespaced) = kinds.resolve(&av, &kind)?;
            let narrowed = target_kinds.contains(&(av.as_str(), kind.as_str()))
                && !matches!(kind.as_str(), "Pod" | "Event");
            Some(WatchScope {
                resource,
                namespace: if namespaced { ns } else { None },
                labels: if narrowed {
                    labels.map(str::to_owned)
                } else {
                    None
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_needs_its_replicasets_pods_and_events_once_per_namespace() {
        let targets = vec![
            Target::new("apps/v1", "Deployment", Some("shop"), "web"),
            Target::new("apps/v1", "Deployment", Some("shop"), "api"),
            Target::new("v1", "Service", Some("shop"), "web"),
            Target::new("example.com/v1", "Widget", Some("shop"), "w"),
        ];
        let got: Vec<String> = needed(&targets)
            .into_iter()
            .map(|(av, k, ns)| format!("{av} {k} {}", ns.unwrap_or_default()))
            .collect();
        assert_eq!(
            got,
            [
                "apiextensions.k8s.io/v1 CustomResourceDefinition ",
                "apps/v1 Deployment shop",
                "apps/v1 ReplicaSet shop",
                "apps/v1 StatefulSet shop",
                "discovery.k8s.io/v1 EndpointSlice shop",
                "example.com/v1 Widget shop",
                "v1 Event shop",
                "v1 Pod shop",
                "v1 Service shop",
            ]
        );
    }

    #[test]
    fn a_service_needs_its_endpoint_slices_and_the_workloads_it_may_select() {
        let targets = vec![Target::new("v1", "Service", Some("edge"), "web")];
        let got: Vec<String> = needed(&targets)
            .into_iter()
            .map(|(av, k, ns)| format!("{av} {k} {}", ns.unwrap_or_default()))
            .collect();
        assert_eq!(
            got,
            [
                "apps/v1 Deployment edge",
                "apps/v1 ReplicaSet edge",
                "apps/v1 StatefulSet edge",
                "discovery.k8s.io/v1 EndpointSlice edge",
                "v1 Event edge",
                "v1 Service edge",
            ]
        );
    }

    #[test]
    fn a_daemonset_needs_its_pods_and_the_nodes_cluster_wide() {
        let targets = vec![
            Target::new("apps/v1", "DaemonSet", Some("monitoring"), "node-exporter"),
            Target::new("apps/v1", "DaemonSet", Some("logging"), "fluent-bit"),
        ];
        let got: Vec<String> = needed(&targets)
            .into_iter()
            .map(|(av, k, ns)| format!("{av} {k} {}", ns.unwrap_or_default()))
            .collect();
        assert_eq!(
            got,
            [
                "apps/v1 DaemonSet logging",
                "apps/v1 DaemonSet monitoring",
                "v1 Event logging",
                "v1 Event monitoring",
                "v1 Node ",
                "v1 Pod logging",
                "v1 Pod monitoring",
            ]
        );
    }
}
