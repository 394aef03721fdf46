//! The `serviceaccount-controller`: every active namespace has a `default`
//! ServiceAccount, put back if it is deleted.

use crate::controllers::apps::meta::{is_deleting, name, str_at};
use crate::engine::{Controller, World};
use crate::store::{Change, ChangeType, ObjectKey};
use serde_json::json;
use std::time::Duration;

#[derive(Debug, Default)]
pub(super) struct ServiceAccountController;

fn ns_key(name: &str) -> ObjectKey {
    ObjectKey::new("", "namespaces", "", name)
}

impl Controller for ServiceAccountController {
    fn name(&self) -> &'static str {
        "serviceaccount-controller"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("", "namespaces", None) && change.kind != ChangeType::Deleted {
            return vec![key.clone()];
        }
        if key.in_collection("", "serviceaccounts", None)
            && change.kind == ChangeType::Deleted
            && key.name == "default"
        {
            return vec![ns_key(&key.namespace)];
        }
        Vec::new()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("", "namespaces", None)
            .iter()
            .map(|ns| ns_key(name(ns)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(ns) = world.get(key) else {
            return;
        };
        if is_deleting(&ns) || str_at(&ns, "/status/phase") == "Terminating" {
            return;
        }
        let sa_key = ObjectKey::new("", "serviceaccounts", &key.name, "default");
        if world.get(&sa_key).is_some() {
            return;
        }
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": "default", "namespace": key.name}});
        if world.create(&sa_key, sa).is_err() {
            world.requeue_after(key.clone(), Duration::from_millis(100));
        }
    }
}
