//! What a request asks to do, in the authorizer's terms (kube-apiserver's `RequestInfo`):
//! a verb on a resource of a group in a namespace, or a verb on a non-resource path; and
//! the 403 the API server answers when no rule allows it.

use crate::server::authn::UserInfo;
use crate::server::params::Params;
use crate::server::path::{self, Route};
use crate::server::status::ApiError;
use serde_json::{Map, Value, json};

/// A request on a resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    /// Empty for cluster-scoped requests (and for collections across namespaces).
    pub namespace: String,
    /// Empty for the core group.
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    /// Empty for collections (unless a list or watch selects one name by field).
    pub name: String,
}

impl ResourceAttributes {
    /// `pods/log`, or `pods` without a subresource: what rules list and messages name.
    pub fn combined(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

/// What is asked of the authorizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes {
    pub user: UserInfo,
    /// `get`, `list`, `watch`, `create`, ... for resources; the lowercase HTTP method for
    /// non-resource paths.
    pub verb: String,
    /// `None` for a non-resource request (discovery, `/version`, `/openapi/v3`, ...).
    pub resource: Option<ResourceAttributes>,
    /// The request path (what non-resource rules match).
    pub path: String,
}

impl Attributes {
    /// The attributes of an HTTP request, as kube-apiserver's request info factory reads
    /// them from the method, path and query.
    pub fn of_request(user: UserInfo, method: &str, uri_path: &str, params: &Params) -> Self {
        let resource = match path::parse(uri_path) {
            Some(Route::Resource(p)) => Some(p),
            _ => None,
        };
        let Some(p) = resource else {
            return Attributes {
                user,
                verb: method.to_ascii_lowercase(),
                resource: None,
                path: uri_path.to_owned(),
            };
        };
        let has_name = p.name.is_some();
        let verb = match (method, has_name) {
            ("GET" | "HEAD", true) => "get",
            ("GET" | "HEAD", false) if params.flag("watch") => "watch",
            ("GET" | "HEAD", false) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "delete",
            ("DELETE", false) => "deletecollection",
            _ => "",
        };
        let verb = if verb.is_empty() {
            method.to_ascii_lowercase()
        } else {
            verb.to_owned()
        };
        let mut name = p.name.clone().unwrap_or_default();
        if name.is_empty() && (verb == "list" || verb == "watch") {
            // A single-object list or watch is authorized for that name (resourceNames).
            name = params
                .get("fieldSelector")
                .and_then(exact_name)
                .unwrap_or_default();
        }
        // `/api/v1/namespaces/shop` is a request in the namespace it names.
        let namespace = match (
            &p.namespace,
            p.group.is_empty() && p.resource == "namespaces",
        ) {
            (Some(ns), _) => ns.clone(),
            (None, true) => p.name.clone().unwrap_or_default(),
            (None, false) => String::new(),
        };
        Attributes {
            user,
            verb,
            resource: Some(ResourceAttributes {
                namespace,
                group: p.group,
                version: p.version,
                resource: p.resource,
                subresource: p.subresource.unwrap_or_default(),
                name,
            }),
            path: uri_path.to_owned(),
        }
    }

    /// What the API server says when no rule allows the request (`reason`: the
    /// authorizer's, such as a binding to a role that does not exist).
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let user = &self.user.name;
        let mut message = match &self.resource {
            None => format!("User {user:?} cannot {} path {:?}", self.verb, self.path),
            Some(r) => {
                let scope = if r.namespace.is_empty() {
                    "at the cluster scope".to_owned()
                } else {
                    format!("in the namespace {:?}", r.namespace)
                };
                format!(
                    "User {user:?} cannot {} resource {:?} in API group {:?} {scope}",
                    self.verb,
                    r.combined(),
                    r.group
                )
            }
        };
        if !reason.is_empty() {
            message = format!("{message}: {reason}");
        }
        // apierrors.NewForbidden: the qualified resource and name lead the message, and
        // the details carry them (empty fields left out).
        let mut details = Map::new();
        let message = match &self.resource {
            None => format!("forbidden: {message}"),
            Some(r) => {
                let qualified = if r.group.is_empty() {
                    r.resource.clone()
                } else {
                    format!("{}.{}", r.resource, r.group)
                };
                for (k, v) in [
                    ("name", &r.name),
                    ("group", &r.group),
                    ("kind", &r.resource),
                ] {
                    if !v.is_empty() {
                        details.insert(k.into(), json!(v));
                    }
                }
                if r.name.is_empty() {
                    format!("{qualified} is forbidden: {message}")
                } else {
                    format!("{qualified} {:?} is forbidden: {message}", r.name)
                }
            }
        };
        ApiError::new(403, "Forbidden", message).with_details(Value::Object(details))
    }
}

