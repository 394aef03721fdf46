//! The pure verdict rules: objects seen so far plus a deadline in, verdict out.

pub mod assess;
pub mod assessment;
pub mod conditions;
pub mod crd;
pub mod cronjob;
pub mod custom;
pub mod daemonset;
pub mod deployment;
pub mod error;
pub mod exists;
pub mod generation;
pub mod hpa;
pub mod image_evidence;
pub mod image_pull;
pub mod ingress;
pub mod job;
pub mod json_path;
pub mod pdb;
pub mod pod;
pub mod pod_failure;
pub mod pod_set;
pub mod pod_state;
pub mod pull_error;
pub mod pull_text;
pub mod pvc;
pub mod registry_view;
pub mod replicaset;
pub mod rollout_conditions;
pub mod rollout_mode;
pub mod service;
pub mod snapshot;
pub mod statefulset;
pub mod target;
pub mod timeout;
pub mod validate;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod image_scenarios;

pub use assess::assess;
pub use assessment::{Assessment, judge};
pub use error::RulesError;
pub use image_evidence::{PullDecision, PullTrouble, image_pull_state};
pub use pull_error::{PullErrorClass, classify};
pub use registry_view::{RegistryView, RegistryViews};
pub use snapshot::{ObjectKey, Snapshot};
pub use target::Target;
pub use timeout::deadline_for;
pub use validate::validate;
