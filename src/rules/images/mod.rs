//! Image pulls: every trace a failed pull leaves (pod status, kubelet events, the runner's
//! own registry lookup), sorted into failures that are certain and trouble time may fix.

pub mod image_pull;
pub mod pull_error;
pub mod pull_state;
pub mod pull_text;
pub mod registry_view;

#[cfg(test)]
mod image_scenarios;
