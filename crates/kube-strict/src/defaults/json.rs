//! Helpers for filling defaults into untyped JSON objects with Go's notion of "unset":
//! a pointer field is unset when missing or null, a value field also when it holds its
//! zero value ("" or 0). Getting this wrong would overwrite a user's explicit `replicas: 0`.

use serde_json::{Map, Value};

pub(crate) type Object = Map<String, Value>;

/// The object under `key`, created as `{}` when missing or null; `None` when the field
/// holds something else (a malformed object is left for validation to reject).
pub(crate) fn child<'a>(parent: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    let slot = parent.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// The object under `key` only when it is already there.
pub(crate) fn existing<'a>(parent: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    parent.get_mut(key).and_then(Value::as_object_mut)
}

/// The object elements of the array under `key` (absent or non-array gives nothing).
pub(crate) fn elements<'a>(
    parent: &'a mut Object,
    key: &str,
) -> impl Iterator<Item = &'a mut Object> {
    parent
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// Sets a pointer field (`*T` in Go): only a missing or null field is unset.
pub(crate) fn default_ptr(obj: &mut Object, key: &str, value: Value) {
    match obj.get(key) {
        None | Some(Value::Null) => {
            obj.insert(key.to_string(), value);
        }
        Some(_) => {}
    }
}

/// Sets a string value field: missing, null and "" are all unset.
pub(crate) fn default_str(obj: &mut Object, key: &str, value: &str) {
    if str_field(obj, key).is_empty() {
        obj.insert(key.to_string(), Value::String(value.to_string()));
    }
}

/// Sets an integer value field: missing, null and 0 are all unset.
pub(crate) fn default_int(obj: &mut Object, key: &str, value: i64) {
    match obj.get(key) {
        None | Some(Value::Null) => {
            obj.insert(key.to_string(), Value::from(value));
        }
        Some(v) if v.as_i64() == Some(0) => {
            obj.insert(key.to_string(), Value::from(value));
        }
        Some(_) => {}
    }
}

/// The string under `key`, or "" when missing or not a string.
pub(crate) fn str_field<'a>(obj: &'a Object, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether a map-valued field is missing, null or `{}`.
pub(crate) fn is_empty_map(obj: &Object, key: &str) -> bool {
    match obj.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(_) => false,
    }
}

/// Inserts `metadata.creationTimestamp: null` as Go's encoder writes it for the zero
/// `metav1.Time` inside embedded templates (pod templates, claim templates).
pub(crate) fn template_metadata(template: &mut Object) {
    if let Some(meta) = child(template, "metadata") {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
}
