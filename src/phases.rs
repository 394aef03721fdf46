//! The apply phases: which phase each manifest goes in (CRDs, Namespaces, the kinds
//! `rules::kinds` marks early, everything else), and which can be checked by a
//! server-side dry run before anything is applied. Pure, so the order is tested without
//! a cluster.

use crate::manifest::Manifest;
use crate::pointer::Pointer;
use crate::rules::kinds::{self, is_builtin_group};
use std::collections::BTreeSet;

/// Apply phases, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// CustomResourceDefinitions, waited for until Established.
    Crds,
    Namespaces,
    /// Things others depend on: quotas, policies, config, identities, claims, and custom
    /// resources whose CRD was already installed.
    Priority,
    Rest,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Crds => "custom resource definitions",
            Phase::Namespaces => "namespaces",
            Phase::Priority => "configuration and policy",
            Phase::Rest => "workloads and the rest",
        }
    }
}

/// One manifest's place in the apply order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Index into the manifests.
    pub index: usize,
    pub phase: Phase,
    /// Whether a server-side dry run can check it before anything is applied (not when its
    /// CRD or namespace is created by this same deploy).
    pub dry_run_first: bool,
}

/// On a CRD: whether its custom resources are applied with the priority kinds (`true`, the
/// default) or with the rest (any other value). krane's annotation, same meaning.
pub const PREDEPLOYED_ANNOTATIONS: [&str; 2] = [
    "deploy-action.io/predeployed",
    "krane.shopify.io/predeployed",
];

/// (group, kind) of the custom resources a CRD sends to the last phase: its
/// `predeployed` annotation is there and is not `true`.
pub fn not_predeployed(crd: &serde_json::Value) -> Option<(String, String)> {
    let annotations = crd.at("/metadata/annotations")?.as_object()?;
    let value = PREDEPLOYED_ANNOTATIONS
        .iter()
        .find_map(|a| annotations.get(*a))?
        .as_str();
    if value == Some("true") {
        return None;
    }
    Some((
        crd.at("/spec/group")?.as_str()?.to_owned(),
        crd.at("/spec/names/kind")?.as_str()?.to_owned(),
    ))
}

/// The manifests in phase order, keeping file order within a phase. `late` holds
/// the (group, kind) of custom resources whose CRD says they are not predeployed (see
/// [`not_predeployed`]; from the cluster's CRDs and the manifests').
pub fn order(manifests: &[Manifest], late: &BTreeSet<(String, String)>) -> Vec<Step> {
    let new_kinds: BTreeSet<(String, String)> = manifests
        .iter()
        .filter_map(Manifest::defines)
        .map(|(group, kind)| (group.to_owned(), kind.to_owned()))
        .collect();
    let new_namespaces: BTreeSet<&str> = manifests
        .iter()
        .filter(|m| m.kind == "Namespace" && m.group().is_empty())
        .map(|m| m.name.as_str())
        .collect();
    let mut steps: Vec<Step> = manifests
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let group = m.group();
            let custom_kind = (group.to_owned(), m.kind.clone());
            let custom_new = new_kinds.contains(&custom_kind);
            let predeployed = !late.contains(&custom_kind);
            let phase = match m.kind.as_str() {
                "CustomResourceDefinition" if group == "apiextensions.k8s.io" => Phase::Crds,
                "Namespace" if group.is_empty() => Phase::Namespaces,
                k if kinds::registered(group, k).is_some_and(|k| k.early) => Phase::Priority,
                _ if !is_builtin_group(group) && !custom_new && predeployed => Phase::Priority,
                _ => Phase::Rest,
            };
            let in_new_namespace = m
                .namespace
                .as_deref()
                .is_some_and(|ns| new_namespaces.contains(ns));
            Step {
                index,
                phase,
                dry_run_first: !custom_new && !in_new_namespace,
            }
        })
        .collect();
    steps.sort_by_key(|s| (s.phase, s.index));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    const STREAM: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: default}
";

    #[test]
    fn orders_crds_namespaces_priority_then_the_rest() {
        let manifests = load_str("stream.yaml", STREAM).unwrap();
        let order: Vec<(&str, Phase, bool)> = order(&manifests, &BTreeSet::new())
            .iter()
            .map(|s| (manifests[s.index].kind.as_str(), s.phase, s.dry_run_first))
            .collect();
        assert_eq!(
            order,
            [
                ("CustomResourceDefinition", Phase::Crds, true),
                ("Namespace", Phase::Namespaces, true),
                ("ConfigMap", Phase::Priority, false),
                ("ServiceMonitor", Phase::Priority, true),
                ("Deployment", Phase::Rest, false),
                ("Widget", Phase::Rest, false),
            ]
        );
    }

    #[test]
    fn custom_resources_of_a_crd_that_is_not_predeployed_go_last() {
        let manifests = load_str("stream.yaml", STREAM).unwrap();
        let crd = serde_json::json!({
            "metadata": {"annotations": {"krane.shopify.io/predeployed": "false"}},
            "spec": {"group": "monitoring.coreos.com", "names": {"kind": "ServiceMonitor"}},
        });
        let late: BTreeSet<_> = not_predeployed(&crd).into_iter().collect();
        let phase_of = |kind: &str| {
            order(&manifests, &late)
                .into_iter()
                .find(|s| manifests[s.index].kind == kind)
                .map(|s| s.phase)
        };
        assert_eq!(phase_of("ServiceMonitor"), Some(Phase::Rest));

        let mut predeployed = crd.clone();
        predeployed["metadata"]["annotations"] =
            serde_json::json!({"deploy-action.io/predeployed": "true"});
        assert_eq!(not_predeployed(&predeployed), None);
        let mut plain = crd;
        plain["metadata"] = serde_json::json!({});
        assert_eq!(not_predeployed(&plain), None);
    }
}
