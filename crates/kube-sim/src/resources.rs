//! The registry of API resources the simulated server knows: built-in kinds plus the
//! resources of Established CRDs. Discovery, routing and validation all read it.

use serde_json::{Value, json};
use std::sync::RwLock;

/// One API resource (a kind served under a group/version).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// Empty for the core group.
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub verbs: Vec<String>,
    /// Subresources such as `status`, `scale`, `log`.
    pub subresources: Vec<String>,
    pub categories: Vec<String>,
    /// `true` for resources served from a CRD.
    pub custom: bool,
}

impl ResourceType {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps`, or `pods` for the core group.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    pub fn has_status(&self) -> bool {
        self.subresources.iter().any(|s| s == "status")
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
}

const RW: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// group, version, kind, plural, namespaced, short names, subresources, categories
type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

const ALL: &[&str] = &["all"];

const BUILTIN: &[Row] = &[
    ("", "v1", "Binding", "bindings", true, &[], &[], &[]),
    ("", "v1", "ConfigMap", "configmaps", true, &["cm"], &[], &[]),
    ("", "v1", "Endpoints", "endpoints", true, &["ep"], &[], &[]),
    ("", "v1", "Event", "events", true, &["ev"], &[], &[]),
    (
        "",
        "v1",
        "LimitRange",
        "limitranges",
        true,
        &["limits"],
        &[],
        &[],
    ),
    (
        "",
        "v1",
        "Namespace",
        "namespaces",
        false,
        &["ns"],
        &["status"],
        &[],
    ),
    ("", "v1", "Node", "nodes", false, &["no"], &["status"], &[]),
    (
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        &["pvc"],
        &["status"],
        &[],
    ),
    (
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        false,
        &["pv"],
        &["status"],
        &[],
    ),
    (
        "",
        "v1",
        "Pod",
        "pods",
        true,
        &["po"],
        &["status", "log", "binding", "eviction"],
        ALL,
    ),
    (
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        true,
        &["rc"],
        &["status", "scale"],
        ALL,
    ),
    (
        "",
        "v1",
        "ResourceQuota",
        "resourcequotas",
        true,
        &["quota"],
        &["status"],
        &[],
    ),
    ("", "v1", "Secret", "secrets", true, &[], &[], &[]),
    (
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        &["sa"],
        &[],
        &[],
    ),
    (
        "",
        "v1",
        "Service",
        "services",
        true,
        &["svc"],
        &["status"],
        ALL,
    ),
    (
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
        &[],
        &[],
        &[],
    ),
    (
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        true,
        &["ds"],
        &["status"],
        ALL,
    ),
    (
        "apps",
        "v1",
        "Deployment",
        "deployments",
        true,
        &["deploy"],
        &["status", "scale"],
        ALL,
    ),
    (
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        true,
        &["rs"],
        &["status", "scale"],
        ALL,
    ),
    (
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        true,
        &["sts"],
        &["status", "scale"],
        ALL,
    ),
    (
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        true,
        &["cj"],
        &["status"],
        ALL,
    ),
    ("batch", "v1", "Job", "jobs", true, &[], &["status"], ALL),
    (
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        &["hpa"],
        &["status"],
        ALL,
    ),
    (
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        &["hpa"],
        &["status"],
        ALL,
    ),
    (
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        true,
        &["ing"],
        &["status"],
        &[],
    ),
    (
        "networking.k8s.io",
        "v1",
        "IngressClass",
        "ingressclasses",
        false,
        &[],
        &[],
        &[],
    ),
    (
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
        &["netpol"],
        &[],
        &[],
    ),
    (
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        &["pdb"],
        &["status"],
        &[],
    ),
    // Reviews: created and answered, never stored (server/access_review.rs).
    (
        "authentication.k8s.io",
        "v1",
        "SelfSubjectReview",
        "selfsubjectreviews",
        false,
        &[],
        &[],
        &[],
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        false,
        &[],
        &[],
        &[],
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        false,
        &[],
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        &[],
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
        &[],
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
        &[],
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
        &[],
        &[],
        &[],
    ),
    (
        "storage.k8s.io",
        "v1",
        "StorageClass",
        "storageclasses",
        false,
        &["sc"],
        &[],
        &[],
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        &["crd", "crds"],
        &["status"],
        &[],
    ),
    (
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        true,
        &["ev"],
        &[],
        &[],
    ),
    (
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
        &[],
        &[],
        &[],
    ),
    (
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        true,
        &[],
        &[],
        &[],
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
        &["pc"],
        &[],
        &[],
    ),
];

/// Thread-safe set of resource types; CRDs add and remove entries at run time.
/// Kinds that are only ever created (and answered), never read back.
fn create_only(kind: &str) -> bool {
    matches!(
        kind,
        "Binding" | "SelfSubjectAccessReview" | "SelfSubjectRulesReview" | "SelfSubjectReview"
    )
}

#[derive(Debug)]
pub struct Registry {
    types: RwLock<Vec<ResourceType>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Registry {
    pub fn builtin() -> Self {
        let types = BUILTIN
            .iter()
            .map(
                |&(group, version, kind, plural, namespaced, short, subs, cats)| ResourceType {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    singular: kind.to_ascii_lowercase(),
                    namespaced,
                    short_names: short.iter().map(|s| (*s).to_owned()).collect(),
                    verbs: if create_only(kind) {
                        vec!["create".into()]
                    } else {
                        RW.iter().map(|s| (*s).to_owned()).collect()
                    },
                    subresources: subs.iter().map(|s| (*s).to_owned()).collect(),
                    categories: cats.iter().map(|s| (*s).to_owned()).collect(),
                    custom: false,
                },
            )
            .collect();
        Registry {
            types: RwLock::new(types),
        }
    }

    pub fn all(&self) -> Vec<ResourceType> {
        self.types.read().expect("registry lock").clone()
    }

    /// Look up by group, version and plural (as in a request path).
    pub fn by_path(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        self.types
            .read()
            .expect("registry lock")
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
            .cloned()
    }

    /// Look up by apiVersion and kind (as in an object).
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<ResourceType> {
        let (group, version) = split_api_version(api_version);
        self.types
            .read()
            .expect("registry lock")
            .iter()
            .find(|t| t.group == group && t.version == version && t.kind == kind)
            .cloned()
    }

    /// The version a group serves first, for discovery's preferred version.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for t in self.types.read().expect("registry lock").iter() {
            match out.iter_mut().find(|(g, _)| *g == t.group) {
                Some((_, versions)) => {
                    if !versions.contains(&t.version) {
                        versions.push(t.version.clone());
                    }
                }
                None => out.push((t.group.clone(), vec![t.version.clone()])),
            }
        }
        out
    }

    /// Serve the resources of an Established CRD (idempotent).
    pub fn add_crd(&self, crd: &Value) {
        let Some(types) = crd_resource_types(crd) else {
            return;
        };
        let mut all = self.types.write().expect("registry lock");
        all.retain(|t| {
            !(t.custom
                && types
                    .iter()
                    .any(|n| n.group == t.group && n.plural == t.plural))
        });
        all.extend(types);
    }

    /// Stop serving a CRD's resources.
    pub fn remove_crd(&self, crd: &Value) {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let plural = crd
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.types
            .write()
            .expect("registry lock")
            .retain(|t| !(t.custom && t.group == group && t.plural == plural));
    }
}

/// `apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

pub(crate) fn crd_resource_types(crd: &Value) -> Option<Vec<ResourceType>> {
    let spec = crd.get("spec")?;
    let names = spec.get("names")?;
    let group = spec.get("group")?.as_str()?.to_owned();
    let kind = names.get("kind")?.as_str()?.to_owned();
    let plural = names.get("plural")?.as_str()?.to_owned();
    let singular = names
        .get("singular")
        .and_then(Value::as_str)
        .map_or_else(|| kind.to_ascii_lowercase(), str::to_owned);
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
    let versions = spec.get("versions")?.as_array()?;
    Some(
        versions
            .iter()
            .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
            .filter_map(|v| {
                let mut subresources = Vec::new();
                if let Some(subs) = v.get("subresources").and_then(Value::as_object) {
                    subresources.extend(subs.keys().cloned());
                }
                Some(ResourceType {
                    group: group.clone(),
                    version: v.get("name")?.as_str()?.to_owned(),
                    kind: kind.clone(),
                    plural: plural.clone(),
                    singular: singular.clone(),
                    namespaced,
                    short_names: strings(names.get("shortNames")),
                    verbs: RW.iter().map(|s| (*s).to_owned()).collect(),
                    subresources,
                    categories: strings(names.get("categories")),
                    custom: true,
                })
            })
            .collect(),
    )
}

/// The APIResource entry of legacy discovery (`/api/v1`, `/apis/{g}/{v}`).
pub fn api_resource_json(t: &ResourceType) -> Vec<Value> {
    let mut out = vec![json!({
        "name": t.plural,
        "singularName": t.singular,
        "namespaced": t.namespaced,
        "kind": t.kind,
        "verbs": t.verbs,
        "shortNames": t.short_names,
        "categories": t.categories,
        "storageVersionHash": "",
    })];
    for sub in &t.subresources {
        let (kind, verbs): (&str, &[&str]) = match sub.as_str() {
            "log" => ("Pod", &["get"]),
            "scale" => ("Scale", &["get", "patch", "update"]),
            "binding" => ("Binding", &["create"]),
            "eviction" => ("Eviction", &["create"]),
            _ => (&t.kind, &["get", "patch", "update"]),
        };
        out.push(json!({
            "name": format!("{}/{}", t.plural, sub),
            "singularName": "",
            "namespaced": t.namespaced,
            "kind": kind,
            "verbs": verbs,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_builtin_kinds_by_path_and_by_kind() {
        let r = Registry::builtin();
        let d = r.by_path("apps", "v1", "deployments").unwrap();
        assert_eq!(d.kind, "Deployment");
        assert!(d.namespaced && d.has_status());
        assert!(!r.by_kind("v1", "Namespace").unwrap().namespaced);
        assert!(r.by_kind("apps/v1beta1", "Deployment").is_none());
    }

    #[test]
    fn crds_add_and_remove_their_resources() {
        let r = Registry::builtin();
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                              "subresources": {"status": {}}}]}
        });
        r.add_crd(&crd);
        r.add_crd(&crd);
        let w = r.by_kind("example.com/v1", "Widget").unwrap();
        assert_eq!((w.plural.as_str(), w.has_status()), ("widgets", true));
        assert_eq!(r.all().iter().filter(|t| t.kind == "Widget").count(), 1);
        r.remove_crd(&crd);
        assert!(r.by_kind("example.com/v1", "Widget").is_none());
    }
}
