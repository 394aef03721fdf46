//! Which watches a set of targets needs: one per kind and namespace of the targets, plus
//! the children and evidence their rules read (each kind's row in `rules::kinds` names
//! them: Pods, ReplicaSets, Jobs, Nodes for DaemonSets, EndpointSlices and selectable
//! workloads for Services, ...) and the Events of their namespaces.

use crate::cluster::discovery::Served;
use crate::cluster::watch::WatchScope;
use crate::rules::{Target, kinds};
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
        for w in kinds::of(t.group(), t.kind()).watches {
            let ns = if w.cluster { None } else { ns.clone() };
            out.insert((w.api_version.to_owned(), w.kind.to_owned(), ns));
        }
        if ns.is_some() {
            out.insert(("v1".to_owned(), "Event".to_owned(), ns));
        }
    }
    out
}

/// Resolve the needed triples into watch scopes the cluster serves. `labels` narrows only
/// the targets' own kinds (children and events do not carry the user's labels).
pub fn resolve(served: &Served, targets: &[Target], labels: Option<&str>) -> Vec<WatchScope> {
    let target_kinds: BTreeSet<(&str, &str)> = targets
        .iter()
        .map(|t| (t.id.api_version.as_str(), t.id.kind.as_str()))
        .collect();
    needed(targets)
        .into_iter()
        .filter_map(|(av, kind, ns)| {
            let (resource, namespaced) = served.resolve(&av, &kind)?;
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
