//! The schema a CRD serves one version with, and an object held to it as the API server
//! holds a write: `status` dropped when the version has a status subresource (it is the
//! server's to set), then every finding of `validate`; the errors as the 422 it answers.

use super::{Finding, Severity, validate};
use crate::validation::{Cause, CauseReason, Invalid};
use serde_json::Value;

/// The `openAPIV3Schema` a CRD object gives `version`, and whether that version has a
/// status subresource (then `status` is the server's to set, and a create drops it).
pub fn schema<'a>(crd: &'a Value, version: &str) -> Option<(&'a Value, bool)> {
    let spec = crd.get("spec")?;
    let served = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        });
    let status = |at: Option<&Value>| at.and_then(|v| v.pointer("/subresources/status")).is_some();
    let has_status = status(served) || status(Some(spec));
    served
        .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
        .or_else(|| spec.pointer("/validation/openAPIV3Schema"))
        .map(|s| (s, has_status))
}

/// Every finding of the schema `crd` gives `version` on `object`; none from a CRD without
/// one.
pub fn check(crd: &Value, version: &str, object: &Value) -> Vec<Finding> {
    let Some((schema, has_status)) = schema(crd, version) else {
        return Vec::new();
    };
    if has_status && object.get("status").is_some() {
        let mut object = object.clone();
        if let Some(fields) = object.as_object_mut() {
            fields.remove("status");
        }
        return validate(schema, &object);
    }
    validate(schema, object)
}

/// The 422 the server answers for the error findings, if there are any: one cause each,
/// its field the dotted path the finding's message starts with.
pub fn invalid(kind: &str, group: &str, name: &str, findings: &[Finding]) -> Option<Invalid> {
    let causes: Vec<Cause> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| {
            let (field, message) = f.message.split_once(": ").unwrap_or(("", &f.message));
            let head = message.split(':').next().unwrap_or_default();
            let reason = match head {
                "Required value" => CauseReason::FieldValueRequired,
                "Unsupported value" => CauseReason::FieldValueNotSupported,
                "Duplicate value" => CauseReason::FieldValueDuplicate,
                "Too long" => CauseReason::FieldValueTooLong,
                "Too many" => CauseReason::FieldValueTooMany,
                _ => CauseReason::FieldValueInvalid,
            };
            Cause {
                reason,
                field: field.to_owned(),
                message: message.to_owned(),
            }
        })
        .collect();
    (!causes.is_empty()).then(|| Invalid {
        kind: kind.to_owned(),
        group: group.to_owned(),
        name: name.to_owned(),
        causes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Value {
        json!({"spec": {"group": "acme.io", "versions": [{"name": "v1",
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"},
                    "size": {"type": "integer"},
                    "mode": {"type": "string", "enum": ["safe"]}}},
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}})
    }

    #[test]
    fn drops_status_under_a_status_subresource_and_words_the_422() {
        let obj = json!({"metadata": {"name": "blue"},
            "spec": {"size": "big", "mode": "wild"}, "status": {"ready": "no"}});
        let found = check(&crd(), "v1", &obj);
        assert!(
            check(&crd(), "v2", &obj).is_empty(),
            "no schema, no findings"
        );
        let refused = invalid("Widget", "acme.io", "blue", &found).expect("refused");
        assert_eq!(
            refused.message(),
            "Widget.acme.io \"blue\" is invalid: [spec.name: Required value, \
             spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\", \
             spec.mode: Unsupported value: \"wild\": supported values: \"safe\"]"
        );
        let status = refused.to_status();
        assert_eq!(
            status["details"]["causes"][0],
            json!({"reason": "FieldValueRequired", "message": "Required value", "field": "spec.name"})
        );
        assert_eq!(
            status["details"]["causes"][2]["reason"],
            "FieldValueNotSupported"
        );
        let fine = json!({"metadata": {"name": "blue"}, "spec": {"name": "b", "sise": 1}});
        let found = check(&crd(), "v1", &fine);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].severity, Severity::Warning);
        assert!(invalid("Widget", "acme.io", "blue", &found).is_none());
    }
}
