//! The apps controllers: Deployments roll out through ReplicaSets, ReplicaSets keep
//! their pods.

mod annotations;
mod deployment;
mod hash;
pub(crate) mod meta;
mod newrs;
mod pods;
mod podtemplate;
mod progress;
mod replicaset;
mod replicasets;
mod rollout;
mod rsstatus;
mod scale;
mod selector;
mod spec;
mod status;
mod sync;
#[cfg(test)]
pub(crate) mod tests;

use crate::engine::Controller;

/// The Deployment controller, then the ReplicaSet controller.
pub fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(deployment::DeploymentController),
        Box::new(replicaset::ReplicaSetController::default()),
    ]
}
