//! What the API server answers when a body does not decode strictly into its kind: a type
//! error refuses the write (400 on create and update, 422 on a merge or JSON patch, 500
//! from server-side apply); unknown fields are refused, warned about or dropped as the
//! `fieldValidation` parameter says (default `Warn`), except under server-side apply,
//! whose typed conversion refuses them always. All of it happens before admission, so a
//! dry run is refused the same way.

use super::handler::Call;
use super::status::ApiError;
use crate::decode::{self, Dialect, Findings};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Directive {
    Strict,
    Warn,
    Ignore,
}

fn directive(call: &Call) -> Directive {
    match call.params.get("fieldValidation") {
        Some("Strict") => Directive::Strict,
        Some("Ignore") => Directive::Ignore,
        _ => Directive::Warn,
    }
}

fn findings(call: &Call, obj: &Value, dialect: Dialect) -> Option<Findings> {
    if call.rt.custom {
        return None;
    }
    decode::decode(
        &call.rt.group,
        &call.rt.version,
        &call.rt.kind,
        obj,
        dialect,
    )
}

/// `Deployment in version "v1" cannot be handled as a Deployment: ...`
fn cannot_handle(call: &Call, why: &str) -> ApiError {
    let kind = &call.rt.kind;
    ApiError::bad_request(format!(
        "{kind} in version {:?} cannot be handled as a {kind}: {why}",
        call.rt.version
    ))
}

fn strict_error(unknown: &[String]) -> String {
    format!("strict decoding error: {}", unknown.join(", "))
}

/// Unknown fields under `Warn` and `Ignore`: dropped from the object, with a warning each
/// under `Warn`.
fn drop_unknown(call: &Call, found: &Findings, obj: &mut Value) {
    if directive(call) == Directive::Warn {
        for warning in &found.unknown {
            call.warn(warning.clone());
        }
    }
    found.prune(obj);
}

/// The body of a create or update (POST, PUT).
pub fn decode_object(call: &Call, obj: &mut Value) -> Result<(), ApiError> {
    let Some(found) = findings(call, obj, Dialect::Json) else {
        return Ok(());
    };
    if let Some(error) = found.errors.first() {
        return Err(cannot_handle(call, error));
    }
    if !found.unknown.is_empty() && directive(call) == Directive::Strict {
        return Err(cannot_handle(call, &strict_error(&found.unknown)));
    }
    drop_unknown(call, &found, obj);
    Ok(())
}

/// The object a merge, JSON or strategic merge patch produced; its errors are reported
/// against the field `patch` with the patched object as the value.
pub fn decode_patched(call: &Call, obj: &mut Value) -> Result<(), ApiError> {
    let Some(found) = findings(call, obj, Dialect::Json) else {
        return Ok(());
    };
    let invalid = |why: String| {
        let value = serde_json::to_string(obj).unwrap_or_default();
        ApiError::new(
            422,
            "Invalid",
            format!(
                " {:?} is invalid: patch: Invalid value: {value:?}: {why}",
                ""
            ),
        )
        .with_details(serde_json::json!({"causes": [{
            "type": "FieldValueInvalid",
            "message": format!("Invalid value: {value:?}: {why}"),
            "field": "patch"
        }]}))
    };
    if let Some(error) = found.errors.first() {
        return Err(invalid(error.clone()));
    }
    if !found.unknown.is_empty() && directive(call) == Directive::Strict {
        return Err(invalid(strict_error(&found.unknown)));
    }
    drop_unknown(call, &found, obj);
    Ok(())
}

/// A server-side apply patch: structured-merge-diff's typed conversion, whose failure is a
/// plain error to the API server (500, no reason).
pub fn decode_apply(call: &Call, applied: &Value, name: &str) -> Result<(), ApiError> {
    let Some(found) = findings(call, applied, Dialect::Apply) else {
        return Ok(());
    };
    let errors = match found.errors.as_slice() {
        [] => return Ok(()),
        [one] => one.clone(),
        many => format!("errors:\n  {}", many.join("\n  ")),
    };
    let namespace = applied
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(ApiError::new(
        500,
        "",
        format!(
            "failed to create typed patch object ({namespace}/{name}; {}/{}, Kind={}): {errors}",
            call.rt.group, call.rt.version, call.rt.kind
        ),
    ))
}
