//! The roles and bindings a fresh RBAC cluster has, so that a test starts where a real
//! cluster does: `cluster-admin` for `system:masters`, and discovery, `/version` and self
//! access reviews for every authenticated user.

use crate::store::{ObjectKey, Store};
use serde_json::{Value, json};

const GROUP: &str = "rbac.authorization.k8s.io";

fn meta(name: &str) -> Value {
    json!({"name": name,
           "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
           "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}})
}

fn role(name: &str, rules: &Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": meta(name), "rules": rules})
}

fn binding(name: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": GROUP, "kind": "Group", "name": g}))
        .collect();
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": meta(name),
           "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name},
           "subjects": subjects})
}

/// Store the bootstrap ClusterRoles and ClusterRoleBindings.
pub fn bootstrap_roles(store: &Store) {
    let roles = [
        (
            "cluster-admin",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
            &["system:masters"][..],
        ),
        (
            "system:discovery",
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz",
                                        "/livez", "/openapi", "/openapi/*", "/readyz",
                                        "/version", "/version/"],
                    "verbs": ["get"]}]),
            &["system:authenticated"][..],
        ),
        (
            "system:basic-user",
            json!([{"apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"]},
                   {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
                    "verbs": ["create"]}]),
            &["system:authenticated"][..],
        ),
        (
            "system:public-info-viewer",
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                    "verbs": ["get"]}]),
            &["system:authenticated", "system:unauthenticated"][..],
        ),
    ];
    for (name, rules, groups) in roles {
        let _ = store.create(
            &ObjectKey::new(GROUP, "clusterroles", "", name),
            role(name, &rules),
        );
        let _ = store.create(
            &ObjectKey::new(GROUP, "clusterrolebindings", "", name),
            binding(name, groups),
        );
    }
}
