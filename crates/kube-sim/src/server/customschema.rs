//! A custom resource held to the schema its CRD serves the version with, by the same code
//! as deploy-action's offline `check` (`kube_strict::crd_schema`): an error refuses the
//! write with 422 Invalid; an unknown field is pruned, with a warning under
//! `fieldValidation=Warn` (the default), refused under `Strict`. A write to `/status`
//! validates the whole object; one to the resource drops `status` first when the version
//! has a status subresource (it is the server's to set).

use super::handler::Call;
use super::state::ServerState;
use super::status::ApiError;
use crate::store::ObjectKey;
use kube_strict::crd_schema::{self, Finding, Severity, served};
use serde_json::Value;

/// What the served CRD's schema says about `obj` (the object as it would be stored); prunes
/// its unknown fields.
pub fn check(
    state: &ServerState,
    call: &Call,
    name: &str,
    obj: &mut Value,
) -> Result<(), ApiError> {
    let rt = &call.rt;
    if !rt.custom {
        return Ok(());
    }
    let crd_name = format!("{}.{}", rt.plural, rt.group);
    let key = ObjectKey::new(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        &crd_name,
    );
    let Some(crd) = state.store.get(&key) else {
        return Ok(());
    };
    let findings = if call.path.subresource.as_deref() == Some("status") {
        served::schema(&crd, &rt.version)
            .map(|(schema, _)| crd_schema::validate(schema, obj))
            .unwrap_or_default()
    } else {
        served::check(&crd, &rt.version, obj)
    };
    if let Some(invalid) = served::invalid(&rt.kind, &rt.group, name, &findings) {
        let status = invalid.to_status();
        return Err(ApiError::new(422, "Invalid", invalid.message())
            .with_details(status["details"].clone()));
    }
    let unknown: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning && f.message.starts_with("unknown field "))
        .collect();
    match call.params.get("fieldValidation") {
        Some("Strict") if !unknown.is_empty() => {
            let all: Vec<&str> = unknown.iter().map(|f| f.message.as_str()).collect();
            return Err(ApiError::bad_request(format!(
                "strict decoding error: {}",
                all.join(", ")
            )));
        }
        Some("Ignore") => {}
        _ => unknown.iter().for_each(|f| call.warn(f.message.clone())),
    }
    // Deepest last, so removing one field never moves another's pointer (array items).
    for f in unknown.iter().rev() {
        prune(obj, &f.pointer);
    }
    Ok(())
}

/// Removes the field at a JSON pointer, if it is there.
fn prune(obj: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    if let Some(fields) = obj.pointer_mut(parent).and_then(Value::as_object_mut) {
        fields.remove(&last);
    }
}
