//! The least a deployer may be granted for a deploy of given manifests: what it applies
//! (server-side apply reads, creates and patches), what the rules of each kind watch (their
//! own kind, children, Events, CRDs), the logs of failed containers, the autoscalers it
//! must not fight, and what it deletes (Helm hooks' delete policies, `replace`d objects,
//! pruning). Pure: a lookup of the kinds served stands in for the cluster.

use super::scopes;
use crate::cluster::immutable::REPLACE_ANNOTATION;
use crate::manifest::Manifest;
use crate::pointer::Pointer;
use crate::rules::Target;
use std::collections::{BTreeMap, BTreeSet};

/// What a kind is addressed as: its API group, resource (plural) and whether namespaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    pub group: String,
    pub plural: String,
    pub namespaced: bool,
}

/// Verbs on one resource, in one namespace (`None`: cluster-wide, a ClusterRole's).
pub type Grants = BTreeMap<(Option<String>, String, String), BTreeSet<&'static str>>;

/// Kinds whose replica count an autoscaler may own; a deploy lists the namespace's
/// HorizontalPodAutoscalers to leave that count alone (`pipeline::autoscaled`).
const SCALED: [&str; 4] = [
    "Deployment",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
];

/// The grants a deploy of `manifests` (namespaces resolved) needs; `lookup` resolves an
/// apiVersion and kind. `prune`: the deploy prunes (`--prune`), so it deletes kinds it
/// applied and keeps its ApplySet parent Secret. Kinds `lookup` does not know are returned
/// as the second value, to be refused as a deploy would.
pub fn needed(
    manifests: &[Manifest],
    lookup: impl Fn(&str, &str) -> Option<Resource>,
    prune: bool,
) -> (Grants, Vec<String>) {
    let mut grants = Grants::new();
    let mut unknown = Vec::new();
    let mut grant = |r: &Resource, ns: Option<&str>, sub: &str, verbs: &[&'static str]| {
        let ns = ns.filter(|_| r.namespaced).map(str::to_owned);
        let resource = if sub.is_empty() {
            r.plural.clone()
        } else {
            format!("{}/{sub}", r.plural)
        };
        grants
            .entry((ns, r.group.clone(), resource))
            .or_default()
            .extend(verbs);
    };
    let mut targets = Vec::new();
    let mut scaled_namespaces = BTreeSet::new();
    for m in manifests {
        let Some(r) = lookup(&m.api_version, &m.kind) else {
            unknown.push(format!("{} {}", m.api_version, m.kind));
            continue;
        };
        let ns = m.namespace.as_deref();
        // Server-side apply: a PATCH, which creates what does not exist; a dry run and the
        // plan read the live object first.
        grant(&r, ns, "", &["get", "create", "patch"]);
        let deletes = prune
            || crate::waves::is_hook(m)
            || m.object
                .at("/metadata/annotations")
                .and_then(|a| a.get(REPLACE_ANNOTATION))
                .is_some();
        if deletes {
            grant(&r, ns, "", &["delete"]);
        }
        if SCALED.contains(&m.kind.as_str()) || m.object.at("/spec/replicas").is_some() {
            scaled_namespaces.extend(ns.map(str::to_owned));
        }
        targets.push(
            Target::from_manifest(&m.object)
                .unwrap_or_else(|| Target::new(&m.api_version, &m.kind, ns, &m.name)),
        );
    }
    for (api_version, kind, ns) in scopes::needed(&targets) {
        let Some(r) = lookup(&api_version, &kind) else {
            // Evidence of a kind the cluster does not serve is not watched.
            continue;
        };
        grant(&r, ns.as_deref(), "", &["list", "watch"]);
        if kind == "Pod" {
            // The last lines of a container that failed.
            grant(&r, ns.as_deref(), "log", &["get"]);
        }
    }
    if let Some(hpa) = lookup("autoscaling/v2", "HorizontalPodAutoscaler") {
        for ns in &scaled_namespaces {
            grant(&hpa, Some(ns), "", &["list"]);
        }
    }
    if prune && let Some(secret) = lookup("v1", "Secret") {
        let namespaces: BTreeSet<&str> = manifests
            .iter()
            .filter_map(|m| m.namespace.as_deref())
            .collect();
        for ns in namespaces {
            grant(&secret, Some(ns), "", &["get", "create", "patch"]);
        }
    }
    (grants, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    /// What a small cluster serves, by apiVersion and kind.
    fn lookup(api_version: &str, kind: &str) -> Option<Resource> {
        let (group, plural, namespaced) = match (api_version, kind) {
            ("v1", "ConfigMap") => ("", "configmaps", true),
            ("v1", "Secret") => ("", "secrets", true),
            ("v1", "Pod") => ("", "pods", true),
            ("v1", "Event") => ("", "events", true),
            ("v1", "Service") => ("", "services", true),
            ("v1", "Namespace") => ("", "namespaces", false),
            ("apps/v1", "Deployment") => ("apps", "deployments", true),
            ("apps/v1", "ReplicaSet") => ("apps", "replicasets", true),
            ("discovery.k8s.io/v1", "EndpointSlice") => {
                ("discovery.k8s.io", "endpointslices", true)
            }
            ("autoscaling/v2", "HorizontalPodAutoscaler") => {
                ("autoscaling", "horizontalpodautoscalers", true)
            }
            _ => return None,
        };
        Some(Resource {
            group: group.into(),
            plural: plural.into(),
            namespaced,
        })
    }

    fn lines(grants: &Grants) -> Vec<String> {
        grants
            .iter()
            .map(|((ns, group, resource), verbs)| {
                let verbs: Vec<&str> = verbs.iter().copied().collect();
                format!(
                    "{} {group}/{resource}: {}",
                    ns.as_deref().unwrap_or("(cluster)"),
                    verbs.join(",")
                )
            })
            .collect()
    }

    #[test]
    fn a_deployment_needs_apply_its_watches_logs_and_the_autoscalers_list() {
        let yaml = "apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1}]}
";
        let manifests = load_str("app.yaml", yaml).unwrap();
        let (grants, unknown) = needed(&manifests, lookup, false);
        assert!(unknown.is_empty());
        assert_eq!(
            lines(&grants),
            [
                "(cluster) /namespaces: create,get,list,patch,watch",
                "shop /events: list,watch",
                "shop /pods: list,watch",
                "shop /pods/log: get",
                "shop apps/deployments: create,get,list,patch,watch",
                "shop apps/replicasets: list,watch",
                "shop autoscaling/horizontalpodautoscalers: list",
            ]
        );
    }

    #[test]
    fn pruning_hooks_and_replacements_add_delete_and_unknown_kinds_are_named() {
        let yaml = "apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: shop, annotations: {deploy-action.io/replace: 'true'}}
---
apiVersion: v1
kind: Pod
metadata:
  name: migrate
  namespace: shop
  annotations: {helm.sh/hook: pre-upgrade, helm.sh/hook-delete-policy: before-hook-creation}
spec: {restartPolicy: Never, containers: [{name: m, image: m:1}]}
---
apiVersion: acme.io/v1
kind: Widget
metadata: {name: w, namespace: shop}
";
        let manifests = load_str("app.yaml", yaml).unwrap();
        let (grants, unknown) = needed(&manifests, lookup, false);
        assert_eq!(unknown, ["acme.io/v1 Widget"]);
        let got = lines(&grants);
        assert!(
            got.contains(&"shop /configmaps: create,delete,get,list,patch,watch".to_owned()),
            "{got:#?}"
        );
        assert!(
            got.contains(&"shop /pods: create,delete,get,list,patch,watch".to_owned()),
            "{got:#?}"
        );
        let (pruned, _) = needed(&manifests[..1], lookup, true);
        assert_eq!(
            lines(&pruned),
            [
                "shop /configmaps: create,delete,get,list,patch,watch",
                "shop /events: list,watch",
                "shop /secrets: create,get,patch",
            ]
        );
    }
}
