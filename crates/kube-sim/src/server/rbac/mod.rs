//! RBAC authorization as kube-apiserver's RBAC authorizer decides it, from the Roles,
//! ClusterRoles, RoleBindings and ClusterRoleBindings stored in the sim: ordinary objects
//! that kubectl or a test creates and deletes, so grants and revocations take effect on the
//! next request.

pub mod attributes;
mod bootstrap;
mod rules;

pub use attributes::{Attributes, ResourceAttributes};
pub use bootstrap::bootstrap_roles;

use super::authn::{MASTERS, UserInfo, service_account};
use crate::store::{ObjectKey, Store};
use serde_json::Value;

const GROUP: &str = "rbac.authorization.k8s.io";

/// The authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// `RBAC: allowed by RoleBinding "b/ns" of Role "r" to User "u"` when allowed; when not,
    /// the errors met on the way (a binding to a missing role), or empty.
    pub reason: String,
}

/// Authorize a request: members of `system:masters` always, anyone else when a rule of a
/// role bound to them allows it.
pub fn authorize(store: &Store, attrs: &Attributes) -> Decision {
    if attrs.user.in_group(MASTERS) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let namespace = attrs
        .resource
        .as_ref()
        .map(|r| r.namespace.as_str())
        .unwrap_or_default();
    let mut allowed_by = None;
    let errors = visit(store, &attrs.user, namespace, &mut |source, rule| {
        if rules::allows(rule, attrs) {
            allowed_by = Some(source.to_owned());
            return false;
        }
        true
    });
    match allowed_by {
        Some(source) => Decision {
            allowed: true,
            reason: format!("RBAC: allowed by {source}"),
        },
        None => Decision {
            allowed: false,
            reason: if errors.is_empty() {
                String::new()
            } else {
                format!("RBAC: {}", aggregate(&errors))
            },
        },
    }
}

/// Every rule that applies to `user` in `namespace` (cluster-wide grants included), and
/// the errors met: what a SelfSubjectRulesReview reports.
pub fn rules_for(store: &Store, user: &UserInfo, namespace: &str) -> (Vec<Value>, Vec<String>) {
    let mut rules = Vec::new();
    let errors = visit(store, user, namespace, &mut |_, rule| {
        rules.push(rule.clone());
        true
    });
    (rules, errors)
}

