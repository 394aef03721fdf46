//! The grants a deploy needs as RBAC objects to apply: a Role per namespace and a
//! ClusterRole for cluster-scoped kinds, each rule holding the resources of one API group
//! that need the same verbs, and the bindings for a subject left to the user to name.

use crate::pipeline::permissions::Grants;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One Role's (or the ClusterRole's) rules: (API group, verbs) -> resources.
type Rules<'a> = BTreeMap<(&'a str, Vec<&'a str>), Vec<&'a str>>;

/// YAML for `grants`, every object named `name`; `header` comes first as comment lines.
pub fn roles(grants: &Grants, name: &str, header: &str) -> String {
    // By namespace; `None` (the ClusterRole) sorts first, as a namespaced deployer needs
    // it bound too.
    let mut by_place: BTreeMap<Option<&str>, Rules<'_>> = BTreeMap::new();
    for ((ns, group, resource), verbs) in grants {
        let verbs: Vec<&str> = verbs.iter().copied().collect();
        by_place
            .entry(ns.as_deref())
            .or_default()
            .entry((group.as_str(), verbs))
            .or_default()
            .push(resource.as_str());
    }
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "# {line}");
    }
    for (i, (place, rules)) in by_place.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let _ = writeln!(out, "apiVersion: rbac.authorization.k8s.io/v1");
        match place {
            None => {
                let _ = writeln!(out, "kind: ClusterRole\nmetadata:\n  name: {name}");
            }
            Some(ns) => {
                let _ = writeln!(
                    out,
                    "kind: Role\nmetadata:\n  name: {name}\n  namespace: {ns}"
                );
            }
        }
        out.push_str("rules:\n");
        for ((group, verbs), resources) in rules {
            let _ = writeln!(out, "  - apiGroups: [\"{group}\"]");
            let _ = writeln!(out, "    resources: [{}]", resources.join(", "));
            let _ = writeln!(out, "    verbs: [{}]", verbs.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn a_role_per_namespace_and_a_cluster_role_with_rules_merged_by_verbs() {
        let mut grants = Grants::new();
        let mut add = |ns: Option<&str>, group: &str, resource: &str, verbs: &[&'static str]| {
            grants.insert(
                (ns.map(str::to_owned), group.to_owned(), resource.to_owned()),
                verbs.iter().copied().collect::<BTreeSet<_>>(),
            );
        };
        add(
            Some("shop"),
            "apps",
            "deployments",
            &["create", "get", "list", "patch", "watch"],
        );
        add(Some("shop"), "apps", "replicasets", &["list", "watch"]);
        add(Some("shop"), "", "pods", &["list", "watch"]);
        add(Some("shop"), "", "events", &["list", "watch"]);
        add(Some("shop"), "", "pods/log", &["get"]);
        add(
            None,
            "",
            "namespaces",
            &["create", "get", "list", "patch", "watch"],
        );
        let yaml = roles(&grants, "deploy-action", "what a deploy of k8s/ needs");
        insta::assert_snapshot!(yaml, @r#"
        # what a deploy of k8s/ needs
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: deploy-action
        rules:
          - apiGroups: [""]
            resources: [namespaces]
            verbs: [create, get, list, patch, watch]
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata:
          name: deploy-action
          namespace: shop
        rules:
          - apiGroups: [""]
            resources: [pods/log]
            verbs: [get]
          - apiGroups: [""]
            resources: [events, pods]
            verbs: [list, watch]
          - apiGroups: ["apps"]
            resources: [deployments]
            verbs: [create, get, list, patch, watch]
          - apiGroups: ["apps"]
            resources: [replicasets]
            verbs: [list, watch]
        "#);
        // It is YAML a cluster takes.
        let docs: Vec<serde_json::Value> = yaml
            .split("---\n")
            .map(|d| serde_yaml_ng::from_str(d).unwrap())
            .collect();
        assert_eq!(docs[1]["rules"][1]["resources"][1], "pods");
    }
}