/// The name a field selector pins (`metadata.name=web`, alone or among other terms).
fn exact_name(selector: &str) -> Option<String> {
    selector.split(',').find_map(|term| {
        let (field, value) = term
            .split_once("==")
            .or_else(|| term.split_once('='))
            .filter(|(f, _)| !f.ends_with('!'))?;
        (field.trim() == "metadata.name" && !value.is_empty()).then(|| value.trim().to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user() -> UserInfo {
        UserInfo::authenticated("ci", &[])
    }

    fn of(method: &str, path: &str, query: &str) -> Attributes {
        Attributes::of_request(user(), method, path, &Params::parse(Some(query)))
    }

    #[test]
    fn reads_verbs_and_scopes_as_the_request_info_factory() {
        let a = of("GET", "/api/v1/namespaces/shop/pods", "watch=true");
        assert_eq!(a.verb, "watch");
        let r = a.resource.unwrap();
        assert_eq!(
            (r.namespace.as_str(), r.resource.as_str()),
            ("shop", "pods")
        );

        let a = of(
            "GET",
            "/api/v1/namespaces/shop/pods",
            "fieldSelector=metadata.name%3Dweb",
        );
        assert_eq!(a.verb, "list");
        assert_eq!(a.resource.unwrap().name, "web");

        let a = of("DELETE", "/apis/apps/v1/namespaces/shop/deployments", "");
        assert_eq!(a.verb, "deletecollection");

        let a = of("GET", "/api/v1/namespaces/shop", "");
        let r = a.resource.unwrap();
        assert_eq!((r.namespace.as_str(), r.name.as_str()), ("shop", "shop"));

        let a = of("GET", "/apis/apps/v1", "");
        assert_eq!((a.verb.as_str(), a.resource), ("get", None));
    }

    #[test]
    fn forbidden_messages_have_the_api_servers_shape() {
        let e = of("GET", "/api/v1/namespaces/shop/pods/web", "").forbidden("");
        assert_eq!(
            e.message,
            r#"pods "web" is forbidden: User "ci" cannot get resource "pods" in API group "" in the namespace "shop""#
        );
        assert_eq!(
            e.status()["details"],
            json!({"name": "web", "kind": "pods"})
        );
        assert_eq!(e.status()["reason"], "Forbidden");
        assert_eq!(e.status()["code"], 403);

        let e = of("GET", "/api/v1/namespaces/shop/pods/web/log", "").forbidden("");
        assert!(
            e.message.contains(r#"cannot get resource "pods/log""#),
            "{}",
            e.message
        );

        let e = of("GET", "/apis/apps/v1/deployments", "").forbidden("");
        assert_eq!(
            e.message,
            r#"deployments.apps is forbidden: User "ci" cannot list resource "deployments" in API group "apps" at the cluster scope"#
        );
        assert_eq!(
            e.status()["details"],
            json!({"group": "apps", "kind": "deployments"})
        );

        let e = of("GET", "/apis", "").forbidden("");
        assert_eq!(e.message, r#"forbidden: User "ci" cannot get path "/apis""#);
        assert_eq!(e.status()["details"], json!({}));

        let e = of("GET", "/api/v1/namespaces/shop/pods", "")
            .forbidden(r#"RBAC: role.rbac.authorization.k8s.io "gone" not found"#);
        assert!(
            e.message.ends_with(
                r#"in the namespace "shop": RBAC: role.rbac.authorization.k8s.io "gone" not found"#
            ),
            "{}",
            e.message
        );
    }
}
