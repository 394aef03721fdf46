//! StatefulSets, DaemonSets and the small status writers for PodDisruptionBudgets and
//! HorizontalPodAutoscalers, plus the object helpers the batch, network and storage
//! controllers share.

mod autoscaler;
mod daemonset;
mod disruption;
pub(crate) mod history;
pub(crate) mod objects;
pub(crate) mod pods;
pub(crate) mod selectors;
pub(crate) mod statefulset;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

pub use autoscaler::AutoscalerController;
pub use daemonset::DaemonSetController;
pub use disruption::DisruptionController;
pub use statefulset::StatefulSetController;

use crate::engine::Controller;

pub fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(StatefulSetController),
        Box::new(DaemonSetController::default()),
        Box::new(DisruptionController),
        Box::new(AutoscalerController),
    ]
}
