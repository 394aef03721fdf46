//! deploy-action: apply Kubernetes manifests, watch every resource to a verdict, and
//! tell a fast, certain failure from a slow one.

pub mod manifest;
pub mod outcome;
pub mod render;
pub mod report;
pub mod verdict;
