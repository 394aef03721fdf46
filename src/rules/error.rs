//! Errors from reading what the cluster or the manifests said; the rules themselves never
//! fail (an odd object is a pending or failed verdict, not an error).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum RulesError {
    #[error("failed to identify object: apiVersion, kind or metadata.name missing")]
    ObjectWithoutIdentity,
    #[error(
        "failed to read annotation {annotation}={value:?} as a duration between 1s and 24h (e.g. 45s, 3m, 1h30m, PT5M)"
    )]
    InvalidTimeout { annotation: String, value: String },
    #[error(
        "failed to read annotation {annotation}={value:?} as a duration of at most 1h (e.g. 10s, 2m, or 0 to turn the stability window off)"
    )]
    InvalidSettle { annotation: String, value: String },
    #[error(
        "failed to read annotation {annotation}={value:?}: expected full, none, maxUnavailable or a percentage like 90%"
    )]
    InvalidRequiredRollout { annotation: String, value: String },
    #[error("failed to read annotation {annotation} as JSON rollout conditions")]
    RolloutConditionsJson {
        annotation: String,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "failed to read JSON path {path:?}: supported forms are $.status.a.b and $.status.conditions[?(@.type == \"X\")].field"
    )]
    UnsupportedJsonPath { path: String },
}
