//! Impersonation (`kubectl --as`, `--as-group`): the `Impersonate-User` and
//! `Impersonate-Group` headers, each authorized as the verb `impersonate` on `users`,
//! `groups` or a namespace's `serviceaccounts`, after which the request is served (and
//! authorized) as the impersonated user, as kube-apiserver's impersonation filter does.

use super::authn::{AUTHENTICATED, UserInfo, service_account};
use super::rbac::{self, Attributes, ResourceAttributes};
use super::state::ServerState;
use super::status::ApiError;
use axum::http::HeaderMap;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UNAUTHENTICATED: &str = "system:unauthenticated";

/// The user to serve the request as: `user` itself without impersonation headers, else
/// the impersonated user once `user` may impersonate it (403 when not).
pub fn apply(
    state: &ServerState,
    user: UserInfo,
    headers: &HeaderMap,
) -> Result<UserInfo, ApiError> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect()
    };
    let (names, groups) = (values(USER), values(GROUP));
    let Some(name) = names.first() else {
        if groups.is_empty() {
            return Ok(user);
        }
        let asked: Vec<String> = groups
            .iter()
            .map(|g| format!("{{Group  {g}    }}"))
            .collect();
        return Err(ApiError::bad_request(format!(
            "requested [{}] without impersonating a user",
            asked.join(" ")
        )));
    };
    let sa = service_account(name);
    let mut checks = vec![match sa {
        Some((ns, sa_name)) => target(ns, "serviceaccounts", sa_name),
        None => target("", "users", name),
    }];
    checks.extend(groups.iter().map(|g| target("", "groups", g)));
    if state.rbac {
        for resource in checks {
            let attrs = Attributes {
                user: user.clone(),
                verb: "impersonate".into(),
                resource: Some(resource),
                path: String::new(),
            };
            let decision = rbac::authorize(&state.store, &attrs);
            if !decision.allowed {
                return Err(attrs.forbidden(&decision.reason));
            }
        }
    }
    let mut all = groups.clone();
    if let (Some((ns, _)), true) = (sa, groups.is_empty()) {
        all = vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{ns}"),
        ];
    }
    if name != "system:anonymous"
        && !all
            .iter()
            .any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED)
    {
        all.push(AUTHENTICATED.into());
    }
    Ok(UserInfo {
        name: name.clone(),
        groups: all,
    })
}

fn target(namespace: &str, resource: &str, name: &str) -> ResourceAttributes {
    ResourceAttributes {
        namespace: namespace.to_owned(),
        resource: resource.to_owned(),
        name: name.to_owned(),
        ..ResourceAttributes::default()
    }
}
