//! Server-side apply and patches (interim: replaced by the full field-ownership engine).

use serde_json::Value;

pub struct ApplyOptions<'a> {
    pub manager: &'a str,
    pub force: bool,
    pub api_version: &'a str,
    pub time: &'a str,
    pub subresource: Option<&'a str>,
    pub reset_status: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub manager: String,
    pub api_version: String,
    pub path: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("Apply failed with {} conflicts", .0.len())]
    Conflict(Vec<Conflict>),
    #[error("{0}")]
    Invalid(String),
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PatchError(String);

pub fn apply(live: Option<&Value>, applied: &Value, _opts: &ApplyOptions<'_>) -> Result<Value, ApplyError> {
    Ok(match live {
        Some(l) => merge_patch(l, applied),
        None => applied.clone(),
    })
}

pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    let mut t = target.clone();
    json_patch::merge(&mut t, patch);
    t
}

pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    let p: json_patch::Patch = serde_json::from_value(patch.clone()).map_err(|e| PatchError(e.to_string()))?;
    let mut t = target.clone();
    json_patch::patch(&mut t, &p).map_err(|e| PatchError(e.to_string()))?;
    Ok(t)
}

pub fn strategic_merge_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    Ok(merge_patch(target, patch))
}

/// Record an Update operation's managed fields.
pub fn record_update(_old: Option<&Value>, _new: &mut Value, _manager: &str, _api_version: &str, _time: &str, _sub: Option<&str>) {}
