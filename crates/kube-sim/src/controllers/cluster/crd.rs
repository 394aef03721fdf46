//! The CRD controllers of the `apiextensions-apiserver`: the naming controller accepts
//! names that no other CRD of the group holds (NamesAccepted), the establishing
//! controller then marks the CRD Established and the API serves its resources. A CRD
//! that goes away stops being served and its custom resources are deleted.

use super::resources::delete;
use crate::controllers::apps::meta::{is_deleting, name, namespace, str_at};
use crate::engine::{Controller, World};
use crate::store::{Change, ObjectKey};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

const GROUP: &str = "apiextensions.k8s.io";
const PLURAL: &str = "customresourcedefinitions";

#[derive(Debug, Default)]
pub(crate) struct CrdController {
    /// CRDs being served, by name, as last established (to stop serving them).
    served: HashMap<String, Value>,
}

fn crd_key(name: &str) -> ObjectKey {
    ObjectKey::new(GROUP, PLURAL, "", name)
}

impl Controller for CrdController {
    fn name(&self) -> &'static str {
        "apiextensions-apiserver"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        if !change.key.in_collection(GROUP, PLURAL, None) {
            return Vec::new();
        }
        // A change of one CRD may free or take names of the others in its group.
        let group = str_at(&change.object, "/spec/group");
        let mut keys = vec![change.key.clone()];
        for other in world.list(GROUP, PLURAL, None) {
            if str_at(&other, "/spec/group") == group && name(&other) != change.key.name {
                keys.push(crd_key(name(&other)));
            }
        }
        keys
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list(GROUP, PLURAL, None)
            .iter()
            .map(|c| crd_key(name(c)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(crd) = world.get(key) else {
            if let Some(last) = self.served.remove(&key.name) {
                world.registry.remove_crd(&last);
                delete_instances(world, &last);
            }
            return;
        };
        if is_deleting(&crd) {
            if let Some(last) = self.served.remove(&key.name) {
                world.registry.remove_crd(&last);
            }
            delete_instances(world, &crd);
            return;
        }
        let now = world.timestamp();
        let named = name_status(&crd, &world.list(GROUP, PLURAL, None), &now);
        if crd.get("status") != Some(&named) {
            let mut obj = (*crd).clone();
            obj["status"] = named;
            let _ = world.update_status(key, obj);
            return;
        }
        if condition_is(&crd, "NamesAccepted", "True") && !condition_is(&crd, "Established", "True")
        {
            let mut obj = (*crd).clone();
            set_condition(
                &mut obj,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
                &now,
            );
            let _ = world.update_status(key, obj);
            return;
        }
        if condition_is(&crd, "Established", "True") {
            world.registry.add_crd(&crd);
            self.served.insert(key.name.clone(), (*crd).clone());
        }
    }
}

fn condition_is(crd: &Value, type_: &str, status: &str) -> bool {
    conditions(crd)
        .iter()
        .any(|c| str_at(c, "/type") == type_ && str_at(c, "/status") == status)
}

fn conditions(crd: &Value) -> Vec<Value> {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `apiextensionshelpers.SetCRDCondition`: updated in place; the transition time moves
/// only when the status does.
fn set_condition(
    crd: &mut Value,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let mut list = conditions(crd);
    match list.iter_mut().find(|c| str_at(c, "/type") == type_) {
        Some(c) => {
            if str_at(c, "/status") != status {
                c["lastTransitionTime"] = json!(now);
            }
            c["status"] = json!(status);
            c["reason"] = json!(reason);
            c["message"] = json!(message);
        }
        None => list.push(
            json!({"type": type_, "status": status, "lastTransitionTime": now,
                                 "reason": reason, "message": message}),
        ),
    }
    crd["status"]["conditions"] = Value::Array(list);
}

/// The names a CRD asks for, with the API server's defaults (singular, listKind).
fn requested(crd: &Value) -> Map<String, Value> {
    let mut names = crd
        .pointer("/spec/names")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let kind = names
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    names
        .entry("singular")
        .or_insert_with(|| json!(kind.to_ascii_lowercase()));
    names
        .entry("listKind")
        .or_insert_with(|| json!(format!("{kind}List")));
    names
}

/// Names other CRDs of the group have been granted: resource names and kinds.
fn taken(crd: &Value, all: &[std::sync::Arc<Value>]) -> (Vec<String>, Vec<String>) {
    let (mut resources, mut kinds) = (Vec::new(), Vec::new());
    for other in all {
        if name(other) == name(crd) || str_at(other, "/spec/group") != str_at(crd, "/spec/group") {
            continue;
        }
        let accepted = other
            .pointer("/status/acceptedNames")
            .cloned()
            .unwrap_or_default();
        resources.extend(
            ["plural", "singular"]
                .iter()
                .map(|k| str_at(&accepted, &format!("/{k}")).to_owned()),
        );
        resources.extend(strings(accepted.get("shortNames")));
        kinds.extend(
            ["kind", "listKind"]
                .iter()
                .map(|k| str_at(&accepted, &format!("/{k}")).to_owned()),
        );
    }
    resources.retain(|r| !r.is_empty());
    kinds.retain(|k| !k.is_empty());
    (resources, kinds)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `equalToAcceptedOrFresh`.
fn conflict(requested: &str, accepted: &str, used: &[String]) -> Option<String> {
    (requested != accepted && used.iter().any(|u| u == requested))
        .then(|| format!("\"{requested}\" is already in use"))
}

/// The naming controller's status (`calculateNamesAndConditions`), with the storage
/// version recorded in storedVersions as the API server does.
fn name_status(crd: &Value, all: &[std::sync::Arc<Value>], now: &str) -> Value {
    let want = requested(crd);
    let accepted_before = crd
        .pointer("/status/acceptedNames")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut accepted = accepted_before.clone();
    let (resources, kinds) = taken(crd, all);
    let get = |m: &Map<String, Value>, k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut refusal: Option<(&str, String)> = None;
    for (field, reason, used) in [
        ("plural", "PluralConflict", &resources),
        ("singular", "SingularConflict", &resources),
    ] {
        match conflict(&get(&want, field), &get(&accepted_before, field), used) {
            Some(msg) => refusal = Some((reason, msg)),
            None => {
                accepted.insert(field.into(), json!(get(&want, field)));
            }
        }
    }
    let short = strings(want.get("shortNames"));
    let had_short = strings(accepted_before.get("shortNames"));
    if short != had_short {
        let errors: Vec<String> = short
            .iter()
            .filter(|s| !had_short.contains(s))
            .filter_map(|s| conflict(s, "", &resources))
            .collect();
        if errors.is_empty() {
            accepted.insert("shortNames".into(), json!(short));
        } else {
            refusal = Some(("ShortNamesConflict", errors.join(", ")));
        }
    }
    for (field, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
        match conflict(&get(&want, field), &get(&accepted_before, field), &kinds) {
            Some(msg) => refusal = Some((reason, msg)),
            None => {
                accepted.insert(field.into(), json!(get(&want, field)));
            }
        }
    }
    match want.get("categories") {
        Some(c) => {
            accepted.insert("categories".into(), c.clone());
        }
        None => {
            accepted.remove("categories");
        }
    }
    let mut out = crd.clone();
    match &refusal {
        Some((reason, msg)) => set_condition(&mut out, "NamesAccepted", "False", reason, msg, now),
        None => set_condition(
            &mut out,
            "NamesAccepted",
            "True",
            "NoConflicts",
            "no conflicts found",
            now,
        ),
    }
    let established = condition_is(crd, "Established", "True");
    if !established {
        match refusal {
            None => set_condition(
                &mut out,
                "Established",
                "False",
                "Installing",
                "the initial names have been accepted",
                now,
            ),
            Some(_) => set_condition(
                &mut out,
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
                now,
            ),
        }
    }
    out["status"]["acceptedNames"] = Value::Object(ordered_names(&accepted));
    let mut stored = strings(crd.pointer("/status/storedVersions"));
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .map(|v| str_at(v, "/name").to_owned());
    if let Some(v) = storage.filter(|v| !stored.contains(v)) {
        stored.push(v);
    }
    out["status"]["storedVersions"] = json!(stored);
    let status = out["status"].take();
    let mut ordered = Map::new();
    for k in ["conditions", "acceptedNames", "storedVersions"] {
        if let Some(v) = status.get(k) {
            ordered.insert(k.into(), v.clone());
        }
    }
    Value::Object(ordered)
}

/// `CustomResourceDefinitionNames` in Go field order, empty fields omitted.
fn ordered_names(names: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for k in [
        "plural",
        "singular",
        "shortNames",
        "kind",
        "listKind",
        "categories",
    ] {
        if let Some(v) = names
            .get(k)
            .filter(|v| v.as_str() != Some("") && v.as_array().is_none_or(|a| !a.is_empty()))
        {
            out.insert(k.into(), v.clone());
        }
    }
    out
}

/// Delete every custom resource of the CRD (what its cleanup finalizer does).
fn delete_instances(world: &mut World<'_>, crd: &Value) {
    let (group, plural) = (
        str_at(crd, "/spec/group"),
        str_at(crd, "/spec/names/plural"),
    );
    for obj in world.list(group, plural, None) {
        let key = ObjectKey::new(group, plural, namespace(&obj), name(&obj));
        let _ = delete(world, &key, &obj);
    }
}
