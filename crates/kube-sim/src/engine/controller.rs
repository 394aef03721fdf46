//! The contract between the engine and each simulated controller (and the kubelet).

use super::world::World;
use crate::store::{Change, ObjectKey};

/// A level-triggered controller: told which keys changed, it reconciles one key at a time
/// from the store's current state, and may ask to be called again later.
pub trait Controller: Send {
    /// The name written as field manager and event source (`deployment-controller`).
    fn name(&self) -> &'static str;

    /// Keys this controller must reconcile because of `change` (its own objects, or the
    /// owner of a changed child). Called for every change in the cluster.
    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey>;

    /// Keys of every object this controller is responsible for (at start and after a
    /// missed change).
    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey>;

    /// Bring `key` one step closer to its desired state.
    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>);
}
