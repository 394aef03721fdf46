//! CustomResourceDefinitions and the kinds the rules have no rule of their own for: read
//! through `status.conditions` and the rollout conditions a CRD declares.

pub mod conditions;
pub mod crd;
pub mod generation;
pub mod generic;
pub mod json_path;
pub mod rollout_conditions;
