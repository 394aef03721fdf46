//! PodDisruptionBudgets (krane's rule): done once the disruption controller has observed
//! the applied generation; how many pods are healthy is the workloads' business.

use crate::rules::assessment::Assessment;
use crate::rules::snapshot::typed;
use crate::rules::workloads::generation::{unobserved, unreadable};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::Value;

pub fn assess(obj: &Value) -> Assessment {
    let pdb: PodDisruptionBudget = match typed(obj) {
        Ok(p) => p,
        Err(e) => return unreadable("PodDisruptionBudget", &e),
    };
    let status = pdb.status.unwrap_or_default();
    if let Some(wait) = unobserved(
        "disruption controller",
        &pdb.metadata,
        status.observed_generation,
    ) {
        return wait;
    }
    Assessment::succeeded(format!(
        "observed: {}/{} pods healthy, {} disruptions allowed",
        status.current_healthy, status.desired_healthy, status.disruptions_allowed
    ))
}
