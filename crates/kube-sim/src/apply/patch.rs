//! The three PATCH content types: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
//! Kubernetes' strategic merge patch, which merges lists by the schema's merge keys.

use serde_json::{Map, Value};

use super::schema::{ListKind, list_kind};

/// Why a patch could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("failed to parse json patch")]
    InvalidJsonPatch(#[source] serde_json::Error),
    #[error("failed to apply json patch")]
    JsonPatch(#[source] json_patch::PatchError),
    #[error("strategic merge patch must be a json object")]
    NotAnObject,
    #[error("map {item} does not contain declared merge key: {key}")]
    MissingMergeKey { item: String, key: String },
    #[error("unknown patch directive {0:?}")]
    UnknownDirective(String),
}

/// RFC 7386: objects merge recursively, `null` deletes, anything else replaces.
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    let mut out = target.clone();
    json_patch::merge(&mut out, patch);
    out
}

/// RFC 6902; on failure nothing is applied.
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    let ops: json_patch::Patch =
        serde_json::from_value(patch.clone()).map_err(PatchError::InvalidJsonPatch)?;
    let mut out = target.clone();
    json_patch::patch(&mut out, &ops).map_err(PatchError::JsonPatch)?;
    Ok(out)
}

/// Strategic merge patch: like a merge patch, but lists with a merge key merge per item,
/// `metadata.finalizers` merges as a set, and the `$patch: delete|replace|merge`,
/// `$retainKeys` and `$deleteFromPrimitiveList/<field>` directives apply.
/// `$setElementOrder/<field>` is accepted and ignored.
pub fn strategic_merge_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    let Value::Object(patch) = patch else {
        return Err(PatchError::NotAnObject);
    };
    let merged = patch_map(target.as_object(), patch, &mut Vec::new())?;
    Ok(Value::Object(merged.unwrap_or_default()))
}

/// `None` when the patch deletes the whole map.
fn patch_map(
    target: Option<&Map<String, Value>>,
    patch: &Map<String, Value>,
    names: &mut Vec<String>,
) -> Result<Option<Map<String, Value>>, PatchError> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("delete") => return Ok(None),
        Some("replace") => return Ok(Some(without_directives(patch))),
        Some("merge") | None => {}
        Some(other) => return Err(PatchError::UnknownDirective(other.to_owned())),
    }
    let mut out = target.cloned().unwrap_or_default();
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Value::Array(gone)) = (out.get_mut(field), value) {
                items.retain(|item| !gone.contains(item));
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        names.push(key.clone());
        let result = match value {
            Value::Null => None,
            Value::Object(p) => {
                patch_map(out.get(key).and_then(Value::as_object), p, names)?.map(Value::Object)
            }
            Value::Array(p) => Some(Value::Array(patch_list(
                out.get(key).and_then(Value::as_array),
                p,
                names,
            )?)),
            scalar => Some(scalar.clone()),
        };
        names.pop();
        match result {
            Some(v) => {
                out.insert(key.clone(), v);
            }
            None => {
                out.shift_remove(key);
            }
        }
    }
    if let Some(Value::Array(retain)) = patch.get("$retainKeys") {
        out.retain(|k, _| retain.iter().any(|r| r.as_str() == Some(k)));
    }
    Ok(Some(out))
}

fn patch_list(
    target: Option<&Vec<Value>>,
    patch: &[Value],
    names: &mut Vec<String>,
) -> Result<Vec<Value>, PatchError> {
    let directive = |item: &Value, d: &str| item.get("$patch").and_then(Value::as_str) == Some(d);
    if patch.iter().any(|item| directive(item, "replace")) {
        return Ok(patch
            .iter()
            .filter(|item| !directive(item, "replace"))
            .cloned()
            .collect());
    }
    let mut out = target.cloned().unwrap_or_default();
    match list_kind(names) {
        ListKind::Atomic => return Ok(patch.to_vec()),
        ListKind::Set => out.extend(
            patch
                .iter()
                .filter(|v| !target.is_some_and(|t| t.contains(v)))
                .cloned(),
        ),
        // Strategic merge patch keys on the first (patchMergeKey) field only.
        ListKind::Map(keys) => {
            let key = keys[0];
            for item in patch {
                let Some(fields) = item.as_object() else {
                    return Err(missing(item, key));
                };
                let Some(id) = fields.get(key) else {
                    return Err(missing(item, key));
                };
                let pos = out.iter().position(|t| t.get(key) == Some(id));
                if directive(item, "delete") {
                    out.retain(|t| t.get(key) != Some(id));
                    continue;
                }
                let merged = patch_map(pos.and_then(|i| out[i].as_object()), fields, names)?;
                match (pos, merged) {
                    (Some(i), Some(m)) => out[i] = Value::Object(m),
                    (Some(i), None) => {
                        out.remove(i);
                    }
                    (None, Some(m)) => out.push(Value::Object(m)),
                    (None, None) => {}
                }
            }
        }
    }
    Ok(out)
}

fn missing(item: &Value, key: &str) -> PatchError {
    PatchError::MissingMergeKey {
        item: item.to_string(),
        key: key.to_owned(),
    }
}

fn without_directives(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
