//! Annotation checks that belong before any apply: a typo in a timeout or rollout mode is
//! invalid input (exit 2), not something to discover half-way through a deploy.

use crate::rules::annotations::rollout_mode::RequiredRollout;
use crate::rules::annotations::timeout::{parse_annotation_duration, timeout_override};
use crate::rules::custom::rollout_conditions::{ROLLOUT_CONDITIONS_ANNOTATION, RolloutConditions};
use crate::rules::error::RulesError;
use crate::rules::settle::SETTLE_ANNOTATION;
use crate::rules::target::Target;
use std::time::Duration;

/// A longer stability window is a typo more likely than a wish (the timeout caps it anyway).
const MAX_SETTLE: Duration = Duration::from_secs(3600);

/// Refuses annotations the rules would otherwise have to ignore.
pub fn validate(target: &Target) -> Result<(), RulesError> {
    timeout_override(target)?;
    RequiredRollout::for_target(target)?;
    if let Some(value) = target.annotations.get(ROLLOUT_CONDITIONS_ANNOTATION) {
        RolloutConditions::parse(value)?;
    }
    if let Some(value) = target.annotations.get(SETTLE_ANNOTATION)
        && parse_annotation_duration(value).is_none_or(|d| d > MAX_SETTLE)
    {
        return Err(RulesError::InvalidSettle {
            annotation: SETTLE_ANNOTATION.to_owned(),
            value: value.clone(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refuses_each_unreadable_annotation() {
        let doc = |annotations: serde_json::Value| {
            Target::from_manifest(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop", "annotations": annotations}}))
            .unwrap()
        };
        assert!(validate(&doc(json!({"deploy-action.io/timeout": "10m", "krane.shopify.io/required-rollout": "90%"}))).is_ok());
        let err = validate(&doc(json!({"deploy-action.io/timeout": "ten minutes"}))).unwrap_err();
        assert!(matches!(err, RulesError::InvalidTimeout { .. }), "{err}");
        assert!(validate(&doc(json!({"deploy-action.io/settle": "0"}))).is_ok());
        assert!(validate(&doc(json!({"deploy-action.io/settle": "30s"}))).is_ok());
        let err = validate(&doc(json!({"deploy-action.io/settle": "a while"}))).unwrap_err();
        assert!(matches!(err, RulesError::InvalidSettle { .. }), "{err}");
        let err = validate(&doc(json!({"deploy-action.io/required-rollout": "fast"}))).unwrap_err();
        assert!(
            matches!(err, RulesError::InvalidRequiredRollout { .. }),
            "{err}"
        );
        let err = validate(&doc(
            json!({ROLLOUT_CONDITIONS_ANNOTATION: "{\"failure_conditions\": []}"}),
        ))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "failed to read annotation krane.shopify.io/instance-rollout-conditions as JSON rollout conditions"
        );
        let err = validate(&doc(json!({ROLLOUT_CONDITIONS_ANNOTATION:
            "{\"success_conditions\": [{\"path\": \"$.status..ready\", \"value\": \"true\"}]}"})))
        .unwrap_err();
        assert!(
            matches!(err, RulesError::UnsupportedJsonPath { .. }),
            "{err}"
        );
    }
}
