//! API validation (being filled in).

use serde_json::{Value, json};

/// A rejected object.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind} \"{name}\" is invalid")]
pub struct Invalid {
    pub kind: String,
    pub name: String,
}

impl Invalid {
    pub fn to_status(&self) -> Value {
        json!({"details": {"name": self.name, "kind": self.kind}})
    }
}

pub fn validate(_object: &Value) -> Result<(), Invalid> {
    Ok(())
}

pub fn validate_update(_old: &Value, _new: &Value) -> Result<(), Invalid> {
    Ok(())
}
