//! Cluster housekeeping controllers: the garbage collector, namespaces, each
//! namespace's default ServiceAccount, and CRD name acceptance and establishment.

mod crd;
mod gc;
mod namespace;
mod resources;
mod serviceaccount;
#[cfg(test)]
mod tests;

use crate::engine::Controller;

/// Garbage collector, namespace, service account and CRD controllers.
pub fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(gc::GarbageCollector),
        Box::new(namespace::NamespaceController::default()),
        Box::new(serviceaccount::ServiceAccountController),
        Box::new(crd::CrdController::default()),
    ]
}
