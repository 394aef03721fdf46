//! SelfSubjectAccessReview and SelfSubjectRulesReview: how `kubectl auth can-i` (and
//! `can-i --list`) asks the API server what its own user may do, answered by the same
//! RBAC authorizer that guards every request; and SelfSubjectReview, how `kubectl auth
//! whoami` asks who it is.

use super::authn::{MASTERS, UserInfo};
use super::rbac::{self, Attributes, ResourceAttributes};
use super::state::ServerState;
use super::status::ApiError;
use super::write::decode_body;
use serde_json::{Map, Value, json};

pub const GROUP: &str = "authorization.k8s.io";
const AUTHENTICATION: &str = "authentication.k8s.io";

/// Whether kube-sim answers this resource (of `group`) as a review.
pub fn is_review(group: &str, resource: &str) -> bool {
    match group {
        GROUP => matches!(
            resource,
            "selfsubjectaccessreviews" | "selfsubjectrulesreviews"
        ),
        AUTHENTICATION => resource == "selfsubjectreviews",
        _ => false,
    }
}

/// Answer a review (`resource` is one [`is_review`] accepts): 201 with the review and its
/// status. `user` is `None` when authentication is off (everything is allowed then).
pub fn review(
    state: &ServerState,
    user: Option<&UserInfo>,
    resource: &str,
    content_type: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let mut review = decode_body(content_type, body)?;
    if resource == "selfsubjectreviews" {
        review["apiVersion"] = json!(format!("{AUTHENTICATION}/v1"));
        review["kind"] = json!("SelfSubjectReview");
        review["metadata"] = json!({"creationTimestamp": null});
        // Authentication off: the request is anonymous.
        let (name, groups) = user.map_or_else(
            || {
                (
                    "system:anonymous".to_owned(),
                    vec!["system:unauthenticated".to_owned()],
                )
            },
            |u| (u.name.clone(), u.groups.clone()),
        );
        review["status"] = json!({"userInfo": {"username": name, "groups": groups}});
        return Ok(review);
    }
    let spec = review.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = if resource == "selfsubjectaccessreviews" {
        access(state, user, &spec)?
    } else {
        rules(state, user, &spec)
    };
    let kind = if resource == "selfsubjectaccessreviews" {
        "SelfSubjectAccessReview"
    } else {
        "SelfSubjectRulesReview"
    };
    review["apiVersion"] = json!(format!("{GROUP}/v1"));
    review["kind"] = json!(kind);
    if !review.get("metadata").is_some_and(Value::is_object) {
        review["metadata"] = json!({});
    }
    review["metadata"]["creationTimestamp"] = Value::Null;
    review["spec"] = spec;
    review["status"] = status;
    Ok(review)
}

fn text(v: &Value, field: &str) -> String {
    v.get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn access(state: &ServerState, user: Option<&UserInfo>, spec: &Value) -> Result<Value, ApiError> {
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let invalid = |field: &str, message: &str| {
        ApiError::new(
            422,
            "Invalid",
            format!(
                "SelfSubjectAccessReview.{GROUP} \"\" is invalid: spec.{field}: Invalid value: \"null\": {message}"
            ),
        )
    };
    let (verb, attributes, path) = match (resource, non_resource) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "nonResourceAttributes",
                "cannot be specified in combination with resourceAttributes",
            ));
        }
        (None, None) => {
            return Err(invalid(
                "resourceAttributes",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            ));
        }
        (Some(r), None) => (
            text(r, "verb"),
            Some(ResourceAttributes {
                namespace: text(r, "namespace"),
                group: text(r, "group"),
                version: text(r, "version"),
                resource: text(r, "resource"),
                subresource: text(r, "subresource"),
                name: text(r, "name"),
            }),
            String::new(),
        ),
        (None, Some(n)) => (text(n, "verb"), None, text(n, "path")),
    };
    let (Some(user), true) = (user, state.rbac) else {
        return Ok(json!({"allowed": true}));
    };
    let decision = rbac::authorize(
        &state.store,
        &Attributes {
            user: user.clone(),
            verb,
            resource: attributes,
            path,
        },
    );
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    Ok(status)
}

fn rules(state: &ServerState, user: Option<&UserInfo>, spec: &Value) -> Value {
    let everything = (
        json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
        json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
    );
    let (mut resource_rules, mut non_resource_rules) = (Vec::new(), Vec::new());
    let unrestricted = match user {
        None => true,
        Some(u) => !state.rbac || u.in_group(MASTERS),
    };
    if unrestricted {
        resource_rules.push(everything.0);
        non_resource_rules.push(everything.1);
    }
    let mut status = Map::new();
    if let (Some(user), true) = (user, state.rbac) {
        let (rules, errors) = rbac::rules_for(&state.store, user, &text(spec, "namespace"));
        for rule in rules {
            let pick = |fields: &[&str]| {
                let mut out = Map::new();
                for f in fields {
                    if let Some(v) = rule
                        .get(*f)
                        .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                    {
                        out.insert((*f).to_owned(), v.clone());
                    }
                }
                Value::Object(out)
            };
            if rule.get("resources").is_some() {
                resource_rules.push(pick(&["verbs", "apiGroups", "resources", "resourceNames"]));
            }
            if rule.get("nonResourceURLs").is_some() {
                non_resource_rules.push(pick(&["verbs", "nonResourceURLs"]));
            }
        }
        if !errors.is_empty() {
            status.insert("evaluationError".into(), json!(rbac::aggregate(&errors)));
        }
        status.insert("incomplete".into(), json!(!errors.is_empty()));
    } else {
        status.insert("incomplete".into(), json!(false));
    }
    status.insert("resourceRules".into(), json!(resource_rules));
    status.insert("nonResourceRules".into(), json!(non_resource_rules));
    Value::Object(status)
}
