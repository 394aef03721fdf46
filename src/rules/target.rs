//! The resource a verdict is wanted for, as the manifest names it: identity plus the
//! annotations that tune its rules (timeouts, required-rollout).

use crate::pointer::Pointer;
use crate::rules::kinds::is_builtin_group;
use crate::rules::snapshot::{ObjectKey, group_of};
use crate::vocab::outcome::ResourceId;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub id: ResourceId,
    pub annotations: BTreeMap<String, String>,
    /// When the apply happened, by the API server's clock (the apply response's
    /// managedFields time). Lets rules ignore conditions left over from an earlier rollout
    /// when a re-apply changed nothing (no new generation to gate on).
    pub applied_at: Option<jiff::Timestamp>,
    /// The object as the manifest declared it, kept for custom resources only: their
    /// health rules tell what this deploy asked for (`spec.paused: true`) from what a
    /// controller or person did since.
    pub declared: Option<Arc<Value>>,
}

impl Target {
    pub fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        Target {
            id: ResourceId {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                namespace: namespace.map(str::to_owned),
                name: name.to_owned(),
            },
            annotations: BTreeMap::new(),
            applied_at: None,
            declared: None,
        }
    }

    /// Reads identity and annotations from a manifest document; `None` when it lacks
    /// apiVersion, kind or metadata.name. The namespace is taken as written (the caller
    /// fills in the default namespace for namespaced kinds).
    pub fn from_manifest(doc: &Value) -> Option<Self> {
        let key = ObjectKey::of(doc)?;
        let api_version = doc.get("apiVersion")?.as_str()?;
        let mut target = Target::new(api_version, key.kind(), key.namespace(), key.name());
        if let Some(map) = doc.at("/metadata/annotations").and_then(Value::as_object) {
            for (k, v) in map {
                if let Some(v) = v.as_str() {
                    target.annotations.insert(k.clone(), v.to_owned());
                }
            }
        }
        if !is_builtin_group(target.group()) {
            target.declared = Some(Arc::new(doc.clone()));
        }
        Some(target)
    }

    pub fn with_annotation(mut self, key: &str, value: &str) -> Self {
        self.annotations.insert(key.to_owned(), value.to_owned());
        self
    }

    pub fn with_applied_at(mut self, at: jiff::Timestamp) -> Self {
        self.applied_at = Some(at);
        self
    }

    pub fn group(&self) -> &str {
        group_of(&self.id.api_version)
    }

    pub fn kind(&self) -> &str {
        &self.id.kind
    }

    pub fn key(&self) -> ObjectKey {
        ObjectKey::new(
            &self.id.api_version,
            &self.id.kind,
            self.id.namespace.as_deref(),
            &self.id.name,
        )
    }

    /// The first of `keys` that is set, so our own annotation can win over krane's.
    pub fn annotation(&self, keys: &[&str]) -> Option<(&str, &str)> {
        keys.iter()
            .find_map(|k| self.annotations.get_key_value(*k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
}
