//! The `generic-garbage-collector`: an object whose owners are all gone is deleted
//! (background propagation); one that keeps a live owner loses its dangling references.
//! Owners count as gone when no object of that kind and name has the referenced uid.

use super::resources::{all_objects, delete};
use crate::controllers::apps::meta::{is_deleting, owner_refs, str_at, uid};
use crate::engine::{Controller, World};
use crate::resources::split_api_version;
use crate::store::{Change, ChangeType, ObjectKey};
use serde_json::{Value, json};
use std::time::Duration;

#[derive(Debug, Default)]
pub(super) struct GarbageCollector;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Present,
    Absent,
    /// A kind the API does not serve: the collector cannot tell, so it keeps the object.
    Unknown,
}

fn owner_state(world: &World<'_>, dependent: &ObjectKey, r: &Value) -> Owner {
    let (api_version, kind) = (str_at(r, "/apiVersion"), str_at(r, "/kind"));
    let t = world.registry.by_kind(api_version, kind).or_else(|| {
        let group = split_api_version(api_version).0;
        world
            .registry
            .all()
            .into_iter()
            .find(|t| t.group == group && t.kind == kind)
    });
    let Some(t) = t else {
        return Owner::Unknown;
    };
    let ns = if t.namespaced {
        dependent.namespace.as_str()
    } else {
        ""
    };
    match world.get(&ObjectKey::new(&t.group, &t.plural, ns, str_at(r, "/name"))) {
        Some(owner) if uid(&owner) == str_at(r, "/uid") => Owner::Present,
        _ => Owner::Absent,
    }
}

impl Controller for GarbageCollector {
    fn name(&self) -> &'static str {
        "generic-garbage-collector"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        if change.kind != ChangeType::Deleted {
            return if owner_refs(&change.object).is_empty() {
                Vec::new()
            } else {
                vec![change.key.clone()]
            };
        }
        world.dependents(uid(&change.object))
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        all_objects(world, None)
            .into_iter()
            .filter(|(_, obj)| !owner_refs(obj).is_empty())
            .map(|(k, _)| k)
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(obj) = world.get(key) else {
            return;
        };
        let refs = owner_refs(&obj);
        if refs.is_empty() || is_deleting(&obj) {
            return;
        }
        let states: Vec<Owner> = refs.iter().map(|r| owner_state(world, key, r)).collect();
        let result = if states.iter().all(|s| *s == Owner::Absent) {
            delete(world, key, &obj)
        } else if states.contains(&Owner::Absent) {
            let kept: Vec<Value> = refs
                .iter()
                .zip(&states)
                .filter(|(_, s)| **s != Owner::Absent)
                .map(|(r, _)| r.clone())
                .collect();
            let mut patched = (*obj).clone();
            patched["metadata"]["ownerReferences"] = json!(kept);
            world.update(key, patched).map(|_| ())
        } else {
            Ok(())
        };
        if result.is_err() {
            world.requeue_after(key.clone(), Duration::from_millis(100));
        }
    }
}
