//! The observedGeneration gate: right after an apply a controller's status still describes
//! the previous spec (a Deployment even keeps `NewReplicaSetAvailable`), so no status field
//! means anything until the controller has caught up with the generation we wrote.

use crate::rules::assessment::Assessment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Pending while `observed` lags `metadata.generation`; `None` once caught up.
/// `controller` names who is behind, e.g. "deployment controller".
pub fn unobserved(
    controller: &str,
    meta: &ObjectMeta,
    observed: Option<i64>,
) -> Option<Assessment> {
    generation_unobserved(controller, meta.generation, observed)
}

/// [`unobserved`] for a rule that reads the object's `metadata.generation` itself.
pub fn generation_unobserved(
    controller: &str,
    generation: Option<i64>,
    observed: Option<i64>,
) -> Option<Assessment> {
    let generation = generation?;
    match observed {
        Some(o) if o >= generation => None,
        Some(o) => Some(Assessment::not_ready(format!(
            "waiting for the {controller} to observe generation {generation} (status is for {o})"
        ))),
        None => Some(Assessment::not_ready(format!(
            "waiting for the {controller} to report status for generation {generation}"
        ))),
    }
}

/// Pending because the object could not be read as its type (a malformed watch object).
pub fn unreadable(kind: &str, err: &serde_json::Error) -> Assessment {
    Assessment::not_ready(format!("cannot read the {kind} seen in the cluster: {err}"))
}
