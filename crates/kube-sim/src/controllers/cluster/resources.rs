//! Walking every stored resource, as the garbage collector and namespace deleter do
//! through discovery, and deleting an object the way a client's plain DELETE does.

use crate::controllers::apps::meta::{int_at, name, namespace};
use crate::engine::{World, WriteError};
use crate::store::{DeleteOptions, ObjectKey, StoreError};
use serde_json::Value;
use std::sync::Arc;

/// Each (group, plural, namespaced) the registry serves, once.
pub(super) fn resource_types(world: &World<'_>) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    for t in world.registry.all() {
        if !out.iter().any(|(g, p, _)| *g == t.group && *p == t.plural) {
            out.push((t.group.clone(), t.plural.clone(), t.namespaced));
        }
    }
    out
}

/// Every stored object with its key (in `ns` only, when given).
pub(super) fn all_objects(world: &World<'_>, ns: Option<&str>) -> Vec<(ObjectKey, Arc<Value>)> {
    let mut out = Vec::new();
    for (group, plural, namespaced) in resource_types(world) {
        if ns.is_some() && !namespaced {
            continue;
        }
        for obj in world.list(&group, &plural, ns) {
            out.push((
                ObjectKey::new(&group, &plural, namespace(&obj), name(&obj)),
                obj,
            ));
        }
    }
    out
}

/// A DELETE with default options: pods get their own grace period. Gone already is fine.
pub(super) fn delete(
    world: &mut World<'_>,
    key: &ObjectKey,
    obj: &Value,
) -> Result<(), WriteError> {
    let grace = (key.plural == "pods" && key.group.is_empty())
        .then(|| int_at(obj, "/spec/terminationGracePeriodSeconds").unwrap_or(30));
    match world.delete(
        key,
        DeleteOptions {
            grace_period_seconds: grace,
        },
    ) {
        Ok(_) | Err(WriteError::Store(StoreError::NotFound(_))) => Ok(()),
        Err(e) => Err(e),
    }
}
