//! Whether one RBAC PolicyRule allows a request, matched field by field as the RBAC
//! authorizer does (`*` wildcards, `*/subresource`, resourceNames, nonResourceURL prefixes).

use super::attributes::Attributes;
use serde_json::Value;

fn strings<'a>(rule: &'a Value, field: &str) -> impl Iterator<Item = &'a str> {
    rule.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn has(rule: &Value, field: &str, wanted: &str) -> bool {
    strings(rule, field).any(|v| v == "*" || v == wanted)
}

/// Whether `rule` allows the request described by `attrs`.
pub fn allows(rule: &Value, attrs: &Attributes) -> bool {
    if !has(rule, "verbs", &attrs.verb) {
        return false;
    }
    match &attrs.resource {
        Some(r) => {
            has(rule, "apiGroups", &r.group)
                && resource_matches(rule, &r.combined(), &r.subresource)
                && name_matches(rule, &r.name)
        }
        None => strings(rule, "nonResourceURLs").any(|url| url_matches(url, &attrs.path)),
    }
}

fn resource_matches(rule: &Value, combined: &str, subresource: &str) -> bool {
    strings(rule, "resources").any(|r| {
        r == "*"
            || r == combined
            || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource))
    })
}

/// No resourceNames: every name; else the request must name one of them.
fn name_matches(rule: &Value, name: &str) -> bool {
    let mut names = strings(rule, "resourceNames").peekable();
    names.peek().is_none() || names.any(|n| n == name)
}

fn url_matches(rule_url: &str, path: &str) -> bool {
    rule_url == "*"
        || rule_url == path
        || rule_url
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::authn::UserInfo;
    use crate::server::params::Params;
    use serde_json::json;

    fn req(method: &str, path: &str) -> Attributes {
        Attributes::of_request(
            UserInfo::authenticated("ci", &[]),
            method,
            path,
            &Params::default(),
        )
    }

    #[test]
    fn verbs_groups_and_resources_match_exactly_or_by_wildcard() {
        let rule = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]});
        assert!(allows(&rule, &req("GET", "/api/v1/namespaces/a/pods/web")));
        assert!(allows(&rule, &req("GET", "/api/v1/namespaces/a/pods")));
        assert!(!allows(
            &rule,
            &req("DELETE", "/api/v1/namespaces/a/pods/web")
        ));
        assert!(!allows(
            &rule,
            &req("GET", "/api/v1/namespaces/a/pods/web/log")
        ));
        assert!(!allows(
            &rule,
            &req("GET", "/apis/apps/v1/namespaces/a/deployments")
        ));

        let any = json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]});
        assert!(allows(
            &any,
            &req("PATCH", "/apis/apps/v1/namespaces/a/deployments/w")
        ));
        assert!(allows(
            &any,
            &req("GET", "/api/v1/namespaces/a/pods/web/log")
        ));
        assert!(
            !allows(&any, &req("GET", "/version")),
            "resource rules are not paths"
        );
    }

    #[test]
    fn subresources_are_granted_by_name_or_by_star_slash() {
        let logs = json!({"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]});
        assert!(allows(
            &logs,
            &req("GET", "/api/v1/namespaces/a/pods/web/log")
        ));
        assert!(!allows(&logs, &req("GET", "/api/v1/namespaces/a/pods/web")));
        let status = json!({"apiGroups": ["apps"], "resources": ["*/status"], "verbs": ["update"]});
        assert!(allows(
            &status,
            &req("PUT", "/apis/apps/v1/namespaces/a/deployments/w/status")
        ));
        assert!(!allows(
            &status,
            &req("PUT", "/apis/apps/v1/namespaces/a/deployments/w")
        ));
    }

    #[test]
    fn resource_names_restrict_to_those_objects() {
        let rule = json!({"apiGroups": [""], "resources": ["configmaps"],
                          "resourceNames": ["settings"], "verbs": ["get", "list"]});
        assert!(allows(
            &rule,
            &req("GET", "/api/v1/namespaces/a/configmaps/settings")
        ));
        assert!(!allows(
            &rule,
            &req("GET", "/api/v1/namespaces/a/configmaps/other")
        ));
        assert!(!allows(
            &rule,
            &req("GET", "/api/v1/namespaces/a/configmaps")
        ));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_prefix() {
        let rule = json!({"nonResourceURLs": ["/apis/*", "/version"], "verbs": ["get"]});
        assert!(allows(&rule, &req("GET", "/version")));
        assert!(allows(&rule, &req("GET", "/apis/apps/v1")));
        assert!(!allows(&rule, &req("GET", "/apis")));
        assert!(!allows(&rule, &req("POST", "/version")));
        assert!(!allows(&rule, &req("GET", "/api/v1/namespaces/a/pods")));
    }
}
