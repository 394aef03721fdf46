//! DaemonSets: a pod on every eligible node, rolled out node by node.

mod controller;
mod placement;
mod rollout;
mod status;

pub use controller::DaemonSetController;
