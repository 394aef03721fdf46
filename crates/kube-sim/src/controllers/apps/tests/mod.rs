//! Scenario tests of the apps controllers on a running simulated cluster.

mod failures;
pub(crate) mod harness;
mod kubelet;
mod lifecycle;
mod rollout;
