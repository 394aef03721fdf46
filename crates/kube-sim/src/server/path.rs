//! Parsing Kubernetes API request paths into what they address.

/// A request for a resource collection, object or subresource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// What a path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Version,
    /// `/api` (core group versions).
    Api,
    /// `/apis` (group list).
    Apis,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`.
    GroupVersion {
        group: String,
        version: String,
    },
    Resource(ResourcePath),
    Health,
    /// `/debug/requests`: the request recorder's counts, for benchmarks.
    DebugRequests,
    /// `/debug/milestones`: when the last Deployment rolled out, the first image pull error.
    DebugMilestones,
    /// `/openapi/v3`.
    OpenApiIndex,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`.
    OpenApi(String),
}

pub fn parse(path: &str) -> Option<Route> {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match segs.as_slice() {
        ["version"] => Some(Route::Version),
        // `/livez/ping`, `/readyz/etcd` and the like answer as their parent does.
        ["healthz" | "livez" | "readyz", ..] => Some(Route::Health),
        ["debug", "requests"] => Some(Route::DebugRequests),
        ["debug", "milestones"] => Some(Route::DebugMilestones),
        ["openapi", "v3"] => Some(Route::OpenApiIndex),
        ["openapi", "v3", rest @ ..] => Some(Route::OpenApi(rest.join("/"))),
        ["api"] => Some(Route::Api),
        ["apis"] => Some(Route::Apis),
        ["api", version, rest @ ..] => resource_route("", version, rest),
        ["apis", group] => Some(Route::Group((*group).to_owned())),
        ["apis", group, version, rest @ ..] => resource_route(group, version, rest),
        _ => None,
    }
}

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Option<Route> {
    let owned = |s: &&str| (*s).to_owned();
    let path =
        |namespace: Option<&str>, resource: &str, name: Option<&&str>, sub: Option<&&str>| {
            Some(Route::Resource(ResourcePath {
                group: group.to_owned(),
                version: version.to_owned(),
                namespace: namespace.map(str::to_owned),
                resource: resource.to_owned(),
                name: name.map(owned),
                subresource: sub.map(owned),
            }))
        };
    match rest {
        [] => Some(Route::GroupVersion {
            group: group.to_owned(),
            version: version.to_owned(),
        }),
        // The namespace object itself and its subresources.
        ["namespaces", name] if group.is_empty() => path(None, "namespaces", Some(name), None),
        ["namespaces", name, sub @ ("status" | "finalize")] if group.is_empty() => {
            path(None, "namespaces", Some(name), Some(sub))
        }
        ["namespaces", ns, resource, tail @ ..] => match tail {
            [] => path(Some(ns), resource, None, None),
            [name] => path(Some(ns), resource, Some(name), None),
            [name, sub] => path(Some(ns), resource, Some(name), Some(sub)),
            _ => None,
        },
        [resource] => path(None, resource, None, None),
        [resource, name] => path(None, resource, Some(name), None),
        [resource, name, sub] => path(None, resource, Some(name), Some(sub)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(path: &str, expected: (&str, Option<&str>, &str, Option<&str>, Option<&str>)) {
        let Some(Route::Resource(p)) = parse(path) else {
            panic!("{path} is not a resource path");
        };
        let got = (
            p.group.as_str(),
            p.namespace.as_deref(),
            p.resource.as_str(),
            p.name.as_deref(),
            p.subresource.as_deref(),
        );
        assert_eq!(got, expected, "{path}");
    }

    #[test]
    fn parses_resource_paths_as_the_api_server_does() {
        case("/api/v1/pods", ("", None, "pods", None, None));
        case(
            "/api/v1/namespaces/shop/pods",
            ("", Some("shop"), "pods", None, None),
        );
        case(
            "/api/v1/namespaces/shop/pods/web-1/log",
            ("", Some("shop"), "pods", Some("web-1"), Some("log")),
        );
        case(
            "/api/v1/namespaces/shop",
            ("", None, "namespaces", Some("shop"), None),
        );
        case(
            "/api/v1/namespaces/shop/status",
            ("", None, "namespaces", Some("shop"), Some("status")),
        );
        case(
            "/apis/apps/v1/namespaces/shop/deployments/web/status",
            (
                "apps",
                Some("shop"),
                "deployments",
                Some("web"),
                Some("status"),
            ),
        );
        case(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.y",
            (
                "apiextensions.k8s.io",
                None,
                "customresourcedefinitions",
                Some("x.y"),
                None,
            ),
        );
    }

    #[test]
    fn parses_discovery_paths() {
        assert_eq!(parse("/version"), Some(Route::Version));
        // client-go pings /livez/ping to decide whether flow control is on.
        assert_eq!(parse("/livez/ping"), Some(Route::Health));
        assert_eq!(parse("/readyz/etcd"), Some(Route::Health));
        assert_eq!(parse("/debug/requests"), Some(Route::DebugRequests));
        assert_eq!(parse("/debug/milestones"), Some(Route::DebugMilestones));
        assert_eq!(parse("/api"), Some(Route::Api));
        assert_eq!(parse("/apis/"), Some(Route::Apis));
        assert_eq!(parse("/apis/apps"), Some(Route::Group("apps".into())));
        assert_eq!(
            parse("/api/v1"),
            Some(Route::GroupVersion {
                group: String::new(),
                version: "v1".into()
            })
        );
        assert_eq!(parse("/nope"), None);
    }
}
