//! Health rules as data: per group/kind, CEL expressions over a custom resource that say
//! when its controller reports it failed, still at work, or done. Bundled for the CRDs
//! real deploys carry; a run's `--rules` file and a CRD's annotation add or replace them.

pub mod expr;
pub mod library;
pub mod load;
pub mod rule;

#[cfg(test)]
mod cases;

use crate::pointer::Pointer;
use crate::rules::health::load::{HEALTH_RULES_ANNOTATION, parse_annotation};
use crate::rules::health::rule::HealthRule;
use crate::rules::snapshot::Snapshot;
use serde_json::Value;
use std::sync::Arc;

/// Where an object's health rule comes from, in the order they are asked.
pub enum Found {
    Rule(Arc<HealthRule>),
    /// The CRD's annotation does not read (it was refused before apply when the CRD came
    /// from the manifests; this one was put on the cluster some other way).
    Unreadable(String),
    None,
}

/// The rule for `group`/`kind`: the run's `--rules` first, then its CRD's
/// `deploy-action.io/health-rules` annotation, then the bundled library. krane's
/// `instance-rollout-conditions` on the CRD is asked by the caller between the last two.
pub fn user_rule(snapshot: &Snapshot, crd: Option<&Value>, group: &str, kind: &str) -> Found {
    if let Some(rule) = snapshot.health_rules().get(group, kind) {
        return Found::Rule(rule.clone());
    }
    let Some(text) = crd
        .and_then(|c| c.at("/metadata/annotations"))
        .and_then(|a| a.get(HEALTH_RULES_ANNOTATION))
        .and_then(Value::as_str)
    else {
        return Found::None;
    };
    let name = crd
        .and_then(|c| c.at("/metadata/name"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    match parse_annotation(
        text,
        &format!("CRD {name} annotation {HEALTH_RULES_ANNOTATION}"),
        0,
        (group, kind),
    ) {
        Ok(mut rules) if !rules.is_empty() => Found::Rule(Arc::new(rules.swap_remove(0))),
        Ok(_) => Found::None,
        Err(problems) => Found::Unreadable(crate::manifest::render_problems(&problems)),
    }
}

/// The bundled rule for `group`/`kind`.
pub fn bundled_rule(group: &str, kind: &str) -> Option<Arc<HealthRule>> {
    library::bundled().get(group, kind).cloned()
}
