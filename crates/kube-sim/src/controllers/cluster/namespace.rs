//! The `namespace-controller` (pkg/controller/namespace): a new namespace is Active with
//! its `kubernetes.io/metadata.name` label; a deleted one is Terminating while its
//! content is deleted, reports what remains in its conditions, and is finalized once
//! empty. A namespace the store removed outright still has its content deleted.

use super::resources::{all_objects, delete};
use crate::controllers::apps::meta::{is_deleting, labels, name, set_meta_entry, str_at};
use crate::engine::{Controller, World};
use crate::store::{Change, ChangeType, ObjectKey};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

const NAME_LABEL: &str = "kubernetes.io/metadata.name";
/// How often a terminating namespace is looked at again while content remains.
const RECHECK: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
pub(super) struct NamespaceController {
    /// Namespaces seen to exist: only their disappearance means their content must go.
    known: HashSet<String>,
}

fn ns_key(name: &str) -> ObjectKey {
    ObjectKey::new("", "namespaces", "", name)
}

impl Controller for NamespaceController {
    fn name(&self) -> &'static str {
        "namespace-controller"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("", "namespaces", None) {
            return vec![key.clone()];
        }
        let ns = ns_key(&key.namespace);
        let terminating = || world.get(&ns).is_some_and(|n| is_deleting(&n));
        if change.kind == ChangeType::Deleted && !key.namespace.is_empty() && terminating() {
            return vec![ns];
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
        match world.get(key) {
            None => {
                if self.known.remove(&key.name) {
                    delete_content(world, &key.name);
                }
            }
            Some(ns) if !is_deleting(&ns) => {
                self.known.insert(key.name.clone());
                ensure_active(world, key, &ns);
            }
            Some(ns) => {
                self.known.insert(key.name.clone());
                if terminate(world, key, &ns) {
                    self.known.remove(&key.name);
                } else {
                    world.requeue_after(key.clone(), RECHECK);
                }
            }
        }
    }
}

/// What the API server gives every namespace: the name label, the `kubernetes`
/// finalizer and phase Active.
fn ensure_active(world: &mut World<'_>, key: &ObjectKey, ns: &Value) {
    let mut obj = ns.clone();
    let mut changed = false;
    if labels(ns).get(NAME_LABEL).and_then(Value::as_str) != Some(key.name.as_str()) {
        set_meta_entry(&mut obj, "labels", NAME_LABEL, &key.name);
        changed = true;
    }
    if ns.pointer("/spec/finalizers").is_none() {
        obj["spec"]["finalizers"] = json!(["kubernetes"]);
        changed = true;
    }
    if changed {
        match world.update(key, obj) {
            Ok(stored) => obj = (*stored).clone(),
            Err(_) => return,
        }
    }
    if str_at(&obj, "/status/phase").is_empty() {
        obj["status"]["phase"] = json!("Active");
        let _ = world.update_status(key, obj);
    }
}

/// What is left after a deletion pass: instances per group-resource, and finalizers.
#[derive(Debug, Default)]
struct Remaining {
    resources: BTreeMap<String, usize>,
    finalizers: BTreeMap<String, usize>,
}

/// Delete everything in the namespace that is not already going; report what remains.
fn delete_content(world: &mut World<'_>, ns: &str) -> Remaining {
    for (key, obj) in all_objects(world, Some(ns)) {
        if !is_deleting(&obj) {
            let _ = delete(world, &key, &obj);
        }
    }
    let mut left = Remaining::default();
    for (key, obj) in all_objects(world, Some(ns)) {
        // `%s.%s` of resource and group: core resources read "pods." on a real cluster.
        *left
            .resources
            .entry(format!("{}.{}", key.plural, key.group))
            .or_default() += 1;
        for f in obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            *left
                .finalizers
                .entry(f.as_str().unwrap_or_default().to_owned())
                .or_default() += 1;
        }
    }
    left
}

fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
) -> (String, String, String, String) {
    (type_.into(), status.into(), reason.into(), message)
}

/// One termination pass; true once the namespace was finalized.
fn terminate(world: &mut World<'_>, key: &ObjectKey, ns: &Value) -> bool {
    let left = delete_content(world, &key.name);
    let listing = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, n)| format!("{k} has {n} resource instances"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let finalizer_listing = left
        .finalizers
        .iter()
        .map(|(k, n)| format!("{k} in {n} resource instances"))
        .collect::<Vec<_>>()
        .join(", ");
    let wanted = [
        condition(
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered".into(),
        ),
        condition(
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".into(),
        ),
        condition(
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".into(),
        ),
        if left.resources.is_empty() {
            condition(
                "NamespaceContentRemaining",
                "False",
                "ContentRemoved",
                "All content successfully removed".into(),
            )
        } else {
            condition(
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                format!("Some resources are remaining: {}", listing(&left.resources)),
            )
        },
        if left.finalizers.is_empty() {
            condition(
                "NamespaceFinalizersRemaining",
                "False",
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished".into(),
            )
        } else {
            condition(
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {finalizer_listing}"
                ),
            )
        },
    ];
    let now = world.timestamp();
    let current: Vec<Value> = ns
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let conditions: Vec<Value> = wanted
        .iter()
        .map(|(t, s, reason, message)| {
            let previous = current.iter().find(|c| str_at(c, "/type") == t);
            let since = match previous {
                Some(p) if str_at(p, "/status") == s => str_at(p, "/lastTransitionTime").to_owned(),
                _ => now.clone(),
            };
            json!({"type": t, "status": s, "lastTransitionTime": since, "reason": reason, "message": message})
        })
        .collect();
    let mut obj = ns.clone();
    obj["status"] = json!({"phase": "Terminating", "conditions": conditions});
    if obj != *ns {
        match world.update_status(key, obj) {
            Ok(stored) => obj = (*stored).clone(),
            Err(_) => return false,
        }
    }
    if !left.resources.is_empty() {
        return false;
    }
    // Finalize: drop the `kubernetes` finalizer; the store removes the namespace unless
    // other finalizers hold it.
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
        && let Some(f) = spec.get_mut("finalizers").and_then(Value::as_array_mut)
    {
        f.retain(|f| f != "kubernetes");
        if f.is_empty() {
            spec.remove("finalizers");
        }
    }
    if obj != *world.get(key).unwrap_or_default() {
        let _ = world.update(key, obj);
    }
    true
}
