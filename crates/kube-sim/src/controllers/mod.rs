//! The simulated kube-controller-manager, scheduler and friends, grouped by API area.
//! Each group exposes `controllers()`; the engine runs them in this order.

mod apps;
mod batch;
mod cluster;
mod network;
mod storage;
mod workloads;

use crate::engine::Controller;

/// Every controller of the simulated control plane, the scheduler and the kubelet.
pub fn all() -> Vec<Box<dyn Controller>> {
    let mut all = cluster::controllers();
    all.extend(apps::controllers());
    all.extend(workloads::controllers());
    all.extend(batch::controllers());
    all.extend(network::controllers());
    all.extend(storage::controllers());
    all.extend(crate::kubelet::controllers());
    all
}
