//! StatefulSets: stable pod identities, ordered rollout and per-pod storage.

mod controller;
pub(crate) mod identity;
mod sync;

pub use controller::StatefulSetController;
