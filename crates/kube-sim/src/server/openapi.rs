//! A minimal OpenAPI v3 surface: kubectl reads it to learn that PATCH accepts
//! `fieldValidation` (server-side validation), and refuses to apply without it.
//! Schemas are not served; operations carry only what clients look up.

use crate::resources::{Registry, ResourceType};
use serde_json::{Map, Value, json};

/// `/openapi/v3`: one entry per group-version.
pub fn index(registry: &Registry) -> Value {
    let mut paths = Map::new();
    for (group, versions) in registry.groups() {
        for v in versions {
            let gv = gv_path(&group, &v);
            paths.insert(
                gv.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash=kube-sim")}),
            );
        }
    }
    json!({"paths": paths})
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/{g}/{v}`: the operations of each resource.
pub fn group_version(registry: &Registry, gv: &str) -> Option<Value> {
    let types: Vec<ResourceType> = registry
        .all()
        .into_iter()
        .filter(|t| gv_path(&t.group, &t.version) == gv)
        .collect();
    if types.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    for t in &types {
        let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
        let params = |names: &[&str]| -> Vec<Value> {
            names
                .iter()
                .map(|n| json!({"name": n, "in": "query", "schema": {"type": "string"}}))
                .collect()
        };
        let write = params(&[
            "dryRun",
            "fieldManager",
            "fieldValidation",
            "force",
            "pretty",
        ]);
        let item = json!({
            "get": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "get", "parameters": params(&["pretty"]), "responses": {}},
            "put": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "put", "parameters": write, "responses": {}},
            "patch": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "patch", "parameters": write, "responses": {}},
            "delete": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "delete", "parameters": params(&["dryRun"]), "responses": {}},
        });
        let base = format!("/{}", gv_path(&t.group, &t.version));
        let path = if t.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
        } else {
            format!("{base}/{}/{{name}}", t.plural)
        };
        paths.insert(path, item);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
