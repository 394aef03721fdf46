//! CustomResourceDefinitions and the kinds the rules have no rule of their own for: read
//! through `status.conditions` and the rollout conditions a CRD declares.

pub mod conditions;
pub mod crd;
pub mod generic;
pub mod json_path;
pub mod rollout_conditions;

/// Kinds the Kubernetes API serves itself (by API group), as opposed to CRDs.
pub fn is_builtin_group(group: &str) -> bool {
    group.is_empty()
        || group.ends_with(".k8s.io")
        || matches!(group, "apps" | "batch" | "autoscaling" | "policy")
}
