//! The simulated scheduler and kubelet (placeholder until they land).

use crate::engine::Controller;

pub fn controllers() -> Vec<Box<dyn Controller>> {
    Vec::new()
}
