//! The simulated default-scheduler and kubelet: they place pods on nodes and drive every
//! bound pod through the lifecycle a real node would, writing the same status and events.

mod backoff;
mod claims;
mod conditions;
mod config_refs;
mod containers;
mod fit;
mod ids;
mod kubelets;
mod observe;
mod phase;
mod placement;
mod probes;
mod pull;
mod quantity;
mod runtime;
mod scheduler;
mod status;
mod sync;
mod terminate;

#[cfg(test)]
mod tests;

use crate::engine::Controller;

pub use kubelets::Kubelet;
pub use scheduler::Scheduler;

/// The scheduler, then the kubelet (which simulates every node's kubelet at once).
pub fn controllers() -> Vec<Box<dyn Controller>> {
    vec![Box::new(Scheduler::default()), Box::new(Kubelet::default())]
}
