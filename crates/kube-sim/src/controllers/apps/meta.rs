//! Reading and writing object metadata as the API server holds it (owner references,
//! labels, annotations, timestamps), shared by the apps and cluster controllers.

use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// The string at a JSON pointer, or "" when absent.
pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(crate) fn int_at(v: &Value, pointer: &str) -> Option<i64> {
    v.pointer(pointer).and_then(Value::as_i64)
}

pub(crate) fn name(v: &Value) -> &str {
    str_at(v, "/metadata/name")
}

pub(crate) fn namespace(v: &Value) -> &str {
    str_at(v, "/metadata/namespace")
}

pub(crate) fn uid(v: &Value) -> &str {
    str_at(v, "/metadata/uid")
}

/// Marked for deletion (a finalizer or a pod's grace period holds it).
pub(crate) fn is_deleting(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

pub(crate) fn owner_refs(v: &Value) -> &[Value] {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The owner reference with `controller: true` (`metav1.GetControllerOf`).
pub(crate) fn controller_ref(v: &Value) -> Option<&Value> {
    owner_refs(v)
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// Whether `v` is controlled by an object of `kind` with `uid`.
pub(crate) fn is_controlled_by(v: &Value, kind: &str, owner_uid: &str) -> bool {
    controller_ref(v).is_some_and(|r| str_at(r, "/kind") == kind && str_at(r, "/uid") == owner_uid)
}

/// `metav1.NewControllerRef(owner, gvk)`.
pub(crate) fn new_controller_ref(owner: &Value) -> Value {
    json!({
        "apiVersion": str_at(owner, "/apiVersion"),
        "kind": str_at(owner, "/kind"),
        "name": name(owner),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The object's labels (empty when it has none).
pub(crate) fn labels(v: &Value) -> Map<String, Value> {
    v.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

pub(crate) fn annotation<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.pointer("/metadata/annotations")?.get(key)?.as_str()
}

/// Set `metadata.<field>.<key>`; keys stay sorted, as Go writes a map.
pub(crate) fn set_meta_entry(v: &mut Value, field: &str, key: &str, value: &str) {
    let meta = crate::store::metadata_mut(v);
    let mut map = meta
        .get(field)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    map.insert(key.to_owned(), json!(value));
    meta.insert(field.to_owned(), Value::Object(sorted(map)));
}

/// A map with its keys in Go's (sorted) order.
pub(crate) fn sorted(map: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

pub(crate) fn parse_time(s: &str) -> Option<Timestamp> {
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_controller_among_owner_references() {
        let rs = json!({"metadata": {"name": "web-7d4b9c8f5d", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "uid": "u-1"},
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u-2",
             "controller": true, "blockOwnerDeletion": true}]}});
        assert_eq!(str_at(controller_ref(&rs).unwrap(), "/name"), "web");
        assert!(is_controlled_by(&rs, "Deployment", "u-2"));
        assert!(!is_controlled_by(&rs, "ConfigMap", "u-1"));
        assert_eq!(owner_refs(&rs).len(), 2);
    }

    #[test]
    fn meta_entries_stay_sorted_like_go_maps() {
        let mut rs = json!({"metadata": {"annotations": {"b": "1"}}});
        set_meta_entry(&mut rs, "annotations", "a", "2");
        set_meta_entry(&mut rs, "labels", "x", "y");
        let keys: Vec<_> = rs["metadata"]["annotations"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(annotation(&rs, "a"), Some("2"));
        assert_eq!(rs["metadata"]["labels"], json!({"x": "y"}));
    }

    #[test]
    fn parses_api_times() {
        let t = parse_time("2026-01-01T00:00:05Z").unwrap();
        assert_eq!(t.as_second(), 1_767_225_605);
        assert!(parse_time("not a time").is_none());
    }
}
