//! PersistentVolumeClaim update rules: the spec is frozen except what the binder sets,
//! a retroactively assigned class, and growth of a bound claim.

use serde_json::{Map, Value};

use super::error::Cause;
use super::path::Path;
use super::update::{normalize, semantic_eq};
use crate::defaults::quantity::Quantity;

/// `ValidatePersistentVolumeClaimUpdate`: a claim's spec is fixed once created, except that
/// the binder may set `volumeName` once, a class may be filled in where there was none, and
/// a bound claim may grow (`resources.requests`).
pub(crate) fn claim_update(old: &Value, new: &Value, causes: &mut Vec<Cause>) {
    let mut old_spec = field(old, "spec").clone();
    let mut new_spec = field(new, "spec").clone();
    let bound = new
        .get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        == Some("Bound");
    if let (Some(old_map), Some(new_map)) = (old_spec.as_object_mut(), new_spec.as_object_mut()) {
        if old_map
            .get("volumeName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            let volume = new_map.get("volumeName").cloned().unwrap_or(Value::Null);
            old_map.insert("volumeName".into(), volume);
        }
        if old_map.get("storageClassName").is_none_or(Value::is_null) {
            new_map.remove("storageClassName");
        }
        if bound {
            let old_storage = old_map
                .get("resources")
                .and_then(|r| r.get("requests"))
                .and_then(|r| r.get("storage"))
                .cloned();
            if let Some(requests) = new_map
                .get_mut("resources")
                .and_then(|r| r.get_mut("requests"))
                .and_then(Value::as_object_mut)
            {
                requests.insert("storage".into(), old_storage.unwrap_or(Value::Null));
            }
        }
        new_map.insert(
            "volumeAttributesClassName".into(),
            old_map
                .get("volumeAttributesClassName")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    if !semantic_eq(&old_spec, &new_spec) {
        causes.push(Cause::forbidden(
            &Path::root("spec"),
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                spec_diff(&old_spec, &new_spec)
            ),
        ));
    }
    let storage = |v: &Value| {
        v.get("spec")
            .and_then(|s| s.get("resources"))
            .and_then(|r| r.get("requests"))
            .and_then(|r| r.get("storage"))
            .and_then(Quantity::from_json)
            .and_then(Result::ok)
    };
    let capacity = old
        .get("status")
        .and_then(|s| s.get("capacity"))
        .and_then(|c| c.get("storage"))
        .and_then(Quantity::from_json)
        .and_then(Result::ok);
    if let (Some(old_size), Some(new_size)) = (storage(old), storage(new)) {
        // RecoverVolumeExpansionFailure (on in 1.33) allows shrinking down to the capacity.
        let below_capacity = match &capacity {
            Some(capacity) => new_size.cmp_value(capacity).is_le(),
            None => new_size.is_zero() || new_size.is_negative(),
        };
        if new_size.cmp_value(&old_size).is_lt() && below_capacity {
            causes.push(Cause::forbidden(
                &Path::root("spec").children(&["resources", "requests", "storage"]),
                "field can not be less than status.capacity",
            ));
        }
    }
}

/// A readable stand-in for Go's `cmp.Diff` of two claim specs (not byte-identical).
fn spec_diff(old: &Value, new: &Value) -> String {
    let (old, new) = (normalize(old), normalize(new));
    let empty = Map::new();
    let old_map = old.as_object().unwrap_or(&empty);
    let new_map = new.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = old_map.keys().chain(new_map.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = String::from("  core.PersistentVolumeClaimSpec{\n");
    for key in keys {
        let (a, b) = (old_map.get(key), new_map.get(key));
        if a == b {
            continue;
        }
        if let Some(a) = a {
            out.push_str(&format!("- \t{key}: {a},\n"));
        }
        if let Some(b) = b {
            out.push_str(&format!("+ \t{key}: {b},\n"));
        }
    }
    out.push_str("  }\n");
    out
}

fn field<'a>(spec: &'a Value, key: &str) -> &'a Value {
    spec.get(key).unwrap_or(&Value::Null)
}
