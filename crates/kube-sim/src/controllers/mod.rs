//! The simulated kube-controller-manager, scheduler and friends.

use crate::engine::Controller;

/// Every controller of the simulated control plane, in the order the engine runs them.
pub fn all() -> Vec<Box<dyn Controller>> {
    Vec::new()
}