/// `utilerrors.NewAggregate(...).Error()`: one message alone, several in brackets.
pub fn aggregate(errors: &[String]) -> String {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&String> = errors.iter().filter(|e| seen.insert(*e)).collect();
    match unique.as_slice() {
        [one] => (*one).clone(),
        many => format!(
            "[{}]",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Walk the rules granted to `user`: ClusterRoleBindings first, then the RoleBindings of
/// `namespace`, as the RBAC rule resolver does. `f` gets each rule with a description of
/// where it comes from and returns whether to go on. Returns the errors met.
fn visit(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
    f: &mut dyn FnMut(&str, &Value) -> bool,
) -> Vec<String> {
    let mut errors = Vec::new();
    let (cluster_bindings, _) = store.list(GROUP, "clusterrolebindings", None);
    let (bindings, _) = if namespace.is_empty() {
        (Vec::new(), 0)
    } else {
        store.list(GROUP, "rolebindings", Some(namespace))
    };
    let all = cluster_bindings
        .iter()
        .map(|b| (b, ""))
        .chain(bindings.iter().map(|b| (b, namespace)));
    for (binding, ns) in all {
        let Some(subject) = subjects(binding).find(|s| applies_to(user, s, ns)) else {
            continue;
        };
        let role_ref = binding.get("roleRef").unwrap_or(&Value::Null);
        let rules = match role_rules(store, role_ref, ns) {
            Ok(rules) => rules,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let source = describe(binding, role_ref, subject, ns);
        for rule in &rules {
            if !f(&source, rule) {
                return errors;
            }
        }
    }
    errors
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn subjects(binding: &Value) -> impl Iterator<Item = &Value> {
    binding
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Whether a binding's subject is this user (a ServiceAccount subject without a namespace
/// means one in the binding's namespace).
fn applies_to(user: &UserInfo, subject: &Value, binding_ns: &str) -> bool {
    let name = str_of(subject, "name");
    match str_of(subject, "kind") {
        "User" => user.name == name,
        "Group" => user.in_group(name),
        "ServiceAccount" => {
            let ns = match str_of(subject, "namespace") {
                "" => binding_ns,
                ns => ns,
            };
            !ns.is_empty() && service_account(&user.name) == Some((ns, name))
        }
        _ => false,
    }
}

/// The rules of the role a binding refers to (a RoleBinding may refer to a ClusterRole).
fn role_rules(store: &Store, role_ref: &Value, binding_ns: &str) -> Result<Vec<Value>, String> {
    let name = str_of(role_ref, "name");
    let (plural, singular, ns) = match str_of(role_ref, "kind") {
        "ClusterRole" => ("clusterroles", "clusterrole", ""),
        "Role" => ("roles", "role", binding_ns),
        other => return Err(format!("unsupported role reference kind: {other:?}")),
    };
    let role = store
        .get(&ObjectKey::new(GROUP, plural, ns, name))
        .ok_or_else(|| format!("{singular}.{GROUP} {name:?} not found"))?;
    Ok(role
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// `ClusterRoleBinding "b" of ClusterRole "r" to User "u"`, or for a RoleBinding
/// `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`.
fn describe(binding: &Value, role_ref: &Value, subject: &Value, ns: &str) -> String {
    let name = binding
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = str_of(subject, "kind");
    let subject_name = str_of(subject, "name");
    let who = if kind == "ServiceAccount" {
        let sa_ns = match str_of(subject, "namespace") {
            "" => ns,
            n => n,
        };
        format!("{kind} {:?}", format!("{subject_name}/{sa_ns}"))
    } else {
        format!("{kind} {subject_name:?}")
    };
    let binding = if ns.is_empty() {
        format!("ClusterRoleBinding {name:?}")
    } else {
        format!("RoleBinding {:?}", format!("{name}/{ns}"))
    };
    format!(
        "{binding} of {} {:?} to {who}",
        str_of(role_ref, "kind"),
        str_of(role_ref, "name")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::server::params::Params;
    use serde_json::json;

    fn store() -> Store {
        let s = Store::new(Clock::fixed(), 100);
        bootstrap_roles(&s);
        s
    }

    fn put(store: &Store, object: Value) {
        let plural = match object["kind"].as_str().unwrap() {
            "Role" => "roles",
            "RoleBinding" => "rolebindings",
            "ClusterRole" => "clusterroles",
            _ => "clusterrolebindings",
        };
        let ns = object["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = object["metadata"]["name"].as_str().unwrap();
        store
            .create(&ObjectKey::new(GROUP, plural, ns, name), object)
            .unwrap();
    }

    fn check(store: &Store, user: &UserInfo, method: &str, path: &str) -> Decision {
        let attrs = Attributes::of_request(user.clone(), method, path, &Params::default());
        authorize(store, &attrs)
    }

    fn ci() -> UserInfo {
        UserInfo::authenticated("ci", &["devs".into()])
    }

    #[test]
    fn a_role_binding_grants_its_role_in_its_namespace_only() {
        let s = store();
        put(
            &s,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "reader", "namespace": "shop"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]}]}),
        );
        put(
            &s,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "ci-reads", "namespace": "shop"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "User", "name": "ci"}]}),
        );
        let d = check(&s, &ci(), "GET", "/api/v1/namespaces/shop/pods/web/log");
        assert_eq!(
            d,
            Decision {
                allowed: true,
                reason:
                    r#"RBAC: allowed by RoleBinding "ci-reads/shop" of Role "reader" to User "ci""#
                        .into()
            }
        );
        assert!(!check(&s, &ci(), "GET", "/api/v1/namespaces/other/pods").allowed);
        assert!(
            !check(&s, &ci(), "GET", "/api/v1/pods").allowed,
            "all namespaces is cluster scope"
        );
        assert!(!check(&s, &ci(), "DELETE", "/api/v1/namespaces/shop/pods/web").allowed);
        let other = UserInfo::authenticated("someone", &[]);
        assert!(!check(&s, &other, "GET", "/api/v1/namespaces/shop/pods").allowed);
    }

    #[test]
    fn groups_service_accounts_and_cluster_roles_in_role_bindings() {
        let s = store();
        put(
            &s,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "deployer"},
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}]}),
        );
        put(
            &s,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "deployers", "namespace": "shop"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "deployer"},
            "subjects": [{"kind": "ServiceAccount", "name": "ci"},
                         {"kind": "Group", "name": "devs"}]}),
        );
        let sa = UserInfo::authenticated("system:serviceaccount:shop:ci", &[]);
        let d = check(
            &s,
            &sa,
            "PATCH",
            "/apis/apps/v1/namespaces/shop/deployments/web",
        );
        assert_eq!(
            d.reason,
            r#"RBAC: allowed by RoleBinding "deployers/shop" of ClusterRole "deployer" to ServiceAccount "ci/shop""#
        );
        let elsewhere = UserInfo::authenticated("system:serviceaccount:other:ci", &[]);
        assert!(
            !check(
                &s,
                &elsewhere,
                "PATCH",
                "/apis/apps/v1/namespaces/shop/deployments/web"
            )
            .allowed
        );
        assert!(
            check(
                &s,
                &ci(),
                "DELETE",
                "/apis/apps/v1/namespaces/shop/deployments/web"
            )
            .allowed
        );
        assert!(
            !check(
                &s,
                &ci(),
                "GET",
                "/apis/apps/v1/namespaces/prod/deployments/web"
            )
            .allowed
        );
    }

    #[test]
    fn cluster_role_bindings_grant_everywhere_and_discovery_is_for_everyone() {
        let s = store();
        let ci = ci();
        assert!(check(&s, &ci, "GET", "/apis").allowed);
        assert!(check(&s, &ci, "GET", "/api/v1").allowed);
        assert!(check(&s, &ci, "GET", "/openapi/v3/apis/apps/v1").allowed);
        assert!(check(&s, &ci, "GET", "/version").allowed);
        assert!(
            check(
                &s,
                &ci,
                "POST",
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
            )
            .allowed
        );
        assert!(!check(&s, &ci, "GET", "/debug/pprof").allowed);
        assert!(!check(&s, &ci, "GET", "/api/v1/nodes").allowed);
        put(
            &s,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "node-reader"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}]}),
        );
        put(
            &s,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "ci-nodes"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "node-reader"},
            "subjects": [{"kind": "User", "name": "ci"}]}),
        );
        assert!(check(&s, &ci, "GET", "/api/v1/nodes").allowed);
        let admin = UserInfo::authenticated("root", &[MASTERS.into()]);
        assert!(check(&s, &admin, "DELETE", "/api/v1/nodes/n1").allowed);
    }

    #[test]
    fn a_binding_to_a_missing_role_is_the_denials_reason() {
        let s = store();
        put(
            &s,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "dangling", "namespace": "shop"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gone"},
            "subjects": [{"kind": "User", "name": "ci"}]}),
        );
        let d = check(&s, &ci(), "GET", "/api/v1/namespaces/shop/pods");
        assert!(!d.allowed);
        assert_eq!(
            d.reason,
            r#"RBAC: role.rbac.authorization.k8s.io "gone" not found"#
        );
    }
}
