//! Discovery documents: `/version`, legacy `/api` and `/apis` lists, per-group-version
//! resource lists, and aggregated discovery (apidiscovery.k8s.io/v2) for clients that ask.

use crate::resources::{Registry, ResourceType, api_resource_json};
use crate::scenario::KubeVersion;
use serde_json::{Value, json};

/// The content type of aggregated discovery answers; clients fall back when it differs.
pub const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether the Accept header asks for aggregated discovery (apidiscovery.k8s.io/v2) before
/// anything kube-sim would rather answer: media types are taken in order, their parameters
/// compared exactly (`v=v2beta1` is not `v=v2`: a client that only reads v2beta1 gets the
/// legacy documents, as from an API server that no longer serves v2beta1).
pub fn wants_aggregated(accept: &str) -> bool {
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let kind = parts.next().unwrap_or_default();
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        match param("as") {
            Some("APIGroupDiscoveryList")
                if param("g") == Some("apidiscovery.k8s.io") && param("v") == Some("v2") =>
            {
                return true;
            }
            None if kind.ends_with("json") || kind == "*/*" || kind.is_empty() => return false,
            // Another aggregated version kube-sim does not serve, or a type that is not JSON:
            // try the next type.
            _ => {}
        }
    }
    false
}

pub fn version(v: KubeVersion) -> Value {
    json!({
        "major": v.major.to_string(),
        "minor": v.minor.to_string(),
        "gitVersion": format!("v{}.{}.0", v.major, v.minor),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub fn api_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
           "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]})
}

fn group_json(group: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    json!({
        "name": group,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": gv(&versions[0]),
    })
}

pub fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_json(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(registry: &Registry, name: &str) -> Option<Value> {
    let groups = registry.groups();
    let (_, versions) = groups.iter().find(|(g, _)| g == name)?;
    let mut g = group_json(name, versions);
    g["kind"] = json!("APIGroup");
    g["apiVersion"] = json!("v1");
    Some(g)
}

pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let types: Vec<ResourceType> = registry
        .all()
        .into_iter()
        .filter(|t| t.group == group && t.version == version)
        .collect();
    if types.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let resources: Vec<Value> = types.iter().flat_map(api_resource_json).collect();
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

/// `APIGroupDiscoveryList` for `/api` (core only) or `/apis` (all named groups).
pub fn aggregated(registry: &Registry, core: bool) -> Value {
    let all = registry.all();
    let items: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = all
                        .iter()
                        .filter(|t| &t.group == g && &t.version == v)
                        .map(aggregated_resource)
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
           "metadata": {}, "items": items})
}

fn aggregated_resource(t: &ResourceType) -> Value {
    let rk = json!({"group": t.group, "version": t.version, "kind": t.kind});
    let subs: Vec<Value> = t
        .subresources
        .iter()
        .map(|s| {
            let (kind, verbs): (&str, &[&str]) = match s.as_str() {
                "log" => ("Pod", &["get"]),
                "scale" => ("Scale", &["get", "patch", "update"]),
                "binding" => ("Binding", &["create"]),
                "eviction" => ("Eviction", &["create"]),
                _ => (&t.kind, &["get", "patch", "update"]),
            };
            json!({"subresource": s, "responseKind": {"group": t.group, "version": t.version, "kind": kind}, "verbs": verbs})
        })
        .collect();
    let mut r = json!({
        "resource": t.plural,
        "responseKind": rk,
        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": t.singular,
        "verbs": t.verbs,
    });
    if !t.short_names.is_empty() {
        r["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        r["categories"] = json!(t.categories);
    }
    if !subs.is_empty() {
        r["subresources"] = json!(subs);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregated_discovery_lists_core_and_groups_separately() {
        let r = Registry::builtin();
        let core = aggregated(&r, true);
        assert_eq!(core["items"].as_array().unwrap().len(), 1);
        let pods = core["items"][0]["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["resource"] == "pods")
            .unwrap();
        assert_eq!(pods["scope"], "Namespaced");
        assert!(
            pods["subresources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["subresource"] == "log")
        );
        let apis = aggregated(&r, false);
        assert!(
            apis["items"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g["metadata"]["name"] == "apps")
        );
        assert!(wants_aggregated(&format!("{AGGREGATED},application/json")));
        assert!(!wants_aggregated("application/json"));
    }

    #[test]
    fn aggregated_discovery_is_chosen_only_for_v2() {
        let v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
        let v2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
        assert!(wants_aggregated(v2));
        assert!(wants_aggregated(&format!(
            "{v2},{v2beta1},application/json"
        )));
        // kubectl 1.33 lists v2 first; an older client-go (kpt's) asks for v2beta1 only.
        assert!(!wants_aggregated(&format!("{v2beta1},application/json")));
        assert!(wants_aggregated(&format!("{v2beta1};q=0.9,{v2}")));
        assert!(!wants_aggregated("application/json"));
        assert!(!wants_aggregated("application/json,*/*"));
    }

    #[test]
    fn autoscaling_prefers_v2() {
        let r = Registry::builtin();
        assert_eq!(
            group(&r, "autoscaling").unwrap()["preferredVersion"]["version"],
            "v2"
        );
        let list = resource_list(&r, "apps", "v1").unwrap();
        assert!(
            list["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["name"] == "deployments/scale")
        );
    }
}
