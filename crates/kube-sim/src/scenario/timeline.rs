//! Checking a timeline before it is replayed, so that an object kube-sim cannot store
//! literally is refused when the scenario is loaded instead of skipped at its offset.

use super::TimelineStep;
use crate::engine::world::key_of;
use crate::resources::Registry;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

/// An object of the timeline that cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "timeline entry {entry} (at {}), object {object} ({what}): {message}",
    humantime::format_duration(*at)
)]
pub struct TimelineError {
    /// 1-based position of the entry in the timeline.
    pub entry: usize,
    pub at: Duration,
    /// 1-based position of the object in the entry's `apply` (or `delete`) list.
    pub object: usize,
    /// `Kind namespace/name` as far as the object says.
    pub what: String,
    pub message: String,
}

/// Whether a CustomResourceDefinition's status says it is served (Established=True).
pub fn is_established_crd(object: &Value) -> bool {
    object.get("apiVersion").and_then(Value::as_str) == Some("apiextensions.k8s.io/v1")
        && object.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && object
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.get("type").and_then(Value::as_str) == Some("Established")
                        && c.get("status").and_then(Value::as_str) == Some("True")
                })
            })
}

pub(crate) fn is_crd(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
}

/// The objects of a step in replay order: CustomResourceDefinitions first, so custom
/// resources of the same entry find their kind served.
pub fn replay_order(step: &TimelineStep) -> impl Iterator<Item = &Value> {
    let crds = step.apply.iter().filter(|o| is_crd(o));
    crds.chain(step.apply.iter().filter(|o| !is_crd(o)))
}

/// Check every step (in time order; `labels` gives each step's 1-based entry number as
/// written) against the built-in kinds and the CRDs the timeline establishes before it.
pub fn check(steps: &[TimelineStep], labels: &[usize]) -> Result<(), TimelineError> {
    let registry = Registry::builtin();
    let mut crds: HashMap<String, Value> = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        let entry = labels.get(i).copied().unwrap_or(i + 1);
        let fail = |object: usize, v: &Value, message: String| TimelineError {
            entry,
            at: step.at,
            object,
            what: describe(v),
            message,
        };
        for (j, object) in step.apply.iter().enumerate() {
            if let Err(message) = malformed(object) {
                return Err(fail(j + 1, object, message));
            }
        }
        for crd in step.apply.iter().filter(|o| is_crd(o)) {
            if is_established_crd(crd) {
                registry.add_crd(crd);
                crds.insert(str_of(crd, "/metadata/name").to_owned(), crd.clone());
            }
        }
        for (j, object) in step.apply.iter().enumerate() {
            if key_of(&registry, object).is_none() {
                let av = str_of(object, "/apiVersion");
                let kind = str_of(object, "/kind");
                return Err(fail(
                    j + 1,
                    object,
                    format!(
                        "kind {kind} of {av} is not served: it is not built in and no \
                         CustomResourceDefinition with condition Established=True earlier in \
                         the timeline (or in this entry) defines it"
                    ),
                ));
            }
        }
        for (j, r) in step.delete.iter().enumerate() {
            let v = serde_json::json!({"apiVersion": r.api_version, "kind": r.kind,
                "metadata": {"name": r.name, "namespace": r.namespace}});
            if key_of(&registry, &v).is_none() {
                return Err(fail(
                    j + 1,
                    &v,
                    format!(
                        "delete of kind {} of {}, which is not served",
                        r.kind, r.api_version
                    ),
                ));
            }
            if r.kind == "CustomResourceDefinition"
                && let Some(crd) = crds.remove(&r.name)
            {
                registry.remove_crd(&crd);
            }
        }
    }
    Ok(())
}

/// What the API server would refuse to decode or store.
fn malformed(object: &Value) -> Result<(), String> {
    let Some(map) = object.as_object() else {
        return Err("not a mapping".into());
    };
    for field in ["apiVersion", "kind"] {
        match map.get(field) {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(_) => return Err(format!("{field} must be a non-empty string")),
            None => return Err(format!("{field} is missing")),
        }
    }
    let Some(meta) = map.get("metadata") else {
        return Err("metadata is missing".into());
    };
    let Some(meta) = meta.as_object() else {
        return Err("metadata must be a mapping".into());
    };
    match meta.get("name") {
        Some(Value::String(s)) if !s.is_empty() => {}
        Some(_) => return Err("metadata.name must be a non-empty string".into()),
        None => return Err("metadata.name is missing".into()),
    }
    let string = |k: &str| meta.get(k).is_none_or(Value::is_string);
    for k in ["namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if !string(k) {
            return Err(format!("metadata.{k} must be a string"));
        }
    }
    for k in ["generation", "deletionGracePeriodSeconds"] {
        if meta
            .get(k)
            .is_some_and(|g| g.as_i64().is_none_or(|g| g < 0))
        {
            return Err(format!("metadata.{k} must be a non-negative integer"));
        }
    }
    if let Some(t) = meta.get("deletionTimestamp") {
        let ok = t
            .as_str()
            .is_some_and(|s| s.parse::<jiff::Timestamp>().is_ok());
        if !ok {
            return Err("metadata.deletionTimestamp must be an RFC 3339 time".into());
        }
    }
    if let Some(f) = meta.get("finalizers") {
        let ok = f.as_array().is_some_and(|a| a.iter().all(Value::is_string));
        if !ok {
            return Err("metadata.finalizers must be a list of strings".into());
        }
    }
    for k in ["labels", "annotations"] {
        if let Some(m) = meta.get(k) {
            let ok = m
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_string));
            if !ok {
                return Err(format!("metadata.{k} must map strings to strings"));
            }
        }
    }
    if meta.get("ownerReferences").is_some_and(|o| !o.is_array()) {
        return Err("metadata.ownerReferences must be a list".into());
    }
    for k in ["spec", "status"] {
        if map.get(k).is_some_and(|s| !s.is_object()) {
            return Err(format!("{k} must be a mapping"));
        }
    }
    if is_crd(object) && crate::resources::crd_resource_types(object).is_none() {
        return Err(
            "a CustomResourceDefinition needs spec.group, spec.names.kind, \
                    spec.names.plural and spec.versions"
                .into(),
        );
    }
    Ok(())
}

fn str_of<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("?")
}

/// `Kind namespace/name`, with `?` for what is missing.
fn describe(v: &Value) -> String {
    let kind = str_of(v, "/kind");
    let name = str_of(v, "/metadata/name");
    match v.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}
